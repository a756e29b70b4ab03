"""``CustodyLedger``: a site's dice custody as the fold of its events, with verify / can / do.

Storage-agnostic: ``sink`` receives each batch of events before it is applied (where a
durable store plugs in), and ``replay`` rebuilds the ledger from any iterable of events.

>>> from dicetable.core.clock import FixedClock
>>> from dicetable.custody.model import Key
>>> led = CustodyLedger.open("pa", "river", clock=FixedClock())
>>> led.can(cmd.DrawKey(actor="Pat", role=Role.PIT_BOSS, key=Key.TABLE_GAMES))
False
>>> [e.kind for e in led.execute(cmd.DrawKey(actor="Ann", role=Role.SHIFT_MANAGER,
...                                           key=Key.TABLE_GAMES))]
['KeyDrawn']
>>> CustodyLedger.replay(led.log).state.keys[Key.TABLE_GAMES].name
'Ann'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from dicetable.core.clock import Clock, SystemClock
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.events import Event
from dicetable.core.log_order import in_order
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.engine import CustodyEngine, check_dice_in_play
from dicetable.custody.rules import CustodyPack, load_custody_pack
from dicetable.custody.state import CustodyState, apply

Sink = Callable[[Sequence[ev.CustodyEvent]], None]
"""Receives each batch of events before the ledger applies them (the durable store)."""


class CustodyLedger:
    """One site's dice: its rules, its state and its log."""

    def __init__(self, *, clock: Clock | None = None, sink: Sink | None = None) -> None:
        self.engine = CustodyEngine()
        self.state = CustodyState()
        self.clock: Clock = clock or SystemClock()
        self.sink = sink
        self.log: list[ev.CustodyEvent] = []

    @classmethod
    def open(cls, pack: CustodyPack | str | Path, site: str, *, clock: Clock | None = None,
             actor: str = "compliance", role: Role = Role.SHIFT_MANAGER,
             sink: Sink | None = None) -> CustodyLedger:
        rules = pack if isinstance(pack, CustodyPack) else load_custody_pack(pack)
        ledger = cls(clock=clock, sink=sink)
        ledger.execute(cmd.OpenCustody(actor=actor, role=role, site=site, pack=rules))
        return ledger

    @classmethod
    def replay(cls, events: Iterable[Event], *, clock: Clock | None = None,
               sink: Sink | None = None) -> CustodyLedger:
        """Rebuild a ledger from its log; the log must start with ``CustodyOpened``."""
        ledger = cls(clock=clock, sink=sink)
        ledger._apply(in_order(events, "custody", ev.CustodyEvent, ev.CustodyOpened))
        return ledger

    # -- verify / can / do --------------------------------------------------------------------
    def decide(self, command: cmd.CustodyCommand) -> list[ev.CustodyEvent]:
        """The events ``command`` would produce; raises if refused. Changes nothing."""
        return self.engine.decide(self.state, command, self.clock.now().isoformat())

    def verify(self, command: cmd.CustodyCommand) -> None:
        self.decide(command)

    def can(self, command: cmd.CustodyCommand) -> bool:
        try:
            self.decide(command)
        except DicetableError:
            return False
        return True

    def execute(self, command: cmd.CustodyCommand) -> list[ev.CustodyEvent]:
        events = self.decide(command)
        if self.sink is not None:
            self.sink(events)  # durable before applied: an acknowledged step is never lost
        self._apply(events)
        return events

    def catch_up(self, events: Iterable[Event]) -> int:
        """Fold in events another writer recorded after this ledger's head; returns how many."""
        n = 0
        for event in events:
            if not isinstance(event, ev.CustodyEvent) or event.seq != self.state.seq + 1:
                raise InvalidInput(f"event {event.seq} does not follow custody seq "
                                   f"{self.state.seq}", rule="events.log")
            self._apply([event])
            n += 1
        return n

    def _apply(self, events: Iterable[ev.CustodyEvent]) -> None:
        for event in events:
            apply(self.state, event)
            self.log.append(event)

    # -- queries ------------------------------------------------------------------------------
    @property
    def pack(self) -> CustodyPack:
        return self.state.rules()

    @property
    def alerts(self) -> list[ev.CustodyEvent]:
        return [e for e in self.log if e.alert]

    def check_dice_in_play(self, table: str, serials: Iterable[str],
                           limit: tuple[int, str] | None = None) -> None:
        """Raise unless the dice are in play at ``table`` and within their time limit (the
        table's ``dice.max_hours`` when it gives it)."""
        check_dice_in_play(self.state, table, serials, self.clock.now().isoformat(), limit)
