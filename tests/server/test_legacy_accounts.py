"""A store from before accounts were streams of the event log: its ``accounts``, ``sessions``
and ``stream_log`` rows were never vouched for by the keyed chain, so they are not migrated;
such a store is refused with a message saying what to do, and nothing is written."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from dicetable.core.errors import InvalidInput
from dicetable.server.main import build_floor


@pytest.mark.parametrize("table", ["accounts", "sessions", "stream_log"])
def test_mem_2_old_account_rows_are_refused_not_migrated(demo_db: Path, tmp_path: Path,
                                                         table: str) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(demo_db, db)
    shutil.copyfile(f"{demo_db}.key", f"{db}.key")
    conn = sqlite3.connect(db)
    conn.execute(f"CREATE TABLE {table} (username TEXT, kind TEXT)")
    conn.execute(f"INSERT INTO {table} VALUES ('mallory', 'staff')")
    conn.commit()
    before = conn.execute("SELECT count(*) FROM event_log").fetchone()[0]
    conn.close()
    with pytest.raises(InvalidInput, match=f"old tables \\({table}\\).*not migrated"):
        build_floor(db)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM event_log").fetchone()[0] == before
    conn.close()


def test_an_empty_old_table_is_no_obstacle(demo_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(demo_db, db)
    shutil.copyfile(f"{demo_db}.key", f"{db}.key")
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE sessions (token TEXT)")
    conn.commit()
    conn.close()
    floor, _ = build_floor(db)
    assert floor.accounts.get("pat") is not None
    floor.close()
    floor.store.close()
