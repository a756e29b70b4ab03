"""One conformance suite, run against every backend: memory, SQLite and PostgreSQL
(DESIGN.md lesson 9). The ``store`` fixture is parametrised over all three."""

from __future__ import annotations

import itertools
import random
import threading
import time
from pathlib import Path

import pytest

from dicetable.core.dice import Roll
from dicetable.core.errors import InvalidInput, ProcedureViolation, StaleVersion
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.state import Phase
from dicetable.store.audit import verify_store
from dicetable.store.base import EventStore, Notice
from dicetable.store.chain import EMPTY, GENESIS, link_hash
from dicetable.store.durable import DurableTable
from dicetable.store.recall import recall_rounds
from dicetable.store.replay import load_state
from dicetable.store.state_codec import encode_state, fold
from dicetable.table import Table
from tests.store.conftest import StoreFactory
from tests.store.helpers import electronic, play, seat

AT = "2026-01-01T00:00:00+00:00"


def joined(table: str, seq: int, player: str = "p") -> ev.PlayerJoined:
    return ev.PlayerJoined(table=table, seq=seq, actor=player, role=Role.PLAYER, at=AT,
                           player=f"{player}{seq}")


def batch(table: str, first: int, n: int = 1) -> list[ev.Event]:
    return [joined(table, first + i) for i in range(n)]


# -- appending and reading ----------------------------------------------------------------------
def test_append_then_read_back_in_order(store: EventStore) -> None:
    rows = store.append("t1", batch("t1", 1, 3))
    assert [r.seq for r in rows] == [1, 2, 3]
    store.append("t1", batch("t1", 4, 2))
    assert [e.seq for e in store.events("t1")] == [1, 2, 3, 4, 5]
    assert list(store.events("t1")) == batch("t1", 1, 5)
    assert store.head("t1").seq == 5
    assert store.head("t1").hash == rows[-1].hash or store.head("t1").seq > 3


def test_issue_28_heads_of_many_streams_are_read_together(store: EventStore) -> None:
    """``heads_for`` gives each stream's head as ``head`` does, EMPTY for one without
    events, however many are asked at once (past one SQLite query's worth)."""
    for t in ("t1", "t2"):
        store.append(t, batch(t, 1, 2 if t == "t1" else 3))
    asked = ["t2", "none", "t1", *(f"x{i}" for i in range(1200)), "t1"]
    heads = store.heads_for(asked)
    assert set(heads) == set(asked)
    assert heads["t1"] == store.head("t1")
    assert heads["t1"].seq == 2
    assert heads["t2"] == store.head("t2")
    assert heads["t2"].seq == 3
    assert heads["none"] == EMPTY == heads["x1199"]
    assert store.heads_for([]) == {}


def test_read_from_a_sequence_number(store: EventStore) -> None:
    store.append("t1", batch("t1", 1, 6))
    assert [e.seq for e in store.events("t1", after=4)] == [5, 6]
    assert [r.seq for r in store.records("t1", after=1, until=3)] == [2, 3]
    assert list(store.events("t1", after=6)) == []


def test_each_event_carries_its_predecessors_hash(store: EventStore) -> None:
    store.append("t1", batch("t1", 1, 2))
    store.append("t1", batch("t1", 3, 1))
    rows = list(store.records("t1"))
    assert rows[0].prev_hash == GENESIS
    for before, row in itertools.pairwise(rows):
        assert row.prev_hash == before.hash
    assert all(link_hash(r.prev_hash, r.body) == r.hash for r in rows)
    assert store.head("t1").hash == rows[-1].hash


def test_tables_are_listed_and_kept_apart(store: EventStore) -> None:
    assert store.tables() == []
    store.append("b", batch("b", 1, 2))
    store.append("a", batch("a", 1, 1))
    assert store.tables() == ["a", "b"]
    assert [e.table for e in store.table_events("a")] == ["a"]
    assert store.head("zzz") == EMPTY


def test_stale_sequence_is_refused_and_writes_nothing(store: EventStore) -> None:
    store.append("t1", batch("t1", 1, 2))
    with pytest.raises(StaleVersion) as err:
        store.append("t1", batch("t1", 2, 2))  # seq 2 is taken
    assert err.value.rule == "store.sequence"
    with pytest.raises(StaleVersion):
        store.append("t1", batch("t1", 4, 1))  # a gap: seq 3 was never written
    assert [e.seq for e in store.events("t1")] == [1, 2]
    assert verify_store(store)[0].ok


@pytest.mark.parametrize("events", [
    [],
    [joined("other", 1)],
    [joined("t1", 1), joined("t1", 3)],
])
def test_malformed_batches_are_refused(store: EventStore, events: list[ev.Event]) -> None:
    with pytest.raises(InvalidInput):
        store.append("t1", events)
    assert store.head("t1") == EMPTY


def test_racing_writers_on_one_table_never_overwrite(store: EventStore) -> None:
    """Eight writers race for the same sequence numbers: each seq has exactly one winner."""
    wins: list[int] = []
    lost: list[int] = []
    lock = threading.Lock()

    def writer(name: int) -> None:
        for _ in range(15):
            head = store.head("t1").seq
            try:
                store.append("t1", [ev.PlayerJoined(table="t1", seq=head + 1, actor=str(name),
                                                    role=Role.PLAYER, at=AT,
                                                    player=f"w{name}")])
                with lock:
                    wins.append(name)
            except StaleVersion:
                with lock:
                    lost.append(name)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = list(store.records("t1"))
    assert [r.seq for r in rows] == list(range(1, len(wins) + 1))
    assert len(wins) + len(lost) == 8 * 15
    assert verify_store(store, replay=False)[0].ok


def test_concurrent_tables_all_commit(store: EventStore) -> None:
    """Group commit: many tables appending at once all land, each in order."""
    def writer(table: str) -> None:
        for seq in range(1, 21):
            store.append(table, [joined(table, seq)])

    threads = [threading.Thread(target=writer, args=(f"t{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.tables() == [f"t{i}" for i in range(6)]
    assert all(store.head(f"t{i}").seq == 20 for i in range(6))
    assert all(r.ok for r in verify_store(store, replay=False))


def test_a_second_handle_sees_the_log_and_cannot_overwrite_it(
        store_factory: StoreFactory) -> None:
    """Two processes (two store handles) on one log."""
    one, two = store_factory(), store_factory()
    one.append("t1", batch("t1", 1, 2))
    assert [e.seq for e in two.events("t1")] == [1, 2]
    two.append("t1", batch("t1", 3, 1))
    with pytest.raises(StaleVersion):
        one.append("t1", batch("t1", 3, 1))
    assert one.head("t1").seq == 3


# -- snapshots ---------------------------------------------------------------------------------
def test_snapshots_are_kept_and_found_by_seq(store: EventStore) -> None:
    store.append("t1", batch("t1", 1, 5))
    store.snapshot("t1", 2, {"x": 2})
    store.snapshot("t1", 4, {"x": 4})
    latest = store.latest_snapshot("t1")
    assert latest is not None
    assert latest.seq == 4
    assert latest.data() == {"x": 4}
    assert latest.intact
    earlier = store.latest_snapshot("t1", at_or_before=3)
    assert earlier is not None
    assert earlier.seq == 2
    assert store.latest_snapshot("t1", at_or_before=1) is None
    assert [s.seq for s in store.snapshots("t1")] == [2, 4]
    rows = list(store.records("t1", after=3, until=4))
    assert latest.event_hash == rows[0].hash
    with pytest.raises(InvalidInput):
        store.snapshot("t1", 9, {})


# -- notices -----------------------------------------------------------------------------------
def test_subscribers_hear_of_each_commit(store_factory: StoreFactory) -> None:
    store = store_factory()
    heard: list[Notice] = []
    got = threading.Event()

    def listener(n: Notice) -> None:
        heard.append(n)
        if n.seq == 3:
            got.set()

    sub = store.subscribe(listener)
    store.append("t1", batch("t1", 1, 2))
    store.append("t1", batch("t1", 3, 1))
    assert got.wait(5)
    assert heard[-1] == Notice("t1", 3)
    sub.close()
    store.append("t1", batch("t1", 4, 1))
    time.sleep(0.3)
    assert all(n.seq <= 3 for n in heard)


# -- durable tables ----------------------------------------------------------------------------
def _same(a: Table, b: Table) -> None:
    assert encode_state(a.state) == encode_state(b.state)
    assert a.state.snapshot() == b.state.snapshot()


@pytest.mark.parametrize("preset", ["pa-craps", "pa-props-and-hops", "in-craps"])
def test_resume_rebuilds_exactly_the_state(store: EventStore, preset: str) -> None:
    dt = DurableTable.open(store, preset, "t1", snapshot_every=25)
    seat(dt.table)
    play(dt.table, random.Random(7), 250)
    assert store.head("t1").seq == dt.table.state.seq
    assert len(store.snapshots("t1")) >= 3
    resumed = DurableTable.resume(store, "t1", settle=False)
    _same(resumed.table, dt.table)
    replayed = Table.replay(store.events("t1"))
    _same(replayed, dt.table)
    assert dt.table.state.conserved()
    assert verify_store(store)[0].ok


def test_a_second_durable_writer_gets_stale_and_can_catch_up(store_factory: StoreFactory) -> None:
    one = DurableTable.open(store_factory(), "pa-craps", "t1")
    seat(one.table, ("alice",))
    two = DurableTable.resume(store_factory(), "t1")
    one.table.bet("alice", "pass", 10_00)
    with pytest.raises(StaleVersion):
        two.table.bet("alice", "dontpass", 10_00)
    assert not two.table.state.bets  # the refused command changed nothing
    assert two.refresh() == 1
    two.table.bet("alice", "field", 5_00)
    _same(two.table, DurableTable.resume(store_factory(), "t1").table)


def test_opening_a_table_twice_is_refused(store: EventStore) -> None:
    DurableTable.open(store, "pa-craps", "t1")
    with pytest.raises(ProcedureViolation):
        DurableTable.open(store, "pa-craps", "t1")
    with pytest.raises(InvalidInput):
        DurableTable.resume(store, "nope")


@pytest.mark.parametrize("chores", [0, 1, 2])
def test_res_4_recorded_roll_is_settled_after_restart_never_rerolled(store: EventStore,
                                                                     chores: int) -> None:
    """RES-4 (AGCO 21.1.8): a roll in the log when the process dies is the roll settled."""
    dt = DurableTable.open(store, electronic(), "t1")
    t = dt.table
    seat(t, ("alice",))
    t.bet("alice", "pass", 10_00)
    t.bet("alice", "field", 5_00)
    # The roll is recorded, then the process dies before (some of) the settlement.
    t.automations = frozenset()  # the table's own chores never got to run
    t.execute(cmd.RecordRoll(actor="table", role=Role.SYSTEM, roll=Roll(5, 6),
                             source="csprng"))
    for chore in (cmd.CollectLosers, cmd.PayWinners)[:chores]:
        t.execute(chore(actor="table", role=Role.SYSTEM))
    before = store.head("t1").seq
    resumed = DurableTable.resume(store, "t1")
    state = resumed.table.state
    assert state.phase is Phase.BETTING
    assert state.pending is None
    kinds = [e.kind for e in store.events("t1", after=before)]
    assert "DiceRolled" not in kinds  # nothing rolled again
    assert kinds[-1] == "PuckMoved"
    rolls = [e for e in store.events("t1") if isinstance(e, ev.DiceRolled)]
    assert [str(r.roll) for r in rolls] == ["5-6"]
    # 11 wins the pass line (even money) and the field (even money) on the come-out.
    assert resumed.table.balance("alice") == 1_000_00 + 10_00 + 5_00
    assert state.conserved()


def test_res_4_props_and_hops_round_resumes(store: EventStore) -> None:
    dt = DurableTable.open(store, electronic("pa-props-and-hops"), "ph")
    t = dt.table
    seat(t, ("alice",))
    t.bet("alice", "any7", 5_00)
    t.no_more_bets()
    t.execute(cmd.RecordRoll(actor="dealer", role=Role.DEALER, roll=Roll(3, 4),
                             source="manual"))
    resumed = DurableTable.resume(store, "ph")
    assert resumed.table.state.round == 2
    assert resumed.table.state.phase is Phase.BETTING
    assert resumed.table.state.conserved()


def test_live_table_waits_for_the_dealer_after_restart(store: EventStore) -> None:
    """A live table (settlement by hand) resumes mid-settlement and waits for the dealer."""
    dt = DurableTable.open(store, "pa-craps", "t1", automations=())
    t = dt.table
    seat(t, ("alice",))
    t.bet("alice", "pass", 10_00)
    t.roll("2-2")
    resumed = DurableTable.resume(store, "t1", automations=())
    assert resumed.table.phase is Phase.SETTLING
    resumed.table.settle()
    assert resumed.table.point == 4


def test_snapshot_state_matches_a_fold_to_its_seq(store: EventStore) -> None:
    dt = DurableTable.open(store, "pa-craps", "t1", snapshot_every=10)
    seat(dt.table)
    play(dt.table, random.Random(3), 120)
    for snap in store.snapshots("t1"):
        state = load_state(store, "t1", use_snapshot=False, until=snap.seq)
        assert encode_state(state) == snap.data()
        assert encode_state(fold(e for e in store.table_events("t1") if e.seq <= snap.seq)) \
            == snap.data()


# -- recall and export ----------------------------------------------------------------------------
def test_rec_1_recall_last_ten_rounds_balances_chain(store: EventStore) -> None:
    """REC-1/REC-2: the last 10 throws; each round's closing balances open the next; the
    last round's balances are the table's."""
    dt = DurableTable.open(store, "pa-craps", "t1", snapshot_every=15)
    t = dt.table
    seat(t)
    play(t, random.Random(11), 300)
    rounds = recall_rounds(store, "t1", 10)
    assert len(rounds) == 10
    for a, b in itertools.pairwise(rounds):
        assert a.balances_after == b.balances_before
        assert a.last_seq + 1 == b.first_seq
    assert rounds[-1].balances_after == {p: i.balance for p, i in t.state.players.items()}
    done = [r for r in rounds if r.complete]
    assert all(len(r.rolls) == 1 for r in done)
    for r in done:
        if r.no_roll is None:
            paid = sum(p["win"] - p["commission"] + p["stake_returned"] for p in r.payments)
            back = sum(c["returned"] for c in r.collections)
            staked = sum(a.get("amount", 0) + a.get("commission", 0) for a in r.activity
                         if a["type"] == "BetPlaced")
            bought = sum(a["amount"] for a in r.activity if a["type"] == "ChipsBought")
            cashed = sum(a["amount"] for a in r.activity if a["type"] == "ChipsCashedOut")
            removed = sum(a["returned"] + a.get("commission_returned", 0)
                          for a in r.activity if a["type"] == "BetRemoved")
            delta = sum(r.balances_after.values()) - sum(r.balances_before.values())
            assert delta == paid + back - staked + bought - cashed + removed


def test_recall_shows_wagers_roll_and_outcome(store: EventStore) -> None:
    t = DurableTable.open(store, "pa-craps", "t1").table
    seat(t, ("alice",))
    t.bet("alice", "pass", 10_00)
    t.bet("alice", "field", 5_00)
    t.roll("6-6")
    t.settle()
    t.bet("alice", "pass", 10_00)
    (last_done, current) = recall_rounds(store, "t1", 2)
    assert [w["wager"] for w in last_done.wagers] == ["pass", "field"]
    assert last_done.rolls[0]["roll"] == "6-6"
    assert {c["wager"] for c in last_done.collections} == {"pass"}
    assert {p["wager"] for p in last_done.payments} == {"field"}
    assert last_done.balances_before == {}  # alice joined in this round
    assert last_done.balances_after["alice"] - 10_00 == t.balance("alice")
    assert not current.complete
    assert current.activity[0]["type"] == "BetPlaced"


def test_postgres_notices_reach_other_processes(pg_url: str) -> None:
    """LISTEN/NOTIFY: a commit by one server process is heard by another."""
    import uuid

    from dicetable.store.postgres import PostgresStore, drop_schema

    schema = f"dt_notify_{uuid.uuid4().hex[:10]}"
    listener_side = PostgresStore(pg_url, schema=schema)
    writer_side = PostgresStore(pg_url, schema=schema)
    try:
        heard: list[Notice] = []
        got = threading.Event()

        def listener(n: Notice) -> None:
            heard.append(n)
            got.set()

        with listener_side.subscribe(listener):
            writer_side.append("t9", batch("t9", 1, 3))
            assert got.wait(5)
        assert heard == [Notice("t9", 3)]
        assert [e.seq for e in listener_side.events("t9")] == [1, 2, 3]
    finally:
        listener_side.close()
        writer_side.close()
        drop_schema(pg_url, schema)


def test_one_failing_batch_does_not_fail_the_others_in_its_transaction() -> None:
    from dicetable.store.sqlite import GroupCommitter, Job

    release = threading.Event()
    written: list[list[int]] = []

    def write(jobs: list[Job]) -> None:
        release.wait(5)
        written.append([j.payload for j in jobs])
        if any(j.payload < 0 for j in jobs):
            raise RuntimeError("disk says no")
        for j in jobs:
            j.future.set_result(j.payload)

    gc = GroupCommitter(write, "test")
    results: dict[int, object] = {}

    def submit(v: int) -> None:
        try:
            results[v] = gc.submit(v)
        except RuntimeError as e:
            results[v] = e

    threads = [threading.Thread(target=submit, args=(v,)) for v in (1, -1, 2, 3)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    release.set()
    for t in threads:
        t.join()
    gc.close()
    assert results[1] == 1
    assert (results[2], results[3]) == (2, 3)
    assert isinstance(results[-1], RuntimeError)


def test_a_file_that_is_not_a_log_is_not_touched(tmp_path: Path) -> None:
    import sqlite3

    from dicetable.store.sqlite import SqliteStore

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE x (a)")
    with pytest.raises(InvalidInput, match="no dicetable log"):
        SqliteStore(path, create=False)
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert names == {"x"}


def test_a_full_table_snapshots_in_proportion_to_its_size(store: EventStore) -> None:
    """Snapshots come at least ``snapshot_per_item`` events per player and wager apart, so
    their cost stays a bounded share of the table's work (industry-default)."""
    dt = DurableTable.open(store, "pa-craps", "t1", snapshot_every=10)
    assert dt.snapshot_per_item == 4
    seat(dt.table)
    play(dt.table, random.Random(5), 200)
    seqs = [0] + [s.seq for s in store.snapshots("t1")]
    assert len(seqs) > 2  # snapshots were taken ...
    for before, after in itertools.pairwise(seqs):
        # ... each when due: the state it holds had at most (gap / 4) players and wagers
        state = load_state(store, "t1", use_snapshot=False, until=after)
        assert after - before >= max(10, 4 * (len(state.players) + len(state.bets)))
    assert not dt.snapshot_due() or dt.table.state.seq - seqs[-1] >= 10
