"""ONE conformance suite for EVERY registered aggregate kind on EVERY backend: tables, dice
custody ledgers, accounts (sessions, locks), staff changes, faults, kept request answers,
table banks and the slip serial series,
each on memory, SQLite and PostgreSQL (DESIGN.md lesson 9). Each kind gives a sample stream
of its own events; the same tests then run on it: append and read back, a stale writer
refused, racing writers, the chain verified, tampering found, a snapshot that round-trips and
matches the replay, and a replay that reaches the same state."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import pytest

from dicetable.core.errors import InvalidInput, StaleVersion
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.store import account_stream as acct
from dicetable.store import base as streams
from dicetable.store import (
    fault_stream,
    operations_stream,
    player_money_stream,
    request_stream,
    slip_serials_stream,
    staff_stream,
)
from dicetable.store.audit import verify_table
from dicetable.store.base import EventStore
from dicetable.store.memory import MemoryStore
from dicetable.table import Table
from tests.custody.test_log_and_codec import every_kind_of_event
from tests.store.conftest import StoreFactory

AT = "2026-01-01T00:00:00+00:00"
LATER = "2026-01-01T12:00:00+00:00"


def _table() -> list[Event]:
    out: list[Event] = []
    t = Table.open("pa-craps", "conf-t", sink=out.extend)
    t.join("alice")
    t.buy_in("alice", 100_00)
    t.join("bob")
    return out


def _custody() -> list[Event]:
    return list(every_kind_of_event().log)


def _account() -> list[Event]:
    a = "alice"
    return [acct.AccountCreated(account=a, seq=1, at=AT, account_kind="player",
                                display="Alice", password_hash="$argon2id$v=19$stub"),
            acct.SessionOpened(account=a, seq=2, at=AT, session="a" * 64, expires=LATER),
            acct.LoginFailed(account=a, seq=3, at=AT, attempt=1, client="127.0.0.9"),
            acct.LoginFailed(account=a, seq=4, at=AT, attempt=2, client="127.0.0.9"),
            acct.AccountLocked(account=a, seq=5, at=AT, until=LATER, after=3),
            acct.AccountUnlocked(account=a, seq=6, at=AT, actor="pat", by_role="pit-boss"),
            acct.SessionOpened(account=a, seq=7, at=AT, session="b" * 64, expires=LATER),
            acct.SessionClosed(account=a, seq=8, at=AT, session="b" * 64)]


def _staff() -> list[Event]:
    def granted(seq: int, person: str, role: str) -> Event:
        return staff_stream.StaffRoleGranted(table_id="t1", seq=seq, actor="pat", at=AT,
                                             person=person, staff_role=role, table_seq=seq,
                                             by_role="pit-boss")
    return [granted(1, "dee", "dealer"), granted(2, "sam", "stickperson"),
            staff_stream.StaffRoleWithdrawn(table_id="t1", seq=3, actor="pat", at=AT,
                                            person="dee", staff_role="dealer", table_seq=9)]


def _faults() -> list[Event]:
    return [fault_stream.FaultRaised(seq=1, at=AT, subject="t1", what="altered",
                                     detail="seq 3"),
            fault_stream.FaultRaised(seq=2, at=AT, subject="account:bob", what="deleted",
                                     detail="seq 2"),
            fault_stream.FaultCleared(seq=3, at=AT, actor="pat", subject="t1",
                                      by_role="pit-boss", reason="restored")]


def _operations() -> list[Event]:
    return [operations_stream.MigrationApplied(seq=1, at=AT, version_from=2, version_to=3,
                                               name="record-store-version", detail="-"),
            operations_stream.StoreRestored(
                seq=2, at=AT, actor="pat", approved_by="ann", reason="disk", backup="b",
                backup_digest="d", backup_at=AT, backup_checkpoint=1, lost_events=3,
                lost_requests=1, report_digest="r", previous="old"),
            operations_stream.MigrationApplied(seq=3, at=AT, version_from=3, version_to=3,
                                               name="key-rotation", detail="-")]


def _wallet() -> list[Event]:
    return [player_money_stream.WalletDeposited(account="alice", seq=i, at=AT, amount=i * 5000,
                                                reason="cage deposit") for i in (1, 2, 3)]


def _seat_requests() -> list[Event]:
    return [player_money_stream.RequestMade(table="t1", seq=1, at=AT, request=1,
                                            player="alice", what="colour-up"),
            player_money_stream.RequestMade(table="t1", seq=2, at=AT, request=2,
                                            player="bob", what="leave"),
            player_money_stream.RequestSettled(table="t1", seq=3, at=AT, request=1,
                                               outcome="confirmed", detail="dee")]


def _requests() -> list[Event]:
    return [request_stream.RequestRecorded(account="dee", seq=i, at=AT, scope=f"dee:k{i}",
                                           fingerprint=f"f{i}", status=200,
                                           body='{"events": []}') for i in (1, 2, 3)]


def _bank() -> list[Event]:
    from tests.bank.helpers import pit

    p = pit(opener=((2500, 800),))
    p.table.join("alice")
    p.table.buy_in("alice", 200_00)
    p.bank.move("colour-change", "exchange", "x-1", ((500, 20), (10000, -1)), actor="dee",
                role=Role.DEALER)
    p.count("shift", ((2500, 792),))
    return list(p.bank.state.log)


def _serials() -> list[Event]:
    return [slip_serials_stream.SerialTaken(slip_kind="fill", seq=i, at=AT, actor="cass",
                                            serial=i, table=f"t{i % 2}", request=i)
            for i in (1, 2, 3)]


SAMPLES: dict[str, Callable[[], list[Event]]] = {
    "table": _table, "custody": _custody, "account": _account, "staff": _staff,
    "faults": _faults, "requests": _requests, "bank": _bank, "operations": _operations,
    "wallet": _wallet, "seat-requests": _seat_requests, "serials": _serials}


def test_every_registered_kind_is_in_the_suite() -> None:
    assert set(SAMPLES) == set(streams.kinds())


@pytest.fixture(params=sorted(SAMPLES))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sample(kind: str) -> list[Event]:
    events = SAMPLES[kind]()
    assert len(events) >= 3
    assert streams.kind_of(events[0].stream) == kind
    return events


def _fold(kind: str, events: list[Event]) -> Any:
    agg = streams.aggregate(kind)
    state = agg.new_state()
    for e in events:
        agg.fold(state, e)
    return state


def test_append_and_read_back(store: EventStore, kind: str, sample: list[Event]) -> None:
    stream = sample[0].stream
    store.append(stream, sample[:2], expected=0)
    store.append(stream, sample[2:], expected=2)
    assert list(store.events(stream)) == sample
    assert store.head(stream).seq == len(sample)
    assert store.streams(kind) == [stream]
    assert stream not in store.tables() or kind == "table"


def test_a_stale_writer_is_refused_and_writes_nothing(store: EventStore,
                                                      sample: list[Event]) -> None:
    stream = sample[0].stream
    store.append(stream, sample[:2], expected=0)
    head = store.head(stream)
    with pytest.raises(StaleVersion):
        store.append(stream, sample[1:3], expected=1)
    assert store.head(stream) == head
    assert len(list(store.records(stream))) == 2


def test_an_event_of_another_stream_is_refused(store: EventStore, kind: str,
                                               sample: list[Event]) -> None:
    other = next(k for k in sorted(SAMPLES) if k != kind)
    with pytest.raises(InvalidInput):
        store.append(sample[0].stream, SAMPLES[other]()[:1], expected=0)
    assert store.head(sample[0].stream).seq == 0


def test_racing_writers_one_wins(store_factory: StoreFactory, sample: list[Event]) -> None:
    stream = sample[0].stream
    first = store_factory()
    first.append(stream, sample[:1], expected=0)
    handles = [store_factory() for _ in range(4)]
    outcome: list[str] = []
    gate = threading.Barrier(len(handles))

    def write(s: EventStore) -> None:
        gate.wait()
        try:
            s.append(stream, sample[1:2], expected=1)
            outcome.append("ok")
        except StaleVersion:
            outcome.append("stale")

    threads = [threading.Thread(target=write, args=(h,)) for h in handles]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcome) == ["ok", "stale", "stale", "stale"]
    assert first.head(stream).seq == 2


def test_the_chain_verifies_and_the_replay_holds(store: EventStore, kind: str,
                                                 sample: list[Event]) -> None:
    stream = sample[0].stream
    store.append(stream, sample, expected=0)
    report = verify_table(store, stream)
    assert report.ok, report.problems
    assert report.events == len(sample)
    agg = streams.aggregate(kind)
    replayed = _fold(kind, list(store.events(stream)))
    assert agg.encode_state(replayed) == agg.encode_state(_fold(kind, sample))
    assert agg.invariants(replayed) == []


def test_tampering_is_found(store: EventStore, sample: list[Event],
                            request: pytest.FixtureRequest) -> None:
    stream = sample[0].stream
    store.append(stream, sample, expected=0)
    _rewrite(store, stream, 2, request)
    problems = verify_table(store, stream).problems
    assert problems
    assert (problems[0].seq, problems[0].what) == (2, "altered")


def test_a_snapshot_roundtrips_and_matches_the_replay(store: EventStore, kind: str,
                                                      sample: list[Event]) -> None:
    stream = sample[0].stream
    store.append(stream, sample, expected=0)
    agg = streams.aggregate(kind)
    state = _fold(kind, sample)
    snap = store.snapshot(stream, len(sample), agg.encode_state(state))
    assert store.latest_snapshot(stream) == snap
    back = agg.decode_state(snap.data(), sample[0])
    assert agg.encode_state(back) == snap.data()
    if agg.roundtrips is not None:
        assert agg.roundtrips(state)
    assert verify_table(store, stream).ok  # the snapshot equals the replay's state


def test_a_snapshot_that_differs_from_the_replay_is_found(store: EventStore, kind: str,
                                                          sample: list[Event]) -> None:
    stream = sample[0].stream
    store.append(stream, sample, expected=0)
    agg = streams.aggregate(kind)
    wrong = agg.encode_state(_fold(kind, sample[:-1]))
    store.snapshot(stream, len(sample), wrong)
    assert [p.what for p in verify_table(store, stream).problems] == ["snapshot"]


def _rewrite(store: EventStore, stream: str, seq: int, request: pytest.FixtureRequest) -> None:
    """An insider edits one event's body in place (no key, no rehash)."""
    def edit(body: str) -> str:
        return body.replace('"at":"', '"at":"1', 1)

    if isinstance(store, MemoryStore):
        import dataclasses

        rows = store.rows[stream]
        i = next(i for i, r in enumerate(rows) if r.seq == seq)
        rows[i] = dataclasses.replace(rows[i], body=edit(rows[i].body))
        return
    schema = getattr(store, "schema", None)
    if schema is None:
        conn = sqlite3.connect(store.location)
        (body,) = conn.execute("SELECT body FROM event_log WHERE table_id = ? AND seq = ?",
                               (stream, seq)).fetchone()
        conn.execute("UPDATE event_log SET body = ? WHERE table_id = ? AND seq = ?",
                     (edit(body), stream, seq))
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(request.getfixturevalue("pg_url"), autocommit=True) as pg:
        row = pg.execute(f'SELECT body FROM "{schema}".event_log WHERE table_id = %s AND '
                         "seq = %s", (stream, seq)).fetchone()
        assert row is not None
        pg.execute(f'UPDATE "{schema}".event_log SET body = %s WHERE table_id = %s AND '
                   "seq = %s", (edit(str(row[0])), stream, seq))
