"""Events that can evolve: schema versions, the upcaster, and the committed v1 fixture log.

``tests/fixtures/v1_tables.db`` was written by the code before schema versions (commit
9053d66, ``tests/fixtures/write_v1_log.py``): it must keep loading, replaying, verifying
and exporting as a script with today's code.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.application.scripts import run_script
from dicetable.cli.main import app
from dicetable.core.errors import InvalidInput
from dicetable.games.events import TableOpened
from dicetable.games.state import Phase
from dicetable.store import DurableTable, SqliteStore
from dicetable.store.chain import VERSIONS, decode, encode, upcast
from dicetable.store.replay import load_state
from dicetable.store.state_codec import encode_state
from dicetable.table import Table
from dicetable.table.script_export import export_script
from dicetable.table.table import AROUND_THE_ROLL, CHORES, Automation

FIXTURE = Path(__file__).parent.parent / "fixtures" / "v1_tables.db"


@pytest.fixture
def v1_db(tmp_path: Path) -> Path:
    copy = tmp_path / "v1.db"
    shutil.copyfile(FIXTURE, copy)
    return copy


def test_the_fixture_is_a_v1_log(v1_db: Path) -> None:
    import sqlite3

    with sqlite3.connect(v1_db) as db:
        bodies = [row[0] for row in db.execute("SELECT body FROM event_log")]
    assert bodies
    assert not any('"v":' in b for b in bodies)  # written before schema versions


def test_v1_log_loads_and_its_opening_is_upcast_to_v3(v1_db: Path) -> None:
    """v1 -> v2: only a settlement.automatic pack settled by itself, and an electronic
    table's server ran its timer and roll; v2 -> v3: every table returned a no roll's
    wagers and passed the shaker at once (AROUND_THE_ROLL)."""
    with SqliteStore(v1_db) as store:
        openings: dict[str, TableOpened] = {}
        for t in store.tables():
            opened = next(iter(store.events(t)))
            assert isinstance(opened, TableOpened)
            openings[t] = opened
    around = tuple(a.value for a in AROUND_THE_ROLL)
    assert {k: v.automations for k, v in openings.items()} == {
        "bare-1": tuple(sorted(around)), "in-1": tuple(sorted(around)),
        "ph-1": tuple(sorted(around)),
        "e-1": tuple(sorted(a.value for a in (*CHORES, *AROUND_THE_ROLL,
                                               Automation.BETTING_TIMER,
                                               Automation.CSPRNG_ROLL)))}


def test_table_opened_v2_keeps_returning_and_passing_at_once() -> None:
    """A v2 opening (the issue-10 code before these two chores became automations) reads
    as a table that still does both at once, whatever its mode."""
    from dicetable.store.chain import upcast

    for mode, listed, expected in (
            ("live", [], {"pass-shaker", "return-wagers"}),
            ("bare", ["collect-losers", "complete-roll", "pay-winners"],
             {"collect-losers", "complete-roll", "pay-winners", "pass-shaker",
              "return-wagers"}),
            ("bare", None, {"collect-losers", "complete-roll", "pay-winners", "pass-shaker",
                            "return-wagers"})):
        data = upcast({"type": "TableOpened", "v": 2, "mode": mode, "automations": listed,
                       "pack": {"rules": {}}})
        assert set(data["automations"]) == expected


def test_v1_log_replays_resumes_and_keeps_its_v1_behaviour(v1_db: Path) -> None:
    with SqliteStore(v1_db) as store:
        for table_id in store.tables():
            replayed = Table.replay(store.events(table_id))
            assert encode_state(replayed.state) == encode_state(load_state(store, table_id))
            assert replayed.state.conserved()
        bare = DurableTable.resume(store, "bare-1").table
        assert bare.phase is Phase.SETTLING  # a v1 bare table waited for its dealer
        bare.settle()
        assert bare.point is None
        assert bare.balance("alice") == 372_00
        electronic = DurableTable.resume(store, "e-1").table
        assert electronic.phase is Phase.BETTING  # its logged roll is settled on resume
        assert electronic.balance("dan") == 100_00 + 5_00


def test_v1_log_verifies_and_exports_as_a_script(v1_db: Path) -> None:
    out = CliRunner().invoke(app, ["audit", "verify", str(v1_db)])
    assert out.exit_code == 0, out.output
    with SqliteStore(v1_db) as store:
        for table_id in store.tables():
            logged = list(store.events(table_id))
            result = run_script(export_script(logged))
            assert result.ok, (table_id, result.failure)
            assert result.table is not None
            assert [e.kind for e in result.table.log] == [e.kind for e in logged]
    # Appending to a v1 log writes current versions and the chain still verifies.
    with SqliteStore(v1_db) as store:
        DurableTable.resume(store, "bare-1").table.settle()
    assert CliRunner().invoke(app, ["audit", "verify", str(v1_db)]).exit_code == 0


def test_every_stored_event_carries_its_schema_version() -> None:
    t = Table.open("pa-craps", "t1")
    for event in t.log:
        assert f'"v":{VERSIONS.get(event.kind, 1)}' in encode(event)[1]


def test_an_unknown_schema_version_is_refused_with_the_rule() -> None:
    with pytest.raises(InvalidInput, match="schema version 9"):
        upcast({"type": "TableOpened", "v": 9})
    with pytest.raises(InvalidInput, match="events.codec"):
        decode({"type": "PlayerLeft", "v": "one"})
