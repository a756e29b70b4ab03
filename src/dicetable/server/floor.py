"""The floor: every table on one store, each table's commands pipelined, events pushed.

The server maps requests to engine commands here; no game rule lives in this module. The
role a command is given in comes from the account (the roles its holder is assigned at that
table in the table's own log), never from the request.

A table's commands go through its ``StreamPipeline`` (``application/pipeline.py``): decided in
order against the state that includes the earlier ones, written in one group commit, each
answered only after that commit; past a bounded queue a command is refused at once (``Busy``).
The answer holds the command's own events and the caller's new balance; views are kept from
events (``server/live_views.py``).

Several server processes may share one PostgreSQL store: each appends with the sequence
number it has seen (a stale writer gets ``StaleVersion``, catches up and decides again), and
hears the others' commits through the store's notices (LISTEN/NOTIFY); ``server/owners.py``
splits the tables between them so that each table is decided in one process.

The floor's public surface is one way in and one way out: ``submit`` (a caller's ``Given``
command or the table's own ``Chore``; ``ADVANCE`` and ``ROUND_NOW`` give the table the time),
``view`` and ``subscribe`` (the view, then a push per batch). The HTTP routes and the
WebSocket are adapters over them.

WebSocket push: every batch of a table's events goes to the browsers watching that table.

The floor tells the hub on the table's own thread, its lock held, right after the commit. The
hub serialises each event once per privacy class (staff; everyone else; a player's own
private events - ``live_views.Fanout``). A connection's hello carries the whole view; each
push after it carries only a merge patch (``live_views.merge_patch``) from the view that
connection was last sent (``Watcher.base``) to the view now, worked out from the parts kept
from events (``live_views.LiveViews``, ``live_views.Patches``): the public part's patch once
for every connection that had the previous push, a player's own part only when it was rebuilt,
the pack's fixed members - limits, rules - never. Most connections get the very same text. The
finished texts go to the event loop in one call. Each connection has a bounded
send buffer: a client that does not keep up is dropped (close code 4408, the reason naming the
last seq it was sent), never waited for; it reconnects with ``after=SEQ`` and the hello brings
what it missed. The table is never slowed by a viewer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import ChainMap, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, overload

from dicetable.application.accounts import Account, Accounts, Kind
from dicetable.application.integrity import (
    CHECKPOINTS,
    Faults,
    HighWater,
    TableFaulted,
    Verification,
    checkpoint_file_behind,
    clear_problems,
    moved_back,
    still_failing,
)
from dicetable.application.pipeline import MAX_QUEUE, StreamPipeline, Waiter
from dicetable.application.service import (
    ADVANCE,
    ROUND_NOW,
    Application,
    Chore,
    Holds,
    NotFound,
    Order,
)
from dicetable.application.wallets import Wallet, seat_requests
from dicetable.core.clock import Clock, SystemClock
from dicetable.core.errors import InvalidInput, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.fairness.monitor import FairnessMonitor
from dicetable.games import commands as gcmd
from dicetable.games.events import BetPlaced, DiceRolled, Event
from dicetable.games.fold import apply
from dicetable.rules.model import RulePack
from dicetable.server.controls import console_can, controls_for
from dicetable.server.controls import warm as warm_controls
from dicetable.server.custody_floor import FloorCustody
from dicetable.server.live_views import Fanout, LiveViews, Patches, Sent, dumps, same
from dicetable.server.views import (
    Caller,
    console_rules,
    events_for,
    limits_of,
    note_owners,
    owner_in,
    roll_history,
    summary,
)
from dicetable.store.account_stream import KIND as ACCOUNT
from dicetable.store.base import TABLE, EventStore, Notice, collector_paused, kind_of, name_of
from dicetable.store.chain import Head, decode_body, link_hash
from dicetable.store.custody import KIND as CUSTODY
from dicetable.store.durable import DurableTable
from dicetable.store.player_money_stream import REQUESTS, WALLET
from dicetable.store.replay import opening
from dicetable.store.staff_stream import record_staff
from dicetable.store.state_codec import pack_for
from dicetable.table import Table
from dicetable.table.events import StaffChange
from dicetable.table.player_money import PlayerMoneyRules
from dicetable.table.procedure import ACTION_RULE

log = logging.getLogger(__name__)

EMPTY_OWNERS: dict[str, str] = {}

Listener = Callable[[str, list[Event]], None]
"""Told of every batch of events a table gets (table id, events), on the thread that has the
table (its lock held: the table's state is the one just after these events)."""

@dataclass(frozen=True, slots=True)
class Given:
    """Command(s) an account gives: built when they are decided, as its holder, in the role
    the table's log gives them then (``Floor.role_for``)."""

    account: Account
    build: Callable[[str, Role], gcmd.Command | Iterable[gcmd.Command]]
    command_type: type[gcmd.Command]


__all__ = ["ADVANCE", "ROUND_NOW", "Chore", "Floor", "FloorTable", "Given", "Hub", "NotFound",
           "Subscription", "Watcher"]
"""``Chore``, ``ADVANCE``, ``ROUND_NOW`` and ``NotFound`` are the application's
(``application.service``), named here too for the server's modules."""


class _Owned:
    """The bets ``viewer`` owns, as a container (by the owners a batch saw, or the state)."""

    def __init__(self, viewer: str, owners: dict[str, str], table: Table) -> None:
        self.viewer, self.owner_of = viewer, owner_in(table.state.bets, owners)

    def __contains__(self, bet: object) -> bool:
        return self.owner_of(bet) == self.viewer


@dataclass
class FloorTable:
    durable: DurableTable
    pipeline: StreamPipeline | None = None
    """The table's queue and worker thread (commands decided in order, one commit a batch)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while a batch is decided and committed, and while a view is read; never
    re-entered (a store's notice of this process's own commit, arriving while the lock is
    held, is left to the holder)."""
    views: LiveViews = field(default_factory=LiveViews)
    heard: int = 0
    """The highest sequence another process's notice announced for this table."""
    checked: int = 0
    """The span of hearing (``EventStore.hearing``) in which the store's head was last read
    here: within it, a notice says when another process appended (``Floor.catch_up``)."""
    history: list[dict[str, Any]] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)
    """Bet id -> the player who placed it, from the log: who may see a bet's later events
    (a removed bet is gone from the state, but its remover still sees the removal)."""

    @property
    def table(self) -> Table:
        return self.durable.table

    @property
    def bets_close_at(self) -> str | None:
        """Electronic tables: when the betting countdown ends (the table's own timer)."""
        return self.table.bets_close_at


def _table_event(table_id: str, body: str) -> Event:
    event = decode_body(body)
    if not isinstance(event, Event):
        raise InvalidInput(f"{table_id!r} holds a {event.kind}, not a table event",
                           rule="store.stream")
    return event


class Floor(Application[FloorTable]):
    """Every table of a casino floor, on one store: the application (``Application``) the
    HTTP routes and the WebSocket are adapters over."""

    def __init__(self, store: EventStore, accounts: Accounts, *, clock: Clock | None = None,
                 bet_seconds: int = 20, custody: FloorCustody | None = None,
                 checkpoints: Path | None = None, max_queue: int = MAX_QUEUE,
                 verify_slice: int | None = None) -> None:
        super().__init__(max_queue=max_queue, holders=self._held_stream)
        self.store = store
        self.accounts = accounts
        self.clock: Clock = clock or SystemClock()
        self.custody = custody if custody is not None else FloorCustody(store, self.clock)
        """The site's dice custody: live tables take only dice it issued to them."""
        self.bet_seconds = bet_seconds
        self.fairness = FairnessMonitor()
        self._listeners: list[Listener] = []
        self._hub: Hub | None = None
        self._lock = threading.Lock()
        self._opening: set[str] = set()
        """Tables this process is opening (their first events committed, not yet held)."""
        self.faults = Faults(store)
        # A faulted account (its own stream, by itself) grants nothing: no login, no session.
        accounts.faulted = lambda stream: stream in self.faults.open
        self.checkpoints: Path | None = checkpoints
        """Where signed checkpoints of every stream's head are appended (None: not kept)."""
        self.high_water = HighWater()
        """Each stream's newest head this process committed, caught up to or verified: the
        store's head is never to be found behind it."""
        self.verification = Verification(store, self.faults, self.high_water, checkpoints,
                                         slice_events=verify_slice)
        """What is new since the verified heads, and the rolling full pass behind them."""
        self.verify_all(load=True)  # nothing is served from a log that fails (RES-3)
        # A table opened in another process reaches this one by its notice (``_on_notice``);
        # a notice of any other stream (the custody ledger) is caught up on use.
        self._subscription = store.subscribe(self._on_notice)

    def close(self) -> None:
        self._subscription.close()
        super().close()

    def _held_stream(self, stream: str) -> Holds | None:
        """``submit``'s other aggregates: a custody step's ledger (the site's), a player's
        wallet (the cage's moves), a live table's seat requests."""
        if kind_of(stream) == WALLET:
            return Wallet(self.store, name_of(stream))
        if kind_of(stream) == REQUESTS:
            return seat_requests(self.store, name_of(stream))
        return self.custody.site(name_of(stream)) if kind_of(stream) == CUSTODY else None

    # -- integrity ---------------------------------------------------------------------------
    def verify_all(self, *, load: bool = False) -> list[str]:
        """Verify every stream (and the checkpoints); fault what fails. Returns new faults."""
        before = set(self.faults.open)
        names = self.store.tables()
        held = [(t, info.durable.head) for t, info in list(self.tables.items())]
        self.verification.run(held + list(self.accounts.heads()), self._fault,
                              self.clock.now().isoformat())
        if load:
            for table_id in names:
                if table_id not in self.faults.open and table_id not in self.tables:
                    self._load(table_id)
        return sorted(set(self.faults.open) - before)

    def _fault(self, table_id: str, problem: tuple[str, str], at: str) -> None:
        self.faults.raise_fault(table_id, problem[0], problem[1], at)
        if kind_of(table_id) == ACCOUNT:  # its sessions end, its open sockets close
            self.accounts.changed(name_of(table_id))
        info = self.tables.pop(table_id, None)
        if info is not None and info.pipeline is not None:
            info.pipeline.close(wait=False)
        self._publish(table_id, [])

    def clear_fault(self, table_id: str, by: str, role: Role, reason: str) -> None:
        """An authorised clear: only once the whole log verifies again (``clear_problems``)
        and no head is behind what this process committed or read."""
        with self._lock:  # two clears at once: one verifies and loads, the other is told
            self._clear_fault(table_id, by, role, reason)

    def _clear_fault(self, table_id: str, by: str, role: Role, reason: str) -> None:
        if table_id not in self.faults.open:
            raise NotFound(f"no open fault on {table_id!r}", rule="integrity.fault")
        problems = clear_problems(self.store, table_id,
                                  checkpoints=self.checkpoints,
                                  fault=self.faults.open[table_id])
        for stream in self.high_water.streams() if table_id == CHECKPOINTS else [table_id]:
            moved = self.high_water.check(stream)
            if moved is not None:
                problems.append(f"head: {stream} {moved[0]}: {moved[1]}")
        if table_id == CHECKPOINTS and self.checkpoints is not None:
            cut = checkpoint_file_behind(self.checkpoints, self.verification.seen)
            if cut is not None:
                problems.append(f"checkpoints: {cut[1]}")
        if problems:
            raise still_failing(table_id, problems)
        self.faults.clear(table_id, by, role.value, reason, self.clock.now().isoformat())
        if table_id in self.store.tables() and table_id not in self.tables:
            self._load(table_id)

    # -- tables ------------------------------------------------------------------------------
    def _start(self, table_id: str, info: FloorTable) -> FloorTable:
        """Compile the table's rule pack now, not inside its first bet, and start its pipeline."""
        table = info.table
        _ = table.state.compiled
        limits_of(table)
        console_rules(table)
        warm_controls(table.pack)
        info.pipeline = StreamPipeline(self, table_id, max_queue=self.max_queue)
        return info

    def _load(self, table_id: str) -> FloorTable:
        registry = self.custody.attach(table_id, pack_for(opening(self.store, table_id)))
        durable = DurableTable.resume(self.store, table_id, clock=self.clock,
                                      dice_registry=registry)
        durable.table.betting_seconds = self.bet_seconds
        info = FloorTable(durable)
        recent = list(self.store.table_events(table_id, after=max(0, durable.state.seq - 3000)))
        info.history = roll_history(recent)
        info.owners = {b.id: b.player for b in durable.state.bets.values()}
        _own(info, recent)
        for event in recent:
            if isinstance(event, DiceRolled):
                self.fairness.observe(event)
        self.high_water.note(self.store, table_id, durable.head)
        self.tables[table_id] = self._start(table_id, info)
        return info

    def open_table(self, pack: RulePack, table_id: str, *, mode: str, opener: str,
                   staff: dict[str, Role]) -> FloorTable:
        """A new table, opened by ``opener`` (a floorperson) with its staff assigned."""
        with self._lock:
            if table_id in self.tables or table_id in self._opening \
                    or self.store.head(table_id).seq:
                raise InvalidInput(f"table {table_id!r} exists", rule="table.open")
            # Its opening's notice must not load it a second time (``_on_notice``): two
            # pipelines on one table, the second registered over the first.
            self._opening.add(table_id)
        try:
            durable = DurableTable.open(self.store, pack, table_id, mode=mode,
                                        clock=self.clock, actor=opener,
                                        role=Role.FLOORPERSON, staff=staff,
                                        dice_registry=self.custody.attach(table_id, pack))
            durable.table.betting_seconds = self.bet_seconds
            info = FloorTable(durable)
            with self._lock:
                self.tables[table_id] = self._start(table_id, info)
        finally:
            with self._lock:
                self._opening.discard(table_id)
        opening = list(self.store.table_events(table_id))
        self._record_staff(table_id, opening)
        with info.lock:
            self._publish(table_id, opening)
        return info

    def get(self, table_id: str) -> FloorTable:
        self.faults.refuse(table_id)
        return super().get(table_id)

    # -- who acts ----------------------------------------------------------------------------
    def roles_at(self, account: Account, table_id: str, table: Table | None = None
                 ) -> list[Role]:
        """The roles ``account`` holds at a table, from the table's own log (``table``: that
        table, when the caller holds it already)."""
        if table is None:
            table = self.get(table_id).table
        if account.kind is Kind.PLAYER:
            return [Role.PLAYER] if account.username in table.state.players else []
        return sorted(table.procedure.staff.get(account.username, set()))

    def role_for(self, account: Account, table_id: str, command_type: type[gcmd.Command],
                 ) -> Role:
        """The role ``account`` gives ``command_type`` in: one its holder is assigned and the
        pack's matrix allows, or else one it holds (the engine then refuses, naming the rule).
        """
        if account.kind is Kind.PLAYER:
            return Role.PLAYER
        held = self.roles_at(account, table_id)
        if not held:
            raise RoleNotPermitted(f"{account.username} is not assigned at {table_id}",
                                   rule="authority.staff")
        rule = ACTION_RULE.get(command_type)
        pack = self.get(table_id).table.pack
        allowed = pack.roles(rule) if rule else frozenset()
        for role in held:
            if role in allowed:
                return role
        return held[0]

    # -- commands: the one way in -----------------------------------------------------------
    @overload
    def submit(self, table_id: str, order: Chore) -> Future[list[Event]]: ...
    @overload
    def submit(self, table_id: str, order: Given, *, with_view: bool = False
               ) -> Future[dict[str, Any]]: ...
    @overload
    def submit(self, table_id: str, order: Given, *, with_view: bool = False,
               waiter: Waiter) -> None: ...
    @overload
    def submit(self, table_id: str, order: Order, *, waiter: Waiter | None = None
               ) -> Future[Any] | None: ...

    def submit(self, table_id: str, order: Given | Order, *, with_view: bool = False,
               waiter: Waiter | None = None) -> Future[Any] | None:
        """Queue ``order`` on the table's pipeline; its future is settled after the commit.

        A ``Given`` order is answered with ``events`` (the command's own, as the caller may
        see them), ``balance`` (the caller's, just after the command; null for staff),
        ``seq`` (the table's seq just after it) and, with ``with_view``, ``view`` (the table
        as the caller sees it once the batch is committed); it raises ``Busy`` at once when
        the table's queue is full. With ``waiter`` (an event loop and its future) the reply
        goes to that future (and None is returned). A ``Chore`` (the table's own commands)
        and an ``Acted`` order are the application's own (``Application.submit``).
        """
        if not isinstance(order, Given):
            return super().submit(table_id, order, waiter=waiter)
        info = self.get(table_id)
        assert info.pipeline is not None
        asked = _Asked(self, info, table_id, order)
        return info.pipeline.queue(asked.decided, asked.reply,
                                   view=asked.view if with_view else None, waiter=waiter)

    # -- the pipeline's host (application.pipeline.StreamHost) --------------------------------
    def catch_up(self, stream: str) -> None:
        """Fold in what another process appended since this one last looked, and tell the
        listeners (the table's lock held).

        Where the store hears every append (PostgreSQL while its LISTEN holds:
        ``EventStore.hearing``), the head is read only when a notice announced one past this
        table's state, or when the hearing it was last read in has since been broken: a
        table's owner decides a batch without a round trip to the server. An append that
        nonetheless comes first (its notice still on its way) makes this process's commit
        stale: it rebuilds from the log and decides again (``StreamPipeline``); a log rolled
        back under it is found at its next commit and by the periodic verification."""
        info = self.get(stream)
        if info.checked and info.heard <= info.table.state.seq \
                and info.checked == self.store.hearing:
            return
        caught = self._catch_up(stream, info)
        if caught:
            self._after(stream, info, caught, info.owners)

    def commit(self, stream: str, events: list[Event],
               spans: list[tuple[str, int, int]]) -> None:
        """One append for a whole batch (the table's lock held), each command's request key
        (``spans``) in the same transaction; the listeners are told by ``committed`` once
        the batch's commands are answered."""
        info = self.get(stream)
        durable = info.durable
        before = durable.head
        rows = self.store.append(stream, events, expected=events[0].seq - 1, spans=spans)
        durable.head = Head(rows[-1].seq, rows[-1].hash)
        if before.seq == rows[0].seq - 1 and rows[0].prev_hash != before.hash:
            # The append was accepted at the seq expected, but onto another event than the
            # one this process committed: the history under it was replaced.
            self._moved(stream, ("rewritten", f"seq {before.seq}: the stored event is not "
                                 "the one this server committed (the log was replaced)"))
        self.high_water.note(self.store, stream, durable.head)
        self._absorb(stream, info, events, info.owners)
        self._record_staff(stream, events)

    def committed(self, stream: str, events: list[Event]) -> None:
        """After a batch's answers went out: the listeners are told, and a snapshot is taken
        when one is due (only a shortcut for a resume, never worth a caller's wait)."""
        self._publish(stream, events)
        durable = self.get(stream).durable
        if durable.snapshot_due():
            try:
                durable.snapshot()
            except Exception:  # the events are durable; a snapshot is only a shortcut
                log.exception("table %s: snapshot failed", stream)

    def _record_staff(self, table_id: str, events: list[Event]) -> None:
        """Staff changes made here also go to the floor's ``staff:<table>`` stream (who,
        which role, by whom), beside the table's own log."""
        changes = [e for e in events if isinstance(e, StaffChange)]
        if changes:
            record_staff(self.store, table_id, changes)

    def rebuild(self, table_id: str) -> None:
        """The table as its log has it (after a batch that could not be committed) - never
        a log that has moved back behind what this process committed."""
        info = self.get(table_id)
        problem = moved_back(self.store, table_id, info.durable.head)
        if problem is not None:
            self._moved(table_id, problem)
        registry = self.custody.attach(table_id, info.table.pack)
        info.durable = DurableTable.resume(self.store, table_id, clock=self.clock,
                                           dice_registry=registry, settle=False)
        info.durable.table.betting_seconds = self.bet_seconds
        info.views.reset()

    def _after(self, table_id: str, info: FloorTable, events: list[Event],
               owners: dict[str, str] | None = None) -> None:
        self._absorb(table_id, info, events, owners)
        self._publish(table_id, events)

    def _absorb(self, table_id: str, info: FloorTable, events: list[Event],
                owners: dict[str, str] | None = None) -> None:
        """Committed events into the roll history, the fairness monitor (its alerts into the
        dice's custody history) and the views."""
        info.history = roll_history(events, history=info.history)
        for event in events:
            if isinstance(event, DiceRolled):
                for alert in self.fairness.observe(event):
                    self.custody.record_fairness(table_id, alert)
        if owners is not None and owners is not info.owners:
            info.owners.update(owners)
        _own(info, events)
        info.views.update(events, info.owners)

    def _catch_up(self, table_id: str, info: FloorTable) -> list[Event]:
        """Fold in what another process appended since this one last looked; fault the
        table (and refuse) when the store's head has moved back behind what this process
        committed or read, rather than answer from memory against that log."""
        state = info.table.state
        hearing = self.store.hearing
        head = self.store.head(table_id)
        problem = moved_back(self.store, table_id, info.durable.head, head)
        if problem is not None:
            self._moved(table_id, problem)
        info.checked = hearing
        if head.seq <= state.seq:
            return []
        if info.durable.head.seq == state.seq:
            # the head it reached: that of the last row read (the store's may be further on
            # already, past what is folded in here)
            events, reached = self._linked(table_id, info.durable.head)
        else:
            events, reached = self._rows_after(table_id, state.seq, head)
        owners: dict[str, str] = {}
        for event in events:
            note_owners(owners, state.bets, event)
            apply(state, event)
        info.owners.update(owners)
        info.durable.head = reached
        self.high_water.note(self.store, table_id, info.durable.head)
        return events

    def _linked(self, table_id: str, mark: Head) -> tuple[list[Event], Head]:
        """The table's events after ``mark``, each checked as a link of the keyed chain from
        it, and the head of the last: rows that another process appended are folded in only
        when the key vouches for them (a row written without the key faults the table at
        once, never grants)."""
        events: list[Event] = []
        prev, seq = mark.hash, mark.seq
        for row in self.store.records(table_id, after=mark.seq):
            if row.seq != seq + 1 or row.prev_hash != prev \
                    or link_hash(prev, row.body, self.store.key) != row.hash:
                self._moved(table_id, ("forged", f"seq {row.seq}: the row is not a link of the "
                                                 "keyed chain (written without the key)"))
            events.append(_table_event(table_id, row.body))
            prev, seq = row.hash, row.seq
        return events, Head(seq, prev)

    def _rows_after(self, table_id: str, seq: int, head: Head) -> tuple[list[Event], Head]:
        """The table's events after ``seq`` and the head of the last row read (``head``
        when there is none): never a head read after the rows, which may be past them."""
        events: list[Event] = []
        for row in self.store.records(table_id, after=seq):
            events.append(_table_event(table_id, row.body))
            head = Head(row.seq, row.hash)
        return events, head

    def _moved(self, table_id: str, problem: tuple[str, str]) -> None:
        """The store's head moved back under a loaded table: fault it and refuse."""
        self._fault(table_id, problem, self.clock.now().isoformat())
        self.faults.refuse(table_id)

    def _on_notice(self, notice: Notice) -> None:
        if kind_of(notice.table) != TABLE or notice.table in self.faults.open:
            return  # the custody ledger folds in other processes' steps on its next use
        info = self.tables.get(notice.table)
        if info is None:
            try:
                with self._lock:
                    if notice.table not in self.tables and notice.table not in self._opening:
                        info = self._load(notice.table)
                        with info.lock:
                            self._publish(notice.table, [])
            except (InvalidInput, KeyError):  # a table still being opened elsewhere
                return
            return
        if notice.seq <= info.table.state.seq:
            return
        info.heard = max(info.heard, notice.seq)
        if not info.lock.acquire(blocking=False):
            return  # a command is running here: the next to take the lock catches up
        try:
            events = self._catch_up(notice.table, info)
            if events:
                self._after(notice.table, info, events, info.owners)
        except TableFaulted:
            return  # its log moved back: faulted, and nothing more is served from it
        finally:
            info.lock.release()

    # -- listeners ---------------------------------------------------------------------------
    def listen(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _publish(self, table_id: str, events: list[Event]) -> None:
        for listener in list(self._listeners):
            try:
                listener(table_id, events)
            except Exception:  # a listener's fault never undoes a committed command
                log.exception("listener failed")

    # -- the one way out: a view, and the pushes that follow it --------------------------------
    @property
    def hub(self) -> Hub:
        """The floor's pushes to the connections watching its tables (made on first use; the
        app binds it to its event loop)."""
        with self._lock:
            if self._hub is None:
                self._hub = Hub(self)
                self.listen(self._hub.publish)
            return self._hub

    def subscribe(self, table_id: str, account: Account, after: int = 0) -> Subscription:
        """The table as ``account`` may see it, live: the hello (the events after ``after``
        and the view), then every committed batch as a patch of that view. Called off the
        event loop; ``Subscription.close`` ends it."""
        hub = self.hub
        watcher, hello = hub.join(table_id, account, after)
        return Subscription(hub, watcher, hello)

    def view(self, table_id: str, account: Account) -> dict[str, Any]:
        info = self.get(table_id)
        with info.lock:
            return self._view_locked(table_id, account)

    def view_text(self, table_id: str, account: Account) -> str:
        """The view as JSON text, assembled from the parts kept from events."""
        info = self.get(table_id)
        with info.lock:
            self.catch_up(table_id)
            staff, viewer = viewer_of(account)
            return info.views.view_text(info.table, info.history, viewer, staff,
                                        self.extra(table_id, account))

    def _view_locked(self, table_id: str, account: Account) -> dict[str, Any]:
        info = self.get(table_id)
        self.catch_up(table_id)
        staff, viewer = viewer_of(account)
        return info.views.view(info.table, info.history, viewer, staff,
                               self.extra(table_id, account))

    def extra(self, table_id: str, account: Account) -> dict[str, Any]:
        """What the view adds for ``account`` (its roles, its timer, staff's alerts and
        booking controls); the table's lock held."""
        info = self.get(table_id)
        staff = account.kind is Kind.STAFF
        roles = self.roles_at(account, table_id)
        extra: dict[str, Any] = {"bets_close_at": info.bets_close_at,
                                 "my_roles": [r.value for r in roles],
                                 "fairness": self.fairness_alerts(table_id) if staff else []}
        if staff and roles:
            # The engine's answers on each seated player's bets (the console's buttons on
            # them); the wagers open to the player being booked are asked for that one.
            role = self.role_for(account, table_id, gcmd.PlaceBet)
            extra["bet_controls"] = info.views.booking(info.table, account.username, role)
            extra["can"] = console_can(info.table, account.username,
                                       lambda cls: self.role_for(account, table_id, cls))
        return extra

    def extra_class(self, table_id: str, account: Account, table: Table | None = None
                    ) -> tuple[Any, ...]:
        """What ``extra`` depends on in ``account``: accounts alike in it get the same
        extra (every player seated at a table, every player watching it), so that a push to
        1,000 players works it out once or twice, not 1,000 times (``table``: the table,
        when the caller holds it: not looked up again for each of them)."""
        staff = account.kind is Kind.STAFF
        roles = tuple(self.roles_at(account, table_id, table))
        return (staff, roles, account.username if staff and roles else None)

    def controls(self, table_id: str, account: Account, player: str) -> dict[str, Any]:
        """What ``account`` may do now for ``player``: a player for themselves, staff for a
        seated player (a dealer booking the bet a player calls)."""
        if account.kind is Kind.PLAYER and player != account.username:
            raise RoleNotPermitted(f"{account.username} may not act for {player}",
                                   rule="authority.wager")
        info = self.get(table_id)
        role = self.role_for(account, table_id, gcmd.PlaceBet)
        with info.lock:
            self.catch_up(table_id)
            return controls_for(info.table, account.username, role, player)

    def events_for(self, table_id: str, account: Account, events: list[Event]
                   ) -> list[dict[str, Any]]:
        """``events`` (from the log) as ``account`` may see them."""
        info = self.get(table_id)
        return events_for(Caller(account.username, account.kind is Kind.STAFF), events,
                          _Owners(info, events))

    def summaries(self) -> list[dict[str, Any]]:
        out = []
        for table_id, info in sorted(self.tables.items()):
            with info.lock:
                try:
                    self.catch_up(table_id)
                except TableFaulted:
                    continue  # listed with the faults instead
                line = summary(info.table, info.history)
            line["fairness"] = self.fairness_alerts(table_id)
            line["bets_close_at"] = info.bets_close_at
            out.append(line)
        return out

    def fairness_alerts(self, table_id: str) -> list[dict[str, Any]]:
        return [{"serial": a.serial, "face": a.face, "rolls": a.rolls, "table": a.table}
                for a in self.fairness.alerts if a.table == table_id]


def _own(info: FloorTable, events: list[Event]) -> None:
    for event in events:
        if isinstance(event, BetPlaced):
            info.owners[event.bet] = event.player


def viewer_of(account: Account) -> tuple[bool, str | None]:
    """(Is ``account`` staff, the player it is or None): whose view it gets."""
    return account.kind is Kind.STAFF, account.username if account.kind is Kind.PLAYER else None


SEND_BUFFER = 64
"""Messages one connection may have waiting before it is dropped (industry-default)."""
TOO_SLOW = 4408
"""Close code for a connection dropped for not keeping up."""
FAULTED = 4423
"""Close code for a table whose log failed verification (the HTTP 423 of ``TableFaulted``)."""


class Socket(Protocol):
    async def send_text(self, data: str) -> None: ...
    async def close(self, code: int = 1000, reason: str | None = None) -> None: ...


@dataclass(eq=False)
class Watcher:
    table: str
    account: Account
    limit: int = SEND_BUFFER
    buffer: deque[tuple[int, str]] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    seq: int = 0
    """The last seq this connection was sent (or had in its hello)."""
    dropped: bool = False
    closed: bool = False
    faulted: bool = False
    """The table's log failed verification: nothing more is served from it."""
    sent: int = 0
    base: Sent | None = None
    """The view's parts as of the last message this connection was given (its hello or a
    push): the base of its next push's patch. Set on the table's thread, its lock held."""
    task: asyncio.Task[None] | None = None
    """The connection's pump: cancelled when dropped, even in the middle of a send that the
    client is not reading."""

    @property
    def staff(self) -> bool:
        return self.account.kind is Kind.STAFF

    @property
    def viewer(self) -> str | None:
        return self.account.username if self.account.kind is Kind.PLAYER else None

    def offer(self, seq: int, text: str) -> None:
        """On the event loop: queue a message, or drop a connection that is too far behind."""
        if self.closed or self.dropped:
            return
        if len(self.buffer) >= self.limit:
            self.dropped = True
            self.buffer.clear()
            if self.task is not None:
                self.task.cancel()
        else:
            self.buffer.append((seq, text))
        self.wake.set()


@dataclass(eq=False)
class Subscription:
    """One connection's live view of a table (``Floor.subscribe``): its hello, then its
    pushes, sent by ``pump``, until ``close``."""

    hub: Hub
    watcher: Watcher
    hello: str

    async def pump(self, socket: Socket) -> None:
        """Send the pushes in order; close the socket when it fell behind."""
        await self.hub.pump(self.watcher, socket)

    def close(self) -> None:
        self.hub.leave(self.watcher)


K = TypeVar("K")
V = TypeVar("V")


class Groups(Generic[K, V]):
    """Open connections grouped by a key (a table's watchers, an account's sockets), used
    from any thread: a connection joins its group and leaves it, and an emptied group goes."""

    def __init__(self) -> None:
        self._by_key: dict[K, set[V]] = {}
        self._lock = threading.Lock()

    def add(self, key: K, member: V) -> None:
        with self._lock:
            self._by_key.setdefault(key, set()).add(member)

    def discard(self, key: K, member: V) -> None:
        with self._lock:
            group = self._by_key.get(key)
            if group is not None:
                group.discard(member)
                if not group:
                    del self._by_key[key]

    def has(self, key: K) -> bool:
        with self._lock:
            return key in self._by_key

    def of(self, key: K) -> list[V]:
        with self._lock:
            return list(self._by_key.get(key, ()))

    def members(self, keys: list[K] | None = None) -> list[V]:
        """The members of the groups of ``keys`` (None: of every group), read at one moment."""
        with self._lock:
            return [m for key in (list(self._by_key) if keys is None else keys)
                    for m in self._by_key.get(key, ())]


class Hub:
    def __init__(self, floor: Floor | None = None, *, send_buffer: int = SEND_BUFFER) -> None:
        self.floor = floor
        self.send_buffer = send_buffer
        self.loop: asyncio.AbstractEventLoop | None = None
        self._watching: Groups[str, Watcher] = Groups()
        self.dropped = 0
        self.batches = 0
        self.serialised = 0
        """Event texts made (once per event and privacy class, not per viewer)."""
        self.patched = 0
        """Merge patches worked out (once per part and base, not per viewer)."""

    @property
    def watchers(self) -> set[Watcher]:
        return set(self._watching.members())

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    # -- connections --------------------------------------------------------------------------
    def watch(self, table: str, account: Account) -> Watcher:
        watcher = Watcher(table, account, limit=self.send_buffer)
        self._watching.add(table, watcher)
        return watcher

    def join(self, table: str, account: Account, after: int) -> tuple[Watcher, str]:
        """A new connection and its hello (the events after ``after`` and the view), taken
        under the table's lock so that no batch falls between the hello and the pushes.
        Called off the event loop."""
        floor = self._floor()
        info = floor.get(table)
        # The bulk of what it missed is read before the table's lock is taken (a reconnection
        # from far back must not hold the table up); under the lock, only the rest.
        missed = list(floor.store.table_events(table, after=after)) if after else []
        with info.lock:
            floor.catch_up(table)
            watcher = self.watch(table, account)
            seen = missed[-1].seq if missed else after
            if after and info.table.state.seq > seen:
                missed += list(floor.store.table_events(table, after=seen))
            events = floor.events_for(table, account, missed)
            staff, viewer = watcher.staff, watcher.viewer
            extra = floor.extra(table, account)
            info.views.pin(info.table)  # the text and the patches' base: the same parts
            try:
                view = info.views.view_text(info.table, info.history, viewer, staff, extra)
                watcher.seq = info.table.state.seq
                watcher.base = info.views.sent(info.table, info.history, viewer, staff, extra,
                                               watcher.seq)
            finally:
                info.views.pin(None)
        return watcher, '{"type":"hello","events":' + dumps(events) + ',"view":' + view + "}"

    def leave(self, watcher: Watcher) -> None:
        watcher.closed = True
        self._watching.discard(watcher.table, watcher)

    async def pump(self, watcher: Watcher, ws: Socket) -> None:
        """Send the connection's messages in order; close it when it fell behind."""
        watcher.task = asyncio.current_task()
        try:
            while not watcher.closed and not watcher.dropped and not watcher.faulted:
                await watcher.wake.wait()
                watcher.wake.clear()
                while watcher.buffer and not watcher.dropped:
                    seq, text = watcher.buffer.popleft()
                    await ws.send_text(text)
                    watcher.seq = seq
                    watcher.sent += 1
        except asyncio.CancelledError:
            if not watcher.dropped:
                raise
        if watcher.faulted:
            self.leave(watcher)
            with contextlib.suppress(Exception):
                await ws.close(code=FAULTED, reason="the table's log failed verification")
        if watcher.dropped:
            self.dropped += 1
            self.leave(watcher)
            with contextlib.suppress(Exception):
                await ws.close(code=TOO_SLOW,
                               reason=f"too slow; reconnect with after={watcher.seq}")

    # -- batches ------------------------------------------------------------------------------
    def publish(self, table: str, events: list[Event]) -> None:
        """Called by the floor on the table's thread, its lock held, after the commit."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        group = self._watching.of(table)
        if not group:
            return
        if not events:  # a table faulted (integrity): its viewers are closed, not served
            if self.floor is not None and table in self.floor.faults.open:
                loop.call_soon_threadsafe(self._faulted, group)
            return
        floor = self._floor()
        info = floor.get(table)
        fan = Fanout.of(events, info.owners)
        self.batches += 1
        self.serialised += fan.made
        out: list[tuple[Watcher, str]] = []
        info.views.pin(info.table)
        # A roll's push to 1,000 players makes some 25,000 containers (patches, parts,
        # texts), all kept until it ends and most freed then: walked by the collector on the
        # way (once or twice a push, finding nothing to free), not once paused.
        try:
            with collector_paused():
                self._texts(floor, table, info, fan, group, out)
        finally:
            info.views.pin(None)
        seq = fan.seq
        loop.call_soon_threadsafe(self._deliver, seq, out)

    def _texts(self, floor: Floor, table: str, info: Any, fan: Fanout, group: list[Watcher],
               out: list[tuple[Watcher, str]]) -> None:
        """Each connection's push: the events it may see and the merge patch from the view
        it was last sent to the view now. Most connections share one text."""
        head = '{"type":"events","seq":' + str(fan.seq) + ',"events":'
        patches = Patches()
        views = info.views
        public = views.public(info.table, info.history, lean=True)[0]
        staff_part = views.staff_part(info.table) if any(w.staff for w in group) else None
        texts: dict[tuple[str, str], str] = {}
        extras: dict[tuple[Any, ...], dict[str, Any]] = {}  # one object per class: one patch
        compared: dict[tuple[int, int], tuple[object, object, bool]] = {}
        for w in group:
            base = w.base
            if w.closed or base is None or base.seq >= fan.seq:
                continue  # a batch its hello already had
            key = floor.extra_class(table, w.account, info.table)
            extra = extras.get(key)
            if extra is None:
                extra = extras[key] = floor.extra(table, w.account)
            pair = (id(extra), id(base.extra))
            alike = compared.get(pair)
            if alike is None:  # once per pair, not per viewer (the objects held: their ids)
                alike = compared[pair] = (extra, base.extra, same(extra, base.extra))
            if alike[2]:
                extra = base.extra  # unchanged: no patch to work out
            mine = views.me_part(info.table, w.viewer) if w.viewer is not None else None
            now = Sent(fan.seq, public, staff_part if w.staff else None, mine, extra)
            patch = patches.text(base, now)
            events = fan.events_text(w.viewer, w.staff)
            message = texts.get((events, patch))
            if message is None:
                message = texts[(events, patch)] = head + events + "," + patch + "}"
            w.base = now
            out.append((w, message))
        self.patched += patches.made

    @staticmethod
    def _faulted(group: list[Watcher]) -> None:
        for watcher in group:
            watcher.faulted = True
            watcher.wake.set()

    @staticmethod
    def _deliver(seq: int, out: list[tuple[Watcher, str]]) -> None:
        for watcher, text in out:
            watcher.offer(seq, text)

    def _floor(self) -> Floor:
        if self.floor is None:
            raise RuntimeError("the hub has no floor")
        return self.floor


class _Asked:
    """A ``Given`` order on its table's pipeline: what it builds once decided (``decided``),
    its answer (``reply``) and the caller's view (``view``), the pipeline calling each in
    turn. One object per command, where closures over the request were a dozen (functions
    and their cells) for the collector to count while the command waited."""

    __slots__ = ("account", "build", "caller", "command_type", "floor", "info", "table_id")

    def __init__(self, floor: Floor, info: FloorTable, table_id: str, order: Given) -> None:
        self.floor, self.info, self.table_id = floor, info, table_id
        self.account, self.build, self.command_type = order.account, order.build, \
            order.command_type
        self.caller = Caller(order.account.username, order.account.kind is Kind.STAFF)

    def decided(self) -> gcmd.Command | Iterable[gcmd.Command]:
        # The role is found when the command is decided: from the log as it is then.
        account, command_type = self.account, self.command_type
        role = self.floor.role_for(account, self.table_id, command_type)
        if issubclass(command_type, gcmd.BuyChips):  # electronic: the wallet's money
            table = self.info.table
            PlayerMoneyRules.from_pack(table.pack).check_sale(table.mode, role)
        return self.build(account.username, role)

    def reply(self, events: list[Event], owners: dict[str, str]) -> dict[str, Any]:
        info = self.info
        state = info.table.state
        viewer = self.account.username
        seen = events_for(self.caller, events, _Owners(info, events, owners))
        return {"events": seen, "seq": state.seq,
                "balance": state.balance(viewer) if viewer in state.players else None}

    def view(self) -> dict[str, Any]:
        return self.floor._view_locked(self.table_id, self.account)


class _Owners:
    """Who owns a bet ``events`` touch: the state's, else one placed in ``events`` or
    ``owners`` (earlier in their batch), else the log's (a bet since removed). Worked out
    when first asked: most replies (a bet placed) name its owner themselves and never ask."""

    __slots__ = ("events", "found", "info", "owners")

    def __init__(self, info: FloorTable, events: list[Event],
                 owners: dict[str, str] = EMPTY_OWNERS) -> None:
        self.info, self.events, self.owners = info, events, owners
        self.found: Callable[[object], str | None] | None = None

    def __call__(self, bet: object) -> str | None:
        found = self.found
        if found is None:
            info = self.info
            placed = {e.bet: e.player for e in self.events if isinstance(e, BetPlaced)}
            found = self.found = owner_in(info.table.state.bets,
                                          ChainMap(placed, self.owners, info.owners))
        return found(bet)
