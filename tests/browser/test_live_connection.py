"""The live push against a real server (no browser needed)."""

from __future__ import annotations

import time

import httpx
from websockets.sync.client import connect

from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import LiveServer


def test_a_closed_live_connection_leaves_the_hub_at_once(live_server: LiveServer) -> None:
    token = httpx.post(f"{live_server.url}/api/login",
                       json={"username": "alice", "password": DEMO_PASSWORD}).json()["token"]
    hub = live_server.app.state.hub
    ws_url = live_server.url.replace("http://", "ws://") + f"/ws/tables/craps-pa-1?token={token}"
    with connect(ws_url) as ws:
        assert '"hello"' in str(ws.recv(timeout=5))
        assert len(hub.watchers) == 1
    deadline = time.monotonic() + 5
    while hub.watchers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not hub.watchers  # not left waiting for the table's next event to notice
