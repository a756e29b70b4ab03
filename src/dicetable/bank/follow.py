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
>>> for m in list(movements(log))[:2]:
...     print(m.describe())
cash-exchange -$200 currency:drop-box (table seq 1)
wager-settlement +$10 wager:b1 (table seq 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields

from dicetable.bank.model import Movement, Reason, Source, SourceKind
from dicetable.core.events import Event
from dicetable.games import events as ev

DROP_BOX = "drop-box"
CHECKPOINT_ROLLS = 10_000
"""How often the pit's follower writes a checkpoint of the running totals (``TotalsNoted``):
a cold read then folds at most this many rolls of the table's log."""
KINDS = ("collect", "pay", "vig", "cash")
"""The kinds of movement the table's log records: a collection, a payout, vigorish (taken,
or returned as a negative value) and chips issued for cash."""


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
    values: dict[str, dict[int, int]] = field(default_factory=lambda: {k: {} for k in KINDS})
    """How many movements of each value, by kind (``KINDS``): a variance's suspects are
    counted from these, so a count never has to read the whole day to say how many there are."""

    @property
    def inventory_change(self) -> int:
        return self.collected + self.vigorish - self.paid - self.cash_exchange

    def fold(self, events: Iterable[Event], *, after: int = 0,
             until: int | None = None) -> Totals:
        """Add the events with ``after < seq <= until``; returns self.

        One pass, the settlement types tested by identity in the order they are most common,
        the values of each kind gathered and tallied once at the end: a day's log is millions
        of events."""
        if isinstance(events, Sequence) and events and events[0].seq == 1 \
                and events[-1].seq == len(events):
            events = events[after:until]  # seq n is at index n - 1: slice, do not filter
            after, until = 0, None
        elif after or until is not None:
            events = _window(events, after, until)
        collect: list[int] = []
        pay: list[int] = []
        vig: list[int] = []
        cash: list[int] = []
        cashed, rolls = self.cashed_out, self.rolls
        e: Event | None = None
        placed_t, rolled_t, lost_t, paid_t = ev.BetPlaced, ev.DiceRolled, ev.LosersCollected, \
            ev.WinnersPaid
        for e in events:
            tp = type(e)
            if tp is rolled_t:
                rolls += 1
            elif tp is placed_t or tp is ev.BetChanged:
                vig.append(e.commission)  # type: ignore[attr-defined]
            elif tp is lost_t:
                collect += [c.amount for c in e.items]  # type: ignore[attr-defined]
            elif tp is paid_t:
                for p in e.items:  # type: ignore[attr-defined]
                    pay.append(p.win)
                    vig.append(p.commission)
            elif tp is ev.ChipsBought:
                cash.append(e.amount)  # type: ignore[attr-defined]
            elif tp is ev.ChipsCashedOut:
                cashed += e.amount  # type: ignore[attr-defined]
            elif tp is ev.BetRemoved:
                vig.append(-e.commission_returned)  # type: ignore[attr-defined]
            elif tp is ev.WagersReturned:
                vig += [-r.commission for r in e.items]  # type: ignore[attr-defined]
        self.collected += _tally(self.values["collect"], collect)
        self.paid += _tally(self.values["pay"], pay)
        self.vigorish += _tally(self.values["vig"], vig)
        self.cash_exchange += _tally(self.values["cash"], cash)
        self.cashed_out, self.rolls = cashed, rolls
        if e is not None:
            self.seq = e.seq
        return self

    def to_checkpoint(self) -> tuple[tuple[str, int], ...]:
        """The running totals as a bank event carries them (``TotalsNoted``)."""
        return tuple((f, getattr(self, f)) for f in _FIELDS)

    def value_counts(self) -> tuple[tuple[str, int, int], ...]:
        return tuple((k, v, n) for k in KINDS for v, n in sorted(self.values[k].items()))

    @classmethod
    def resume(cls, totals: Iterable[tuple[str, int]],
               values: Iterable[tuple[str, int, int]] = ()) -> Totals:
        """Running totals from a checkpoint: folding on from it gives what folding the whole
        log would."""
        t = cls()
        for f, v in totals:
            if f in _FIELDS:
                setattr(t, f, int(v))
        for kind, value, n in values:
            t.values[kind][int(value)] = int(n)
        return t

    def copy(self) -> Totals:
        return Totals.resume(self.to_checkpoint(), self.value_counts())

    def count_of(self, value: int) -> int:
        """How many movements of ``value`` (either sign, any kind) the totals hold."""
        target = abs(value)
        return sum(n for d in self.values.values() for v, n in d.items() if abs(v) == target)

    def per_roll(self, events: Iterable[Event], start: int) -> Iterator[tuple[int, int]]:
        """(table seq of each roll, the expected inventory as that roll is thrown), from an
        inventory of ``start`` before the first event: what came before each roll is folded
        as one stretch."""
        base = start - self.inventory_change
        stretch: list[Event] = []
        for e in events:
            if type(e) is ev.DiceRolled:
                self.fold(stretch)
                stretch = []
                yield e.seq, base + self.inventory_change
            stretch.append(e)
        self.fold(stretch)


_FIELDS = tuple(f.name for f in fields(Totals) if f.name != "values")
"""The running totals a checkpoint carries, in their declared order."""


def _window(events: Iterable[Event], after: int, until: int | None) -> Iterator[Event]:
    for e in events:
        if e.seq <= after:
            continue
        if until is not None and e.seq > until:
            return
        yield e


def _tally(counts: dict[int, int], values: Iterable[int]) -> int:
    """Count each movement of ``values`` by its value (zeros are no movement); their sum."""
    total = 0
    for v in values:
        if v:
            counts[v] = counts.get(v, 0) + 1
            total += v
    return total


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
    if isinstance(e, ev.ChipsBought):
        yield Movement(Reason.CASH_EXCHANGE, Source(SourceKind.CURRENCY, DROP_BOX),
                       value=-e.amount, table_seq=e.seq)
        return
    for reason, bet, value in _wager_moves(e):
        if value:
            yield Movement(reason, Source(SourceKind.WAGER, bet), value=value, table_seq=e.seq)


def _wager_moves(e: Event) -> Iterator[tuple[Reason, str, int]]:
    """(reason, bet, value) of each chip movement a wager's event records (zeros skipped)."""
    vig, settled = Reason.VIGORISH, Reason.WAGER_SETTLEMENT
    if isinstance(e, ev.BetPlaced | ev.BetChanged):
        yield vig, e.bet, e.commission
    elif isinstance(e, ev.BetRemoved):
        yield vig, e.bet, -e.commission_returned
    elif isinstance(e, ev.WagersReturned):
        yield from ((vig, r.bet, -r.commission) for r in e.items)
    elif isinstance(e, ev.LosersCollected):
        yield from ((settled, c.bet, c.amount) for c in e.items)
    elif isinstance(e, ev.WinnersPaid):
        for p in e.items:
            yield settled, p.bet, -p.win
            yield vig, p.bet, p.commission


def matching(events: Iterable[Event], value: int, *, after: int = 0, until: int | None = None,
             limit: int = 20) -> tuple[list[Movement], int]:
    """The movements worth ``value`` (either sign) in the window, the first ``limit`` of
    them, and how many there are: one pass that builds a ``Movement`` only for the first
    ``limit`` matches."""
    target = abs(value)
    found: list[Movement] = []
    n = 0
    lost_t, paid_t = ev.LosersCollected, ev.WinnersPaid
    for e in _window(events, after, until) if after or until is not None else events:
        tp = type(e)
        if tp is lost_t:
            hits = sum(c.amount == target for c in e.items)  # type: ignore[attr-defined]
        elif tp is paid_t:
            hits = sum((p.win == target) + (p.commission == target)
                       for p in e.items)  # type: ignore[attr-defined]
        elif tp is ev.BetPlaced or tp is ev.BetChanged:
            hits = int(e.commission == target)  # type: ignore[attr-defined]
        elif tp is ev.ChipsBought:
            hits = int(e.amount == target)  # type: ignore[attr-defined]
        elif tp is ev.BetRemoved:
            hits = int(e.commission_returned == target)  # type: ignore[attr-defined]
        elif tp is ev.WagersReturned:
            hits = sum(r.commission == target for r in e.items)  # type: ignore[attr-defined]
        else:
            continue
        if not hits:
            continue
        n += hits
        if len(found) < limit:
            found += [m for m in _movements_of(e) if abs(m.value) == target][:limit - len(found)]
    return found, n


def recent_matching(events: Sequence[Event], value: int, *, after: int = 0,
                    until: int | None = None, limit: int = 20) -> list[Movement]:
    """The newest ``limit`` movements worth ``value`` (either sign) in the window, read from
    its end back: a common value is found in the last few events, whatever the day's length.
    """
    target = abs(value)
    found: list[Movement] = []
    if limit <= 0:
        return found
    if events and events[0].seq == 1 and events[-1].seq == len(events):
        top = len(events) if until is None else min(until, len(events))
        window: Iterable[Event] = (events[i] for i in range(top - 1, after - 1, -1))
    else:
        window = reversed([e for e in events
                           if e.seq > after and (until is None or e.seq <= until)])
    for e in window:
        hits = [m for m in _movements_of(e) if abs(m.value) == target]
        if hits:
            found += hits[:limit - len(found)]
            if len(found) >= limit:
                break
    found.reverse()
    return found
