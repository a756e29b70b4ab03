"""The pit's books from a table bank's log (and the table's own log): table win per gaming
day and hold, the shift report, slip serials, the hold band, Indiana's table receipts and the
money-conservation check.

PA § 601a.9(c), as far as it was read: closer + credits + drop (currency and Counter Checks)
− item (4) − item (5). Items (4) and (5) were not read; they are almost certainly the opener
and the fills, and every report labels them INFERRED.

>>> win = table_win(opener=20_000_00, fills=5_000_00, credits=2_000_00, closer=18_000_00,
...                 drop={"currency": 8_500_00, "counter-check": 500_00},
...                 included=("currency", "counter-check"))
>>> win.win, win.hold_text
(400000, '44.44%')
>>> indiana_receipts(10_000_00, {2500: 3_000_00}, {2500: 3_500_00}).receipts
1050000
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dicetable.bank import events as bev
from dicetable.bank.follow import Totals
from dicetable.bank.model import money
from dicetable.bank.state import BankState
from dicetable.core.events import Event

WIN_CITE = "58 Pa. Code § 601a.9(c) [regulation]"
OPENER_LABEL = "INFERRED: 601a.9(c)(4) breaks off at 'The inve…' (almost certainly the opener)"
FILLS_LABEL = "INFERRED: 601a.9(c)(5) was not read (almost certainly the fills)"


@dataclass(frozen=True)
class WinTerm:
    name: str
    amount: int
    sign: int
    label: str = ""


@dataclass(frozen=True)
class TableWin:
    terms: tuple[WinTerm, ...]
    drop: int
    excluded: Mapping[str, int]
    """Drop-box items that do not enter the formula in this jurisdiction, shown separately."""

    @property
    def win(self) -> int:
        return sum(t.sign * t.amount for t in self.terms)

    @property
    def hold(self) -> Fraction | None:
        return Fraction(self.win, self.drop) if self.drop else None

    @property
    def hold_text(self) -> str:
        return percent(self.hold)

    def to_dict(self) -> dict[str, Any]:
        return {"win": self.win, "drop": self.drop, "hold": self.hold_text,
                "terms": [{"name": t.name, "amount": t.amount, "sign": t.sign,
                           "label": t.label} for t in self.terms],
                "excluded": dict(self.excluded), "citation": WIN_CITE}


def percent(x: Fraction | None) -> str:
    """A fraction as a percentage with two decimals, rounded half up; '-' when undefined."""
    if x is None:
        return "-"
    hundredths = math.floor(x * 10000 + Fraction(1, 2))
    sign = "-" if hundredths < 0 else ""
    whole, rest = divmod(abs(hundredths), 100)
    return f"{sign}{whole}.{rest:02d}%"


def table_win(*, opener: int, fills: int, credits: int, closer: int,
              drop: Mapping[str, int], included: Sequence[str]) -> TableWin:
    drop_in = sum(v for k, v in drop.items() if k in included)
    excluded = {k: v for k, v in drop.items() if k not in included and v}
    return TableWin((WinTerm("closer", closer, +1, "601a.9(c)(1)"),
                     WinTerm("credits", credits, +1, "601a.9(c)(2)"),
                     WinTerm("drop", drop_in, +1, "601a.9(c)(3): " + " + ".join(included)),
                     WinTerm("opener", opener, -1, OPENER_LABEL),
                     WinTerm("fills", fills, -1, FILLS_LABEL)), drop_in, excluded)


@dataclass(frozen=True)
class Receipts:
    table_win: int
    adjustment: int
    negative: tuple[int, ...]
    """Denominations whose float went negative: investigate and tell the agent at once."""

    @property
    def receipts(self) -> int:
        return self.table_win + self.adjustment


def indiana_receipts(win: int, float_yesterday: Mapping[int, int],
                     float_today: Mapping[int, int]) -> Receipts:
    """68 IAC 15-5-3: table receipts = table win + (today's chip float − yesterday's), the
    float kept per denomination."""
    denoms = set(float_yesterday) | set(float_today)
    adjustment = sum(float_today.get(d, 0) - float_yesterday.get(d, 0) for d in denoms)
    return Receipts(win, adjustment, tuple(sorted(d for d in denoms
                                                  if float_today.get(d, 0) < 0)))


# -- a table's gaming day ------------------------------------------------------------------------
@dataclass
class DayReport:
    table: str
    gaming_day: str
    electronic: bool
    opener: bev.InventoryCounted | None = None
    closer: bev.InventoryCounted | None = None
    fills: list[bev.SlipCompleted] = field(default_factory=list)
    credits: list[bev.SlipCompleted] = field(default_factory=list)
    drop: dict[str, int] = field(default_factory=dict)
    uncounted_boxes: list[str] = field(default_factory=list)
    counts: list[bev.InventoryCounted] = field(default_factory=list)
    discrepancies: list[bev.DiscrepancyFound] = field(default_factory=list)
    win: TableWin | None = None
    electronic_win: int | None = None
    problems: list[str] = field(default_factory=list)
    shifts: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        def count(c: bev.InventoryCounted | None) -> dict[str, Any] | None:
            return None if c is None else {
                "slip": c.slip, "purpose": c.purpose, "total": c.total, "expected": c.expected,
                "chips": [list(x) for x in c.chips], "counter": c.counter,
                "observer": c.observer, "place": c.place, "at": c.at, "shift": c.shift}
        return {
            "table": self.table, "gaming_day": self.gaming_day, "electronic": self.electronic,
            "opener": count(self.opener), "closer": count(self.closer),
            "fills": [{"serial": f.serial, "value": f.value} for f in self.fills],
            "credits": [{"serial": c.serial, "value": c.value} for c in self.credits],
            "drop": self.drop, "uncounted_boxes": self.uncounted_boxes,
            "counts": [count(c) for c in self.counts],
            "discrepancies": [{"slip": d.slip, "expected": d.expected, "counted": d.counted,
                               "variance": d.variance, "notified": list(d.notified),
                               "written_report": d.written_report,
                               "regulator_copy": d.regulator_copy,
                               "suspects": list(d.suspects)} for d in self.discrepancies],
            "win": None if self.win is None else self.win.to_dict(),
            "electronic_win": self.electronic_win, "problems": self.problems,
            "shifts": self.shifts}


def day_report(state: BankState, day: str, *, included: Sequence[str],
               table_day_log: Iterable[Event] = ()) -> DayReport:
    """Table win for one gaming day (601a.9(c)), its counts, slips, drop and discrepancies.
    An electronic table's win is the house result its own log records that day (601a.9(e))."""
    rep = DayReport(state.table, day, state.electronic)
    if state.electronic:
        totals = Totals().fold(table_day_log)
        rep.electronic_win = totals.collected + totals.vigorish - totals.paid
        return rep
    previous: bev.InventoryCounted | None = None
    for e in state.log:
        if isinstance(e, bev.InventoryCounted):
            if e.gaming_day < day:
                previous = e
            elif e.gaming_day == day:
                rep.counts.append(e)
                shift = rep.shifts.setdefault(e.shift, {"counts": 0, "fills": 0, "credits": 0})
                shift["counts"] += 1
        elif isinstance(e, bev.SlipCompleted) and e.gaming_day == day:
            (rep.fills if e.slip_kind == "fill" else rep.credits).append(e)
        elif isinstance(e, bev.DiscrepancyFound) and any(c.slip == e.slip for c in rep.counts):
            rep.discrepancies.append(e)
    for p in state.requests.values():
        if p.status == "completed" and p.gaming_day == day:
            shift = rep.shifts.setdefault(p.shift, {"counts": 0, "fills": 0, "credits": 0})
            shift["fills" if p.kind == "fill" else "credits"] += p.value
    openers = [c for c in rep.counts if c.purpose == "opening"]
    rep.opener = openers[0] if openers else previous
    closers = [c for c in rep.counts if c.purpose in ("closing", "drop")]
    rep.closer = closers[-1] if closers else None
    for box in state.boxes.values():
        if box.gaming_day != day:
            continue
        if box.items is None:
            rep.uncounted_boxes.append(box.box)
            continue
        for kind, amount in box.items.items():
            rep.drop[kind] = rep.drop.get(kind, 0) + amount
    if rep.opener is None:
        rep.problems.append("no opener: the table did not open this gaming day and no earlier "
                            "count carries over")
    if rep.closer is None and rep.opener is not None and rep.counts:
        rep.problems.append("no closing or end-of-day drop count yet: win is not final")
    if rep.uncounted_boxes:
        rep.problems.append(f"drop boxes not yet counted: {', '.join(rep.uncounted_boxes)}")
    if rep.opener is not None and rep.closer is not None:
        rep.win = table_win(opener=rep.opener.total, closer=rep.closer.total,
                            fills=sum(f.value for f in rep.fills),
                            credits=sum(c.value for c in rep.credits), drop=rep.drop,
                            included=included)
    return rep


def drop_collection_problems(state: BankState, day: str, team_min: int) -> list[str]:
    """68 IAC 11-3-1(a)(3): boxes collected at least once a day by a team of at least
    ``team_min``, a security officer among them."""
    boxes = [b for b in state.boxes.values() if b.gaming_day == day]
    if not boxes:
        return [f"no drop box collected from {state.table} on {day}"]
    return [f"box {b.box} collected by {len(set(b.team))} people; at least {team_min}"
            for b in boxes if len(set(b.team)) < team_min]


def serial_problems(serials: Iterable[int]) -> list[str]:
    """Gaps and duplicates in the slips' serial numbers (used in sequence).

    >>> serial_problems([1, 2, 4, 4, 5])
    ['serial 3 is missing (a gap)', 'serial 4 is used 2 times']
    """
    seen: dict[int, int] = {}
    for s in serials:
        seen[s] = seen.get(s, 0) + 1
    if not seen:
        return []
    out = [f"serial {s} is missing (a gap)" for s in range(min(seen), max(seen) + 1)
           if s not in seen]
    out += [f"serial {s} is used {n} times" for s, n in sorted(seen.items()) if n > 1]
    return out


def hold_band(history: Sequence[Fraction], band_percent: int) -> tuple[Fraction, Fraction]:
    """The band a day's win-to-drop should fall in: the mean of earlier days ± z × their
    standard deviation (COMAR 36.05.03.25B stand-in; z for 90/95/99 %)."""
    z = {90: Fraction(1645, 1000), 95: Fraction(196, 100), 99: Fraction(2576, 1000)}[band_percent]
    n = len(history)
    if n < 2:
        raise ValueError("a band needs at least two earlier days")
    mean = sum(history, Fraction(0)) / n
    var = sum(((h - mean) ** 2 for h in history), Fraction(0)) / (n - 1)
    sd = Fraction(math.isqrt(int(var * 10**12)), 10**6)
    return mean - z * sd, mean + z * sd


@dataclass(frozen=True)
class Conservation:
    """Money at a table, by where it is: the check the pit console shows.

    Chips and the cash they were sold for are all accounted for: the table inventory, the
    players' chips (on the rail, on the layout, taken away to the cage), the drop box, and the
    cage's side of fills and credits. Their sum is the opener plus the cash and counter checks
    tendered; any other result is a movement the books do not explain."""

    inventory: int
    players: int
    drop: int
    cage: int
    constant: int

    @property
    def total(self) -> int:
        return self.inventory + self.players + self.drop + self.cage

    @property
    def holds(self) -> bool:
        return self.total == self.constant

    def to_dict(self) -> dict[str, Any]:
        return {"inventory": self.inventory, "players": self.players, "drop": self.drop,
                "cage": self.cage, "total": self.total, "constant": self.constant,
                "holds": self.holds,
                "text": (f"{money(self.inventory)} inventory + {money(self.players)} players + "
                         f"{money(self.drop)} drop + {money(self.cage)} cage = "
                         f"{money(self.total)}; expected {money(self.constant)}")}


def conservation(state: BankState, totals: Totals, players_chips: int) -> Conservation:
    """``totals``: the table's log folded since the bank's first count; ``players_chips``:
    the players' balances and stakes as the table's own state holds them."""
    first = next((e for e in state.log if isinstance(e, bev.InventoryCounted)), None)
    opener = first.total if first is not None else 0
    fills = sum(e.value for e in state.log
                if isinstance(e, bev.SlipCompleted) and e.slip_kind == "fill")
    credits = sum(e.value for e in state.log
                  if isinstance(e, bev.SlipCompleted) and e.slip_kind == "credit")
    own = sum(e.value for e in state.log if isinstance(e, bev.InventoryMoved))
    checks = -sum(e.value for e in state.log
                  if isinstance(e, bev.InventoryMoved) and e.reason == "counter-check")
    inventory = opener + fills - credits + own + totals.inventory_change
    return Conservation(
        inventory=inventory, players=players_chips + totals.cashed_out + checks,
        drop=totals.cash_exchange + checks, cage=credits - fills,
        constant=opener + totals.cash_exchange + checks)
