"""A lock ends every session of the account, and a flood of wrong passwords cannot lock out
a user who types the right one (spec/standards.md SEC-4; the lock after three failures is
N.J.A.C. 13:69E-1.37A, other-jurisdiction).

Distinct clients are distinct loopback addresses (127.0.0.N) given as the ASGI client of each
request, or real processes on loopback: nothing here trusts ``X-Forwarded-For``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from dicetable.application.accounts import (
    LOCK_AFTER,
    LOCKOUT,
    AccountLocked,
    Accounts,
    NotAuthenticated,
)
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.socket_sessions import SESSION_ENDED
from tests.server.conftest import Client
from tests.server.pipeline_helpers import run_async
from tests.server.processes import TIMEOUT, login, running
from tests.server.test_attacks import from_clients
from tests.server.test_multiprocess import _serve

T = "/api/tables/craps-pa-1"


def _kinds(floor: Floor, user: str) -> list[str]:
    return [r.kind for r in floor.store.records(f"account:{user}")]


def _lock(http: TestClient, user: str) -> list[int]:
    """LOCK_AFTER wrong passwords for ``user``, each from its own address."""
    return [code for code, _ in from_clients(http, [(user, f"wrong-{i}")
                                                    for i in range(LOCK_AFTER)], first=200)]


def test_sec_4_the_lock_rule_is_a_stand_in_and_says_so() -> None:
    assert LOCKOUT.after == 3
    assert LOCKOUT.status == "other-jurisdiction"
    assert "13:69E-1.37A" in LOCKOUT.citation


# -- a lock ends every session ------------------------------------------------------------------
def test_sec_4_a_locked_player_can_no_longer_bet(floor: Floor, http: TestClient) -> None:
    alice = Client(http, "alice")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    codes = [c for c, _ in from_clients(http, [("alice", f"wrong-{i}") for i in range(1)],
                                        first=200)]
    codes += [c for c, _ in from_clients(http, [("alice", "wrong-x")], first=201)]
    codes += [c for c, _ in from_clients(http, [("alice", "wrong-y")], first=202)]
    assert codes == [401, 401, 423]
    reply = alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000})
    assert reply.status_code == 401, reply.text  # at once, in the process that locked it
    assert alice.get("/api/me").status_code == 401
    assert _kinds(floor, "alice")[-2:] == ["LoginFailed", "AccountLocked"]


def test_sec_5_a_locked_pit_boss_can_no_longer_assign_staff(floor: Floor,
                                                           http: TestClient) -> None:
    pat = Client(http, "pat")
    assert pat.post(f"{T}/staff", {"person": "sam", "role": "dealer"}).status_code == 200
    for i in range(LOCK_AFTER):  # one after the other: each answered before the next
        from_clients(http, [("pat", f"wrong-{i}")], first=210 + i)
    assert floor.accounts.get("pat").locked_until  # type: ignore[union-attr]
    reply = pat.post(f"{T}/staff", {"person": "bo", "role": "dealer"})
    assert reply.status_code == 401, reply.text
    assert pat.post("/api/accounts/carol/unlock").status_code == 401


def test_sec_4_a_lock_reaches_a_second_process_within_the_cache_delay(
        postgres_floor: tuple[str, str]) -> None:
    """Two server processes on one PostgreSQL store: alice's and pat's sessions, opened and
    used on B, end there once A locks their accounts (the store's notice; at the latest
    after ``SESSION_CACHE_SECONDS``), and alice's WebSocket on B is closed (4401)."""
    url, schema = postgres_floor
    with running([_serve(url, schema), _serve(url, schema)]) as servers, \
            contextlib.ExitStack() as opened:
        a, b = (server.port for server in servers)
        alice = {"authorization": f"Bearer {login(b, 'alice')}"}
        pat = {"authorization": f"Bearer {login(b, 'pat')}"}
        on_b = f"http://127.0.0.1:{b}{T}"
        assert httpx.post(f"{on_b}/bets", json={"wager": "pass", "amount": 1000},
                          headers=alice, timeout=TIMEOUT).status_code == 200
        token = alice["authorization"][7:]
        ws = opened.enter_context(connect(
            f"ws://127.0.0.1:{b}/ws/tables/craps-pa-1?token={token}", open_timeout=60))
        assert json.loads(ws.recv(timeout=60))["type"] == "hello"
        assert httpx.post(f"{on_b}/staff", json={"person": "sam", "role": "dealer"},
                          headers=pat, timeout=TIMEOUT).status_code == 200
        for user in ("alice", "pat"):
            codes = [httpx.post(f"http://127.0.0.1:{a}/api/login",
                                json={"username": user, "password": f"wrong-{i}"},
                                timeout=TIMEOUT).status_code for i in range(LOCK_AFTER)]
            assert codes == [401] * (LOCK_AFTER - 1) + [423]
        refused = {"alice": 0, "pat": 0}
        accepted_after_lock = 0
        guard = time.monotonic() + 120  # against a hang: the notice comes within moments
        while time.monotonic() < guard:  # asked again and again until refused
            bet = httpx.post(f"{on_b}/bets", json={"wager": "pass", "amount": 500},
                             headers=alice, timeout=TIMEOUT)
            staff = httpx.post(f"{on_b}/staff", json={"person": "bo", "role": "dealer"},
                               headers=pat, timeout=TIMEOUT)
            refused["alice"] += bet.status_code == 401
            refused["pat"] += staff.status_code == 401
            accepted_after_lock += bet.status_code == 200
            if all(refused.values()):
                break
            time.sleep(0.1)
        assert all(refused.values()), refused
        # once refused, refused for good
        assert httpx.post(f"{on_b}/bets", json={"wager": "pass", "amount": 500},
                          headers=alice, timeout=TIMEOUT).status_code == 401
        assert httpx.get(f"http://127.0.0.1:{b}/api/me", headers=pat,
                         timeout=TIMEOUT).status_code == 401
        closed = None
        for _ in range(100):  # pushes of alice's refused bets may come first
            try:
                ws.recv(timeout=60)
            except ConnectionClosed as gone:
                closed = gone.rcvd.code if gone.rcvd is not None else None
                break
        assert closed == SESSION_ENDED


# -- a flood cannot turn the lock against a user -------------------------------------------------
def test_sec_4_a_login_refused_for_capacity_is_not_a_failedlogin(floor: Floor,
                                                                   http: TestClient) -> None:
    waiting = floor.accounts.checks.waiting
    floor.accounts.checks.waiting = 0  # every check slot taken: every login refused at once
    tries = from_clients(http, [("alice", DEMO_PASSWORD), ("alice", "wrong-1"),
                                ("alice", "wrong-2"), ("alice", "wrong-3"),
                                ("alice", DEMO_PASSWORD)])
    assert [c for c, _ in tries] == [429] * 5
    assert {rule for _, rule in tries} == {"accounts.concurrency"}
    floor.accounts.checks.waiting = waiting
    assert "LoginFailed" not in _kinds(floor, "alice")
    assert floor.accounts.get("alice").failed == 0  # type: ignore[union-attr]
    assert from_clients(http, [("alice", DEMO_PASSWORD)])[0][0] == 200


def test_sec_4_a_login_refused_for_rate_is_not_a_failedlogin(floor: Floor,
                                                               http: TestClient) -> None:
    http.app.state.limiter.limit = 1  # type: ignore[attr-defined]
    assert from_clients(http, [("nobody", "wrong-pass")], first=9)[0][0] == 401
    for i in range(LOCK_AFTER + 1):  # the same client, now over its limit
        assert from_clients(http, [("alice", f"wrong-{i}")], first=9)[0] == (
            429, "accounts.rate_limit")
    assert "LoginFailed" not in _kinds(floor, "alice")
    assert not floor.accounts.get("alice").locked_until  # type: ignore[union-attr]


def test_sec_4_a_wrong_password_flood_from_40_addresses_never_locks_a_user_out(
        floor: Floor, http: TestClient) -> None:
    """While 40 addresses keep sending wrong passwords for unknown names, alice logs in with
    the right one (a 429 on the way is retried: it is not a failed login), three times, and
    is never locked."""
    http.app.state.limiter.limit = 1_000_000  # type: ignore[attr-defined]
    app = http.app
    checks_before = floor.accounts.password_checks
    counts = {"flood": 0, "flood_429": 0, "alice_200": 0, "alice_429": 0, "alice_other": 0}

    async def post(client: httpx.AsyncClient, user: str, password: str) -> httpx.Response:
        return await client.post("/api/login", json={"username": user, "password": password})

    def client_at(address: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(address, 4000)),
                                 base_url="http://testserver")

    async def flood(n: int, stop: asyncio.Event) -> None:
        async with client_at(f"127.0.0.{10 + n}") as c:
            i = 0
            while not stop.is_set():
                reply = await post(c, f"nobody-{n}-{i}", "wrong-password")
                counts["flood"] += 1
                counts["flood_429"] += reply.status_code == 429
                i += 1

    async def alice(stop: asyncio.Event) -> None:
        async with client_at("127.0.0.200") as c:
            while counts["flood"] < 40:  # the flood is under way
                await asyncio.sleep(0.01)
            while counts["alice_200"] < 3:
                reply = await post(c, "alice", DEMO_PASSWORD)
                key = {200: "alice_200", 429: "alice_429"}.get(reply.status_code,
                                                              "alice_other")
                counts[key] += 1
                if key == "alice_other":
                    break
        stop.set()

    async def run() -> None:
        stop = asyncio.Event()
        await asyncio.gather(alice(stop), *(flood(n, stop) for n in range(40)))

    run_async(run)
    assert counts["alice_other"] == 0, counts
    assert counts["alice_200"] == 3, counts
    assert floor.accounts.password_checks - checks_before >= 40 + 3  # the flood was checked
    assert "LoginFailed" not in _kinds(floor, "alice")
    assert "AccountLocked" not in _kinds(floor, "alice")
    account = floor.accounts.get("alice")
    assert account is not None
    assert (account.failed, account.locked_until) == (0, None)


# -- a lock closes the account's open WebSockets --------------------------------------------------
def _closed_with(ws: Any) -> int | None:
    """Read until the server closes the socket: its close code (None: it never did, within a
    bounded number of messages; a guard, not a timing)."""
    for _ in range(100):
        try:
            ws.receive_json()
        except WebSocketDisconnect as gone:
            return int(gone.code)
    return None


def test_sec_4_a_lock_closes_the_accounts_open_websockets(floor: Floor,
                                                           http: TestClient) -> None:
    alice, bob = Client(http, "alice"), Client(http, "bob")
    sockets = http.app.state.sockets  # type: ignore[attr-defined]
    with http.websocket_connect(f"/ws/tables/craps-pa-1?token={alice.token}") as mine, \
            http.websocket_connect(f"/ws/tables/craps-pa-1?token={bob.token}") as other:
        assert mine.receive_json()["type"] == "hello"
        assert other.receive_json()["type"] == "hello"
        codes = [from_clients(http, [("alice", f"wrong-{i}")], first=80 + i)[0][0]
                 for i in range(LOCK_AFTER)]
        assert codes == [401] * (LOCK_AFTER - 1) + [423]
        assert _closed_with(mine) == SESSION_ENDED
        assert sockets.ended == 1
        # bob's socket is untouched: his bet is pushed to it
        assert bob.post(f"{T}/bets", {"wager": "pass", "amount": 500}).status_code == 200
        assert other.receive_json()["type"] != "hello"
    with pytest.raises(WebSocketDisconnect) as refused, http.websocket_connect(
            f"/ws/tables/craps-pa-1?token={alice.token}") as again:
        again.receive_json()
    assert refused.value.code == SESSION_ENDED
    assert alice.get("/api/me").status_code == 401


def test_sec_4_a_socket_whose_lock_came_from_another_process_closes_on_the_sweep(
        floor: Floor, http: TestClient) -> None:
    """A change that sends this process no notice (another process on the same store): the
    sweep, every ``SESSION_CACHE_SECONDS``, reads each open socket's session from its log.
    The sweep is run here as the server runs it (``OpenSockets.check``), once."""
    alice = Client(http, "alice")
    sockets = http.app.state.sockets  # type: ignore[attr-defined]
    other = Accounts(floor.store.location, key=floor.store.key)  # "another process"
    with http.websocket_connect(f"/ws/tables/craps-pa-1?token={alice.token}") as mine:
        assert mine.receive_json()["type"] == "hello"
        try:  # its own store object: its notices reach only its own listeners
            for i in range(LOCK_AFTER):
                with contextlib.suppress(NotAuthenticated, AccountLocked):
                    other.login("alice", f"wrong-{i}")
        finally:
            other.close()
        http.portal.call(sockets.check)  # type: ignore[union-attr]  # (or the 5 s sweep did)
        assert _closed_with(mine) == SESSION_ENDED
        assert sockets.ended == 1
