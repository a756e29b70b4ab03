"""A fault is cleared only when the whole log verifies, and a head never moves back unseen
(spec/standards.md MEM-2: an integrity method checked continually; MEM-3: a critical memory
error stops play until an authorised clear).

An insider who can write the database drops the newest events and moves the head back (no key
needed: the shorter chain still verifies), or replaces them with forged ones chained with the
key. The running server remembers the newest head it committed or read, so it faults the
table on its next read, command or verification; offline, only the signed checkpoints can
find it, and ``audit verify`` says so. A fault is cleared only once the chain, the
checkpoints and the adjudication all hold - through the pit boss's route and the CLI alike.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from dicetable.application.integrity import FAULTS, Faults
from dicetable.cli.main import app as cli
from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from dicetable.store.chain import canonical, link_hash
from dicetable.store.keys import read_key
from dicetable.store.sqlite import SqliteStore
from tests.server.conftest import Client, close_floor, copy_floor_db
from tests.server.processes import start_serve
from tests.server.test_api import refused

T = "craps-pa-1"


def _head(db: Path, table: str = T) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT seq FROM table_heads WHERE table_id = ?",
                                (table,)).fetchone()[0])
    finally:
        conn.close()


def truncate(db: Path, drop: int, *, key: bytes | None = None, table: str = T) -> int:
    """Drop the newest ``drop`` events and move the head back, as an insider would: no key is
    needed. With ``key``, the dropped events are put back forged (every ChipsBought amount
    raised) and chained with the key: the head is back at its seq, on another history.
    Returns the seq the log now ends at before any replacement."""
    conn = sqlite3.connect(db)
    head = int(conn.execute("SELECT seq FROM table_heads WHERE table_id = ?",
                            (table,)).fetchone()[0])
    keep = head - drop
    dropped = conn.execute("SELECT seq, kind, body FROM event_log WHERE table_id = ? AND "
                           "seq > ? ORDER BY seq", (table, keep)).fetchall()
    conn.execute("DELETE FROM event_log WHERE table_id = ? AND seq > ?", (table, keep))
    conn.execute("DELETE FROM snapshots WHERE table_id = ? AND seq > ?", (table, keep))
    prev = str(conn.execute("SELECT hash FROM event_log WHERE table_id = ? AND seq = ?",
                            (table, keep)).fetchone()[0])
    last = keep
    if key is not None:
        for seq, kind, body in dropped:
            data = json.loads(body)
            if kind == "ChipsBought":
                data["amount"] = data["amount"] * 100
            forged = canonical(data)
            digest = link_hash(prev, forged, key)
            conn.execute("INSERT INTO event_log (table_id, seq, kind, body, prev_hash, hash) "
                         "VALUES (?, ?, ?, ?, ?, ?)", (table, seq, kind, forged, prev, digest))
            prev, last = digest, int(seq)
    conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                 (last, prev, table))
    conn.commit()
    conn.close()
    return keep


def rewrite_with_key(db: Path, key: bytes, kind: str = "ChipsBought", *, last: bool = False,
                     change: str = "amount", table: str = T) -> None:
    """A key-holder's rewrite: one event's field multiplied, every later link rehashed with
    the key and the head moved to the new end (the chain verifies)."""
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT seq, kind, body, prev_hash FROM event_log WHERE table_id = ? "
                        "ORDER BY seq", (table,)).fetchall()
    hits = [i for i, r in enumerate(rows) if r[1] == kind]
    i = hits[-1] if last else hits[0]
    prev = str(rows[i][3])
    for seq, _kind, body, _ in rows[i:]:
        data = json.loads(body)
        if seq == rows[i][0]:
            if change == "win":
                data["items"][0]["win"] = data["items"][0]["win"] * 3
            else:
                data[change] = data[change] * 10
        body = canonical(data)
        digest = link_hash(prev, body, key)
        conn.execute("UPDATE event_log SET body = ?, prev_hash = ?, hash = ? WHERE "
                     "table_id = ? AND seq = ?", (body, prev, digest, table, seq))
        prev = digest
    conn.execute("UPDATE table_heads SET hash = ? WHERE table_id = ?", (prev, table))
    conn.execute("DELETE FROM snapshots WHERE table_id = ?", (table,))
    conn.commit()
    conn.close()


def restore(db: Path, backup: Path, table: str = T) -> None:
    """The operator restores the table's log (events, head, snapshots) from a backup; the
    fault records, in the same file, stay."""
    conn = sqlite3.connect(db)
    conn.execute("ATTACH DATABASE ? AS backup", (str(backup),))
    for name in ("event_log", "snapshots", "table_heads"):
        conn.execute(f"DELETE FROM {name} WHERE table_id = ?", (table,))
        conn.execute(f"INSERT INTO {name} SELECT * FROM backup.{name} WHERE table_id = ?",
                     (table,))
    conn.commit()
    conn.execute("DETACH DATABASE backup")
    conn.close()


def _audit(db: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "verify", str(db), "--quick", *extra])
    return result.exit_code, " ".join(result.output.split())


def _clear_cli(db: Path, *extra: str, table: str = T) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "clear-fault", table, "--db", str(db),
                                      "--operator", "ops", "--reason", "restored",
                                      "--key", f"{db}.key", *extra])
    return result.exit_code, " ".join(result.output.split())


def _open_faults(db: Path) -> dict[str, dict[str, str]]:
    with SqliteStore(db, key=read_key(f"{db}.key"), create=False) as store:
        return dict(Faults(store).open)


def _buy(dee: Client, *amounts: int) -> None:
    for amount in amounts:
        reply = dee.post(f"/api/tables/{T}/chips", {"player": "alice", "amount": amount})
        assert reply.status_code == 200, reply.text


# -- clearing a fault needs the whole log to verify (MEM-3) -----------------------------------

@pytest.fixture
def rewritten(demo_db: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A key-holder's rewrite behind the start-up checkpoint, caught by the checkpoints:
    (db, checkpoint file, the operator's backup from before the rewrite)."""
    db = copy_floor_db(demo_db, tmp_path)
    cps = tmp_path / "cp.jsonl"
    close_floor(build_floor(db, checkpoints=cps)[0])  # writes the start-up checkpoint
    backup = tmp_path / "backup.db"
    shutil.copyfile(db, backup)
    rewrite_with_key(db, read_key(f"{db}.key"))
    return db, cps, backup


def test_mem_3_a_rewrite_the_checkpoints_caught_is_not_cleared_until_the_log_is_restored(
        rewritten: tuple[Path, Path, Path]) -> None:
    db, cps, backup = rewritten
    assert _audit(db)[0] == 0  # the chain alone verifies: the key rehashed it
    floor, _ = build_floor(db, checkpoints=cps)
    try:
        assert floor.faults.open[T]["what"] == "rewritten"
        with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
            pat = Client(http, "pat")
            body = refused(pat.post(f"/api/tables/{T}/fault/clear", {"reason": "looks fine"}),
                           409, "ProcedureViolation", "integrity.fault")
            assert "still fails verification" in body["message"]
            assert "checkpoints: checkpoint 1: craps-pa-1" in body["message"]
            assert "rewritten" in body["message"]
            assert T in floor.faults.open
            refused(Client(http, "alice").get(f"/api/tables/{T}"), 423, "TableFaulted")
            code, out = _audit(db, "--checkpoints", str(cps))
            assert code == 1
            assert "rewritten" in out
            restore(db, backup)
            assert _audit(db, "--checkpoints", str(cps))[0] == 0
            cleared = pat.post(f"/api/tables/{T}/fault/clear", {"reason": "restored"})
            assert cleared.status_code == 200, cleared.text
            assert Client(http, "alice").get(f"/api/tables/{T}").status_code == 200
            assert floor.verify_all() == []  # and the next check does not fault it again
    finally:
        close_floor(floor)


def test_mem_3_break_glass_is_refused_while_the_checkpoints_still_fail(
        rewritten: tuple[Path, Path, Path]) -> None:
    db, cps, backup = rewritten
    close_floor(build_floor(db, checkpoints=cps)[0])  # the start-up check raises the fault
    code, out = _clear_cli(db)  # without the checkpoints the rewrite cannot be judged
    assert code == 2
    assert "found by the signed checkpoints" in out
    assert "--checkpoints" in out
    code, out = _clear_cli(db, "--checkpoints", str(cps))
    assert code == 2
    assert "still fails verification" in out
    assert "checkpoints: checkpoint 1" in out
    assert T in _open_faults(db)  # neither attempt cleared it
    restore(db, backup)
    code, out = _clear_cli(db, "--checkpoints", str(cps))
    assert code == 0, out
    assert _audit(db, "--checkpoints", str(cps))[0] == 0


def test_mem_3_a_clear_needs_the_adjudication_to_hold(demo_db: Path, tmp_path: Path) -> None:
    """A key-holder forges a paid win and rehashes the chain under the running server: its
    memory of the head faults the table; the chain verifies, but the rules cannot be made to
    pay the forged win, so the clear is refused - by the route and the CLI alike."""
    db = copy_floor_db(demo_db, tmp_path)
    floor, _ = build_floor(db)
    try:
        with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
            alice, sam, dee = Client(http, "alice"), Client(http, "sam"), Client(http, "dee")
            pat = Client(http, "pat")
            t = f"/api/tables/{T}"
            assert alice.post(f"{t}/bets", {"wager": "pass", "amount": 10_00}
                              ).status_code == 200
            assert sam.post(f"{t}/offer-dice", {"patron": "alice"}).status_code == 200
            assert alice.post(f"{t}/select-dice", {"serials": ["PA1-1", "PA1-2"]}
                              ).status_code == 200
            assert sam.post(f"{t}/roll", {"faces": "3-4"}).status_code == 200  # a natural
            assert dee.post(f"{t}/settle").status_code == 200
            rewrite_with_key(db, read_key(f"{db}.key"), "WinnersPaid", last=True,
                             change="win")
            assert _audit(db)[0] == 0  # the chain verifies
            code, out = _audit(db, "--adjudicate")
            assert code == 1
            assert "adjudication" in out
            assert floor.verify_all() == [T]
            assert floor.faults.open[T]["what"] == "rewritten"
            body = refused(pat.post(f"{t}/fault/clear", {"reason": "the chain verifies"}),
                           409, "ProcedureViolation", "integrity.fault")
            assert "adjudication: craps-pa-1 seq" in body["message"]
            assert "payment recorded" in body["message"]
    finally:
        close_floor(floor)
    code, out = _clear_cli(db)
    assert code == 2
    assert "adjudication: craps-pa-1 seq" in out
    assert T in _open_faults(db)


def test_mem_3_a_forged_checkpoint_file_is_a_store_wide_fault_cleared_once_it_verifies(
        demo_db: Path, tmp_path: Path) -> None:
    db = copy_floor_db(demo_db, tmp_path)
    cps = tmp_path / "cp.jsonl"
    floor, _ = build_floor(db, checkpoints=cps)
    try:
        good = cps.read_text()
        line = json.loads(good.splitlines()[0])
        line["heads"][T][0] += 5  # the insider edits the signed line
        cps.write_text(canonical(line) + "\n")
        assert floor.verify_all() == ["checkpoints"]
        assert cps.read_text().count("\n") == 1  # nothing signed after a forged line
        _cleared_once_restored(floor, cps, good,
                               "checkpoints: checkpoint 1: the checkpoint file: forged")
    finally:
        close_floor(floor)


def _cleared_once_restored(floor: Floor, cps: Path, restored: str, says: str) -> None:
    """The pit boss may not clear the checkpoints' fault (the refusal ``says`` why) until
    the file is restored; then they may, and the whole log verifies."""
    with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
        pat = Client(http, "pat")
        body = refused(pat.post("/api/tables/checkpoints/fault/clear", {"reason": "r"}),
                       409, "ProcedureViolation", "integrity.fault")
        assert says in body["message"]
        cps.write_text(restored)
        assert pat.post("/api/tables/checkpoints/fault/clear",
                        {"reason": "the file restored"}).status_code == 200
    assert floor.verify_all() == []


# -- the head cannot silently move back (MEM-2) ----------------------------------------------

def test_mem_2_a_head_moved_back_is_found_on_the_next_read_and_nothing_is_served(
        floor: Floor, http: TestClient) -> None:
    alice, dee = Client(http, "alice"), Client(http, "dee")
    _buy(dee, 1, 2, 3)
    assert alice.get(f"/api/tables/{T}").json()["seq"] == _head(Path(floor.store.location))
    truncate(Path(floor.store.location), 2)  # no key needed
    body = refused(alice.get(f"/api/tables/{T}"), 423, "TableFaulted", "integrity.fault")
    assert "truncated" in body["message"]
    assert floor.faults.open[T]["what"] == "truncated"
    refused(alice.post(f"/api/tables/{T}/bets", {"wager": "pass", "amount": 10_00}), 423,
            "TableFaulted")
    refused(dee.post(f"/api/tables/{T}/chips", {"player": "alice", "amount": 4}), 423,
            "TableFaulted")
    assert T not in [s["table"] for s in Client(http, "pat").get("/api/pit").json()["tables"]]
    assert alice.get("/api/tables/craps-in-1").status_code == 200  # the others play on


def test_mem_2_a_command_after_the_head_moved_back_is_refused_not_decided_again(
        floor: Floor, http: TestClient) -> None:
    """The command's catch-up finds the head behind what was committed: the table is not
    rebuilt from the shorter log."""
    dee = Client(http, "dee")
    _buy(dee, 1, 2, 3)
    truncate(Path(floor.store.location), 3)
    refused(dee.post(f"/api/tables/{T}/chips", {"player": "alice", "amount": 4}), 423,
            "TableFaulted")
    assert floor.faults.open[T]["what"] == "truncated"
    conn = sqlite3.connect(floor.store.location)
    amounts = [json.loads(b)["amount"] for (b,) in conn.execute(
        "SELECT body FROM event_log WHERE table_id = ? AND kind = 'ChipsBought'", (T,))]
    conn.close()
    assert 4 not in amounts  # nothing was appended onto the shorter log


@pytest.mark.parametrize("with_key", [False, True], ids=["no-key", "key"])
def test_mem_2_the_periodic_verification_finds_a_head_moved_back(
        floor: Floor, http: TestClient, with_key: bool) -> None:
    """Between two verifications, with nothing read: the next verification faults it. With
    the key the dropped events are replaced by forged ones (the head back at its seq)."""
    dee = Client(http, "dee")
    _buy(dee, 1, 2, 3)
    assert floor.verify_all() == []
    db = Path(floor.store.location)
    key = read_key(f"{db}.key") if with_key else None
    truncate(db, 3, key=key)
    assert _audit(db)[0] == 0  # the chain alone verifies either way
    assert floor.verify_all() == [T]
    assert floor.faults.open[T]["what"] == ("rewritten" if with_key else "truncated")
    refused(Client(http, "alice").get(f"/api/tables/{T}"), 423, "TableFaulted")
    body = refused(Client(http, "pat").post(f"/api/tables/{T}/fault/clear", {"reason": "r"}),
                   409, "ProcedureViolation", "integrity.fault")
    assert "head: craps-pa-1" in body["message"]  # the clear sees it too


def test_mem_2_a_dropped_account_record_is_found_by_the_next_verification(
        floor: Floor, http: TestClient) -> None:
    Client(http, "alice")  # a login: records in alice's account stream
    assert floor.verify_all() == []
    conn = sqlite3.connect(floor.store.location)
    stream = "account:alice"
    head = int(conn.execute("SELECT seq FROM table_heads WHERE table_id = ?",
                            (stream,)).fetchone()[0])
    conn.execute("DELETE FROM event_log WHERE table_id = ? AND seq = ?", (stream, head))
    conn.execute("DELETE FROM snapshots WHERE table_id = ? AND seq >= ?", (stream, head))
    prev = conn.execute("SELECT hash FROM event_log WHERE table_id = ? AND seq = ?",
                        (stream, head - 1)).fetchone()[0]
    conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                 (head - 1, prev, stream))
    conn.commit()
    conn.close()
    assert stream in floor.verify_all()
    assert floor.faults.open[stream]["what"] == "truncated"


def test_mem_2_audit_verify_says_truncation_needs_the_checkpoints(
        demo_db: Path, tmp_path: Path) -> None:
    db = copy_floor_db(demo_db, tmp_path)
    cps = tmp_path / "cp.jsonl"
    close_floor(build_floor(db, checkpoints=cps)[0])
    truncate(db, 2)
    code, out = _audit(db)
    assert code == 0
    assert "without --checkpoints, truncation cannot be detected" in out
    result = CliRunner().invoke(cli, ["audit", "verify", str(db), "--quick", "--json"])
    assert json.loads(result.output)["warnings"][0].startswith("without --checkpoints")
    code, out = _audit(db, "--checkpoints", str(cps))
    assert code == 1
    assert "truncated" in out
    assert "without --checkpoints" not in out


def test_mem_2_a_running_dicetable_serve_refuses_a_log_cut_back_under_it(
        demo_db: Path, tmp_path: Path) -> None:
    """Through ``dicetable serve`` itself: commands acknowledged, the newest events dropped
    and the head moved back in the SQLite file; the server's next answer for that table is
    423, and ``audit verify --checkpoints`` finds it once a checkpoint covered them."""
    db = copy_floor_db(demo_db, tmp_path)
    cps = tmp_path / "cp.jsonl"
    server = start_serve(["--db", str(db), "--verify-every", "0", "--checkpoints", str(cps)])
    base = server.base
    try:
        def login(user: str) -> dict[str, str]:
            token = httpx.post(f"{base}/api/login", json={
                "username": user, "password": DEMO_PASSWORD}).json()["token"]
            return {"authorization": f"Bearer {token}"}

        dee, alice = login("dee"), login("alice")
        checkpointed = _head(db)  # the start-up checkpoint holds this head
        for amount in (1, 2, 3):
            assert httpx.post(f"{base}/api/tables/{T}/chips", headers=dee, json={
                "player": "alice", "amount": amount}).status_code == 200
        truncate(db, _head(db) - checkpointed + 1)  # one event the checkpoint covers, too
        reply = httpx.get(f"{base}/api/tables/{T}", headers=alice)
        assert reply.status_code == 423, reply.text
        assert reply.json()["error"] == "TableFaulted"
        assert httpx.post(f"{base}/api/tables/{T}/bets", headers=alice, json={
            "wager": "pass", "amount": 10_00}).status_code == 423
        faults = httpx.get(f"{base}/api/faults", headers=login("pat")).json()
        assert [(f["table"], f["what"]) for f in faults] == [(T, "truncated")]
    finally:
        server.stop(timeout=60)
    code, out = _audit(db)
    assert code == 0
    assert "truncation cannot be detected" in out
    code, out = _audit(db, "--checkpoints", str(cps))
    assert code == 1
    assert "truncated" in out


def test_mem_2_a_table_whose_whole_log_was_deleted_is_found(floor: Floor,
                                                            http: TestClient) -> None:
    """Every row and the head row gone: the store no longer lists the table at all."""
    assert floor.verify_all() == []
    conn = sqlite3.connect(floor.store.location)
    for name in ("event_log", "snapshots", "table_heads"):
        conn.execute(f"DELETE FROM {name} WHERE table_id = ?", (T,))
    conn.commit()
    conn.close()
    assert T not in floor.store.stream_ids()
    assert floor.verify_all() == [T]
    assert floor.faults.open[T]["what"] == "truncated"
    refused(Client(http, "alice").get(f"/api/tables/{T}"), 423, "TableFaulted")


def test_mem_2_a_rebuild_after_a_lost_race_never_adopts_a_shorter_log(
        floor: Floor, http: TestClient) -> None:
    """A command decided while the log is cut back loses its append (the head is not where
    it was) and the table would be rebuilt from the log: not from one behind what was
    committed."""
    from dicetable.application.integrity import TableFaulted

    _buy(Client(http, "dee"), 1, 2)
    truncate(Path(floor.store.location), 2)
    with pytest.raises(TableFaulted):
        floor.rebuild(T)
    assert floor.faults.open[T]["what"] == "truncated"


def test_mem_3_a_backup_behind_what_was_acknowledged_is_not_cleared(
        demo_db: Path, tmp_path: Path) -> None:
    """The operator restores a backup taken before an acknowledged command: the log verifies,
    but the server answered for an event it no longer holds, so the clear is refused."""
    db = copy_floor_db(demo_db, tmp_path)
    floor, _ = build_floor(db)
    try:
        with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
            pat = Client(http, "pat")
            backup = tmp_path / "backup.db"
            shutil.copyfile(db, backup)
            _buy(Client(http, "dee"), 1)
            truncate(db, 1)
            assert floor.verify_all() == [T]
            restore(db, backup)
            assert _audit(db)[0] == 0
            body = refused(pat.post(f"/api/tables/{T}/fault/clear", {"reason": "r"}), 409,
                           "ProcedureViolation", "integrity.fault")
            assert "head: craps-pa-1 truncated" in body["message"]
            assert T in floor.faults.open
    finally:
        close_floor(floor)


def test_mem_3_two_clears_at_once_record_one(demo_db: Path, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tests.server.test_fault_state import _raise_chips, _restore

    db = copy_floor_db(demo_db, tmp_path)
    seq, body = _raise_chips(db)
    floor, _ = build_floor(db)
    try:
        assert T in floor.faults.open
        _restore(db, seq, body)
        with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
            pat = Client(http, "pat")
            with ThreadPoolExecutor(max_workers=2) as pool:
                replies = list(pool.map(
                    lambda _: pat.post(f"/api/tables/{T}/fault/clear", {"reason": "r"}),
                    range(2)))
            assert sorted(r.status_code for r in replies) == [200, 404]
            assert Client(http, "alice").get(f"/api/tables/{T}").status_code == 200
        cleared = [r for r in floor.store.records(FAULTS) if r.kind == "FaultCleared"]
        assert len(cleared) == 1
    finally:
        close_floor(floor)


def test_mem_2_the_bench_counts_a_truncation_only_the_running_server_sees(
        demo_db: Path, tmp_path: Path) -> None:
    """``bench.tamper_cases``' live case, as ``bench.reliability_bench`` counts it: the newest
    events dropped and the head moved back, by a key-holder - detected by the running
    server's next verification, missed by the offline audit (no checkpoint covers them)."""
    from bench.tamper_cases import LIVE_CASES, _live_case, report

    name = next(n for n in LIVE_CASES if n.startswith("truncation"))
    outcome = _live_case(demo_db, tmp_path, name, LIVE_CASES[name], "key")
    assert outcome.detected
    assert outcome.by == "running server (truncated)"
    assert outcome.offline == "-"
    assert report([], [outcome])[-1].endswith("1 of 1 detected (100%), including truncation")


def test_mem_2_checkpoints_removed_from_the_end_of_the_file_are_found(
        demo_db: Path, tmp_path: Path) -> None:
    """The file's lines chain only backwards, so the shorter file verifies; the server
    remembers how many it wrote."""
    db = copy_floor_db(demo_db, tmp_path)
    cps = tmp_path / "cp.jsonl"
    floor, _ = build_floor(db, checkpoints=cps)
    try:
        assert floor.verify_all() == []
        whole = cps.read_text()
        assert whole.count("\n") == 2
        cps.write_text(whole.splitlines()[0] + "\n")
        assert _audit(db, "--checkpoints", str(cps))[0] == 0  # offline, nothing to see
        assert floor.verify_all() == ["checkpoints"]
        assert floor.faults.open["checkpoints"]["what"] == "truncated"
        assert cps.read_text().count("\n") == 1  # nothing signed onto the shorter file
        _cleared_once_restored(floor, cps, whole, "holds 1 line(s), behind the 2")
        assert cps.read_text().count("\n") == 3
    finally:
        close_floor(floor)
