"""A site's dice custody ledger on a store: its own stream ``custody:SITE``, hash-chained and
snapshotted like every table.

Every step is durable before the ledger applies it (the ledger's ``sink``). A writer that lost
a race with another process (``StaleVersion``) folds in what that process appended and
decides again, once.

>>> from dicetable.core.clock import FixedClock
>>> from dicetable.core.roles import Role
>>> from dicetable.custody import commands as cmd
>>> from dicetable.custody.model import Key
>>> from dicetable.store.memory import MemoryStore
>>> store = MemoryStore()
>>> dc = DurableCustody.open(store, "pa", "river", clock=FixedClock())
>>> _ = dc.execute(cmd.DrawKey(actor="Ann", role=Role.SHIFT_MANAGER, key=Key.TABLE_GAMES))
>>> store.streams(), store.head("custody:river").seq
(['custody:river'], 2)
>>> DurableCustody.resume(store, "river").ledger.state.keys[Key.TABLE_GAMES].name
'Ann'
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from dicetable.core.clock import Clock
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.rules import CustodyPack, load_custody_pack
from dicetable.custody.state import CustodyState
from dicetable.custody.state import apply as custody_apply
from dicetable.store import custody_codec
from dicetable.store.base import EventStore, stream_id
from dicetable.store.chain import decode_body, make_snapshot
from dicetable.store.held import Held

log = logging.getLogger(__name__)

KIND = "custody"
SNAPSHOT_EVERY = 500


def custody_stream(site: str) -> str:
    """The stream id of a site's custody ledger."""
    return stream_id(KIND, site)


def load_custody_state(store: EventStore, site: str, *, use_snapshot: bool = True
                       ) -> CustodyState:
    """The ledger's state, from its latest sound snapshot and the events after it."""
    stream = custody_stream(site)
    first = next(iter(store.records(stream, until=1)), None)
    if first is None:
        raise InvalidInput(f"no custody ledger for site {site!r} in {store.location}",
                           rule="store.stream")
    opened = decode_body(first.body)
    if not isinstance(opened, ev.CustodyOpened):
        raise InvalidInput(f"{stream} does not start with CustodyOpened", rule="events.log")
    state: CustodyState | None = None
    snap = store.latest_snapshot(stream) if use_snapshot else None
    if snap is not None and snap.intact:
        rows = list(store.records(stream, after=snap.seq - 1, until=snap.seq))
        if rows and rows[0].hash == snap.event_hash:
            try:
                state = custody_codec.decode_state(snap.data(),
                                                   custody_codec.pack_for(opened))
            except (InvalidInput, KeyError, TypeError, ValueError):
                log.warning("custody snapshot %s@%d cannot be read; replaying", stream,
                            snap.seq)
                state = None
    state = state or CustodyState()
    for event in store.events(stream, after=state.seq):
        custody_apply(state, event)  # type: ignore[arg-type]
    state.pack = custody_codec.pack_for(opened)  # one pack object per digest
    return state


class DurableCustody(Held[CustodyLedger]):
    """A ``CustodyLedger`` whose sink is a store. Thread-safe: one step at a time."""

    def __init__(self, store: EventStore, ledger: CustodyLedger, *,
                 snapshot_every: int = SNAPSHOT_EVERY) -> None:
        super().__init__(store, ledger,
                         custody_stream(ledger.state.site) if ledger.state.site else "")
        self.ledger = ledger
        self.snapshot_every = snapshot_every
        snap = store.latest_snapshot(self.stream) if self.stream else None
        self._snapshot_seq = snap.seq if snap is not None else 0
        ledger.sink = self._sink

    @classmethod
    def open(cls, store: EventStore, pack: CustodyPack | str | Path, site: str, *,
             clock: Clock | None = None, actor: str = "compliance",
             role: Role = Role.SHIFT_MANAGER,
             snapshot_every: int = SNAPSHOT_EVERY) -> DurableCustody:
        rules = pack if isinstance(pack, CustodyPack) else load_custody_pack(pack)
        durable = cls.fresh(store, site, clock=clock, snapshot_every=snapshot_every)
        durable.ledger.execute(cmd.OpenCustody(actor=actor, role=role, site=site, pack=rules))
        return durable

    @classmethod
    def fresh(cls, store: EventStore, site: str, *, clock: Clock | None = None,
              snapshot_every: int = SNAPSHOT_EVERY) -> DurableCustody:
        """The ledger of ``site`` before it is opened, on its stream: its first step is its
        ``OpenCustody`` (appended at version 0; the surfaces give it to
        ``Application.submit`` as an ``Open``). Refused when the store holds the ledger."""
        stream = custody_stream(site)
        if store.head(stream).seq:
            raise ProcedureViolation(f"site {site!r} already has a custody ledger; resume it",
                                     rule="custody.open")
        durable = cls(store, CustodyLedger(clock=clock), snapshot_every=snapshot_every)
        durable.stream = stream
        return durable

    @classmethod
    def resume(cls, store: EventStore, site: str, *, clock: Clock | None = None,
               snapshot_every: int = SNAPSHOT_EVERY) -> DurableCustody:
        """The ledger as its stream leaves it. The whole stream is read: the pit report and
        the logs are built from every step, not only from the state."""
        stream = custody_stream(site)
        if not store.head(stream).seq:
            raise InvalidInput(f"no custody ledger for site {site!r} in {store.location}",
                               rule="store.stream")
        ledger = CustodyLedger.replay(store.events(stream), clock=clock)
        return cls(store, ledger, snapshot_every=snapshot_every)

    # -- the sink -----------------------------------------------------------------------------
    def _sink(self, events: Sequence[ev.CustodyEvent]) -> None:
        if not events:  # a sweep with nothing due records nothing
            return
        state = self.ledger.state
        if self.snapshot_every and state.seq - self._snapshot_seq >= self.snapshot_every:
            self.snapshot()
        self.store.append(self.stream, events, expected=state.seq)

    def snapshot(self) -> bool:
        """Store the ledger's state at its head; False when it would not restore exactly."""
        state = self.ledger.state
        if not state.seq or not custody_codec.roundtrips(state):
            return False
        head = self.store.head(self.stream)
        if head.seq != state.seq:
            return False
        self.store.save_snapshot(make_snapshot(self.stream, state.seq, head.hash,
                                               custody_codec.encode_state(state),
                                               of=type(state)))
        self._snapshot_seq = state.seq
        return True

    # -- steps --------------------------------------------------------------------------------
    def execute(self, command: cmd.CustodyCommand) -> list[ev.CustodyEvent]:
        return self.run(lambda ledger: ledger.execute(command))

    def check_dice_in_play(self, table: str, serials: Sequence[str],
                           limit: tuple[int, str] | None = None) -> None:
        """The table's question (``DiceRegistry``): were these dice issued to it, in time?"""
        with self.lock:
            self.refresh()
            self.ledger.check_dice_in_play(table, serials, limit)
