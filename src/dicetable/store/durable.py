"""A ``Table`` on a store: every batch is durable before it is applied; a restart resumes it.

``DurableTable.open`` starts a new table on a store; ``DurableTable.resume`` rebuilds one from
its log (from the latest snapshot) after a restart or a crash, and then - on a table that
automates its chores - carries out the settlement chores of a roll that was recorded but not
yet settled: a recorded roll is settled, never rolled again (spec/standards.md RES-1, RES-4).
A table whose chores are done by hand (``automations=()``, a live table) waits for its dealer.

>>> from dicetable.store.memory import MemoryStore
>>> store = MemoryStore()
>>> dt = DurableTable.open(store, "pa-craps", "t1", automations=())
>>> t = dt.table
>>> _ = t.join("alice"), t.buy_in("alice", 100_00), t.bet("alice", "pass", 10_00)
>>> _ = t.roll("3-4")                      # crash here: the roll is in the log, unsettled
>>> again = DurableTable.resume(store, "t1")
>>> again.table.phase.value, again.table.balance("alice")
('settling', 9000)
>>> _ = again.table.settle(); again.table.balance("alice"), store.head("t1").seq
(11000, 8)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from dicetable.core.clock import Clock
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games.engine import Authorizer, default_authorizer
from dicetable.games.events import Event
from dicetable.games.packs import load_pack
from dicetable.games.state import TableState
from dicetable.rules.model import RulePack
from dicetable.store.base import EventStore, check_table_id
from dicetable.store.chain import EMPTY, Head, make_snapshot
from dicetable.store.replay import load_state
from dicetable.store.state_codec import encode_state, fold, roundtrips, share_pack
from dicetable.table.procedure import DiceRegistry
from dicetable.table.table import Automation, Table, engine_for

log = logging.getLogger(__name__)

SNAPSHOT_EVERY = 1000
"""Fewest events between snapshots."""
SNAPSHOT_PER_ITEM = 4
"""... and at least this many per player and wager the table holds (industry-default). A
snapshot's cost grows with the state (every seat and wager encoded, checked to decode back,
hashed), a resume's with the events after it: so a full table snapshots less often, the
snapshots cost a bounded share of the commands' work, and a resume replays no more than a few
times the snapshot's own size."""


class DurableTable:
    """A table whose sink is a store. ``table`` is the ordinary ``Table`` facade."""

    def __init__(self, store: EventStore, table: Table, *,
                 snapshot_every: int = SNAPSHOT_EVERY,
                 snapshot_per_item: int = SNAPSHOT_PER_ITEM) -> None:
        self.store = store
        self.table = table
        table.keep_no_log()  # its log is the store's
        self.snapshot_every = snapshot_every
        self.snapshot_per_item = snapshot_per_item
        tid = table.state.table_id
        self.head: Head = store.head(tid) if tid else EMPTY
        """The last event this table knows is durable."""
        snap = store.latest_snapshot(tid) if tid else None
        # Only a snapshot a resume may start from counts (on a keyed store, a signed one).
        self._snapshot_seq = snap.seq if snap is not None and snap.trusted(store.key) else 0
        self._snapshot_broken = False
        table.sink = self._sink

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def open(cls, store: EventStore, pack: RulePack | str, table_id: str, *,
             mode: str = "bare", clock: Clock | None = None, actor: str = "floor",
             role: Role = Role.FLOORPERSON, staff: Mapping[str, Role] | None = None,
             authorizer: Authorizer = default_authorizer,
             dice_registry: DiceRegistry | None = None,
             snapshot_every: int = SNAPSHOT_EVERY,
             automations: Iterable[Automation] | None = None) -> DurableTable:
        """A new table, its opening already durable (``Table.open``'s arguments)."""
        check_table_id(table_id)
        rules = pack if isinstance(pack, RulePack) else load_pack(pack)
        if store.head(table_id).seq:
            raise ProcedureViolation(f"table {table_id!r} already has a log; resume it",
                                     rule="table.open")
        table = Table(engine_for(rules.game, mode, authorizer, dice_registry), clock=clock)
        durable = cls(store, table, snapshot_every=snapshot_every)
        table.start(rules, table_id, mode=mode, actor=actor, role=role, staff=staff,
                    automations=automations)
        share_pack(table.state)
        return durable

    @classmethod
    def resume(cls, store: EventStore, table_id: str, *, clock: Clock | None = None,
               authorizer: Authorizer = default_authorizer,
               dice_registry: DiceRegistry | None = None,
               snapshot_every: int = SNAPSHOT_EVERY, settle: bool = True,
               automations: Iterable[Automation] | None = None) -> DurableTable:
        """The table exactly as its log leaves it; with ``settle``, an automatic table
        finishes settling a roll the log holds."""
        state = load_state(store, table_id)
        table = Table(engine_for(state.game, state.mode, authorizer, dice_registry),
                      clock=clock, automations=automations)
        table.state = state
        durable = cls(store, table, snapshot_every=snapshot_every)
        if durable.snapshot_due():  # the next start begins here, not as far back
            durable.snapshot()
        if settle:
            durable.finish_settlement()
        return durable

    @classmethod
    def open_or_resume(cls, store: EventStore, pack: RulePack | str, table_id: str, *,
                       mode: str = "bare", clock: Clock | None = None,
                       staff: Mapping[str, Role] | None = None,
                       authorizer: Authorizer = default_authorizer,
                       dice_registry: DiceRegistry | None = None,
                       snapshot_every: int = SNAPSHOT_EVERY) -> DurableTable:
        if store.head(table_id).seq:
            return cls.resume(store, table_id, clock=clock, authorizer=authorizer,
                              dice_registry=dice_registry, snapshot_every=snapshot_every)
        return cls.open(store, pack, table_id, mode=mode, clock=clock, staff=staff,
                        authorizer=authorizer, dice_registry=dice_registry,
                        snapshot_every=snapshot_every)

    # -- the sink -----------------------------------------------------------------------------
    def _sink(self, events: Sequence[Event]) -> None:
        state = self.table.state
        if self.snapshot_due():
            self.snapshot()  # the state at the head, before this batch is applied
        rows = self.store.append(events[0].table, events, expected=state.seq)
        self.head = Head(rows[-1].seq, rows[-1].hash)

    def snapshot_due(self) -> bool:
        """Enough events since the last snapshot: ``snapshot_every``, and
        ``snapshot_per_item`` per player and wager now at the table."""
        if not self.snapshot_every:
            return False
        state = self.table.state
        since = state.seq - self._snapshot_seq
        return since >= self.snapshot_every and \
            since >= self.snapshot_per_item * (len(state.players) + len(state.bets))

    def snapshot(self) -> bool:
        """Store the current state as a snapshot; False when it cannot be stored faithfully."""
        state = self.table.state
        if not state.seq or self._snapshot_broken:
            return False
        try:
            data = encode_state(state)  # once: checked, then stored
        except InvalidInput:
            data = None
        if data is None or not roundtrips(state, data):
            self._snapshot_broken = True  # replay still works; it just starts from the top
            log.warning("table %s: state does not snapshot faithfully; snapshots are off",
                        state.table_id)
            return False
        if self.head.seq == state.seq:  # the usual case: bind it to the hash we hold
            self.store.save_snapshot(make_snapshot(state.table_id, state.seq, self.head.hash,
                                                   data, self.store.key, of=TableState))
        else:
            self.store.snapshot(state.table_id, state.seq, data, of=TableState)
        self._snapshot_seq = state.seq
        return True

    # -- recovery -----------------------------------------------------------------------------
    def finish_settlement(self, actor: str = "table", role: Role = Role.SYSTEM) -> list[Event]:
        """Carry out the chores left for a recorded roll, when the pack settles automatically.

        Nothing is rolled: the settlement is the one worked out when the roll was recorded.
        """
        # The table's own automation: the same code path as after any command.
        return self.table.automate()

    def refresh(self) -> int:
        """Fold in events another writer appended; returns how many. Use after
        ``StaleVersion``."""
        state: TableState = self.table.state
        before = state.seq
        fold(self.store.table_events(state.table_id, after=state.seq), state)
        self.head = self.store.head(state.table_id)
        return state.seq - before

    def execute(self, command: cmd.Command) -> list[Event]:
        return self.table.execute(command)

    @property
    def state(self) -> TableState:
        return self.table.state
