"""Stores written by earlier commits open, verify and replay to the state their own code read
back, with every build; ``dicetable upgrade`` brings each to the current layout once, recorded.

``tests/fixtures/golden/store-COMMIT.db`` were written by ``write_golden.py`` run with each
commit's own code (a worktree of it): 602672c (before the keyed chain), 60eb732 (the keyed
chain, before custody and accounts lived in the store as streams) and the current layout.
``.expected.json`` is what that commit read back: each table's seq, phase, point, balances.
``store-8a00413.db`` (``write_golden.py --keyed --streams``) also holds streams other than
tables - the site's dice custody ledger and a table's bank - and what that code read back of
each (its whole state).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.bank.state import encode_state as encode_bank
from dicetable.cli.main import app
from dicetable.core.errors import InvalidInput
from dicetable.store import open_store, verify_store
from dicetable.store.bank_stream import DurableBank
from dicetable.store.custody import load_custody_state
from dicetable.store.custody_codec import encode_state as encode_custody
from dicetable.store.keys import read_key
from dicetable.store.operations_stream import STREAM, MigrationApplied
from dicetable.store.replay import load_state
from dicetable.store.schema_version import CURRENT, upgrade, version_of

GOLDEN = Path(__file__).parent.parent / "fixtures" / "golden"
STORES = {"602672c": 1, "60eb732": 2, "current": 2, "8a00413": 2}
"""Each golden store and the layout version it was written in."""


def _copy(name: str, tmp_path: Path) -> tuple[Path, bytes | None]:
    db = tmp_path / f"{name}.db"
    shutil.copyfile(GOLDEN / f"store-{name}.db", db)
    key_file = GOLDEN / f"store-{name}.db.key"
    if key_file.exists():
        shutil.copyfile(key_file, f"{db}.key")
        return db, read_key(key_file)
    return db, None


def _facts(db: Path, key: bytes | None) -> dict[str, object]:
    out: dict[str, object] = {}
    with open_store(db, create=False, key=key) as store:
        for table in store.tables():
            state = load_state(store, table)
            out[table] = {"seq": state.seq, "phase": state.phase.value, "point": state.point,
                          "balances": {p: state.balance(p) for p in sorted(state.players)},
                          "on_layout": state.on_layout(), "house": state.house}
        if "custody:river" in store.stream_ids():
            out["custody"] = encode_custody(load_custody_state(store, "river"))
        if "bank:bare-1" in store.stream_ids():
            out["bank"] = encode_bank(DurableBank.resume(store, "bare-1").bank.state)
    read_back: dict[str, object] = json.loads(json.dumps(out))  # lists, as the file holds
    return read_back


@pytest.mark.parametrize("name", sorted(STORES))
def test_a_store_written_by_an_earlier_commit_opens_verifies_and_replays(
        name: str, tmp_path: Path) -> None:
    db, key = _copy(name, tmp_path)
    expected = json.loads((GOLDEN / f"store-{name}.db.expected.json").read_text())
    assert version_of(db) == STORES[name]
    out = CliRunner().invoke(app, ["audit", "verify", str(db)])
    assert out.exit_code == 0, out.output
    assert _facts(db, key) == expected


@pytest.mark.parametrize("name", sorted(STORES))
def test_upgrade_runs_each_migration_once_records_it_and_keeps_the_state(
        name: str, tmp_path: Path) -> None:
    db, key = _copy(name, tmp_path)
    expected = json.loads((GOLDEN / f"store-{name}.db.expected.json").read_text())
    if key is None:  # the unkeyed chain: re-linked under a key, after it verified
        with pytest.raises(InvalidInput, match="with a key"):
            upgrade(str(db), None)
        assert version_of(db) == 1
        out = CliRunner().invoke(app, ["keys", "init", f"{db}.key"])
        assert out.exit_code == 0, out.output
        key = read_key(f"{db}.key")
    out = CliRunner().invoke(app, ["upgrade", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert version_of(db) == CURRENT
    again = CliRunner().invoke(app, ["upgrade", "--db", str(db)])
    assert "nothing to do" in again.output
    with open_store(db, create=False, key=key) as store:
        assert all(r.ok for r in verify_store(store)), [r.to_dict() for r in verify_store(store)]
        steps = [(e.version_from, e.version_to) for e in store.events(STREAM)
                 if isinstance(e, MigrationApplied)]
        assert store.recorded_key_id() not in (None, "")
    assert steps == [(v, v + 1) for v in range(STORES[name], CURRENT)]
    assert _facts(db, key) == expected
    assert CliRunner().invoke(app, ["audit", "verify", str(db)]).exit_code == 0


def test_a_tampered_unkeyed_store_is_not_rekeyed(tmp_path: Path) -> None:
    import sqlite3

    db, _ = _copy("602672c", tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE event_log SET body = replace(body, '30000', '90000') "
                     "WHERE table_id = 'bare-1' AND seq = 3")
    CliRunner().invoke(app, ["keys", "init", f"{db}.key"])
    with pytest.raises(InvalidInput, match="does not verify"):
        upgrade(str(db), read_key(f"{db}.key"))
    assert version_of(db) == 1  # nothing changed


def test_an_upgrade_stopped_before_its_record_is_recorded_by_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dicetable.store import schema_version

    db, key = _copy("current", tmp_path)

    def crash(*args: object) -> None:
        raise RuntimeError("power cut")

    with monkeypatch.context() as m:
        m.setattr(schema_version, "_record", crash)
        with pytest.raises(RuntimeError):
            upgrade(str(db), key)
    assert version_of(db) == CURRENT
    assert upgrade(str(db), key) == []
    with open_store(db, create=False, key=key) as store:
        steps = [(e.version_from, e.version_to) for e in store.events(STREAM)
                 if isinstance(e, MigrationApplied)]
    assert steps == [(2, 3)]  # recorded once, by the upgrade after the cut
    upgrade(str(db), key)
    with open_store(db, create=False, key=key) as store:
        assert len(list(store.events(STREAM))) == 1


def test_an_unkeyed_postgresql_store_is_rekeyed_once(tmp_path: Path) -> None:
    import uuid

    import psycopg
    from psycopg import sql

    from dicetable.store import DurableTable
    from dicetable.store.keys import init_key
    from tests.store.conftest import pg_url_or_skip

    url = pg_url_or_skip()
    schema = f"up_{uuid.uuid4().hex[:10]}"
    try:
        with open_store(url, schema=schema) as store:  # written without a key
            t = DurableTable.open(store, "pa-craps", "t1").table
            t.join("alice")
            t.buy_in("alice", 50_00)
        assert version_of(url, schema) == 1
        key = read_key(init_key(tmp_path / "k"))
        steps = upgrade(url, key, schema=schema)
        assert [(s.version_from, s.version_to) for s in steps] == [(1, 2), (2, 3)]
        assert upgrade(url, key, schema=schema) == []
        with open_store(url, schema=schema, create=False, key=key) as store:
            assert all(r.ok for r in verify_store(store))
            assert load_state(store, "t1").balance("alice") == 50_00
            assert len(list(store.events(STREAM))) == 2
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(schema)))
