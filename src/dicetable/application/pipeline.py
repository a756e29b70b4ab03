"""Per-stream pipelining: a stream's queued commands decided in order, written in one commit.

Each stream has one worker thread and a bounded queue. The worker takes every command waiting
(up to ``max_batch``), decides them one after the other against the state that includes the
earlier ones, and appends all their events in one store append (one transaction; the store's
group committer may share it with other streams' batches). Only after that commit is each
command answered, so durability is unchanged: nothing acknowledged is ever lost. A refused
command raises before anything is applied, so it changes nothing and the batch goes on. If the
commit itself fails, the stream is rebuilt from the store and every command of the batch learns
why (none was acknowledged); a ``StaleVersion`` (another process appended first) is decided
again against the caught-up state.

Past ``max_queue`` waiting commands, or once the wait they imply (their number times the recent
cost of deciding one, plus one commit per batch they fill) passes ``max_wait``, a stream
refuses more at once with ``Busy`` (HTTP 503 and ``Retry-After``): never an unbounded wait.
``load`` reports the queue's depth and those measured costs (the HTTP door asks it).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from dicetable.core.errors import DicetableError, StaleVersion
from dicetable.games import commands as gcmd
from dicetable.games.events import BetPlaced, Event
from dicetable.store.base import current_request
from dicetable.store.sqlite import take_batch

if TYPE_CHECKING:
    from dicetable.table import Table

log = logging.getLogger(__name__)

Build = Callable[[], "gcmd.Command | Iterable[gcmd.Command]"]


class Settled(Protocol):
    """What a caller on an event loop waits on: an ``asyncio.Future``, or an answer settled
    the same way that writes itself out (``server.bets_at_read``)."""

    def done(self) -> bool: ...
    def set_result(self, result: Any, /) -> None: ...
    def set_exception(self, exception: BaseException, /) -> None: ...


Waiter = tuple[asyncio.AbstractEventLoop, Settled]
"""A caller on an event loop: its loop and what it waits on."""
Reply = Callable[[list[Event], dict[str, str]], Any]
"""Makes a command's answer right after it is decided (its events; the owners of the bets
placed earlier in its batch, which the host has not absorbed yet)."""
Advance = Callable[["Table"], list[Event]]
"""Gives a table the time (its automations: timer, roll, settle)."""

MAX_QUEUE = 512
"""Commands that may wait for one stream (industry-default: about two commits' worth)."""
MAX_BATCH = 256
"""Commands decided into one commit."""
MAX_WAIT = 0.2
"""Seconds a command may expect to wait in the queue before it is refused instead
(industry-default: within the 250 ms a bet before the close may take): the queue's length
times the recent cost of deciding one, plus a commit per batch."""

RETRY_AFTER_S = 1
"""Seconds a command refused for load is told to wait before trying again (industry-
default)."""


class Busy(DicetableError):
    """The stream's queue is full: try again after ``retry_after`` seconds (HTTP 503)."""

    def __init__(self, message: str, *, retry_after: int = RETRY_AFTER_S) -> None:
        super().__init__(message, rule="server.backpressure")
        self.retry_after = retry_after


@dataclass(slots=True, eq=False)
class Job:
    build: Build
    reply: Reply | None = None
    view: Callable[[], Any] | None = None
    """After the commit, the view to add to the reply (``reply`` must give a dict)."""
    request: str | None = None
    """The client's idempotency key: recorded with this command's events, in their commit."""
    advance: Advance | None = None
    """After the commands: give the table the time (its automations: timer, roll, settle)."""
    waiter: Waiter | None = None
    """An event loop's future to settle (one hand-over per batch); without one, ``future``."""
    future: Future[Any] | None = None
    settled: bool = False


_STOP = object()


@dataclass
class BatchStats:
    """What a stream's pipeline has done (tests count commits with these, never time)."""

    batches: int = 0
    commits: int = 0
    commands: int = 0
    refused: int = 0
    busy: int = 0


@dataclass(frozen=True, slots=True)
class Load:
    """A pipeline's load as measured: what the HTTP door sheds by."""

    depth: int
    """Commands waiting."""
    per_command: float
    """Recent seconds spent deciding one command."""
    per_batch: float
    """Recent seconds a batch spends on everything but deciding (commit, answers, push)."""


class Hosted(Protocol):
    """What the pipeline reads of a stream its host holds (``server.floor.FloorTable``)."""

    @property
    def lock(self) -> threading.Lock: ...
    @property
    def table(self) -> Table: ...


class StreamHost(Protocol):
    """The public contract between a stream's pipeline and its host (``server.floor.Floor``,
    which starts a pipeline for each table it loads). Every method but ``hosted`` is called
    with the stream's lock held."""

    def hosted(self, stream: str) -> Hosted: ...
    def catch_up(self, stream: str) -> None:
        """Fold in (and tell the subscribers) what another process appended."""
    def commit(self, stream: str, events: list[Event],
               spans: list[tuple[str, int, int]]) -> None:
        """One append for a batch, each command's request key in the same transaction."""
    def rebuild(self, stream: str) -> None:
        """The stream as its log has it, after a batch that could not be committed."""
    def committed(self, stream: str, events: list[Event]) -> None:
        """After a batch's answers have gone out: tell the subscribers, snapshot if due."""


class StreamPipeline:
    """One stream's queue and worker thread."""

    def __init__(self, host: StreamHost, stream: str, *, max_queue: int = MAX_QUEUE,
                 max_batch: int = MAX_BATCH, max_wait: float | None = MAX_WAIT) -> None:
        self.host = host
        self.stream = stream
        self.max_queue = max_queue
        self.max_batch = max_batch
        self.max_wait = max_wait
        self.cost = 0.0
        """Recent seconds per command decided (a moving average)."""
        self.commit_cost = 0.0
        """Recent seconds per batch spent on everything but deciding (the commit, the
        answers, the push): paid once per batch, however many commands it holds."""
        self.stats = BatchStats()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._waiting = 0
        self._count = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"dicetable-table-{stream}",
                                        daemon=True)
        self._thread.start()

    # -- the callers' side --------------------------------------------------------------------
    def queue(self, build: Build, reply: Reply | None = None, *,
              view: Callable[[], Any] | None = None, bounded: bool = True,
              advance: Advance | None = None,
              waiter: Waiter | None = None) -> Future[Any] | None:
        """Queue a command; its future is settled after the commit that holds its events.

        ``bounded`` commands past ``max_queue`` waiting get ``Busy`` at once; the table's own
        automation (the electronic round) is never refused for load. The caller's request
        key (``store.base``, set by the idempotency layer) goes with the command to the
        store and is committed with its events. With a ``waiter`` the answer goes to that
        event loop's future instead (the whole batch's answers in one hand-over to the loop,
        not one each) and None is returned.
        """
        job = Job(build, reply, view, current_request(), advance, waiter=waiter,
                  future=Future() if waiter is None else None)
        with self._count:
            if self._closed:
                raise RuntimeError("the floor is closed")
            # A queue is never sequential use: a caller that waits for each answer is never
            # refused, however slow the machine.
            expected = self._expected(self._waiting)
            if bounded and (self._waiting >= self.max_queue or (
                    self.max_wait is not None and expected > self.max_wait)):
                self.stats.busy += 1
                raise Busy(f"table {self.stream} has {self._waiting} commands waiting "
                           f"(about {expected * 1000:.0f} ms); retry shortly", retry_after=1)
            self._waiting += 1
            self._queue.put(job)
        return job.future

    @property
    def waiting(self) -> int:
        return self._waiting

    def load(self) -> Load:
        """The queue's depth and the measured cost of a command and of a batch's commit."""
        return Load(self._waiting, self.cost, self.commit_cost)

    def overloaded(self) -> bool:
        """Would a command queued now be refused? (Read without the lock: a cheap early
        answer for the door; ``queue`` decides for certain.)"""
        waiting = self._waiting
        return waiting >= self.max_queue or (
            self.max_wait is not None and self._expected(waiting) > self.max_wait)

    def _expected(self, waiting: int) -> float:
        """The wait ``waiting`` queued commands imply: each decided, one commit per batch."""
        if not waiting:
            return 0.0
        batches = -(-waiting // self.max_batch)
        return waiting * self.cost + batches * self.commit_cost

    def close(self, *, wait: bool = True) -> None:
        """Stop taking commands; those queued are still decided (``wait``: until they are)."""
        with self._count:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        if wait and threading.current_thread() is not self._thread:
            self._thread.join()

    @property
    def on_worker(self) -> bool:
        return threading.current_thread() is self._thread

    # -- the worker ---------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            jobs: list[Job]
            jobs, stop = take_batch(self._queue, self.max_batch, _STOP)
            if not jobs:
                return
            with self._count:
                self._waiting -= len(jobs)
            try:
                self._batch(jobs)
            except BaseException as exc:  # never leave a caller waiting
                log.exception("table %s: batch failed", self.stream)
                settle([(job, exc) for job in jobs if not job.settled])
            if stop:
                return

    def _batch(self, jobs: list[Job]) -> None:
        host = self.host
        info = host.hosted(self.stream)
        self.stats.batches += 1
        began = time.perf_counter()
        spent_deciding = 0.0
        with info.lock:
            for attempt in range(3):
                host.catch_up(self.stream)
                deciding = time.perf_counter()
                outcomes, pending, spans = self._decide(info.table, jobs)
                spent_deciding += time.perf_counter() - deciding
                if not pending:
                    break
                try:
                    host.commit(self.stream, pending, spans)
                except StaleVersion:
                    # Another process appended first: nothing here was acknowledged, so
                    # rebuild from the log and decide the whole batch again.
                    host.rebuild(self.stream)
                    info = host.hosted(self.stream)
                    if attempt == 2:
                        raise
                    continue
                except BaseException:
                    host.rebuild(self.stream)
                    raise
                break
            self.stats.commands += len(jobs)
            if pending:
                self.stats.commits += 1
            for job, result in outcomes:
                if job.view is not None and isinstance(result, dict):
                    try:
                        result["view"] = job.view()
                    except Exception:  # the command is committed; its answer still goes out
                        log.exception("table %s: view for a reply failed", self.stream)
            # Answer first, then push to the viewers (still under the lock: the state is the
            # one just after this batch while the push is prepared).
            self.stats.refused += sum(isinstance(r, BaseException) for _, r in outcomes)
            settle(outcomes)
            if pending:
                host.committed(self.stream, pending)
        spent = time.perf_counter() - began
        deciding_part = min(spent, spent_deciding)
        self.cost = 0.8 * self.cost + 0.2 * (deciding_part / len(jobs))
        self.commit_cost = 0.8 * self.commit_cost + 0.2 * (spent - deciding_part)

    @staticmethod
    def _decide(table: Table, jobs: list[Job]
                ) -> tuple[list[tuple[Job, object]], list[Event], list[tuple[str, int, int]]]:
        """Every job decided in order against the state with the earlier ones applied; the
        events are held back by the table (``Table.holding``) until the one commit."""
        owners: dict[str, str] = {}
        outcomes: list[tuple[Job, object]] = []
        spans: list[tuple[str, int, int]] = []
        with table.holding() as pending:
            for job in jobs:
                mine: list[Event] = []
                try:
                    built = job.build()
                    # A list, or commands made one at a time (a dealer's settle).
                    for command in [built] if isinstance(built, gcmd.Command) else built:
                        mine += table.execute(command)
                    if job.advance is not None:
                        mine += job.advance(table)
                except Exception as exc:  # refused: its own refused step applied nothing
                    # (earlier steps of a list, or an automation's, stand and are committed
                    # with the request's key, as a direct append would have)
                    if job.request and mine:
                        spans.append((job.request, mine[0].seq, mine[-1].seq))
                    _placed(owners, mine)
                    outcomes.append((job, _answerable(exc)))
                    continue
                if job.request and mine:
                    spans.append((job.request, mine[0].seq, mine[-1].seq))
                try:
                    outcomes.append((job, job.reply(mine, owners) if job.reply else mine))
                except Exception as exc:
                    outcomes.append((job, exc))
                _placed(owners, mine)
        return outcomes, pending, spans


def _placed(owners: dict[str, str], events: list[Event]) -> None:
    for event in events:
        if isinstance(event, BetPlaced):
            owners[event.bet] = event.player


def _answerable(exc: Exception) -> Exception:
    """A refusal as it is answered: a rule's refusal without its traceback. Its traceback
    holds this batch's frames, and they hold the outcomes that hold it: a cycle only the
    collector frees, with the table's state of that moment in it, and under load those cycles
    would be most of what each young collection traverses while every table and every read
    waits. A fault keeps its traceback: it is logged."""
    return exc.with_traceback(None) if isinstance(exc, DicetableError) else exc


def settle(outcomes: list[tuple[Job, object]]) -> None:
    """Answer each job: its future, or its event loop's (one call per loop for them all)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Settled, object]]] = {}
    for job, result in outcomes:
        job.settled = True
        if job.waiter is not None:
            by_loop.setdefault(job.waiter[0], []).append((job.waiter[1], result))
        elif job.future is None:
            continue
        elif isinstance(result, BaseException):
            job.future.set_exception(result)
        else:
            job.future.set_result(result)
    for loop, answers in by_loop.items():
        try:
            loop.call_soon_threadsafe(answer, answers)
        except RuntimeError:  # the loop is closed: nobody waits there any more
            log.warning("answers for a closed event loop dropped")


ANSWERS_PER_TURN = 32
"""Answers settled in one turn of the event loop; the rest in the next turns (industry-
default). Every future settled here wakes its request, and all of them run before the loop
reads its sockets again: a large commit's answers all at once would keep every new request,
and its 503, waiting. A few at a time, the loop reads between them."""


def answer(answers: list[tuple[Settled, object]], start: int = 0) -> None:
    """On the caller's loop: settle the futures (a caller that gave up is skipped), a few
    per turn of the loop."""
    end = min(len(answers), start + ANSWERS_PER_TURN)
    for future, result in answers[start:end]:
        if future.done():
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)
    if end < len(answers):
        asyncio.get_running_loop().call_soon(answer, answers, end)
