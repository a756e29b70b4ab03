"""Exactly-once commands (spec/standards.md RES-5; issue 12 break 7): ``Idempotency-Key``.

A retry gets the original answer and never a second effect - concurrently, after the answer
was lost, across a restart; and a client that retries every unknown outcome while the server
is SIGKILLed under it ends with each intended command applied exactly once."""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg import sql

from dicetable.server import door
from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from tests.profiles import thorough
from tests.server.conftest import Client, Login
from tests.server.processes import Server, start_serve, start_uvicorn_factory
from tests.server.test_api import refused

T = "/api/tables/craps-pa-1"
KILLS = 3 if thorough() else 2
"""SIGKILLs with commands in flight: each costs a server restart that verifies the whole
floor; two in CI, three in the thorough run (``--slow``)."""
IN_FLIGHT = 4


def _chips(floor: Floor, amount: int) -> int:
    """How many ChipsBought of ``amount`` the table's log holds."""
    return sum(1 for e in floor.store.events("craps-pa-1")
               if e.kind == "ChipsBought" and getattr(e, "amount", None) == amount)


def test_res_5_a_retry_gets_the_original_answer_and_no_second_effect(
        floor: Floor, login: Login) -> None:
    dee = login("dee")
    key = {**dee.headers, "idempotency-key": "buy-1"}
    first = dee.http.post(f"{T}/chips", json={"player": "alice", "amount": 123_45}, headers=key)
    again = dee.http.post(f"{T}/chips", json={"player": "alice", "amount": 123_45}, headers=key)
    assert first.status_code == again.status_code == 200
    assert again.json()["events"] == first.json()["events"]
    assert again.headers["idempotent-replayed"] == "true"
    assert _chips(floor, 123_45) == 1
    refused(dee.http.post(f"{T}/chips", json={"player": "alice", "amount": 999},
                          headers=key), 422, "InvalidInput", "idempotency.reuse")
    # the key is the account's own: another account's same key is another request
    bo = login("bo")
    other = bo.http.post(f"{T}/chips", json={"player": "alice", "amount": 123_45},
                         headers={**bo.headers, "idempotency-key": "buy-1"})
    assert other.status_code == 200
    assert _chips(floor, 123_45) == 2


def test_res_5_a_refusal_is_kept_too(floor: Floor, login: Login) -> None:
    alice = login("alice")
    h = {**alice.headers, "idempotency-key": "bet-big"}
    first = alice.http.post(f"{T}/bets", json={"wager": "pass", "amount": 10**11}, headers=h)
    again = alice.http.post(f"{T}/bets", json={"wager": "pass", "amount": 10**11}, headers=h)
    assert first.status_code == again.status_code == 422
    assert first.json() == again.json()


def test_res_5_concurrent_duplicates_apply_once(floor: Floor, login: Login) -> None:
    dee = login("dee")
    h = {**dee.headers, "idempotency-key": "burst"}

    def send(_: int) -> int:
        return int(dee.http.post(f"{T}/chips", json={"player": "bob", "amount": 777_77},
                                 headers=h).status_code)

    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(send, range(8)))
    assert codes == [200] * 8
    assert _chips(floor, 777_77) == 1


def test_res_5_an_answer_lost_in_a_crash_is_rebuilt_from_the_log(
        demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "floor.db"
    shutil.copyfile(demo_db, db)
    shutil.copyfile(f"{demo_db}.key", f"{db}.key")
    floor, _ = build_floor(db)
    with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
        dee = Client(http, "dee")
        h = {**dee.headers, "idempotency-key": "lost-answer"}
        with monkeypatch.context() as crash:  # the crash came before the answer was kept
            crash.setattr(door.Answers, "put", lambda *a, **k: None)
            first = http.post(f"{T}/chips", json={"player": "carol", "amount": 314_15},
                              headers=h)
        assert first.status_code == 200
        assert not floor.store.streams("requests")
        token = dee.token
    floor.close()
    floor.store.close()
    floor.accounts.close()
    again, _ = build_floor(db)  # a restart
    try:
        with TestClient(create_app(again, electronic_loop=False, verify_seconds=0)) as http:
            retry = http.post(f"{T}/chips", json={"player": "carol", "amount": 314_15},
                              headers={"authorization": f"Bearer {token}",
                                       "idempotency-key": "lost-answer"})
            assert retry.status_code == 200, retry.text
            assert [e["seq"] for e in retry.json()["events"]] == [
                e["seq"] for e in first.json()["events"]]
            assert _chips(again, 314_15) == 1
    finally:
        again.close()
        again.store.close()
        again.accounts.close()


# -- the kill test ------------------------------------------------------------------------------
def _start(db: Path, port: int | None = None) -> Server:
    """``dicetable serve`` on ``db``, answering (it verifies every stream first); on ``port``
    where it is still free (a restart keeps its clients' address)."""
    return start_serve(["--db", str(db), "--verify-every", "0"], port=port)


@pytest.mark.slow
def test_res_5_retrying_every_unknown_outcome_across_sigkills_applies_each_once(
        demo_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    shutil.copyfile(demo_db, db)
    shutil.copyfile(f"{demo_db}.key", f"{db}.key")

    def applied() -> list[int]:
        conn = sqlite3.connect(db)
        amounts = [json.loads(b)["amount"] for (b,) in conn.execute(
            "SELECT body FROM event_log WHERE table_id = 'craps-pa-1' AND kind = 'ChipsBought'")]
        conn.close()
        return amounts

    _exactly_once_across_kills(lambda port: _start(db, port), applied)


@pytest.mark.slow
def test_res_5_retrying_every_unknown_outcome_across_sigkills_applies_each_once_on_postgresql(
        postgres_floor: tuple[str, str]) -> None:
    """The same on PostgreSQL, whose group commit is sent as one pipeline (the heads locked,
    then the rows, the heads, the notices and the commit together): a kill between them
    leaves the transaction whole or absent."""
    url, schema = postgres_floor

    def applied() -> list[int]:
        with psycopg.connect(url) as conn:
            rows = conn.execute(sql.SQL(
                "SELECT body FROM {} WHERE table_id = 'craps-pa-1' AND kind = 'ChipsBought'"
            ).format(sql.Identifier(schema, "event_log"))).fetchall()
        return [json.loads(b)["amount"] for (b,) in rows]

    env = {"DICETABLE_DB": url, "DICETABLE_SCHEMA": schema, "DICETABLE_ELECTRONIC": "0",
           "DICETABLE_VERIFY_EVERY": "0"}
    _exactly_once_across_kills(lambda port: start_uvicorn_factory(env), applied)


def _exactly_once_across_kills(start: Callable[[int | None], Server],
                               applied: Callable[[], list[int]]) -> None:
    """Buy-ins, each with its own idempotency key, sent ``IN_FLIGHT`` at a time while the
    server is SIGKILLed ``KILLS`` times with requests in flight; each one whose outcome was
    not heard is retried with its key until answered. Each is applied exactly once."""
    rng = random.Random(12)
    intended = {f"cmd-{i}": 10_000 + i for i in range(12)}
    unknown = replayed = 0
    answered: dict[str, int] = {}
    kills = 0
    server = start(None)
    try:
        port = server.port
        token = httpx.post(f"http://127.0.0.1:{port}/api/login",
                           json={"username": "dee", "password": DEMO_PASSWORD},
                           timeout=30).json()["token"]
        pending = list(intended)
        rounds = 0
        last_round = 0.1
        kill_round = rng.randint(1, 2)
        with ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
            while pending or kills < KILLS:
                if not pending:  # more work until every planned kill has happened
                    for i in range(len(intended), len(intended) + IN_FLIGHT):
                        intended[f"cmd-{i}"] = 10_000 + i
                        pending.append(f"cmd-{i}")
                batch = pending[:IN_FLIGHT]
                futures = {key: pool.submit(
                    httpx.post, f"http://127.0.0.1:{port}{T}/chips",
                    json={"player": "alice", "amount": intended[key]},
                    headers={"authorization": f"Bearer {token}", "idempotency-key": key},
                    timeout=30) for key in batch}
                rounds += 1
                began = time.monotonic()
                if rounds == kill_round and kills < KILLS:  # kill with requests in flight
                    # Somewhere within a round's usual length: the place the kill lands is
                    # random; what is checked afterwards does not depend on it.
                    time.sleep(rng.uniform(0.2, 1.1) * last_round)
                    server.proc.send_signal(signal.SIGKILL)
                    server.proc.wait()
                    # its socket too, where this process holds it (uvicorn --fd): a request
                    # not yet sent is refused at once, not queued until it times out
                    server.stop()
                    kills += 1
                for key, future in futures.items():
                    try:
                        reply = future.result()
                    except httpx.HTTPError:
                        unknown += 1  # unknown outcome: retried with the same key
                        continue
                    if reply.headers.get("idempotent-replayed"):
                        replayed += 1  # a retry of a command applied before the kill
                    if reply.status_code == 200:
                        answered[key] = reply.status_code
                        pending.remove(key)
                if server.proc.poll() is None:
                    last_round = time.monotonic() - began
                else:
                    server.stop()
                    server = start(port)
                    port = server.port
                    kill_round = rounds + rng.randint(1, 2)
    finally:
        server.stop(kill=True)
    print(f"\nexactly-once: {kills} SIGKILLs, {unknown} unknown outcomes retried, {replayed} "
          "retries answered from the record of a command already applied")
    assert kills == KILLS
    assert set(answered) == set(intended)
    amounts = applied()
    for key, amount in intended.items():
        assert amounts.count(amount) == 1, f"{key}: applied {amounts.count(amount)} times"


def test_res_5_the_key_is_documented_on_every_mutating_operation(http: TestClient) -> None:
    spec = http.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            names = [p["name"] for p in op.get("parameters", [])]
            wanted = method in ("post", "patch", "delete") and path not in ("/api/login",
                                                                             "/api/logout")
            assert ("Idempotency-Key" in names) == wanted, (method, path)


def test_res_5_a_malformed_key_is_refused(login: Login) -> None:
    alice = login("alice")
    reply = alice.http.post(f"{T}/bets", json={"wager": "pass", "amount": 500},
                            headers={**alice.headers, "idempotency-key": "x" * 129})
    refused(reply, 422, "InvalidInput", "idempotency.key")
