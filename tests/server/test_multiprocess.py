"""Several server processes share one PostgreSQL store: an event appended through one process
reaches the WebSocket clients of every process (LISTEN/NOTIFY)."""

from __future__ import annotations

import json

import httpx
from websockets.sync.client import connect

from tests.server.processes import TIMEOUT, Server, login, running, start_uvicorn_factory


def _serve(url: str, schema: str, **env: str) -> Server:
    """A uvicorn process on the floor in ``schema``, started (``running`` waits for it)."""
    return start_uvicorn_factory({"DICETABLE_DB": url, "DICETABLE_SCHEMA": schema,
                                  "DICETABLE_ELECTRONIC": "0", **env}, wait=False)


def test_an_event_appended_through_one_process_reaches_the_other(
        postgres_floor: tuple[str, str]) -> None:
    url, schema = postgres_floor
    with running([_serve(url, schema), _serve(url, schema)]) as servers:
        a, b = (server.port for server in servers)
        alice_a = login(a, "alice")
        bob_b = login(b, "bob")
        dee_b = login(b, "dee")
        with connect(f"ws://127.0.0.1:{b}/ws/tables/craps-pa-1?token={dee_b}",
                     open_timeout=60) as ws:
            hello = json.loads(ws.recv(timeout=60))
            assert hello["type"] == "hello"
            reply = httpx.post(f"http://127.0.0.1:{a}/api/tables/craps-pa-1/bets",
                               json={"wager": "pass", "amount": 1000},
                               headers={"authorization": f"Bearer {alice_a}"}, timeout=TIMEOUT)
            assert reply.status_code == 200, reply.text
            pushed = json.loads(ws.recv(timeout=60))
            assert [e["type"] for e in pushed["events"]] == ["BetPlaced"]
            assert pushed["events"][0]["player"] == "alice"
        # the second process decides on the state the first one wrote
        reply = httpx.post(f"http://127.0.0.1:{b}/api/tables/craps-pa-1/bets",
                           json={"wager": "pass", "amount": 500},
                           headers={"authorization": f"Bearer {bob_b}"}, timeout=TIMEOUT)
        assert reply.status_code == 200, reply.text
        view = httpx.get(f"http://127.0.0.1:{a}/api/tables/craps-pa-1",
                         headers={"authorization": f"Bearer {login(a, 'pat')}"},
                         timeout=TIMEOUT).json()
        assert {b_["player"] for b_ in view["bets"].values()} == {"alice", "bob"}
