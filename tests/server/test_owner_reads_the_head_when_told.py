"""A table's owner on PostgreSQL decides a batch without asking the server for the table's
head; it reads the head when another process's notice says it appended, and an append whose
notice has not arrived yet makes its commit stale, decided again on the log as it stands
(``Floor.catch_up``, ``PostgresStore.hearing``)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from dicetable.application.accounts import Accounts
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.server.demo import electronic_pack
from dicetable.server.floor import Floor, Given
from dicetable.store.base import EventStore, Head, StoredEvent
from dicetable.store.durable import DurableTable
from dicetable.store.postgres import PostgresStore, drop_schema
from dicetable.store.sqlite import SqliteStore
from tests.server.pipeline_helpers import T, account, bet, small_floor
from tests.server.processes import until
from tests.store.conftest import pg_url_or_skip


class CountedHeads:
    """Wraps ``store.head``: counts the reads of ``T``'s head, those made to decide a batch
    (on the table's own thread) apart from those the store's listener makes to follow
    another process's appends."""

    def __init__(self, store: EventStore) -> None:
        self.real = store.head
        self.deciding = 0
        self.following = 0
        store.head = self  # type: ignore[method-assign]

    def __call__(self, table: str) -> Head:
        if table == T:
            if threading.current_thread().name.startswith("dicetable-listen"):
                self.following += 1
            else:
                self.deciding += 1
        return self.real(table)


@pytest.fixture
def two_processes() -> Iterator[tuple[Floor, PostgresStore, PostgresStore]]:
    """A floor on a fresh schema (``small_floor``'s table), and a second handle on the same
    log, as another process would hold it."""
    url = pg_url_or_skip()
    schema = f"own_{uuid.uuid4().hex[:10]}"
    mine, other = PostgresStore(url, schema=schema), PostgresStore(url, schema=schema)
    floor = small_floor(store=mine)
    try:
        yield floor, mine, other
    finally:
        floor.close()
        other.close()
        drop_schema(url, schema)


def _bet(floor: Floor, wager: str) -> None:
    floor.submit(T, Given(account("alice"), bet(wager, 500), g.PlaceBet)).result(10)


def test_the_owner_reads_the_head_only_when_another_process_appended(
        two_processes: tuple[Floor, PostgresStore, PostgresStore]) -> None:
    floor, mine, other = two_processes
    assert mine.hearing  # its LISTEN holds
    heads = CountedHeads(mine)
    for wager in ("pass", "field", "any7"):
        _bet(floor, wager)
    assert heads.deciding == 0  # three batches decided and committed, no head asked for

    DurableTable.resume(other, T).table.join("dave")  # another process appends
    until(lambda: "dave" in floor.tables[T].table.state.players, "folded in dave's join",
          tries=500, pause=0.02)
    assert heads.following >= 1  # its notice made this process read the head, and catch up
    _bet(floor, "hard8")
    assert heads.deciding == 0  # caught up: the next batch asks nothing either


def test_an_append_whose_notice_is_still_on_its_way_makes_the_commit_stale_not_wrong(
        two_processes: tuple[Floor, PostgresStore, PostgresStore],
        monkeypatch: pytest.MonkeyPatch) -> None:
    floor, mine, other = two_processes
    _bet(floor, "pass")
    monkeypatch.setattr(mine, "_notify", lambda notices: None)  # the notices held up
    DurableTable.resume(other, T).table.join("erin")
    assert "erin" not in floor.tables[T].table.state.players  # nothing told this process
    _bet(floor, "field")  # decided on the state it held: stale at the commit, decided again
    kinds = [(e.kind, getattr(e, "player", None)) for e in mine.table_events(T)][-2:]
    assert kinds == [("PlayerJoined", "erin"), ("BetPlaced", "alice")]
    assert "erin" in floor.tables[T].table.state.players
    assert floor.tables[T].table.state.seq == mine.head(T).seq


def test_a_table_opened_here_is_held_once_though_its_opening_is_heard_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The opening's notice reaches this process's listener before ``open_table`` holds the
    table: the listener must not load it as another process's (a second pipeline, the
    first registered and then replaced)."""
    url = pg_url_or_skip()
    schema = f"own_{uuid.uuid4().hex[:10]}"
    store = PostgresStore(url, schema=schema)
    heard = threading.Event()
    real_open = DurableTable.open

    def open_then_hear(*args: object, **kwargs: object) -> DurableTable:
        table = real_open(*args, **kwargs)  # type: ignore[arg-type]
        assert heard.wait(10), "the opening's notice never came"
        return table

    try:
        built = Floor(store, Accounts("memory"))
        # subscribed after the floor: told after the floor's own listener has returned
        store.subscribe(lambda notice: heard.set() if notice.table == T else None)
        monkeypatch.setattr(DurableTable, "open", open_then_hear)
        before = set(threading.enumerate())
        built.open_table(electronic_pack(), T, mode="electronic", opener="fran",
                         staff={"dee": Role.DEALER})
        started = [t for t in set(threading.enumerate()) - before
                   if t.name == f"dicetable-table-{T}"]
        assert len(started) == 1  # one pipeline: the table this process opened
        built.close()
    finally:
        store.close()
        drop_schema(url, schema)


def test_a_lost_listen_is_made_again_and_what_was_appended_meanwhile_is_folded_in(
        two_processes: tuple[Floor, PostgresStore, PostgresStore]) -> None:
    """PostgreSQL ends the listening connection (a restart, a failover): the store listens
    again, announces every stream's head for what nobody heard, and the floor reads heads
    until then (a span of hearing ended is never trusted again)."""
    floor, mine, other = two_processes
    _bet(floor, "pass")
    span = mine.hearing
    with psycopg.connect(mine.conninfo, autocommit=True) as conn:
        ended = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE %s",
            (f"LISTEN%{mine.channel}%",)).fetchall()
    assert ended == [(True,)]
    DurableTable.resume(other, T).table.join("gus")  # appended while nobody may listen
    until(lambda: mine.hearing not in (0, span), "listened again", tries=500, pause=0.02)
    until(lambda: "gus" in floor.tables[T].table.state.players, "folded in gus's join",
          tries=500, pause=0.02)
    _bet(floor, "field")
    assert floor.tables[T].table.state.seq == mine.head(T).seq


def test_a_follow_from_the_state_notes_the_head_of_the_rows_it_read_not_a_later_one(
        tmp_path: Path) -> None:
    """``Floor._catch_up`` from a state that is not at the head this process last held reads
    the rows after the state; another process appending between those rows and a head read
    afterwards must not leave the head noted past what was folded in."""
    path = tmp_path / "floor.db"
    mine, other = SqliteStore(path), SqliteStore(path)
    floor = small_floor(store=mine)
    try:
        info = floor.tables[T]
        DurableTable.resume(other, T).table.join("hal")
        info.durable.head = Head(0, "")  # not the state's: the branch that reads from it
        real = mine.records

        def then_another_appends(table: str, after: int = 0,
                                 until: int | None = None) -> Iterator[StoredEvent]:
            yield from real(table, after, until)
            if table == T:
                DurableTable.resume(other, T).table.join("ivy")

        mine.records = then_another_appends  # type: ignore[method-assign]
        with info.lock:
            floor._catch_up(T, info)
        state = info.table.state
        assert "hal" in state.players
        assert "ivy" not in state.players
        assert info.durable.head.seq == state.seq  # the last row folded in, not ivy's
        mine.records = real  # type: ignore[method-assign]
        with info.lock:
            floor._catch_up(T, info)
        assert "ivy" in info.table.state.players
        assert info.durable.head == mine.head(T)
    finally:
        floor.close()
        other.close()
