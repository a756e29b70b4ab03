"""The server's verification costs what is new (spec/standards.md MEM-2: checked continually):
a restart walks only the events after the newest signed checkpoint, a periodic check only the
events since the last one, and the history behind them is walked by a rolling full pass, a
bounded slice per period - so a rewrite of old history is still found, by the pass that
reaches it, and one of new events by the next check."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from dicetable.server.floor import Floor
from dicetable.server.main import build_floor

T = "craps-pa-1"
SLICE = 40


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DICETABLE_VERIFY_SLICE", str(SLICE))


def _copy(demo_db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "floor.db"
    shutil.copyfile(demo_db, copy)
    shutil.copyfile(f"{demo_db}.key", f"{copy}.key")
    return copy


def _close(floor: Floor) -> None:
    floor.close()
    floor.store.close()
    floor.accounts.close()


def _forge(db: Path, table: str, seq: int) -> None:
    """An insider without the key edits one stored event."""
    conn = sqlite3.connect(db)
    conn.execute("UPDATE event_log SET body = replace(body, '\"actor\":', '\"actor\":\"x\",\"a\":')"
                 " WHERE table_id = ? AND seq = ?", (table, seq))
    assert conn.total_changes == 1
    conn.commit()
    conn.close()


@pytest.fixture
def restarted(demo_db: Path, tmp_path: Path, small_slices: None) -> Iterator[tuple[Floor, Path]]:
    """The demo floor restarted over its own checkpoint file."""
    db, cps = _copy(demo_db, tmp_path), tmp_path / "cp.jsonl"
    _close(build_floor(db, checkpoints=cps)[0])  # first start: every stream walked, signed
    floor, _ = build_floor(db, checkpoints=cps)
    yield floor, db
    _close(floor)


def test_mem_2_a_restart_walks_only_what_follows_the_newest_checkpoint(
        demo_db: Path, tmp_path: Path, small_slices: None) -> None:
    db, cps = _copy(demo_db, tmp_path), tmp_path / "cp.jsonl"
    first, _ = build_floor(db, checkpoints=cps)
    chains = first.verification.chains
    total = sum(first.store.head(s).seq for s in first.store.stream_ids())
    assert chains.walked_new == total  # no checkpoint yet: the whole log
    _close(first)
    again, _ = build_floor(db, checkpoints=cps)
    try:
        assert again.faults.open == {}
        assert again.verification.chains.walked_new == 0  # nothing after the checkpoint
        assert again.verification.chains.walked_rolling <= SLICE + len(
            again.store.stream_ids())
    finally:
        _close(again)


def test_mem_2_a_periodic_check_walks_the_new_events_and_one_slice(
        restarted: tuple[Floor, Path]) -> None:
    floor, _ = restarted
    chains = floor.verification.chains
    new, rolled = chains.walked_new, chains.walked_rolling
    assert floor.verify_all() == []
    assert chains.walked_new == new  # nothing new
    assert chains.walked_rolling - rolled <= SLICE


def test_mem_2_a_rewrite_of_old_history_is_found_by_the_rolling_pass(
        restarted: tuple[Floor, Path]) -> None:
    floor, db = restarted
    _forge(db, T, 3)  # long verified, behind the checkpoint
    chains = floor.verification.chains
    passes = chains.passes
    periods = 0
    while T not in floor.faults.open:
        periods += 1
        assert chains.passes <= passes + 1, "a whole pass went by without finding it"
        floor.verify_all()
    assert floor.faults.open[T]["what"] == "altered"
    assert floor.faults.open[T]["detail"].startswith("seq 3:")
    total = sum(h.seq for h in chains.verified.values())
    assert periods <= total // SLICE + len(chains.verified) + 1


def test_mem_2_a_rewrite_of_new_events_is_found_by_the_next_check(
        restarted: tuple[Floor, Path]) -> None:
    floor, db = restarted
    info = floor.get(T)
    head = info.durable.head.seq
    table = info.table
    with info.lock:
        table.join("erin")
        table.buy_in("erin", 100_00)
    assert floor.store.head(T).seq == head + 2
    _forge(db, T, head + 1)
    rolled = floor.verification.chains.walked_rolling
    assert T in floor.verify_all()
    assert floor.faults.open[T]["detail"].startswith(f"seq {head + 1}:")
    assert floor.verification.chains.walked_rolling - rolled <= SLICE


def test_mem_2_a_floor_over_archived_days_serves_and_its_checks_read_the_archives(
        demo_db: Path, tmp_path: Path, small_slices: None) -> None:
    """``dicetable archive`` moves the demo's gaming day out of the live log; the floor starts
    over it, serves the tables, and its rolling pass finds an archive file altered later."""
    from datetime import UTC, date, datetime, timedelta

    from typer.testing import CliRunner

    from dicetable.cli.main import app
    from dicetable.store.archive import gaming_day

    db, cps = _copy(demo_db, tmp_path), tmp_path / "cp.jsonl"
    day = gaming_day(datetime.now(UTC).isoformat())
    tomorrow = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    done = CliRunner().invoke(app, ["archive", "--db", str(db), "--through", day,
                                    "--today", tomorrow])
    assert done.exit_code == 0, done.output
    archive = tmp_path / "floor.db.archive" / f"{day}.jsonl.gz"
    assert archive.exists()
    floor, _ = build_floor(db, checkpoints=cps)
    try:
        assert floor.faults.open == {}
        assert T in floor.tables
        assert floor.store.archive_spans(T)
        archive.write_bytes(archive.read_bytes()[:-20])
        for _ in range(100):
            if T in floor.faults.open:
                break
            floor.verify_all()
        assert floor.faults.open[T]["what"] == "archive"
    finally:
        _close(floor)


def test_mem_2_a_floor_started_over_a_damaged_archive_faults_its_tables(
        demo_db: Path, tmp_path: Path, small_slices: None) -> None:
    from datetime import UTC, date, datetime, timedelta

    from typer.testing import CliRunner

    from dicetable.cli.main import app
    from dicetable.store.archive import gaming_day

    db, cps = _copy(demo_db, tmp_path), tmp_path / "cp.jsonl"
    _close(build_floor(db, checkpoints=cps)[0])  # signed: a restart starts past the archive
    day = gaming_day(datetime.now(UTC).isoformat())
    tomorrow = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    done = CliRunner().invoke(app, ["archive", "--db", str(db), "--through", day,
                                    "--today", tomorrow])
    assert done.exit_code == 0, done.output
    archive = tmp_path / "floor.db.archive" / f"{day}.jsonl.gz"
    archive.unlink()
    floor, _ = build_floor(db, checkpoints=cps)
    try:
        assert floor.faults.open[T]["what"] == "archive"
        assert "missing" in floor.faults.open[T]["detail"]
        assert T not in floor.tables
    finally:
        _close(floor)
