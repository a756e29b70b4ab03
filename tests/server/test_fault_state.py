"""The server checks before it serves (spec/standards.md MEM-2, MEM-3, RES-2, RES-3): a
tampered log puts its table in a locked fault state, at start-up or on a periodic check, with
a fault record and a pit alert, until a pit boss clears it once the log verifies again."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dicetable.application.integrity import FAULTS
from dicetable.server.app import create_app
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from tests.server.conftest import Client, close_floor, copy_floor_db
from tests.server.test_api import refused

T = "craps-pa-1"


def _raise_chips(db: Path, table: str = T) -> tuple[int, str]:
    """Raise the first ChipsBought amount of ``table`` in the file, hash left as it was."""
    conn = sqlite3.connect(db)
    seq, body = conn.execute("SELECT seq, body FROM event_log WHERE table_id = ? AND "
                             "kind = 'ChipsBought' ORDER BY seq LIMIT 1", (table,)).fetchone()
    forged = body.replace('"amount":50000', '"amount":5000000')
    assert forged != body
    conn.execute("UPDATE event_log SET body = ? WHERE table_id = ? AND seq = ?",
                 (forged, table, seq))
    conn.commit()
    conn.close()
    return int(seq), str(body)


def _restore(db: Path, seq: int, body: str, table: str = T) -> None:
    conn = sqlite3.connect(db)
    conn.execute("UPDATE event_log SET body = ? WHERE table_id = ? AND seq = ?",
                 (body, table, seq))
    conn.commit()
    conn.close()


@pytest.fixture
def tampered(demo_db: Path, tmp_path: Path) -> Iterator[tuple[Floor, Path, int, str]]:
    db = copy_floor_db(demo_db, tmp_path)
    seq, body = _raise_chips(db)
    floor, _ = build_floor(db)
    yield floor, db, seq, body
    close_floor(floor)


def test_mem_3_a_tampered_log_is_never_served(tampered: tuple[Floor, Path, int, str]) -> None:
    floor = tampered[0]
    assert T not in floor.tables
    assert floor.faults.open[T]["what"] == "altered"
    faults = [r.data() for r in floor.store.records(FAULTS)]
    assert faults[0]["type"] == "FaultRaised"
    assert faults[0]["subject"] == T
    with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
        alice, pat = Client(http, "alice"), Client(http, "pat")
        refused(alice.get(f"/api/tables/{T}"), 423, "TableFaulted", "integrity.fault")
        refused(alice.post(f"/api/tables/{T}/bets", {"wager": "pass", "amount": 10_00}), 423,
                "TableFaulted")
        refused(Client(http, "dee").post(f"/api/tables/{T}/cash-out",
                                         {"player": "alice", "amount": 100_00}), 423,
                "TableFaulted")
        pit = pat.get("/api/pit").json()
        assert [f["table"] for f in pit["faults"]] == [T]
        assert T not in [s["table"] for s in pit["tables"]]
        # the other tables play on
        assert alice.get("/api/tables/craps-in-1").status_code == 200


def test_res_2_the_fault_survives_a_restart_and_needs_an_authorised_clear(
        tampered: tuple[Floor, Path, int, str]) -> None:
    floor, db, seq, body = tampered
    with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
        pat, fran = Client(http, "pat"), Client(http, "fran")
        refused(pat.post(f"/api/tables/{T}/fault/clear", {"reason": "checked"}), 409,
                "ProcedureViolation", "integrity.fault")  # still broken
        _restore(db, seq, body)
    close_floor(floor)
    again, _ = build_floor(db)  # the log verifies now, but the fault stays (RES-2)
    try:
        assert T in again.faults.open
        with TestClient(create_app(again, electronic_loop=False, verify_seconds=0)) as http:
            pat, fran = Client(http, "pat"), Client(http, "fran")
            refused(fran.post(f"/api/tables/{T}/fault/clear", {"reason": "me"}), 403,
                    "RoleNotPermitted", "integrity.clear")
            assert pat.post(f"/api/tables/{T}/fault/clear",
                            {"reason": "restored from backup"}).status_code == 200
            assert Client(http, "alice").get(f"/api/tables/{T}").status_code == 200
        cleared = [r.data() for r in again.store.records(FAULTS)][-1]
        assert (cleared["type"], cleared["actor"], cleared["by_role"]) == ("FaultCleared",
                                                                           "pat", "pit-boss")
    finally:
        again.close()
        again.store.close()
        again.accounts.close()


def test_mem_2_a_periodic_check_faults_a_table_tampered_while_serving(
        floor: Floor, http: TestClient) -> None:
    alice = Client(http, "alice")
    assert alice.get(f"/api/tables/{T}").status_code == 200
    assert floor.verify_all() == []
    _raise_chips(Path(floor.store.location))
    assert floor.verify_all() == [T]
    refused(alice.post(f"/api/tables/{T}/bets", {"wager": "pass", "amount": 10_00}), 423,
            "TableFaulted")


def test_mem_2_a_tampered_account_stream_is_a_fault(floor: Floor, http: TestClient) -> None:
    conn = sqlite3.connect(floor.store.location)  # an insider without the key
    conn.execute("UPDATE event_log SET body = replace(body, '\"player\"', '\"staff\"') "
                 "WHERE table_id = 'account:alice' AND seq = 1")
    conn.commit()
    conn.close()
    assert "account:alice" in floor.verify_all()
    from dicetable.server.demo import DEMO_PASSWORD

    refused(http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD}),
            423, "TableFaulted", "integrity.fault")


def test_mem_2_checkpoints_catch_a_truncation_at_start_up(demo_db: Path,
                                                          tmp_path: Path) -> None:
    db = copy_floor_db(demo_db, tmp_path)
    cps = tmp_path / "cp.jsonl"
    floor, _ = build_floor(db, checkpoints=cps)
    assert cps.read_text().count("\n") == 1  # the start-up check wrote one
    close_floor(floor)
    conn = sqlite3.connect(db)  # an insider drops the last event and moves the head back
    head = conn.execute("SELECT seq FROM table_heads WHERE table_id = ?", (T,)).fetchone()[0]
    conn.execute("DELETE FROM event_log WHERE table_id = ? AND seq = ?", (T, head))
    prev = conn.execute("SELECT hash FROM event_log WHERE table_id = ? AND seq = ?",
                        (T, head - 1)).fetchone()[0]
    conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                 (head - 1, prev, T))
    conn.commit()
    conn.close()
    again, _ = build_floor(db, checkpoints=cps)
    try:
        assert again.faults.open[T]["what"] == "truncated"
    finally:
        again.close()
        again.store.close()
        again.accounts.close()


def test_mem_2_a_store_opened_without_its_key_is_refused(demo_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "nokey.db"
    shutil.copyfile(demo_db, db)  # the key file stays behind
    from dicetable.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="chained with key"):
        build_floor(db)


def test_mem_2_a_check_while_commands_run_finds_no_false_fault(floor: Floor,
                                                               http: TestClient) -> None:
    """The periodic check runs beside live play: appends during it are not tampering."""
    import threading

    dee = Client(http, "dee")
    stop = threading.Event()
    errors: list[int] = []

    def play() -> None:
        amount = 1
        while not stop.is_set():
            reply = dee.post(f"/api/tables/{T}/chips", {"player": "alice", "amount": amount})
            if reply.status_code != 200:
                errors.append(reply.status_code)
            amount += 1

    worker = threading.Thread(target=play)
    worker.start()
    try:
        for _ in range(20):
            assert floor.verify_all() == []
    finally:
        stop.set()
        worker.join()
    assert not errors
    assert T in floor.tables


def test_mem_3_break_glass_clears_a_fault_with_the_key(
        tampered: tuple[Floor, Path, int, str]) -> None:
    from typer.testing import CliRunner

    from dicetable.application.integrity import Faults
    from dicetable.cli.main import app as cli

    floor, db, seq, body = tampered
    runner = CliRunner()
    args = ["audit", "clear-fault", T, "--db", str(db), "--operator", "ops", "--reason", "r"]
    still = runner.invoke(cli, [*args, "--key", f"{db}.key"])
    assert still.exit_code == 2
    assert "still fails" in still.output
    _restore(db, seq, body)
    assert runner.invoke(cli, [*args, "--key", f"{db}.missing"]).exit_code == 2
    wrong = db.parent / "wrong.key"
    assert runner.invoke(cli, ["keys", "init", str(wrong)]).exit_code == 0
    assert runner.invoke(cli, [*args, "--key", str(wrong)]).exit_code == 2
    assert T in Faults(floor.store).open  # neither cleared it
    ok = runner.invoke(cli, [*args, "--key", f"{db}.key"])
    assert ok.exit_code == 0, ok.output
    last = list(floor.store.records(FAULTS))[-1].data()
    assert (last["type"], last["actor"], last["by_role"]) == ("FaultCleared", "ops",
                                                              "break-glass")
