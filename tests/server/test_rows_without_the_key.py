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

from dicetable.cli.main import app as cli
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.server.accounts import NotAuthenticated, token_digest
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.store import account_stream as acct
from dicetable.store.chain import canonical, link_hash
from dicetable.store.event_codec import encode
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
