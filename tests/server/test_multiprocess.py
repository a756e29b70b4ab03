"""Several server processes share one PostgreSQL store: an event appended through one process
reaches the WebSocket clients of every process (LISTEN/NOTIFY)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from websockets.sync.client import connect

from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.main import build_floor
from tests.store.conftest import pg_url_or_skip


@pytest.fixture
def postgres_floor() -> Iterator[tuple[str, str]]:
    url = pg_url_or_skip()
    schema = f"mp_{uuid.uuid4().hex[:10]}"
    floor, credentials = build_floor(url, schema=schema)
    assert credentials
    floor.close()
    floor.store.close()
    floor.accounts.close()
    yield url, schema
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(url: str, schema: str, port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, DICETABLE_DB=url, DICETABLE_SCHEMA=schema,
               DICETABLE_ELECTRONIC="0")
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "dicetable.server.main:app_from_env",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300  # a fresh process compiles each table: slow if loaded
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"server on {port} exited: {err}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"server on {port} did not start")


def _login(port: int, user: str) -> str:
    reply = httpx.post(f"http://127.0.0.1:{port}/api/login",
                       json={"username": user, "password": DEMO_PASSWORD})
    reply.raise_for_status()
    token: str = reply.json()["token"]
    return token


def test_an_event_appended_through_one_process_reaches_the_other(
        postgres_floor: tuple[str, str]) -> None:
    url, schema = postgres_floor
    ports = [_free_port(), _free_port()]
    procs = [_serve(url, schema, port) for port in ports]
    try:
        for port, proc in zip(ports, procs, strict=True):
            _wait(port, proc)
        a, b = ports
        alice_a = _login(a, "alice")
        bob_b = _login(b, "bob")
        dee_b = _login(b, "dee")
        with connect(f"ws://127.0.0.1:{b}/ws/tables/craps-pa-1?token={dee_b}") as ws:
            hello = json.loads(ws.recv(timeout=10))
            assert hello["type"] == "hello"
            reply = httpx.post(f"http://127.0.0.1:{a}/api/tables/craps-pa-1/bets",
                               json={"wager": "pass", "amount": 1000},
                               headers={"authorization": f"Bearer {alice_a}"})
            assert reply.status_code == 200, reply.text
            pushed = json.loads(ws.recv(timeout=10))
            assert [e["type"] for e in pushed["events"]] == ["BetPlaced"]
            assert pushed["events"][0]["player"] == "alice"
        # the second process decides on the state the first one wrote
        reply = httpx.post(f"http://127.0.0.1:{b}/api/tables/craps-pa-1/bets",
                           json={"wager": "pass", "amount": 500},
                           headers={"authorization": f"Bearer {bob_b}"})
        assert reply.status_code == 200, reply.text
        view = httpx.get(f"http://127.0.0.1:{a}/api/tables/craps-pa-1",
                         headers={"authorization": f"Bearer {_login(a, 'pat')}"}).json()
        assert {b_["player"] for b_ in view["bets"]} == {"alice", "bob"}
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=10)
