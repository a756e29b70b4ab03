"""Tamper evidence (spec/standards.md MEM-2, anchor 6): editing, deleting, inserting or swapping
any stored event - directly in the database, behind the store's back - is found by the audit,
which names the table, the seq and what is wrong."""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from dicetable.store.audit import Problem, verify_store
from dicetable.store.base import EventStore
from dicetable.store.chain import canonical, link_hash
from dicetable.store.durable import DurableTable
from dicetable.store.memory import MemoryStore
from dicetable.store.replay import load_state
from dicetable.store.sqlite import SqliteStore
from tests.store.conftest import pg_url_or_skip
from tests.store.helpers import copy_schema, play, seat

Row = tuple[int, str, str, str, str]  # seq, kind, body, prev_hash, hash


class Raw(Protocol):
    """Direct access to the stored rows, as someone with database access would have."""

    def rows(self, table: str) -> list[Row]: ...
    def update(self, table: str, at: int, /, **values: Any) -> None: ...
    def delete(self, table: str, seq: int) -> None: ...
    def insert(self, table: str, row: Row) -> None: ...
    def shift(self, table: str, from_seq: int, by: int) -> None: ...
    def snapshot_body(self, table: str, seq: int, body: str, digest: str) -> None: ...
    def store(self) -> EventStore: ...


class MemoryRaw:
    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def rows(self, table: str) -> list[Row]:
        return [(r.seq, r.kind, r.body, r.prev_hash, r.hash)
                for r in sorted(self._store.rows[table], key=lambda r: r.seq)]

    def update(self, table: str, at: int, /, **values: Any) -> None:
        rows = self._store.rows[table]
        i = next(i for i, r in enumerate(rows) if r.seq == at)
        rows[i] = dataclasses.replace(rows[i], **values)

    def delete(self, table: str, seq: int) -> None:
        self._store.rows[table] = [r for r in self._store.rows[table] if r.seq != seq]

    def insert(self, table: str, row: Row) -> None:
        from dicetable.store.chain import StoredEvent
        self._store.rows[table].append(StoredEvent(table, *row))

    def shift(self, table: str, from_seq: int, by: int) -> None:
        self._store.rows[table] = [dataclasses.replace(r, seq=r.seq + by)
                                   if r.seq >= from_seq else r for r in self._store.rows[table]]

    def snapshot_body(self, table: str, seq: int, body: str, digest: str) -> None:
        snaps = self._store._snapshots[table]
        snaps[seq] = dataclasses.replace(snaps[seq], body=body, digest=digest)

    def store(self) -> EventStore:
        return self._store


class SqlRaw:
    """SQLite or PostgreSQL, through a DB-API connection."""

    def __init__(self, execute: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]],
                 prefix: str, mark: str, opener: Callable[[], EventStore]) -> None:
        self._x = execute
        self._p = prefix
        self._m = mark
        self._open = opener

    def _q(self, text: str) -> str:
        return text.replace("{p}", self._p).replace("?", self._m)

    def rows(self, table: str) -> list[Row]:
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in self._x(
            self._q("SELECT seq, kind, body, prev_hash, hash FROM {p}event_log "
                    "WHERE table_id = ? ORDER BY seq"), (table,))]

    def update(self, table: str, at: int, /, **values: Any) -> None:
        sets = ", ".join(f"{k} = ?" for k in values)
        self._x(self._q(f"UPDATE {{p}}event_log SET {sets} WHERE table_id = ? AND seq = ?"),
                (*values.values(), table, at))

    def delete(self, table: str, seq: int) -> None:
        self._x(self._q("DELETE FROM {p}event_log WHERE table_id = ? AND seq = ?"), (table, seq))

    def insert(self, table: str, row: Row) -> None:
        self._x(self._q("INSERT INTO {p}event_log (table_id, seq, kind, body, prev_hash, hash) "
                        "VALUES (?, ?, ?, ?, ?, ?)"), (table, *row))

    def shift(self, table: str, from_seq: int, by: int) -> None:
        # Through negative numbers, so the primary key never sees two rows at one seq.
        self._x(self._q("UPDATE {p}event_log SET seq = -(seq + ?) WHERE table_id = ? "
                        "AND seq >= ?"), (by, table, from_seq))
        self._x(self._q("UPDATE {p}event_log SET seq = -seq WHERE table_id = ? AND seq < 0"),
                (table,))

    def snapshot_body(self, table: str, seq: int, body: str, digest: str) -> None:
        self._x(self._q("UPDATE {p}snapshots SET body = ?, digest = ? WHERE table_id = ? "
                        "AND seq = ?"), (body, digest, table, seq))

    def store(self) -> EventStore:
        return self._open()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The played log (``_play``) on SQLite and on PostgreSQL, each written once per test
    process; each test tampers with a copy of it (``raw``). Where: backend -> SQLite path or
    PostgreSQL schema (built the first time a test asks)."""
    made: dict[str, str] = {}
    yield made
    if "postgres" in made:
        from dicetable.store.postgres import drop_schema
        drop_schema(pg_url_or_skip(), made["postgres"])


def _template(played: dict[str, str], backend: str, tmp_path_factory: pytest.TempPathFactory,
              ) -> str:
    if backend not in played:
        if backend == "sqlite":
            path = tmp_path_factory.mktemp("tamper") / "log.db"
            with SqliteStore(path, synchronous="OFF") as s:  # durability is not under test
                _play(s)
            played[backend] = str(path)
        else:
            import uuid

            from dicetable.store.postgres import PostgresStore
            schema = f"dt_tamper_t_{uuid.uuid4().hex[:10]}"
            with PostgresStore(pg_url_or_skip(), schema=schema) as ps:
                _play(ps)
            played[backend] = schema
    return played[backend]


@pytest.fixture
def raw(backend: str, tmp_path: Path, request: pytest.FixtureRequest,
        played: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Raw]:
    if backend == "memory":
        mem = MemoryStore()
        _play(mem)
        yield MemoryRaw(mem)
        return
    if backend == "sqlite":
        path = tmp_path / "log.db"
        template = sqlite3.connect(_template(played, backend, tmp_path_factory))
        with sqlite3.connect(path) as copy:
            template.backup(copy)
        template.close()
        conn = sqlite3.connect(path, isolation_level=None)

        def sx(q: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            return conn.execute(q, args).fetchall()
        opened: list[EventStore] = []

        def sopen() -> EventStore:
            opened.append(SqliteStore(path))
            return opened[-1]
        yield SqlRaw(sx, "", "?", sopen)
        conn.close()
        for o in opened:
            o.close()
        return
    import uuid

    import psycopg

    from dicetable.store.postgres import PostgresStore, drop_schema
    url = request.getfixturevalue("pg_url")
    schema = f"dt_tamper_{uuid.uuid4().hex[:10]}"
    copy_schema(url, _template(played, backend, tmp_path_factory), schema)
    pconn = psycopg.connect(url, autocommit=True)

    def px(q: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        cur = pconn.execute(q.encode(), args)
        return cur.fetchall() if cur.description else []
    popened: list[EventStore] = []

    def popen() -> EventStore:
        popened.append(PostgresStore(url, schema=schema))
        return popened[-1]
    yield SqlRaw(px, f'"{schema}".', "%s", popen)
    for o in popened:
        o.close()
    pconn.close()
    drop_schema(url, schema)


def _play(store: EventStore) -> None:
    dt = DurableTable.open(store, "pa-craps", "t1", snapshot_every=20)
    seat(dt.table)
    play(dt.table, random.Random(5), 60)
    assert store.head("t1").seq >= 40
    other = DurableTable.open(store, "pa-props-and-hops", "t2")
    seat(other.table, ("zed",))


def first_problem(raw: Raw, replay: bool = True) -> Problem:
    store = raw.store()
    reports = {r.table: r for r in verify_store(store, replay=replay)}
    assert reports["t2"].ok, "tampering with t1 must not implicate t2"
    assert not reports["t1"].ok
    return reports["t1"].problems[0]


def body_with(body: str, **changes: Any) -> str:
    import json
    data = json.loads(body)
    data.update(changes)
    return canonical(data)


def test_a_clean_log_verifies(raw: Raw) -> None:
    assert all(r.ok for r in verify_store(raw.store()))


def test_mem_2_edited_event_is_found(raw: Raw) -> None:
    seq, _, body, _, _ = raw.rows("t1")[5]
    raw.update("t1", seq, body=body_with(body, actor="mallory"))
    p = first_problem(raw, replay=False)
    assert (p.seq, p.what) == (seq, "altered")


def test_mem_2_edited_and_rehashed_event_is_found(raw: Raw) -> None:
    """A forger who recomputes the edited event's hash still breaks its successor's link."""
    seq, _, body, prev, _ = raw.rows("t1")[5]
    forged = body_with(body, actor="mallory")
    raw.update("t1", seq, body=forged, hash=link_hash(prev, forged))
    p = first_problem(raw)
    assert (p.seq, p.what) == (seq, "altered")


def test_mem_2_rehashed_last_event_is_found_by_the_recorded_head(raw: Raw) -> None:
    seq, _, body, prev, _ = raw.rows("t1")[-1]
    forged = body_with(body, actor="mallory")
    raw.update("t1", seq, body=forged, hash=link_hash(prev, forged))
    p = first_problem(raw)
    assert (p.seq, p.what) == (seq, "altered")


def test_mem_2_edited_kind_is_found(raw: Raw) -> None:
    seq = raw.rows("t1")[3][0]
    raw.update("t1", seq, kind="ChipsBought")
    p = first_problem(raw)
    assert (p.seq, p.what) == (seq, "altered")


def test_mem_2_deleted_event_is_found(raw: Raw) -> None:
    seq = raw.rows("t1")[10][0]
    raw.delete("t1", seq)
    p = first_problem(raw)
    assert (p.seq, p.what) == (seq, "deleted")


def test_mem_2_deleted_and_renumbered_event_is_found(raw: Raw) -> None:
    seq = raw.rows("t1")[10][0]
    raw.delete("t1", seq)
    raw.shift("t1", seq + 1, -1)
    p = first_problem(raw)
    assert (p.seq, p.what) == (seq, "deleted")


def test_mem_2_deleted_last_events_are_found(raw: Raw) -> None:
    rows = raw.rows("t1")
    raw.delete("t1", rows[-1][0])
    raw.delete("t1", rows[-2][0])
    p = first_problem(raw)
    assert (p.seq, p.what) == (rows[-2][0], "deleted")


def test_mem_2_inserted_event_is_found(raw: Raw) -> None:
    """A forged event slipped in, correctly linked to its predecessor, later ones renumbered."""
    rows = raw.rows("t1")
    at = rows[12][0]
    prev_hash = rows[11][4]
    forged = body_with(rows[12][2], seq=at, actor="mallory")
    raw.shift("t1", at, 1)
    raw.insert("t1", (at, rows[12][1], forged, prev_hash, link_hash(prev_hash, forged)))
    p = first_problem(raw)
    assert (p.seq, p.what) == (at, "inserted")


def test_mem_2_inserted_unlinked_event_is_found(raw: Raw) -> None:
    rows = raw.rows("t1")
    at = rows[12][0]
    forged = body_with(rows[12][2], seq=at)
    raw.shift("t1", at, 1)
    raw.insert("t1", (at, rows[12][1], forged, "f" * 64, link_hash("f" * 64, forged)))
    p = first_problem(raw)
    assert (p.seq, p.what) == (at, "inserted")


def test_mem_2_appended_event_is_found(raw: Raw) -> None:
    last = raw.rows("t1")[-1]
    seq = last[0] + 1
    forged = canonical({"type": "ChipsBought", "table": "t1", "seq": seq, "actor": "dealer",
                        "role": "dealer", "at": "2026-01-01T00:00:00+00:00", "rule": "",
                        "player": "alice", "amount": 1_000_00})
    raw.insert("t1", (seq, "ChipsBought", forged, last[4], link_hash(last[4], forged)))
    p = first_problem(raw)
    assert (p.seq, p.what) == (seq, "inserted")


def test_mem_2_swapped_events_are_found(raw: Raw) -> None:
    rows = raw.rows("t1")
    a, b = rows[7][0], rows[9][0]
    raw.update("t1", a, seq=-1)
    raw.update("t1", b, seq=a)
    raw.update("t1", -1, seq=b)
    p = first_problem(raw)
    assert (p.seq, p.what) == (a, "reordered")


def test_mem_2_swapped_contents_are_found(raw: Raw) -> None:
    rows = raw.rows("t1")
    a, b = rows[20], rows[21]
    raw.update("t1", a[0], kind=b[1], body=b[2])
    raw.update("t1", b[0], kind=a[1], body=a[2])
    p = first_problem(raw)
    assert (p.seq, p.what) == (a[0], "reordered")


def test_mem_2_altered_snapshot_is_found_and_never_loaded(raw: Raw) -> None:
    """A snapshot edited and re-digested is caught by the replay check; one edited without
    re-digesting is simply not used when the table resumes."""
    import hashlib
    store = raw.store()
    snap = store.latest_snapshot("t1")
    assert snap is not None
    data = snap.data()
    honest = load_state(store, "t1")
    data["players"]["alice"]["balance"] += 1_000_00
    body = canonical(data)
    raw.snapshot_body("t1", snap.seq, body, "0" * 64)
    assert load_state(raw.store(), "t1").players["alice"].balance \
        == honest.players["alice"].balance
    raw.snapshot_body("t1", snap.seq, body, hashlib.sha256(body.encode()).hexdigest())
    p = first_problem(raw)
    assert (p.seq, p.what) == (snap.seq, "snapshot")


def test_every_single_row_edit_is_found(raw: Raw) -> None:
    """Change one character of any event: the audit points at that event."""
    rows = raw.rows("t1")
    rng = random.Random(1)
    for seq, _, body, _, _ in rng.sample(rows, 5):
        i = rng.randrange(len(body))
        ch = "7" if body[i] != "7" else "8"
        raw.update("t1", seq, body=body[:i] + ch + body[i + 1:])
        p = first_problem(raw, replay=False)
        assert p.seq == seq
        assert p.what in ("altered", "reordered")
        raw.update("t1", seq, body=body)
