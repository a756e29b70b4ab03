"""Group commit: one writer thread turns many concurrent appends into one durable transaction.

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
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar


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
