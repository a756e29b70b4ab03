"""The embedded default: one SQLite file, WAL, ``synchronous=FULL``, one writer, group commit.

SQLite allows one writer at a time even in WAL mode, so this store has exactly one: a writer
thread that takes ``BEGIN IMMEDIATE`` (the write lock up front, so a transaction never fails
half way for want of it), writes every batch that is waiting, and commits once
(``GroupCommitter``). Readers use their own connections and never block the writer.
``synchronous=FULL`` makes each commit durable before the caller is answered
(spec/standards.md DUR-1). Other processes may open the same file; the table heads are read
inside the write transaction, so a stale writer anywhere gets ``StaleVersion``.

>>> import tempfile, os
>>> from dicetable.table import Table
>>> path = os.path.join(tempfile.mkdtemp(), "log.db")
>>> with SqliteStore(path) as store:
...     t = Table.open("pa-craps", "t1", sink=lambda evs: store.append("t1", evs))
...     _ = t.join("alice")
...     store.head("t1").seq, store.tables()
(2, ['t1'])

Group commit: one writer thread turns many concurrent appends into one durable transaction.

With ``synchronous=FULL`` every commit waits for the disk; the disk, not the CPU, sets the pace.
Callers hand their batch to the writer and wait; while one transaction is being made durable
the next callers queue up, and the writer takes all of them into the next transaction. Each
caller returns only once its own batch is committed, so an acknowledged command is durable.

>>> seen = []
>>> def write(jobs):
...     seen.append(len(jobs))
...     for job in jobs:
...         job.future.set_result(job.payload * 2)
>>> gc = GroupCommitter(write, "demo")
>>> gc.submit(21)
42
>>> gc.close()
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from dicetable.core.errors import InvalidInput
from dicetable.store.archive_file import Span
from dicetable.store.base import (
    LEGACY_TABLES,
    AppendRequest,
    EventStore,
    Notice,
    RequestRecord,
    key_mismatch,
)
from dicetable.store.chain import EMPTY, Head, Snapshot, StoredEvent
from dicetable.store.tables import sqlite_schema


@dataclass(slots=True)
class Job:
    payload: Any
    future: Future[Any] = field(default_factory=Future)


_STOP = object()


def take_batch(q: queue.SimpleQueue[Any], limit: int, stop: object) -> tuple[list[Any], bool]:
    """Wait for one item, then take whatever else is already queued, up to ``limit``.

    Returns the batch and whether the ``stop`` sentinel was met (nothing after it is taken);
    an empty batch means ``stop`` came first.
    """
    first = q.get()
    if first is stop:
        return [], True
    batch = [first]
    while len(batch) < limit:
        try:
            nxt = q.get_nowait()
        except queue.Empty:
            break
        if nxt is stop:
            return batch, True
        batch.append(nxt)
    return batch, False


class GroupCommitter:
    """Runs ``write(jobs)`` on one thread; ``write`` settles each job's future."""

    def __init__(self, write: Callable[[list[Job]], None], name: str,
                 max_batch: int = 1024) -> None:
        self._write = write
        self._max = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"dicetable-writer-{name}",
                                        daemon=True)
        self._thread.start()

    def submit(self, payload: Any) -> Any:
        """Queue ``payload`` and wait until it is committed; returns what ``write`` set."""
        job = Job(payload)
        with self._lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            self._queue.put(job)
        return job.future.result()

    def _run(self) -> None:
        while True:
            batch, stop = take_batch(self._queue, self._max, _STOP)
            if not batch:
                return
            self._write_isolating(batch)
            if stop:
                return

    def _write_isolating(self, batch: list[Job]) -> None:
        try:
            self._write(batch)
        except BaseException as exc:
            if len(batch) == 1:  # the transaction failed: its caller learns why
                if not batch[0].future.done():
                    batch[0].future.set_exception(exc)
                return
            # One bad batch must not fail the others that shared its transaction: retry
            # each in a transaction of its own.
            for job in batch:
                if not job.future.done():
                    self._write_isolating([job])

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()


Row = tuple[str, int, str, str, str, str]
"""One event as it is stored: table, seq, kind, body, previous hash, hash."""

@dataclass
class BatchPlan:
    """What one group-commit transaction writes, and what each waiting writer is told."""

    outcomes: list[tuple[Job, object]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    snapshots: list[Any] = field(default_factory=list)
    requests: list[tuple[str, str, int, int]] = field(default_factory=list)
    """(request key, table, first seq, last seq) of each append that named its request."""

    def settle(self) -> None:
        """After the commit: each writer gets its stored events, or the error refusing it."""
        for job, result in self.outcomes:
            if isinstance(result, BaseException):
                job.future.set_exception(result)
            else:
                job.future.set_result(result)


Conn = TypeVar("Conn")


class Readers(Generic[Conn]):
    """One read connection per thread, each closed with the store (``closed`` says when the
    store is, so no new one is opened after)."""

    def __init__(self, connect: Callable[[], Conn], closed: Callable[[], bool],
                 usable: Callable[[Conn], bool] = lambda conn: True) -> None:
        self._connect, self._closed, self._usable = connect, closed, usable
        self._local = threading.local()
        self._all: list[Conn] = []
        self._lock = threading.Lock()

    def get(self) -> Conn:
        conn: Conn | None = getattr(self._local, "conn", None)
        if conn is None or not self._usable(conn):
            if self._closed():
                raise RuntimeError("the store is closed")
            conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def close(self, close: Callable[[Conn], None]) -> None:
        with self._lock:
            for conn in self._all:
                close(conn)
            self._all.clear()


class GroupWriter:
    """The write path the SQL stores share: each append or snapshot is a job, written in a
    group commit on one writer thread, or (without group commit) in its own transaction on
    the caller's thread. A store supplies ``_write`` and ``_writer_name``."""

    _write_lock: threading.Lock
    _committer: GroupCommitter | None
    _group: bool
    _closed: bool

    def _write(self, jobs: list[Job]) -> None:
        raise NotImplementedError

    @property
    def _writer_name(self) -> str:
        raise NotImplementedError

    def _submit(self, payload: object) -> object:
        if self._group:
            with self._write_lock:
                if self._committer is None:
                    if self._closed:
                        raise RuntimeError("the store is closed")
                    self._committer = GroupCommitter(self._write, self._writer_name)
                committer = self._committer
            return committer.submit(payload)
        job = Job(payload)
        with self._write_lock:  # one transaction per call, on the caller's thread
            if self._closed:
                raise RuntimeError("the store is closed")
            self._write([job])
        return job.future.result()

    def _append(self, request: Any) -> list[Any]:
        rows = self._submit(request)
        assert isinstance(rows, list)
        return rows

    def save_snapshot(self, snapshot: Any) -> None:
        self._submit(snapshot)

    def _stop_writing(self) -> bool:
        """Refuse further writes and finish those queued; False when already closed."""
        with self._write_lock:
            if self._closed:
                return False
            self._closed = True
            committer, self._committer = self._committer, None
        if committer is not None:
            committer.close()
        return True


def plan_batch(jobs: list[Job], heads: dict[str, Any], key: bytes | None = None) -> BatchPlan:
    """Check each append against its table's head and chain its events, in arrival order.

    ``heads`` (table -> Head, read inside the transaction) is advanced as appends are taken;
    an append with a stale sequence is refused alone, the others in the batch go through.
    """
    from dicetable.core.errors import DicetableError
    from dicetable.store.base import AppendRequest, check_head
    from dicetable.store.chain import EMPTY, Head, Snapshot, chain

    plan = BatchPlan()
    for job in jobs:
        p = job.payload
        if isinstance(p, Snapshot):
            plan.snapshots.append(p)
            plan.outcomes.append((job, None))
            continue
        assert isinstance(p, AppendRequest)
        head = heads.get(p.table, EMPTY)
        try:
            check_head(p, head)
        except DicetableError as e:
            plan.outcomes.append((job, e))
            continue
        rows = chain(p.table, head, p.kinds, p.bodies, key)
        for request, first, last in p.records(rows[0].seq, rows[-1].seq):
            plan.requests.append((request, p.table, first, last))
        plan.rows += [(r.table, r.seq, r.kind, r.body, r.prev_hash, r.hash) for r in rows]
        heads[p.table] = Head(rows[-1].seq, rows[-1].hash)
        plan.changed.add(p.table)
        plan.outcomes.append((job, rows))
    return plan


HEADS_AT_ONCE = 500
"""Tables whose heads one query reads at most (``heads_for``; SQLite's bound on a statement's
parameters is 32,766 since 3.32, 999 before)."""

SCHEMA = sqlite_schema()

_COLS = "table_id, seq, kind, body, prev_hash, hash"
_STREAMS = """
WITH RECURSIVE ids(id) AS (
    SELECT (SELECT min(table_id) FROM event_log)
    UNION ALL
    SELECT (SELECT min(table_id) FROM event_log WHERE table_id > ids.id) FROM ids
    WHERE ids.id IS NOT NULL)
SELECT id FROM ids WHERE id IS NOT NULL
UNION SELECT table_id FROM table_heads WHERE seq > 0 ORDER BY 1
"""
"""Every stream with a head or a row: the rows' streams by one index seek each (a DISTINCT
would read the whole log)."""
_SPAN = "table_id, first_seq, first_prev, last_seq, last_hash, day, file, mac"


class SqliteStore(GroupWriter, EventStore):
    """A table log in one SQLite file."""

    def __init__(self, path: str | Path, *, group_commit: bool = True,
                 synchronous: str = "FULL", create: bool = True,
                 busy_timeout_ms: int = 30_000, key: bytes | None = None) -> None:
        super().__init__()
        self.key = key
        self.path = Path(path)
        if not create and not self.path.exists():
            raise InvalidInput(f"no store at {self.path}", rule="store.location")
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise InvalidInput(f"synchronous={synchronous!r}?", rule="store.sqlite")
        self._sync = synchronous.upper()
        self._busy = busy_timeout_ms
        self._writer = self._connect()
        if not create and self._writer.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'event_log'").fetchone() is None:
            self._writer.close()
            raise InvalidInput(f"{self.path} holds no dicetable log", rule="store.location")
        self._writer.execute("PRAGMA journal_mode=WAL")
        self._writer.executescript(SCHEMA)
        self._write_lock = threading.Lock()
        self._readers = Readers(self._connect, lambda: self._closed)
        self._committer: GroupCommitter | None = None
        self._group = group_commit
        self._closed = False

    @property
    def location(self) -> str:
        return str(self.path)

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE / COMMIT ourselves (standards.md §4).
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={int(self._busy)}")
        conn.execute(f"PRAGMA synchronous={self._sync}")
        return conn

    def _reader(self) -> sqlite3.Connection:
        return self._readers.get()

    # -- writing ------------------------------------------------------------------------------
    @property
    def _writer_name(self) -> str:
        return str(self.path.name)

    def _write(self, jobs: list[Job]) -> None:
        # Few calls into SQLite per transaction, whatever the batch size: each call gives up
        # the GIL and must win it back from the threads deciding the next commands.
        conn = self._writer
        tables = sorted({j.payload.table for j in jobs if isinstance(j.payload, AppendRequest)})
        conn.execute("BEGIN IMMEDIATE")
        try:
            if tables:
                self._claim_key(conn)
            heads: dict[str, Head] = {}
            if tables:
                marks = ", ".join("?" for _ in tables)
                heads = {str(t): Head(int(seq), str(h)) for t, seq, h in conn.execute(
                    f"SELECT table_id, seq, hash FROM table_heads WHERE table_id IN ({marks})",
                    tables)}
            plan = plan_batch(jobs, heads, self.key)
            if plan.rows:
                conn.executemany(f"INSERT INTO event_log ({_COLS}) VALUES (?, ?, ?, ?, ?, ?)",
                                 plan.rows)
                conn.executemany(
                    "INSERT INTO table_heads (table_id, seq, hash) VALUES (?, ?, ?) ON CONFLICT "
                    "(table_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
                    [(t, heads[t].seq, heads[t].hash) for t in sorted(plan.changed)])
            if plan.requests:
                conn.executemany(
                    "INSERT INTO request_keys VALUES (?, ?, ?, ?) ON CONFLICT (request) DO "
                    "UPDATE SET last_seq = excluded.last_seq", plan.requests)
            if plan.snapshots:
                conn.executemany("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?)",
                                 [(p.table, p.seq, p.event_hash, p.body, p.digest)
                                  for p in plan.snapshots])
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        plan.settle()
        self._notify(Notice(t, heads[t].seq) for t in sorted(plan.changed))

    def _claim_key(self, conn: sqlite3.Connection) -> None:
        """Inside the write transaction: the log is chained with this process's key (the
        first writer records its key's id), or nothing is written."""
        row = conn.execute("SELECT value FROM chain_meta WHERE name = 'key_id'").fetchone()
        if row is None:
            used = conn.execute("SELECT 1 FROM event_log LIMIT 1").fetchone() is not None
            recorded = "" if used else self.key_id  # a log from before keys is unkeyed
            conn.execute("INSERT INTO chain_meta VALUES ('key_id', ?)", (recorded,))
        else:
            recorded = str(row[0])
        if recorded != self.key_id:
            raise key_mismatch(recorded, self.key_id, self.location)

    def recorded_key_id(self) -> str | None:
        row = self._reader().execute(
            "SELECT value FROM chain_meta WHERE name = 'key_id'").fetchone()
        return None if row is None else str(row[0])

    def legacy_tables(self) -> list[str]:
        conn = self._reader()
        present = {str(r[0]) for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
        return [t for t in LEGACY_TABLES if t in present
                and conn.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is not None]

    def request_record(self, request: str) -> RequestRecord | None:
        row = self._reader().execute(
            "SELECT request, table_id, first_seq, last_seq FROM request_keys WHERE request = ?",
            (request,)).fetchone()
        return None if row is None else RequestRecord(str(row[0]), str(row[1]), int(row[2]),
                                                      int(row[3]))

    @staticmethod
    def _head(conn: sqlite3.Connection, table: str) -> Head:
        row = conn.execute("SELECT seq, hash FROM table_heads WHERE table_id = ?",
                           (table,)).fetchone()
        return EMPTY if row is None else Head(int(row[0]), str(row[1]))

    # -- reading ------------------------------------------------------------------------------
    def stream_ids(self) -> list[str]:
        rows = self._reader().execute(_STREAMS).fetchall()
        return [str(r[0]) for r in rows]

    def head(self, table: str) -> Head:
        return self._head(self._reader(), table)

    def heads_for(self, tables: Iterable[str]) -> dict[str, Head]:
        wanted = list(dict.fromkeys(tables))
        found = dict.fromkeys(wanted, EMPTY)
        conn = self._reader()
        for i in range(0, len(wanted), HEADS_AT_ONCE):  # one read, whatever its size
            some = wanted[i:i + HEADS_AT_ONCE]
            found.update((str(t), Head(int(seq), str(h))) for t, seq, h in conn.execute(
                "SELECT table_id, seq, hash FROM table_heads WHERE table_id IN "
                f"({', '.join('?' for _ in some)})", some))
        return found

    def _records(self, table: str, after: int = 0,
                 until: int | None = None) -> Iterator[StoredEvent]:
        cur = self._reader().execute(
            f"SELECT {_COLS} FROM event_log WHERE table_id = ? AND seq > ? AND seq <= ? "
            "ORDER BY seq", (table, after, until if until is not None else 2**62))
        for row in cur:
            yield StoredEvent(*row)

    def _bodies(self, table: str, after: int = 0) -> Iterator[str]:
        cur = self._reader().execute(
            "SELECT body FROM event_log WHERE table_id = ? AND seq > ? ORDER BY seq",
            (table, after))
        cur.arraysize = 1024
        while chunk := cur.fetchmany():
            for (body,) in chunk:
                yield body

    def _seqs_of(self, table: str, kinds: set[str]) -> list[int]:
        wanted = sorted(kinds)
        if not wanted:
            return []
        marks = ", ".join("?" for _ in wanted)
        rows = self._reader().execute(
            f"SELECT seq FROM event_log WHERE table_id = ? AND kind IN ({marks}) ORDER BY seq",
            (table, *wanted)).fetchall()
        return [int(r[0]) for r in rows]

    def archive_spans(self, table: str) -> list[Span]:
        rows = self._reader().execute(
            f"SELECT {_SPAN} FROM archives WHERE table_id = ? ORDER BY first_seq",
            (table,)).fetchall()
        return [Span(str(r[0]), int(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]),
                     str(r[6]), str(r[7])) for r in rows]

    def move_to_archive(self, spans: list[Span]) -> None:
        conn = self._connect()  # its own transaction, beside the writer thread's
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for span in spans:
                    count, last = conn.execute(
                        "SELECT count(*), max(seq) FROM event_log WHERE table_id = ? AND "
                        "seq BETWEEN ? AND ?", (span.stream, span.first, span.last)).fetchone()
                    end = conn.execute("SELECT hash FROM event_log WHERE table_id = ? AND "
                                       "seq = ?", (span.stream, span.last)).fetchone()
                    if count != span.last - span.first + 1 or last != span.last or \
                            end is None or end[0] != span.last_hash:
                        raise InvalidInput(f"{span.stream} seqs {span.first}-{span.last} are "
                                           "not the events archived", rule="archive.move")
                    conn.execute("INSERT INTO archives VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                 (span.stream, span.first, span.first_prev, span.last,
                                  span.last_hash, span.day, span.file, span.mac))
                    conn.execute("DELETE FROM event_log WHERE table_id = ? AND seq BETWEEN ? "
                                 "AND ?", (span.stream, span.first, span.last))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()

    def snapshots(self, table: str) -> list[Snapshot]:
        rows = self._reader().execute(
            "SELECT table_id, seq, event_hash, body, digest FROM snapshots WHERE table_id = ? "
            "ORDER BY seq", (table,)).fetchall()
        return [Snapshot(*r) for r in rows]

    def latest_snapshot(self, table: str, at_or_before: int | None = None) -> Snapshot | None:
        row = self._reader().execute(
            "SELECT table_id, seq, event_hash, body, digest FROM snapshots WHERE table_id = ? "
            "AND seq <= ? ORDER BY seq DESC LIMIT 1",
            (table, at_or_before if at_or_before is not None else 2**62)).fetchone()
        return None if row is None else Snapshot(*row)

    # -- lifetime -----------------------------------------------------------------------------
    def close(self) -> None:
        if not self._stop_writing():
            return
        self._writer.close()
        self._readers.close(lambda conn: conn.close())
