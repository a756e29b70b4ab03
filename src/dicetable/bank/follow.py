"""The table inventory's movements that the table's own log already records.

A buy-in (chips issued for cash, 465a.36(b)(1)), a payout or a collection (b)(3) and vigorish
(b)(6) are settlement events of the table; the bank reads them from the table's log instead of
writing a second event on the bet path. ``Totals`` folds them in one pass (the expected
inventory after every roll is ``opener + Σ bank movements + Totals.inventory_change``);
``movements`` names each one, linked to its wager, when a count has to explain a variance.

>>> from dicetable.games import events as ev
>>> AT = "2026-01-01T00:00:00+00:00"
>>> log = [ev.ChipsBought(table="t", seq=1, actor="a", role="player", at=AT, player="a",
...                       amount=20000),
...        ev.LosersCollected(table="t", seq=2, actor="d", role="dealer", at=AT,
...                           items=(ev.Collection("b1", "a", "pass", 1000),)),
...        ev.WinnersPaid(table="t", seq=3, actor="d", role="dealer", at=AT,
...                       items=(ev.Payment("b2", "a", "buy4", 5000, commission=100),))]
>>> t = Totals().fold(log)
>>> t.cash_exchange, t.collected, t.paid, t.vigorish, t.inventory_change
(20000, 1000, 5000, 100, -23900)
>>> [m.describe() for m in movements(log)][:2]
['cash-exchange -$200 currency:drop-box (table seq 1)', 'wager-settlement +$10 wager:b1 (table seq 2)']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from dicetable.bank.model import Movement, Reason, Source, SourceKind
from dicetable.core.events import Event
from dicetable.games import events as ev

DROP_BOX = "drop-box"


@dataclass
class Totals:
    """What the table's log moved in and out of the inventory, in cents."""

    cash_exchange: int = 0
    """Chips issued for cash (out of the inventory; the currency into the drop box)."""
    collected: int = 0
    paid: int = 0
    vigorish: int = 0
    cashed_out: int = 0
    """Chips players took from the table (they redeem them at the cage, 603a.10(d))."""
    rolls: int = 0
    seq: int = 0

    @property
    def inventory_change(self) -> int:
        return self.collected + self.vigorish - self.paid - self.cash_exchange

    def fold(self, events: Iterable[Event], *, after: int = 0,
             until: int | None = None) -> Totals:
        """Add the events with ``after < seq <= until``; returns self."""
        step = _STEPS
        for e in events:
            seq = e.seq
            if seq <= after:
                continue
            if until is not None and seq > until:
                break
            fn = step.get(type(e))
            if fn is not None:
                fn(self, e)
            self.seq = seq
        return self

    def per_roll(self, events: Iterable[Event], start: int) -> Iterator[tuple[int, int]]:
        """(table seq of each roll, the expected inventory as that roll is thrown), from an
        inventory of ``start`` before the first event."""
        step = _STEPS
        base = start - self.inventory_change
        for e in events:
            if type(e) is ev.DiceRolled:
                yield e.seq, base + self.inventory_change
            fn = step.get(type(e))
            if fn is not None:
                fn(self, e)
            self.seq = e.seq


def _bought(t: Totals, e: Event) -> None:
    t.cash_exchange += e.amount  # type: ignore[attr-defined]


def _cashed(t: Totals, e: Event) -> None:
    t.cashed_out += e.amount  # type: ignore[attr-defined]


def _placed(t: Totals, e: Event) -> None:
    t.vigorish += e.commission  # type: ignore[attr-defined]


def _removed(t: Totals, e: Event) -> None:
    t.vigorish -= e.commission_returned  # type: ignore[attr-defined]


def _returned(t: Totals, e: Event) -> None:
    for item in e.items:  # type: ignore[attr-defined]
        t.vigorish -= item.commission


def _collected(t: Totals, e: Event) -> None:
    for item in e.items:  # type: ignore[attr-defined]
        t.collected += item.amount


def _paid(t: Totals, e: Event) -> None:
    for item in e.items:  # type: ignore[attr-defined]
        t.paid += item.win
        t.vigorish += item.commission


def _rolled(t: Totals, e: Event) -> None:
    t.rolls += 1


_STEPS: dict[type, Callable[[Totals, Event], None]] = {
    ev.ChipsBought: _bought, ev.ChipsCashedOut: _cashed, ev.BetPlaced: _placed,
    ev.BetChanged: _placed, ev.BetRemoved: _removed, ev.WagersReturned: _returned,
    ev.LosersCollected: _collected, ev.WinnersPaid: _paid, ev.DiceRolled: _rolled}


def movements(events: Iterable[Event], *, after: int = 0,
              until: int | None = None) -> Iterator[Movement]:
    """Each inventory movement the table's log records, with its reason and source."""
    for e in events:
        if e.seq <= after:
            continue
        if until is not None and e.seq > until:
            break
        yield from _movements_of(e)


def _movements_of(e: Event) -> Iterator[Movement]:
    wager = SourceKind.WAGER
    if isinstance(e, ev.ChipsBought):
        yield Movement(Reason.CASH_EXCHANGE, Source(SourceKind.CURRENCY, DROP_BOX),
                       value=-e.amount, table_seq=e.seq)
    elif isinstance(e, ev.BetPlaced | ev.BetChanged) and e.commission:
        yield Movement(Reason.VIGORISH, Source(wager, e.bet), value=e.commission,
                       table_seq=e.seq)
    elif isinstance(e, ev.BetRemoved) and e.commission_returned:
        yield Movement(Reason.VIGORISH, Source(wager, e.bet), value=-e.commission_returned,
                       table_seq=e.seq)
    elif isinstance(e, ev.WagersReturned):
        for r in e.items:
            if r.commission:
                yield Movement(Reason.VIGORISH, Source(wager, r.bet), value=-r.commission,
                               table_seq=e.seq)
    elif isinstance(e, ev.LosersCollected):
        for c in e.items:
            yield Movement(Reason.WAGER_SETTLEMENT, Source(wager, c.bet), value=c.amount,
                           table_seq=e.seq)
    elif isinstance(e, ev.WinnersPaid):
        for p in e.items:
            if p.win:
                yield Movement(Reason.WAGER_SETTLEMENT, Source(wager, p.bet), value=-p.win,
                               table_seq=e.seq)
            if p.commission:
                yield Movement(Reason.VIGORISH, Source(wager, p.bet), value=p.commission,
                               table_seq=e.seq)
