"""The conformance suite for streams of other aggregates than tables: the site's dice custody
ledger (``custody:SITE``) on memory, SQLite and PostgreSQL - append, read back, hash chain,
snapshots, stale writers, audit (tampering found), recall and export."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.errors import InvalidInput, StaleVersion
from dicetable.custody import commands as cmd
from dicetable.custody.model import Key
from dicetable.store.audit import verify_store
from dicetable.store.base import EventStore
from dicetable.store.chain import GENESIS, encode, link_hash
from dicetable.store.custody import DurableCustody, custody_stream, load_custody_state
from dicetable.store.custody_codec import encode_state
from dicetable.store.durable import DurableTable
from dicetable.store.memory import MemoryStore
from dicetable.store.recall import recall_custody
from dicetable.store.sqlite import SqliteStore
from tests.custody.scenario import ANN, SAM, as_, cancel, remove_and_transfer
from tests.custody.test_log_and_codec import every_kind_of_event
from tests.store.conftest import StoreFactory
from tests.store.helpers import seat

STREAM = custody_stream("river")


def _ledger_on(store: EventStore, snapshot_every: int = 7) -> DurableCustody:
    """Every kind of custody event, in the store, then more steps taken durably."""
    led = every_kind_of_event()
    store.append(STREAM, led.log, expected=0)
    durable = DurableCustody.resume(store, "river", clock=led.clock,
                                    snapshot_every=snapshot_every)
    for _ in range(3):  # enough further steps to cross a snapshot
        durable.execute(cmd.DrawKey(**as_(ANN), key=Key.TABLE_GAMES))
        durable.execute(cmd.ReturnKey(**as_(ANN), key=Key.TABLE_GAMES))
    durable.snapshot()
    return durable


def test_custody_events_read_back_exactly_and_chain(store: EventStore) -> None:
    led = every_kind_of_event()
    rows = store.append(STREAM, led.log, expected=0)
    assert [r.seq for r in rows] == list(range(1, len(led.log) + 1))
    assert list(store.events(STREAM)) == led.log
    prev = GENESIS
    for row, event in zip(store.records(STREAM), led.log, strict=True):
        assert row.body == encode(event)[1]  # the canonical dict, with its schema version
        assert row.prev_hash == prev
        assert row.hash == link_hash(prev, row.body)
        prev = row.hash
    assert store.head(STREAM).hash == prev


def test_tables_and_custody_share_one_store_kept_apart(store: EventStore) -> None:
    table = DurableTable.open(store, "pa-craps", "craps-1").table
    seat(table)
    led = every_kind_of_event()
    store.append(STREAM, led.log, expected=0)
    assert store.tables() == ["craps-1"]
    assert store.streams() == ["craps-1", STREAM]
    assert store.streams("custody") == [STREAM]
    with pytest.raises(InvalidInput, match="belongs to stream"):  # custody into a table
        store.append("craps-1", led.log[1:2], expected=store.head("craps-1").seq)
    with pytest.raises(InvalidInput, match="belongs to stream"):  # a table's into custody
        store.append(STREAM, list(store.table_events("craps-1"))[:1])
    with pytest.raises(InvalidInput, match="not a table"):
        DurableTable.open(store, "pa-craps", "custody:elsewhere")
    assert all(r.ok for r in verify_store(store))


def test_custody_snapshots_are_bound_audited_and_used(store: EventStore) -> None:
    durable = _ledger_on(store)
    snaps = store.snapshots(STREAM)
    assert snaps
    assert snaps[-1].seq == durable.ledger.state.seq
    assert snaps[-1].data() == encode_state(durable.ledger.state)
    reports = {r.table: r for r in verify_store(store)}
    assert reports[STREAM].ok
    assert reports[STREAM].snapshots == len(snaps)
    assert load_custody_state(store, "river") == load_custody_state(store, "river",
                                                                    use_snapshot=False)
    assert encode_state(load_custody_state(store, "river")) == \
        encode_state(durable.ledger.state)


def test_a_stale_custody_writer_catches_up_and_never_overwrites(
        store_factory: StoreFactory) -> None:
    one = _ledger_on(store_factory())
    two = DurableCustody.resume(store_factory(), "river", clock=one.ledger.clock)
    one.execute(cmd.DrawKey(**as_(ANN), key=Key.TABLE_GAMES))
    head = one.store.head(STREAM).seq
    # ``two`` has not seen the draw: its append would be stale; it folds it in first.
    two.execute(cmd.DrawKey(**as_(SAM), key=Key.SECURITY))
    assert two.ledger.state.keys[Key.TABLE_GAMES].name == ANN.name
    assert one.store.head(STREAM).seq == head + 1
    with pytest.raises(StaleVersion):  # a raw writer with an old head is refused
        two.store.append(STREAM, two.ledger.log[-1:], expected=head)
    assert all(r.ok for r in verify_store(one.store))


def test_custody_recall_names_each_step_of_a_die(store: EventStore) -> None:
    durable = _ledger_on(store)
    die = "D0002"
    steps = recall_custody(store, STREAM, 50, die=die)
    assert [s["type"] for s in steps][:1] == ["ShipmentReceived"]
    assert steps[-1]["type"] == "DiceCancelled"
    assert all(die in s["dice"] for s in steps)
    assert len(recall_custody(store, STREAM, 3)) == 3
    assert durable.ledger.state.dice[die].state.value == "cancelled"


def _alter_custody_event(store: EventStore, backend: str, tmp_path: Path, pg: str | None,
                         schema: str | None) -> None:
    row = next(r for r in store.records(STREAM) if r.kind == "DiceCancelled")
    forged = row.body.replace('"0.25"', '"0.10"')  # a smaller hole than 603a/14-3-4 allow
    assert forged != row.body
    if isinstance(store, MemoryStore):
        import dataclasses
        rows = store.rows[STREAM]
        i = next(i for i, r in enumerate(rows) if r.seq == row.seq)
        rows[i] = dataclasses.replace(rows[i], body=forged)
    elif isinstance(store, SqliteStore):
        with sqlite3.connect(store.path) as conn:
            conn.execute("UPDATE event_log SET body = ? WHERE table_id = ? AND seq = ?",
                         (forged, STREAM, row.seq))
    else:
        import psycopg
        assert pg is not None
        assert schema is not None
        with psycopg.connect(pg, autocommit=True) as conn:
            conn.execute(f'UPDATE "{schema}".event_log SET body = %s '  # test-only schema
                         "WHERE table_id = %s AND seq = %s", (forged, STREAM, row.seq))


def test_mem_2_tampering_with_a_custody_event_is_found(store: EventStore, backend: str,
                                                       tmp_path: Path,
                                                       request: pytest.FixtureRequest) -> None:
    _ledger_on(store)
    DurableTable.open(store, "pa-craps", "craps-1")
    assert all(r.ok for r in verify_store(store))
    pg = request.getfixturevalue("pg_url") if backend == "postgres" else None
    _alter_custody_event(store, backend, tmp_path, pg, getattr(store, "schema", None))
    reports = {r.table: r for r in verify_store(store)}
    assert reports["craps-1"].ok
    bad = reports[STREAM]
    assert not bad.ok
    p = bad.problems[0]
    assert p.what == "altered"
    assert p.table == STREAM
    assert store.records(STREAM, after=p.seq - 1, until=p.seq).__next__().kind == \
        "DiceCancelled"


def test_cli_audit_verify_fails_on_a_tampered_custody_ledger(tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    with SqliteStore(db) as store:
        durable = _ledger_on(store)
        remove = durable.ledger.state.dice["D0004"]
        assert remove.state.value == "at-table"
        remove_and_transfer(durable.ledger, ("D0004",))
        cancel(durable.ledger, ("D0004",))
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "verify", str(db), "--json"])
    assert ok.exit_code == 0, ok.output
    assert STREAM in {t["table"] for t in json.loads(ok.output)["tables"]}
    with SqliteStore(db) as store:
        _alter_custody_event(store, "sqlite", tmp_path, None, None)
    bad = runner.invoke(app, ["audit", "verify", str(db)])
    assert bad.exit_code == 1
    assert "custody:river" in bad.output
    assert "altered" in bad.output
    exported = runner.invoke(app, ["export", str(db), "--table", STREAM])
    assert exported.exit_code == 0
    with SqliteStore(db) as store:
        assert len(exported.output.splitlines()) == len(list(store.records(STREAM)))
