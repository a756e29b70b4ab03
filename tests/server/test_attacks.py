"""Issue 12's breaks, each tried as an attacker would, through the server: self-promotion,
the lockout race, guessing at unknown users, plaintext tokens, a locked-out floor, recall
leaks, unbounded input and cross-origin requests (spec/standards.md SEC-4, SEC-5, RES-5)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

import httpx
import pytest
from argon2 import PasswordHasher, extract_parameters
from fastapi.testclient import TestClient
from pydantic import BaseModel
from typer.testing import CliRunner

from dicetable.application.accounts import LOCK_AFTER, Accounts, Kind, NotAuthenticated
from dicetable.cli.main import app as cli
from dicetable.core.errors import InvalidInput
from dicetable.server.app import COOKIE, create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.door import FailureLimiter
from dicetable.server.floor import Floor
from tests.server.conftest import Login
from tests.server.pipeline_helpers import run_async
from tests.server.test_api import refused

T = "/api/tables/craps-pa-1"
IN = "/api/tables/craps-in-1"


# -- 1. separation of duties through the API ----------------------------------------------------
def test_sec_5_a_floorperson_cannot_promote_herself(login: Login) -> None:
    fran = login("fran")
    refused(fran.post(f"{IN}/staff", {"person": "fran", "role": "pit-boss"}), 403,
            "RoleNotPermitted", "duties.no_self")
    refused(fran.post(f"{IN}/staff", {"person": "dee", "role": "pit-boss"}), 403,
            "RoleNotPermitted", "duties.rank")
    refused(fran.post(f"{IN}/staff", {"person": "sam", "role": "floorperson"}), 403,
            "RoleNotPermitted", "duties.rank")
    assert "pit-boss" not in fran.get("/api/me").json()["tables"]["craps-in-1"]
    # and so she cannot unlock accounts
    refused(fran.post("/api/accounts/carol/unlock"), 403, "RoleNotPermitted", "accounts.unlock")


def test_sec_5_a_dealer_cannot_play_at_her_own_table(login: Login) -> None:
    dee = login("dee")
    refused(dee.post(f"{T}/join", {"seat": 3}), 403, "RoleNotPermitted",
            "duties.staff_no_wager")
    refused(dee.post(f"{T}/chips", {"player": "dee", "amount": 100_00}), 403,
            "RoleNotPermitted", "duties.staff_no_wager")


def test_sec_5_unlock_is_recorded_and_never_ones_own(floor: Floor, login: Login) -> None:
    for _ in range(LOCK_AFTER):
        login_as = floor.accounts
        with pytest.raises(Exception):  # noqa: B017 (NotAuthenticated, then AccountLocked)
            login_as.login("carol", "wrong-password")
    assert floor.accounts.get("carol").locked_until  # type: ignore[union-attr]
    pat = login("pat")
    assert pat.post("/api/accounts/carol/unlock").status_code == 200
    kinds = [(r.kind, r.data()["actor"]) for r in floor.store.records("account:carol")]
    assert ("AccountUnlocked", "pat") in kinds
    assert ("AccountLocked", "system") in kinds
    refused(pat.post("/api/accounts/pat/unlock"), 403, "RoleNotPermitted", "duties.no_self")


# -- 2. the lockout race --------------------------------------------------------------------
def test_sec_4_forty_wrong_passwords_at_once_lock_the_account(floor: Floor,
                                                              http: TestClient) -> None:
    passwords = [f"wrong-{i}" for i in range(40)] + [DEMO_PASSWORD]
    http.app.state.limiter.limit = 10_000  # type: ignore[attr-defined]
    checks_before = floor.accounts.password_checks
    codes = [code for code, _ in from_clients(http, [("bob", p) for p in passwords])]
    assert floor.accounts.get("bob").locked_until, codes  # type: ignore[union-attr]
    assert codes.count(200) <= 1
    # One check at a time per account: at most LOCK_AFTER wrong ones before the lock, and
    # as many again if the right password came first and reset the count.
    assert codes.count(401) <= 2 * (LOCK_AFTER - 1), codes
    assert floor.accounts.password_checks - checks_before <= 2 * LOCK_AFTER
    assert codes.count(423) >= 40 - 2 * LOCK_AFTER


def from_clients(http: TestClient, logins: list[tuple[str, str]], *, first: int = 2
                 ) -> list[tuple[int, str]]:
    """Each (username, password) sent at once, each from its own loopback address
    (127.0.0.N, the ASGI client of the request): (status, error) of each."""
    app = http.app

    async def one(i: int, username: str, password: str) -> tuple[int, str]:
        transport = httpx.ASGITransport(app=app, client=(f"127.0.0.{first + i}", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            reply = await c.post("/api/login", json={"username": username,
                                                     "password": password})
            return reply.status_code, str(reply.json().get("rule", ""))

    async def every() -> list[tuple[int, str]]:
        return list(await asyncio.gather(*(one(i, u, p) for i, (u, p) in enumerate(logins))))

    return run_async(every)


def test_sec_4_attempts_on_one_account_are_checked_one_at_a_time(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "a.db")
    accounts.create("zed", "zed-password", Kind.PLAYER)
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda i: _try(accounts, "zed", f"bad-{i}"), range(20)))
    assert results.count("401") <= LOCK_AFTER - 1
    assert accounts.password_checks <= LOCK_AFTER
    assert accounts.get("zed").locked_until  # type: ignore[union-attr]
    accounts.close()


def test_sec_4_a_floors_passwords_are_hashed_at_argon2s_own_cost(tmp_path: Path) -> None:
    """Accounts hash with Argon2id at argon2-cffi's own parameters (RFC 9106's low-memory
    choice) unless told otherwise; only the tests' floors are told (``CHEAP_HASHER``)."""
    accounts = Accounts(tmp_path / "a.db")
    try:
        accounts.create("zed", "zed-password", Kind.PLAYER)
        stored = next(r.data()["password_hash"] for r in accounts.store.records("account:zed"))
        assert stored.startswith("$argon2id$")
        own = PasswordHasher()
        assert extract_parameters(stored) == extract_parameters(own.hash("x"))
        assert (own.time_cost, own.memory_cost, own.parallelism) == (3, 65536, 4)
        assert accounts.login("zed", "zed-password")
    finally:
        accounts.close()


class _Recording(PasswordHasher):
    """A hasher that keeps the hashes it is asked to check against."""

    def __init__(self, time_cost: int, memory_cost: int, parallelism: int) -> None:
        super().__init__(time_cost=time_cost, memory_cost=memory_cost, parallelism=parallelism)
        self.checked: list[str] = []

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.checked.append(str(hash))
        return super().verify(hash, password)


@pytest.mark.parametrize("cost", [(3, 65536, 4), (1, 1024, 1)])  # argon2-cffi's own; cheap
def test_sec_4_an_unknown_user_costs_a_check_at_the_hashers_own_cost(
        tmp_path: Path, cost: tuple[int, int, int]) -> None:
    """A login for an account that does not exist checks the password against a hash made at
    the accounts' own Argon2 cost (made when first needed, not at import), as a real check
    would: no answer comes back sooner for a name that is not there."""
    hasher = _Recording(*cost)
    accounts = Accounts(tmp_path / "a.db", hasher=hasher)
    try:
        for name in ("nobody", "nobody-else"):
            with pytest.raises(NotAuthenticated):
                accounts.login(name, "guess-guess")
        assert len(hasher.checked) == 2
        for stored in hasher.checked:
            assert extract_parameters(stored) == extract_parameters(hasher.hash("x"))
    finally:
        accounts.close()


def test_sec_4_a_a_password_hashed_once_for_many_accounts_is_at_argon2s_own_cost(
        tmp_path: Path) -> None:
    """``hash_password`` (the demo floor hashes its one published password once) hashes at
    the same cost as ``create``, refuses a short password naming the rule, and each account
    given the hash logs in with the password."""
    accounts = Accounts(tmp_path / "a.db")
    try:
        with pytest.raises(InvalidInput) as refused_short:
            accounts.hash_password("short")
        assert refused_short.value.rule == "accounts.password"
        hashed = accounts.hash_password("shared-password")
        assert extract_parameters(hashed) == extract_parameters(PasswordHasher().hash("x"))
        for name in ("yan", "zed"):
            accounts.create(name, "", Kind.PLAYER, password_hash=hashed)
        assert accounts.login("yan", "shared-password")
        assert accounts.login("zed", "shared-password")
        with pytest.raises(NotAuthenticated):
            accounts.login("zed", "shared-passwore")
    finally:
        accounts.close()


def _try(accounts: Accounts, user: str, password: str) -> str:
    try:
        accounts.login(user, password)
    except NotAuthenticated:
        return "401"
    except Exception as e:  # AccountLocked, TooManyAttempts
        return type(e).__name__
    return "200"


def test_sec_4_password_checks_are_bounded_for_unknown_users(floor: Floor) -> None:
    with ThreadPoolExecutor(max_workers=40) as pool:
        results = list(pool.map(lambda i: _try(floor.accounts, f"nobody{i}", "guess-guess"),
                                range(40)))
    assert floor.accounts.most_at_once <= 2
    assert set(results) <= {"401", "TooManyAttempts"}


def test_sec_4_a_client_with_too_many_failures_is_slowed(floor: Floor) -> None:
    now = [0.0]
    limiter = FailureLimiter(limit=5, window=60.0, clock=lambda: now[0])
    with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0,
                               login_limiter=limiter)) as http:
        for i in range(5):
            assert http.post("/api/login", json={"username": f"x{i}", "password": "nopenope"}
                             ).status_code == 401
        reply = http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD})
        refused(reply, 429, "TooManyAttempts", "accounts.rate_limit")
        now[0] = 61.0  # the window has passed: counted, not timed
        assert http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD}
                         ).status_code == 200


def test_sec_4_session_tokens_are_stored_hashed(floor: Floor, http: TestClient,
                                                tmp_path: Path) -> None:
    token = http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD}
                      ).json()["token"]
    stored = [r.data()["session"] for r in floor.store.records("account:alice")
              if r.kind == "SessionOpened"]
    assert stored
    assert token not in stored
    assert all(len(s) == 64 for s in stored)
    assert not any(token in r.body for r in floor.store.records("account:alice"))


def test_sec_4_break_glass_unlock_needs_the_store_key(floor: Floor, tmp_path: Path) -> None:
    db = floor.store.location
    for _ in range(LOCK_AFTER):
        _try(floor.accounts, "pat", "wrong-password")
    assert floor.accounts.get("pat").locked_until  # type: ignore[union-attr]
    runner = CliRunner()
    other = tmp_path / "other.key"
    assert runner.invoke(cli, ["keys", "init", str(other)]).exit_code == 0
    wrong = runner.invoke(cli, ["accounts", "unlock", "pat", "--db", db, "--operator", "ops",
                                "--key", str(other)])
    assert wrong.exit_code == 2, wrong.output
    assert floor.accounts.get("pat").locked_until  # type: ignore[union-attr]
    ok = runner.invoke(cli, ["accounts", "unlock", "pat", "--db", db, "--operator", "ops",
                             "--key", f"{db}.key"])
    assert ok.exit_code == 0, ok.output
    assert not floor.accounts.get("pat").locked_until  # type: ignore[union-attr]
    last = list(floor.store.records("account:pat"))[-1].data()
    assert (last["type"], last["via"], last["actor"]) == ("AccountUnlocked", "break-glass",
                                                          "ops")


# -- 5. recall filtered by ownership ------------------------------------------------------------
def test_rec_1_recall_shows_a_player_only_her_own_bets(login: Login) -> None:
    alice, bob = login("alice"), login("bob")
    alice.post(f"{T}/bets", {"wager": "pass", "amount": 10_00})
    b = bob.post(f"{T}/bets", {"wager": "place6", "amount": 12_00}).json()["events"][0]["bet"]
    bob.patch(f"{T}/bets/{b}", {"amount": 18_00})
    bob.patch(f"{T}/bets/{b}", {"working": False})
    removed = bob.delete(f"{T}/bets/{b}").json()["events"]
    assert [e["type"] for e in removed] == ["BetRemoved"], "the remover sees its removal"
    rounds = alice.get(f"{T}/recall").json()
    seen = json.dumps(rounds)
    assert b not in seen, "Bob's changed, turned-off and removed bet leaks to Alice"
    mine = bob.get(f"{T}/recall").json()
    kinds = [a["type"] for r in mine for a in r["activity"] if a.get("bet") == b]
    assert kinds == ["BetPlaced", "BetChanged", "BetWorkingSet", "BetRemoved"]


# -- 6. bounded input, one error shape ----------------------------------------------------------
def test_res_5_huge_sequence_numbers_are_refused_not_a_500(login: Login) -> None:
    alice = login("alice")
    refused(alice.get(f"{T}/events", {"after": 9223372036854775808}), 422, "InvalidInput")
    refused(alice.get(f"{T}/events", {"after": -1}), 422, "InvalidInput")


def test_res_5_body_size_is_capped(http: TestClient, login: Login) -> None:
    big = b'{"username": "' + b"a" * 2_000_000 + b'", "password": "x"}'
    reply = http.post("/api/login", content=big, headers={"content-type": "application/json"})
    refused(reply, 413, "TooLarge", "api.body_limit")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams in
        for _ in range(100):
            yield b"a" * 10_000

    reply = http.post("/api/login", content=chunks(),
                      headers={"content-type": "application/json"})
    refused(reply, 413, "TooLarge", "api.body_limit")


def test_res_5_malformed_json_and_unknown_routes_use_the_error_shape(
        http: TestClient, login: Login) -> None:
    alice = login("alice")
    reply = http.post(f"{T}/bets", content=b"{not json", headers={
        **alice.headers, "content-type": "application/json"})
    refused(reply, 422, "InvalidInput", "api.request")
    refused(alice.get("/api/nowhere"), 404, "NotFound", "api.request")
    refused(http.put(f"{T}/bets", headers=alice.headers), 405, "MethodNotAllowed")


def test_res_5_every_4xx_is_in_the_openapi_schema(http: TestClient) -> None:
    spec = http.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            for code in ("401", "403", "404", "409", "413", "422", "423", "429"):
                assert code in op["responses"], (method, path, code)
                schema = op["responses"][code]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (path, code)


class BetBody(BaseModel):
    wager: str
    amount: int


def test_res_5_the_4xx_declared_are_what_fastapis_own_responses_declare() -> None:
    """``limits.document_errors`` writes into the document what ``FastAPI(responses=...)``
    would (without a response field per code per route): the same document, as JSON, for a
    read with a query, a command with a body, an HTML page and a route with no parameter."""
    from fastapi import FastAPI, Query
    from fastapi.responses import HTMLResponse

    from dicetable.server.limits import ERROR_RESPONSES, document_errors

    def routes(app: FastAPI) -> FastAPI:
        @app.get("/api/tables/{table_id}/events")
        def events(table_id: str, after: int = Query(0, ge=0)) -> list[dict[str, int]]:
            return []

        @app.post("/api/tables/{table_id}/bets")
        def bet(table_id: str, body: BetBody) -> dict[str, str]:
            return {}

        @app.get("/rules", response_class=HTMLResponse)
        def rules() -> str:
            return ""

        @app.get("/api/me")
        def me() -> dict[str, str]:
            return {}

        return app

    fastapis = routes(FastAPI(title="t", version="1", responses=ERROR_RESPONSES)).openapi()
    # FastAPI's own declares an HTML page's errors as HTML; the server's are JSON everywhere
    for code in ERROR_RESPONSES:
        answer = fastapis["paths"]["/rules"]["get"]["responses"][str(code)]
        answer["content"] = {"application/json": answer["content"].pop("text/html")}
    ours = document_errors(routes(FastAPI(title="t", version="1")).openapi())
    assert json.loads(json.dumps(ours)) == json.loads(json.dumps(fastapis))


def test_res_5_websocket_parameters_are_bounded(http: TestClient, login: Login) -> None:
    token = login("alice").token
    url = f"/ws/tables/craps-pa-1?after=99999999999999999999&token={token}"
    with pytest.raises(Exception), http.websocket_connect(url) as ws:  # noqa: B017 (closed)
        ws.receive_json()


# -- transport: the Origin check --------------------------------------------------------------
def test_sec_cookie_requests_from_another_origin_are_refused(http: TestClient) -> None:
    token = http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD}
                      ).json()["token"]
    http.cookies.set(COOKIE, token)
    evil = {"origin": "https://evil.example"}
    refused(http.post(f"{T}/bets", json={"wager": "pass", "amount": 500}, headers=evil), 403,
            "RoleNotPermitted", "security.origin")
    refused(http.post(f"{T}/bets", json={"wager": "pass", "amount": 500},
                      headers={"sec-fetch-site": "cross-site"}), 403, "RoleNotPermitted")
    ok = http.post(f"{T}/bets", json={"wager": "pass", "amount": 500},
                   headers={"origin": "http://testserver"})
    assert ok.status_code == 200, ok.text
    # Bearer requests are not ridden by a browser
    bearer = http.post(f"{T}/bets", json={"wager": "place8", "amount": 600},
                       headers={**evil, "authorization": f"Bearer {token}"})
    assert bearer.status_code == 200, bearer.text
    with pytest.raises(Exception), http.websocket_connect(  # noqa: B017 (closed: 4403)
            "/ws/tables/craps-pa-1", headers=evil) as ws:
        ws.receive_json()
    with http.websocket_connect("/ws/tables/craps-pa-1",
                                headers={"origin": "http://testserver"}) as ws:
        assert ws.receive_json()["type"] == "hello"
    http.cookies.clear()


def test_tokens_never_leave_in_a_kept_answer(floor: Floor, http: TestClient) -> None:
    http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD},
              headers={"idempotency-key": "login-1"})
    assert not floor.store.streams("requests")


def test_accounts_database_holds_no_plain_token(floor: Floor, http: TestClient) -> None:
    token = http.post("/api/login", json={"username": "dan", "password": DEMO_PASSWORD}
                      ).json()["token"]
    raw = Path(floor.store.location).read_bytes()
    for suffix in ("", "-wal"):
        p = Path(floor.store.location + suffix)
        if p.exists():
            raw += p.read_bytes()
    assert token.encode() not in raw
    conn = sqlite3.connect(floor.store.location)
    assert conn.execute("SELECT count(*) FROM event_log WHERE kind = 'SessionOpened'"
                        ).fetchone()[0] >= 1
    conn.close()


def test_sec_5_staff_changes_are_recorded_in_their_own_stream(floor: Floor,
                                                              login: Login) -> None:
    opening = [r.data() for r in floor.store.records("staff:craps-pa-1")]
    assert {(d["person"], d["staff_role"]) for d in opening} >= {("pat", "pit-boss"),
                                                                 ("dee", "dealer")}
    fran = login("fran")
    refused(fran.post(f"{T}/staff", {"person": "carol", "role": "dealer"}), 422,
            "InvalidInput", "authority.staff_account")  # carol is a player, not staff
    assert fran.post(f"{T}/staff", {"person": "bo", "role": "dealer"}).status_code == 200
    last = list(floor.store.records("staff:craps-pa-1"))[-1].data()
    assert (last["type"], last["person"], last["actor"], last["by_role"]) == (
        "StaffRoleGranted", "bo", "fran", "floorperson")
    assert floor.verify_all() == []
