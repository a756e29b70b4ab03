"""Only what the keyed chain vouches for grants power (spec/standards.md MEM-2, SEC-4, SEC-5).

An insider who can write the database but does not hold the chain key writes rows directly
(sqlite3, no dicetable code in the way): a session for the pit boss, an account's kind, a
password hash, a staff role at a table. The best such an insider can do is link the rows with
the plain SHA-256 chain and move the recorded head. Through the real server each forged row
grants nothing (401/403/423), and ``dicetable audit verify`` and the server's periodic
verification (``Floor.verify_all``) report the stream.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from dicetable.application.accounts import NotAuthenticated, token_digest
from dicetable.cli.main import app as cli
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.store import account_stream as acct
from dicetable.store.chain import canonical, encode, link_hash
from dicetable.store.staff_stream import StaffRoleGranted
from dicetable.table.events import StaffAssigned
from tests.server.conftest import Client

T = "craps-pa-1"
AT = "2026-12-01T12:00:00+00:00"


def _head(conn: sqlite3.Connection, stream: str) -> tuple[int, str]:
    seq, h = conn.execute("SELECT seq, hash FROM table_heads WHERE table_id = ?",
                          (stream,)).fetchone()
    return int(seq), str(h)


def forge(db: str, stream: str, make: type[Event], **fields: object) -> None:
    """Append one event to ``stream`` as an insider without the key: SHA-256 links, head
    moved to it."""
    conn = sqlite3.connect(db)
    seq, prev = _head(conn, stream)
    kind, body = encode(make(seq=seq + 1, **fields))  # type: ignore[arg-type]
    h = link_hash(prev, body)  # no key: the plain chain
    conn.execute("INSERT INTO event_log VALUES (?, ?, ?, ?, ?, ?)",
                 (stream, seq + 1, kind, body, prev, h))
    conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                 (seq + 1, h, stream))
    conn.commit()
    conn.close()


def rewrite(db: str, stream: str, seq: int, **changes: object) -> None:
    """Change fields of event ``seq`` and re-link everything after it without the key."""
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT seq, body, prev_hash FROM event_log WHERE table_id = ? AND "
                        "seq >= ? ORDER BY seq", (stream, seq)).fetchall()
    prev = str(rows[0][2])
    for n, body, _ in rows:
        if n == seq:
            body = canonical({**json.loads(body), **changes})
        h = link_hash(prev, body)
        conn.execute("UPDATE event_log SET body = ?, prev_hash = ?, hash = ? WHERE "
                     "table_id = ? AND seq = ?", (body, prev, h, stream, n))
        prev = h
    conn.execute("UPDATE table_heads SET hash = ? WHERE table_id = ?", (prev, stream))
    conn.commit()
    conn.close()


def audit(db: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "verify", db, "--quick"])
    return result.exit_code, result.output


def test_mem_2_a_session_written_without_the_key_does_not_act_as_the_pit_boss(
        floor: Floor, http: TestClient) -> None:
    db = floor.store.location
    token = f"{secrets.token_urlsafe(32)}.pat"
    forge(db, "account:pat", acct.SessionOpened, account="pat", at=AT,
          session=token_digest(token), expires="2099-01-01T00:00:00+00:00")
    forged = {"authorization": f"Bearer {token}"}
    me = http.get("/api/me", headers=forged)
    assert me.status_code == 401
    assert "fails verification" in me.json()["message"]
    assert http.post(f"/api/tables/{T}/staff", json={"person": "sam", "role": "dealer"},
                     headers=forged).status_code == 401
    assert http.post("/api/accounts/carol/unlock", headers=forged).status_code == 401
    code, out = audit(db)
    assert code == 1
    assert "account:pat" in out
    assert "account:pat" in floor.verify_all()  # the running server's periodic check
    # the real pit boss is refused too until the log is restored: nothing unverified counts
    assert http.post("/api/login", json={"username": "pat", "password": DEMO_PASSWORD}
                     ).status_code in (401, 423)


def test_sec_4_an_account_kind_changed_without_the_key_is_refused_and_reported(
        floor: Floor, http: TestClient) -> None:
    alice = Client(http, "alice")  # a session opened before the change
    db = floor.store.location
    rewrite(db, "account:alice", 1, account_kind="staff")
    floor.accounts.sessions.clear()  # past the cache's delay
    assert alice.get("/api/me").status_code == 401
    assert http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD}
                     ).status_code == 401
    code, out = audit(db)
    assert code == 1
    assert "account:alice" in out
    assert "account:alice" in floor.verify_all()
    assert "alice" not in [a["username"] for a in Client(http, "pat").get("/api/pit")
                           .json()["accounts"]]


def test_sec_4_a_password_hash_written_without_the_key_opens_nothing(
        floor: Floor, http: TestClient) -> None:
    db = floor.store.location
    mine = PasswordHasher().hash("the-insiders-password")
    rewrite(db, "account:pat", 1, password_hash=mine)
    reply = http.post("/api/login", json={"username": "pat",
                                          "password": "the-insiders-password"})
    assert reply.status_code == 401, reply.text
    assert "fails verification" in reply.json()["message"]
    code, out = audit(db)
    assert code == 1
    assert "account:pat" in out
    assert "account:pat" in floor.verify_all()


def test_sec_5_a_staff_role_written_without_the_key_is_refused_and_reported(
        floor: Floor, http: TestClient) -> None:
    db = floor.store.location
    forge(db, T, StaffAssigned, table=T, actor="pat", role=Role.PIT_BOSS, at=AT,
          person="bo", staff_role=Role.PIT_BOSS)
    forge(db, f"staff:{T}", StaffRoleGranted, table_id=T, actor="pat", at=AT, person="bo",
          staff_role="pit-boss", table_seq=1)
    assert set(floor.verify_all()) >= {T, f"staff:{T}"}
    bo = Client(http, "bo")
    reply = bo.post(f"/api/tables/{T}/staff", {"person": "sam", "role": "dealer"})
    assert reply.status_code == 423, reply.text  # the table is faulted, not served
    assert "pit-boss" not in bo.get("/api/me").json()["tables"].get(T, [])
    code, out = audit(db)
    assert code == 1
    assert T in out
    assert f"staff:{T}" in out


def test_mem_2_a_keyless_session_digest_is_never_a_session(floor: Floor) -> None:
    """The shape of a valid token is not enough: its digest must be in the verified chain."""
    for token in ("guess", "guess.pat", f"{'x' * 43}.pat", ".pat", "pat."):
        with pytest.raises(NotAuthenticated):
            floor.accounts.session(token)


def test_mem_2_an_untouched_floor_verifies_every_kind_with_its_checkpoints(
        floor: Floor, http: TestClient, tmp_path: Path) -> None:
    Client(http, "alice").post("/api/logout")
    db = floor.store.location
    kinds = {s.partition(":")[0] for s in floor.store.stream_ids() if ":" in s}
    assert kinds >= {"account", "staff", "custody"}
    full = CliRunner().invoke(cli, ["audit", "verify", db])  # with the replay and invariants
    assert full.exit_code == 0, full.output
    cps = tmp_path / "cp.jsonl"
    assert CliRunner().invoke(cli, ["audit", "checkpoint", db, "--checkpoints", str(cps)]
                              ).exit_code == 0
    assert '"account:alice"' in cps.read_text()
    checked = CliRunner().invoke(cli, ["audit", "verify", db, "--checkpoints", str(cps)])
    assert checked.exit_code == 0, checked.output
    exported = CliRunner().invoke(cli, ["export", db, "--table", "account:alice"])
    assert exported.exit_code == 0
    assert [json.loads(line)["kind"] for line in exported.output.splitlines()][-2:] == [
        "SessionOpened", "SessionClosed"]


def unforge(db: str, stream: str, to: int) -> None:
    """Restore ``stream`` to its first ``to`` events: the rows after them dropped and the
    recorded head moved back onto the last one kept (also what a truncation looks like)."""
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM event_log WHERE table_id = ? AND seq > ?", (stream, to))
    (h,) = conn.execute("SELECT hash FROM event_log WHERE table_id = ? AND seq = ?",
                        (stream, to)).fetchone()
    conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                 (to, h, stream))
    conn.commit()
    conn.close()


def test_mem_2_a_row_forged_only_in_a_staff_stream_is_faulted_by_the_running_server(
        floor: Floor, http: TestClient) -> None:
    """The staff stream by itself (its table untouched): the next periodic verification
    faults it, the pit sees it, and its clear is the whole-log clear."""
    db = floor.store.location
    stream = f"staff:{T}"
    kept = _head(sqlite3.connect(db), stream)[0]
    forge(db, stream, StaffRoleGranted, table_id=T, actor="pat", at=AT, person="bo",
          staff_role="pit-boss", table_seq=1)
    assert floor.verify_all() == [stream]  # the stream alone, not its table
    assert stream in floor.faults.open
    assert T not in floor.faults.open
    pat = Client(http, "pat")
    assert stream in [f["table"] for f in pat.get("/api/faults").json()]
    assert stream in [f["table"] for f in pat.get("/api/pit").json()["faults"]]
    bo = Client(http, "bo")
    assert "pit-boss" not in bo.get("/api/me").json()["tables"].get(T, [])
    assert bo.post(f"/api/tables/{T}/staff", {"person": "sam", "role": "dealer"}
                   ).status_code == 403
    clear = f"/api/tables/{stream}/fault/clear"
    refused = pat.post(clear, {"reason": "looked at it"})
    assert refused.status_code == 409, refused.text  # the forged row is still there
    assert "still fails verification" in refused.json()["message"]
    assert stream in floor.faults.open
    unforge(db, stream, kept)
    cleared = pat.post(clear, {"reason": "forged row removed, log restored"})
    assert cleared.status_code == 200, cleared.text
    assert stream not in floor.faults.open
    assert floor.verify_all() == []


def test_mem_2_an_account_log_cut_back_past_its_lock_grants_nothing(
        floor: Floor, http: TestClient) -> None:
    """Dropping the lock (and the failed logins) from the end of an account's stream and
    moving its head back needs no key, and the shorter chain verifies: the process that read
    the lock refuses the account at once, and its periodic verification faults the stream."""
    from tests.server.test_attacks import from_clients
    db = floor.store.location
    alice = Client(http, "alice")
    opened = _head(sqlite3.connect(db), "account:alice")[0]
    codes = [from_clients(http, [("alice", f"wrong-{i}")], first=60 + i)[0][0]
             for i in range(3)]
    assert codes == [401, 401, 423]
    assert alice.get("/api/me").status_code == 401
    unforge(db, "account:alice", opened)  # the lock and the failures gone, the session back
    assert alice.get("/api/me").status_code == 401
    assert "account:alice" in floor.verify_all()
    floor.accounts.sessions.clear()
    assert alice.get("/api/me").status_code == 401
    assert http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD}
                     ).status_code in (401, 423)


def test_mem_2_a_row_forged_in_a_requests_stream_is_faulted_and_replays_nothing(
        floor: Floor, http: TestClient) -> None:
    from dicetable.store.request_stream import RequestRecorded
    db = floor.store.location
    alice = Client(http, "alice")
    keyed = {**alice.headers, "idempotency-key": "bet-1"}
    first = http.post(f"/api/tables/{T}/bets", json={"wager": "pass", "amount": 500},
                      headers=keyed)
    assert first.status_code == 200, first.text
    forge(db, "requests:alice", RequestRecorded, account="alice", at=AT,
          scope="alice:bet-2", fingerprint="0" * 64, status=200,
          body='{"events": [], "balance": 99999999}')
    assert floor.verify_all() == ["requests:alice"]
    again = http.post(f"/api/tables/{T}/bets", json={"wager": "pass", "amount": 500},
                      headers={**alice.headers, "idempotency-key": "bet-2"})
    assert again.status_code == 423, again.text
    assert again.json()["rule"] == "integrity.fault"
    assert "99999999" not in again.text


def test_sec_5_a_staff_role_forged_into_a_loaded_tables_log_is_refused_before_verification(
        floor: Floor, http: TestClient) -> None:
    """Between two periodic verifications: the server folds in rows another process
    appended only when each is a link of the keyed chain, so the forged assignment faults the
    table on its next read and grants nothing."""
    db = floor.store.location
    bo = Client(http, "bo")
    forge(db, T, StaffAssigned, table=T, actor="pat", role=Role.PIT_BOSS, at=AT,
          person="bo", staff_role=Role.PIT_BOSS)
    reply = bo.post(f"/api/tables/{T}/staff", {"person": "sam", "role": "dealer"})
    assert reply.status_code in (403, 423), reply.text
    assert T in floor.faults.open
    assert "forged" in floor.faults.open[T]["what"] or "written without the key" in \
        floor.faults.open[T]["detail"]
    assert "pit-boss" not in bo.get("/api/me").json()["tables"].get(T, [])
    assert sam_is_not_dealer(floor)


def sam_is_not_dealer(floor: Floor) -> bool:
    return all(e.person != "sam" or e.staff_role != Role.DEALER
               for e in floor.store.table_events(T) if isinstance(e, StaffAssigned)
               and e.actor == "bo")
