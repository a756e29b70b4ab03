"""The application's one way in: ``Application.submit(stream, order)``, for every surface.

An order is a caller's command (``Acted``: a script's line, a command line's ``--as``), the
table's own work (``Chore``), or, on the server, an account's (``server.floor.Given``); a new
stream's first one is an ``Open`` (a custody ledger's opening, an import, a script's load). A
table's orders go through its ``StreamPipeline``: decided in order against the state that
includes the earlier ones, committed, answered after the commit. Any other aggregate (a
site's custody ledger) is held (``store.held.Held``, or ``Bare`` off a store): the step is
durable before it is applied and answered after. Either way the answer is a future, and a
refusal is the aggregate's own typed error (``DicetableError.to_dict()`` is what HTTP
sends), raised by ``Future.result()``.

``server.floor.Floor`` is an ``Application`` whose tables are on a store, watched and
pushed; the command line and the script runner use a plain one (``scripts.run_file``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast

from dicetable.application.pipeline import MAX_QUEUE, Advance, StreamPipeline, Waiter
from dicetable.core.errors import InvalidInput, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.games.events import Event
from dicetable.store.base import TABLE, kind_of
from dicetable.table import Table

T = TypeVar("T")


class NotFound(InvalidInput):
    """No such table or bet."""


@dataclass(frozen=True, slots=True)
class Acting:
    """A caller who names the role they act in (a script's ``ACTOR ROLE`` words, a command
    line's ``--as NAME:ROLE``): every command given in their name must be in that name and
    role, and the aggregate's own authority decides whether the role may give it."""

    name: str
    role: Role


class Signed(Protocol):
    """A command of any aggregate: who gives it, in which role."""

    @property
    def actor(self) -> str: ...
    @property
    def role(self) -> Role: ...


Build = Callable[[], "gcmd.Command | Iterable[gcmd.Command]"]


@dataclass(frozen=True, slots=True)
class Acted:
    """A command (or, for a table, commands made one at a time when decided: a dealer's
    ``settle``) given by ``caller``."""

    caller: Acting
    command: Signed | Build


@dataclass(frozen=True, slots=True)
class Step:
    """A catalogued step on a held aggregate that is handed its caller (a bank verb:
    ``run(bank, (name, role))``), so it acts in the caller's own name and role."""

    caller: Acting
    run: Callable[[Any, tuple[str, Role]], Any]


def _nothing() -> list[gcmd.Command]:
    return []


@dataclass(frozen=True, slots=True)
class Chore:
    """The table's own command(s) (setup, a scheduled chore) and, with ``advance``, the
    time given to it: answered with their events, never refused for load."""

    build: Callable[[], gcmd.Command | Iterable[gcmd.Command]] = _nothing
    advance: Advance | None = None


def _round_now(table: Table) -> list[Event]:
    """One whole cycle of an electronic table now, whatever its timer says (the pit's 'roll
    now', tests): the timer is treated as run out."""
    if table.mode != "electronic":
        raise InvalidInput(f"{table.id} is not electronic", rule="table.mode")
    saved = table.betting_seconds
    table.betting_seconds = 0
    try:
        return table.advance()
    finally:
        table.betting_seconds = saved


ADVANCE = Chore(advance=lambda table: table.advance())
"""Give a table the time: its own automations do the rest (close betting when its timer is
up, a CSPRNG roll, the settlement). ``app.submit(table_id, ADVANCE)`` like any command."""
ROUND_NOW = Chore(advance=_round_now)
"""One whole cycle of an electronic table now (``_round_now``)."""

@dataclass(frozen=True, slots=True)
class Open:
    """A new stream's first write: ``command`` given by ``caller`` and taken on ``fresh``,
    the aggregate before its stream holds anything - a custody ledger not opened yet, on its
    store stream (``DurableCustody.fresh``) or its file (``Bare``), whose ``OpenCustody``
    decides the first events; or ``streams.Unwritten``, which takes a log decided and
    checked elsewhere (``streams.Logged``: an import, a script's run, a bank's opening). The
    first events are appended at version 0 only, so a stream is opened once: a second
    opening, in this process or another, is refused and appends nothing."""

    caller: Acting
    command: Signed
    fresh: Holds


Order = Acted | Chore | Step | Open


def signed_by(caller: Acting, command: Signed) -> None:
    """Refuse a command that is not in the caller's own name and role (before it is
    decided: nothing changes)."""
    if command.actor != caller.name or command.role is not caller.role:
        raise RoleNotPermitted(
            f"{caller.name} ({caller.role.value}) may not give a command as "
            f"{command.actor} ({command.role.value})", rule="authority.caller")


def _signed(caller: Acting, built: gcmd.Command | Iterable[gcmd.Command]
            ) -> Iterator[gcmd.Command]:
    for command in [built] if isinstance(built, gcmd.Command) else built:
        signed_by(caller, command)
        yield command


class Holds(Protocol):
    """An aggregate held for its steps (``store.held.Held``, ``Bare``): one step at a time,
    durable before it is applied."""

    def run(self, step: Callable[[Any], T]) -> T: ...


class Bare(Generic[T]):
    """An aggregate off a store (a script's custody ledger, a ledger file): its own sink
    makes a step durable, if anything does."""

    def __init__(self, held: T) -> None:
        self.held = held
        self.lock = threading.RLock()

    def run(self, step: Callable[[T], Any]) -> Any:
        with self.lock:
            return step(self.held)


class Hosting(Protocol):
    """A table an application hosts: its lock, its table and its pipeline."""

    @property
    def lock(self) -> threading.Lock: ...
    @property
    def table(self) -> Table: ...
    @property
    def pipeline(self) -> StreamPipeline | None: ...


@dataclass(eq=False)
class HostedTable:
    """A table hosted in memory (a script's): its log is its own."""

    table: Table
    pipeline: StreamPipeline | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


H = TypeVar("H", bound=Hosting)


@dataclass
class Submitted:
    """What ``submit`` was given (tests count what reached it, never time)."""

    orders: int = 0
    tables: int = 0
    held: int = 0
    """Orders taken on an aggregate held outside the pipelines (an ``Open`` on its fresh one)."""


class Application(Generic[H]):
    """The tables and other aggregates of one floor (or one script), and the one way to run
    a command on them. Its tables are hosted by a subclass, the pipelines' ``StreamHost``:
    ``Local`` in memory, ``server.floor.Floor`` on its store."""

    def __init__(self, *, max_queue: int = MAX_QUEUE,
                 holders: Callable[[str], Holds | None] | None = None) -> None:
        self.max_queue = max_queue
        self.tables: dict[str, H] = {}
        self.held: dict[str, Holds] = {}
        """Aggregates other than tables, by stream (custody ledgers, banks)."""
        self.holders = holders
        """Finds an aggregate not in ``held`` by its stream (the floor's custody sites)."""
        self.submitted = Submitted()

    def hold(self, stream: str, aggregate: Holds) -> None:
        self.held[stream] = aggregate

    def close(self) -> None:
        for hosted in self.tables.values():
            if hosted.pipeline is not None:
                hosted.pipeline.close()

    def get(self, stream: str) -> H:
        hosted = self.tables.get(stream)
        if hosted is None:
            raise NotFound(f"no table {stream!r}", rule="api.table")
        return hosted

    def hosted(self, stream: str) -> H:
        """The table a pipeline decides on (``StreamHost``)."""
        return self.get(stream)

    def holder(self, stream: str) -> Holds:
        found = self.held.get(stream)
        if found is None and self.holders is not None:
            found = self.holders(stream)
        if found is None:
            raise NotFound(f"no stream {stream!r}", rule="store.stream")
        return found

    # -- the one way in -------------------------------------------------------------------------
    def submit(self, stream: str, order: Order, *, waiter: Waiter | None = None
               ) -> Future[Any] | None:
        """Queue ``order``; it is answered, with its events, after the commit that holds them.

        A table's orders go through its pipeline (a caller's past a full queue are refused
        at once: ``Busy``); a ``Chore`` is the table's own and never refused for load. An
        ``Acted`` order on any other stream, and a ``Step``, are taken on its held
        aggregate; an ``Open`` on the fresh aggregate it brings (a new stream). With
        ``waiter`` (an event loop and its future) a table's answer goes there and None is
        returned.
        """
        self.submitted.orders += 1
        if isinstance(order, Open):
            return self._open(order)
        if isinstance(order, Step) or (isinstance(order, Acted) and kind_of(stream) != TABLE):
            return self._take(stream, order)
        self.submitted.tables += 1
        pipeline = self.get(stream).pipeline
        assert pipeline is not None
        if isinstance(order, Chore):
            if pipeline.on_worker:
                raise RuntimeError("a chore from the table's own worker would wait on itself")
            return pipeline.queue(order.build, bounded=False, advance=order.advance,
                                  waiter=waiter)
        caller, command = order.caller, order.command
        build = command if callable(command) else cast(Build, lambda: command)
        return pipeline.queue(lambda: _signed(caller, build()), waiter=waiter)

    def _take(self, stream: str, order: Acted | Step) -> Future[Any]:
        """A step on a held aggregate: decided, durable, applied, then answered."""
        self.submitted.held += 1
        answer: Future[Any] = Future()
        try:
            if isinstance(order, Step):
                me = (order.caller.name, order.caller.role)
                answer.set_result(self.holder(stream).run(lambda held: order.run(held, me)))
                return answer
            command = order.command
            if callable(command):
                raise InvalidInput(f"{stream} takes one command at a time", rule="api.request")
            answer.set_result(_executed(self.holder(stream), order.caller, command))
        except Exception as exc:  # answered as a table's refusal is: by the future
            answer.set_exception(exc)
        return answer

    def _open(self, order: Open) -> Future[Any]:
        """A stream's first command, on its fresh aggregate: decided, durable (at version 0),
        applied, then answered; the caller holds the aggregate afterwards if it goes on."""
        self.submitted.held += 1
        answer: Future[Any] = Future()
        try:
            answer.set_result(_executed(order.fresh, order.caller, order.command))
        except Exception as exc:  # answered as every refusal is: by the future
            answer.set_exception(exc)
        return answer


def _executed(holds: Holds, caller: Acting, command: Signed) -> Any:
    """``command``, in ``caller``'s name, executed by the aggregate ``holds`` holds."""
    signed_by(caller, command)
    return holds.run(lambda held: held.execute(command))


class Local(Application[HostedTable]):
    """An application of in-memory tables (a script's): a commit keeps the events in the
    table's own log, and no other process writes it."""

    def host(self, table: Table) -> None:
        """Host ``table``, its pipeline started (one it replaces is stopped first)."""
        before = self.tables.get(table.id)
        if before is not None and before.pipeline is not None:
            before.pipeline.close()
        hosted = HostedTable(table)
        hosted.pipeline = StreamPipeline(self, table.id, max_queue=self.max_queue)
        self.tables[table.id] = hosted

    # -- the pipeline's host (application.pipeline.StreamHost) --------------------------------
    def catch_up(self, stream: str) -> None:
        """Nothing to fold in: no other process writes an in-memory table."""

    def commit(self, stream: str, events: list[Event],
               spans: list[tuple[str, int, int]]) -> None:
        """The events are in the table's own log already (``Table.holding``)."""

    def rebuild(self, stream: str) -> None:
        raise RuntimeError(f"{stream}: an in-memory table has no log to rebuild from")

    def committed(self, stream: str, events: list[Event]) -> None:
        """Nobody to tell."""
