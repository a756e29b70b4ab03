"""Per-table pipelining: a table's queued commands decided in order, written in one commit.

Each table has one worker thread and a bounded queue. The worker takes every command waiting
(up to ``max_batch``), decides them one after the other against the state that includes the
earlier ones, and appends all their events in one store append (one transaction; the store's
group committer may share it with other tables' batches). Only after that commit is each
command answered, so durability is unchanged: nothing acknowledged is ever lost. A refused
command raises before anything is applied, so it changes nothing and the batch goes on. If the
commit itself fails, the table is rebuilt from the store and every command of the batch learns
why (none was acknowledged); a ``StaleVersion`` (another process appended first) is decided
again against the caught-up state.

Past ``max_queue`` waiting commands, or once the wait they imply (their number times the recent
cost of deciding one, plus one commit per batch they fill) passes ``max_wait``, a table
refuses more at once with ``Busy`` (HTTP 503 and ``Retry-After``): never an unbounded wait.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from dicetable.core.errors import DicetableError, StaleVersion
from dicetable.games import commands as gcmd
from dicetable.games.events import Event
from dicetable.server.limits import MAX_BODY
from dicetable.server.privacy import note_owners
from dicetable.server.shedding import Admission, Impatience
from dicetable.store.group_commit import take_batch
from dicetable.store.requests import current_request

if TYPE_CHECKING:
    from dicetable.table import Table

log = logging.getLogger(__name__)

Build = Callable[[], "gcmd.Command | Iterable[gcmd.Command]"]
Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]"]
"""A caller on an event loop: its loop and the future it awaits."""
Reply = Callable[[list[Event], dict[str, str]], Any]
"""Makes a command's answer right after it is decided (its events, the bet owners seen)."""

MAX_QUEUE = 512
"""Commands that may wait for one table (industry-default: about two commits' worth)."""
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
    """The table's queue is full: try again after ``retry_after`` seconds (HTTP 503)."""

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
    advance: Callable[[Table], list[Event]] | None = None
    """After the commands: give the table the time (its automations: timer, roll, settle)."""
    waiter: Waiter | None = None
    """An event loop's future to settle (one hand-over per batch); without one, ``future``."""
    future: Future[Any] | None = None
    settled: bool = False


_STOP = object()


@dataclass
class BatchStats:
    """What a table's pipeline has done (tests count commits with these, never time)."""

    batches: int = 0
    commits: int = 0
    commands: int = 0
    refused: int = 0
    busy: int = 0


class HostedTable(Protocol):
    """What the pipeline reads of a table its floor holds (``server.floor.FloorTable``)."""

    @property
    def lock(self) -> threading.Lock: ...
    @property
    def table(self) -> Table: ...
    @property
    def owners(self) -> dict[str, str]: ...
    @property
    def pipeline(self) -> TablePipeline | None: ...


class TableHost(Protocol):
    """What the pipeline needs of the floor that holds its table (``server.floor.Floor``,
    which starts a pipeline for each table it loads)."""

    @property
    def tables(self) -> Mapping[str, HostedTable]: ...
    def get(self, table_id: str) -> HostedTable: ...
    def _catch_up(self, table_id: str, info: Any) -> list[Event]: ...
    def _after(self, table_id: str, info: Any, events: list[Event]) -> None: ...
    def _commit(self, table_id: str, info: Any, events: list[Event],
                spans: list[tuple[str, int, int]] | None = None) -> None: ...
    def _rebuild(self, table_id: str) -> None: ...
    def _publish(self, table_id: str, events: list[Event]) -> None: ...
    def _snapshot_due(self, table_id: str, info: Any) -> None: ...


class TablePipeline:
    """One table's queue and worker thread."""

    def __init__(self, floor: TableHost, table_id: str, *, max_queue: int = MAX_QUEUE,
                 max_batch: int = MAX_BATCH, max_wait: float | None = MAX_WAIT) -> None:
        self.floor = floor
        self.table_id = table_id
        self.max_queue = max_queue
        self.max_batch = max_batch
        self.max_wait = max_wait
        self.cost = 0.0
        """Recent seconds per command decided (a moving average)."""
        self._deciding = 0.0
        self.commit_cost = 0.0
        """Recent seconds per batch spent on everything but deciding (the commit, the
        answers, the push): paid once per batch, however many commands it holds."""
        self.stats = BatchStats()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._waiting = 0
        self._count = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"dicetable-table-{table_id}",
                                        daemon=True)
        self._thread.start()

    # -- the callers' side --------------------------------------------------------------------
    def submit(self, build: Build, reply: Reply | None = None, *,
               view: Callable[[], Any] | None = None, bounded: bool = True,
               advance: Callable[[Table], list[Event]] | None = None) -> Future[Any]:
        """``queue`` with a future to wait on (from any thread)."""
        future = self.queue(build, reply, view=view, bounded=bounded, advance=advance)
        assert future is not None
        return future

    def queue(self, build: Build, reply: Reply | None = None, *,
              view: Callable[[], Any] | None = None, bounded: bool = True,
              advance: Callable[[Table], list[Event]] | None = None,
              waiter: Waiter | None = None) -> Future[Any] | None:
        """Queue a command; its future is settled after the commit that holds its events.

        ``bounded`` commands past ``max_queue`` waiting get ``Busy`` at once; the table's own
        automation (the electronic round) is never refused for load. The caller's request
        key (``store.requests``, set by the idempotency layer) goes with the command to the
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
                raise Busy(f"table {self.table_id} has {self._waiting} commands waiting "
                           f"(about {expected * 1000:.0f} ms); retry shortly", retry_after=1)
            self._waiting += 1
            self._queue.put(job)
        return job.future

    @property
    def waiting(self) -> int:
        return self._waiting

    def overloaded(self) -> bool:
        """Would a command queued now be refused? (Read without the lock: a cheap early
        answer for ``ShedLoad``; ``submit`` decides for certain.)"""
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
                log.exception("table %s: batch failed", self.table_id)
                _settle([(job, exc) for job in jobs if not job.settled])
            if stop:
                return

    def _batch(self, jobs: list[Job]) -> None:
        floor = self.floor
        info = floor.get(self.table_id)
        self.stats.batches += 1
        began = time.perf_counter()
        self._deciding = 0.0
        with info.lock:
            for attempt in range(3):
                caught = floor._catch_up(self.table_id, info)
                if caught:
                    floor._after(self.table_id, info, caught)
                deciding = time.perf_counter()
                outcomes, pending, spans = self._decide(info, jobs)
                self._deciding += time.perf_counter() - deciding
                if not pending:
                    break
                try:
                    floor._commit(self.table_id, info, pending, spans)
                except StaleVersion:
                    # Another process appended first: nothing here was acknowledged, so
                    # rebuild from the log and decide the whole batch again.
                    floor._rebuild(self.table_id)
                    info = floor.get(self.table_id)
                    if attempt == 2:
                        raise
                    continue
                except BaseException:
                    floor._rebuild(self.table_id)
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
                        log.exception("table %s: view for a reply failed", self.table_id)
            # Answer first, then push to the viewers (still under the lock: the state is the
            # one just after this batch while the push is prepared).
            self.stats.refused += sum(isinstance(r, BaseException) for _, r in outcomes)
            _settle(outcomes)
            if pending:
                floor._publish(self.table_id, pending)
                floor._snapshot_due(self.table_id, info)
        spent = time.perf_counter() - began
        deciding = min(spent, self._deciding)
        self.cost = 0.8 * self.cost + 0.2 * (deciding / len(jobs))
        self.commit_cost = 0.8 * self.commit_cost + 0.2 * (spent - deciding)

    def _decide(self, info: HostedTable, jobs: list[Job]
                ) -> tuple[list[tuple[Job, object]], list[Event], list[tuple[str, int, int]]]:
        """Every job decided in order against the state with the earlier ones applied; the
        events are held back (the sink only collects them) until the one commit."""
        table = info.table
        state = table.state
        pending: list[Event] = []
        owners: dict[str, str] = {}

        def collect(events: Any) -> None:
            # Before the events are applied: who owns each bet they touch (a removed bet is
            # gone from the state afterwards, but its owner still sees its removal).
            for e in events:
                note_owners(owners, state.bets, e)
            pending.extend(events)

        saved = table.sink
        table.sink = collect
        outcomes: list[tuple[Job, object]] = []
        spans: list[tuple[str, int, int]] = []
        try:
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
                    outcomes.append((job, _answerable(exc)))
                    continue
                if job.request and mine:
                    spans.append((job.request, mine[0].seq, mine[-1].seq))
                try:
                    outcomes.append((job, job.reply(mine, owners) if job.reply else mine))
                except Exception as exc:
                    outcomes.append((job, exc))
        finally:
            table.sink = saved
        info.owners.update(owners)
        return outcomes, pending, spans


def _answerable(exc: Exception) -> Exception:
    """A refusal as it is answered: a rule's refusal without its traceback. Its traceback
    holds this batch's frames, and they hold the outcomes that hold it: a cycle only the
    collector frees, with the table's state of that moment in it, and under load those cycles
    would be most of what each young collection traverses while every table and every read
    waits. A fault keeps its traceback: it is logged."""
    return exc.with_traceback(None) if isinstance(exc, DicetableError) else exc


def _settle(outcomes: list[tuple[Job, object]]) -> None:
    """Answer each job: its future, or its event loop's (one call per loop for them all)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], object]]] = {}
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
            loop.call_soon_threadsafe(_answer, answers)
        except RuntimeError:  # the loop is closed: nobody waits there any more
            log.warning("answers for a closed event loop dropped")


ANSWERS_PER_TURN = 32
"""Answers settled in one turn of the event loop; the rest in the next turns (industry-
default). Every future settled here wakes its request, and all of them run before the loop
reads its sockets again: a large commit's answers all at once would keep every new request,
and its 503, waiting. A few at a time, the loop reads between them."""


def _answer(answers: list[tuple[asyncio.Future[Any], object]], start: int = 0) -> None:
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
        asyncio.get_running_loop().call_soon(_answer, answers, end)


_TABLE_PATH = re.compile(r"^/api/tables/([^/]+)/")
COMMAND_METHODS = frozenset(("POST", "PATCH", "DELETE"))
"""The HTTP methods of a table's commands (every other method only reads)."""


GATE_STATE = "dicetable.load_gate"
"""The ASGI lifespan state's key for the server's ``LoadGate`` (``refusing_http`` reads it)."""


class LoadGate:
    """Which commands are refused for load: one for a table whose queue is full, or one that
    would wait too long behind the commands already in the server (``server.shedding``).
    Asked by ``ShedLoad`` and, as a request is read, by ``refusing_http.RefusingHttp``."""

    def __init__(self, floor: TableHost, admission: Admission | None = None,
                 impatience: Impatience | None = None,
                 known: Callable[[dict[bytes, bytes]], bool] | None = None) -> None:
        self.floor = floor
        self.admission = admission or Admission()
        self.impatience = impatience or Impatience()
        """Clients refused for load lately (their next 503s held, ``refusing_http``)."""
        self.known = known or (lambda headers: True)
        """Does a request (its headers) carry a session this server knows, without reading
        the database? Only such a command counts in flight: a client without a session
        cannot fill the server's capacity and so refuse the others'."""

    def pipeline(self, method: str, path: str) -> TablePipeline | None:
        """The pipeline a command for ``path`` would queue on (None: not a table command)."""
        if method not in COMMAND_METHODS:
            return None
        match = _TABLE_PATH.match(path)
        info = self.floor.tables.get(match.group(1)) if match else None
        return info.pipeline if info is not None else None

    def refusal_at(self, pipeline: TablePipeline) -> bytes | None:
        """The 503's body for a command that would queue on ``pipeline``, arriving now, or
        None when it is not refused for load (a refusal is counted)."""
        if pipeline.overloaded():
            pipeline.stats.busy += 1
            return TABLE_BUSY
        return SERVER_BUSY if self.admission.refuse() else None

    def admit_at(self, pipeline: TablePipeline, *, count: bool = True) -> bytes | None:
        """``refusal_at``, and a command not refused is counted in flight at once when
        ``count`` (its ``Admission.done`` is the caller's), so that the next request read
        sees it. Asked once the command's body has arrived whole, never at its headers."""
        body = self.refusal_at(pipeline)
        if body is None and count:
            self.admission.enter()
        return body


ADMITTED = "dicetable.admitted"
"""Scope key set by ``refusing_http.RefusingHttp`` on a command it admitted as it was read,
its body whole: True when counted in flight, False when not (no session known), so that
``ShedLoad`` does not decide it again."""


class ShedLoad:
    """ASGI middleware, outermost: a command ``LoadGate`` refuses gets ``503`` and
    ``Retry-After`` before anything else is spent on it (no session lookup), so that
    refusing the excess stays cheap under overload. One not refused at once has its body
    read (bounded) before it is admitted and counted in flight until answered - and counted
    only if it carries a session this server knows: a body that never comes holds nothing
    but its own connection. Served by ``refusing_http.RefusingHttp``, most of the excess is
    refused before it reaches here, as it is read, and the admitted come here decided."""

    def __init__(self, app: Any, gate: LoadGate, most: int = MAX_BODY) -> None:
        self.app = app
        self.gate = gate
        self.admission = gate.admission
        self.most = most
        """Body bytes read before admission at most (past them the body limit answers)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if ADMITTED in scope:  # decided by the protocol (counted out below if counted)
            counted = bool(scope[ADMITTED])
        else:
            pipeline = self.gate.pipeline(scope["method"], scope["path"]) \
                if scope["type"] == "http" else None
            if pipeline is None:
                await self.app(scope, receive, send)
                return
            body = self.gate.refusal_at(pipeline)
            if body is not None:
                await _busy(send, body)
                return
            whole, receive = await _read_first(receive, self.most)
            counted = whole and self.gate.known(dict(scope.get("headers") or []))
            body = self.gate.admit_at(pipeline, count=counted)
            if body is not None:
                await _busy(send, body)
                return
        try:
            await self.app(scope, receive, send)
        finally:
            if counted:
                self.admission.done()


async def _read_first(receive: Any, most: int) -> tuple[bool, Any]:
    """Read a request's body before it is admitted: (whether it came whole within ``most``
    bytes, a ``receive`` that hands the app what was read, then the rest)."""
    chunks: list[Any] = []
    size = 0
    whole = False
    while size <= most:
        message = await receive()
        chunks.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            whole = size <= most
            break

    async def replay() -> Any:
        return chunks.pop(0) if chunks else await receive()

    return whole, replay


def _busy_body(message: str) -> bytes:
    """A 503's body: a ``Busy`` refusal's own shape, serialised once (refusing stays cheap)."""
    return json.dumps(Busy(message).to_dict(), separators=(",", ":")).encode()


TABLE_BUSY = _busy_body("the table has too many commands waiting; retry shortly")
SERVER_BUSY = _busy_body("the server is answering all it can; retry shortly")
"""The 503s' bodies: the table's own queue is full, or the server's (whichever layer
refuses: ``refusing_http`` writes them too)."""
RETRY_AFTER = str(RETRY_AFTER_S).encode()


async def _busy(send: Any, body: bytes) -> None:
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"retry-after", RETRY_AFTER),
        (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
