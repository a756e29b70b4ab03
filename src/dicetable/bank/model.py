"""The table bank's vocabulary: chips by denomination, the six reasons a table inventory may
change (58 Pa. Code § 465a.36(b)) and the source every movement is linked to.

A ``Movement`` cannot be built without one of the six reasons and a source of the kind that
reason names, so a transfer between tables cannot even be expressed.

>>> Movement(Reason.VIGORISH, Source(SourceKind.WAGER, "b7"), value=100).value
100
>>> Movement(Reason.VIGORISH, Source(SourceKind.TABLE, "t2"), value=100)
Traceback (most recent call last):
...
dicetable.core.errors.ProcedureViolation: a vigorish movement links to a wager, not a table ...
>>> chips_value(((2500, 4), (250, 2)))
10500
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from dicetable.core.errors import InvalidInput, ProcedureViolation

Chips = tuple[tuple[int, int], ...]
"""Chips by denomination: ``((denomination in cents, count), ...)``, denominations ascending;
a movement's counts are signed (+ into the table inventory, - out of it)."""

INVENTORY_CITE = "58 Pa. Code § 465a.36(b) [regulation]"


class Reason(StrEnum):
    """The only six ways chips enter or leave a table inventory (465a.36(b)(1)-(6))."""

    CASH_EXCHANGE = "cash-exchange"
    """(1) chips issued for cash; the currency goes into the drop box."""
    COUNTER_CHECK = "counter-check"
    """(2) chips issued against a Counter Check's issuance copy."""
    WAGER_SETTLEMENT = "wager-settlement"
    """(3) a winning wager paid or a losing one collected."""
    COLOUR_CHANGE = "colour-change"
    """(4) an exchange of equal total value with a patron."""
    FILL_CREDIT = "fill-credit"
    """(5) a fill or credit slip (465a.38-465a.39)."""
    VIGORISH = "vigorish"
    """(6) vigorish collected on a wager."""


class SourceKind(StrEnum):
    CURRENCY = "currency"
    """The drop box the tendered currency went into."""
    COUNTER_CHECK = "counter-check"
    WAGER = "wager"
    EXCHANGE = "exchange"
    FILL_SLIP = "fill-slip"
    CREDIT_SLIP = "credit-slip"
    TABLE = "table"
    """Another table: never a source (no cross fills; 465a.36(b), 9 NYCRR 5323.9)."""


SOURCES: Mapping[Reason, frozenset[SourceKind]] = {
    Reason.CASH_EXCHANGE: frozenset({SourceKind.CURRENCY}),
    Reason.COUNTER_CHECK: frozenset({SourceKind.COUNTER_CHECK}),
    Reason.WAGER_SETTLEMENT: frozenset({SourceKind.WAGER}),
    Reason.COLOUR_CHANGE: frozenset({SourceKind.EXCHANGE}),
    Reason.FILL_CREDIT: frozenset({SourceKind.FILL_SLIP, SourceKind.CREDIT_SLIP}),
    Reason.VIGORISH: frozenset({SourceKind.WAGER}),
}
"""The source each reason links to."""


@dataclass(frozen=True, slots=True)
class Source:
    kind: SourceKind
    ref: str
    """The wager id, slip serial, counter check number, drop box id or exchange id."""

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.ref}"


@dataclass(frozen=True, slots=True)
class Movement:
    """One change of a table inventory: a reason, a source, and either chips by denomination
    (a fill, a colour change, a counter check) or a value (a payout the table's log records
    in cents)."""

    reason: Reason
    source: Source
    chips: Chips = ()
    value: int = 0
    table_seq: int = 0
    """The table log's seq that records it (0: recorded in the bank's own stream)."""

    def __post_init__(self) -> None:
        if not isinstance(self.reason, Reason):
            raise ProcedureViolation(
                f"{self.reason!r} is not one of the six reasons chips may enter or leave a "
                "table inventory", rule="inventory.reasons", citation=INVENTORY_CITE)
        if not self.source.ref:
            raise ProcedureViolation(f"a {self.reason.value} movement needs a source",
                                     rule="inventory.reasons", citation=INVENTORY_CITE)
        if self.source.kind not in SOURCES[self.reason]:
            allowed = " or ".join(sorted(k.value.replace("-", " ")
                                         for k in SOURCES[self.reason]))
            raise ProcedureViolation(
                f"a {self.reason.value} movement links to a {allowed}, not a "
                f"{self.source.kind.value} ({self.source.ref}): chips are never moved "
                "between tables", rule="inventory.reasons", citation=INVENTORY_CITE)
        if self.chips and self.value != chips_value(self.chips):
            object.__setattr__(self, "value", chips_value(self.chips))

    def describe(self) -> str:
        sign = "+" if self.value >= 0 else "-"
        where = f" (table seq {self.table_seq})" if self.table_seq else ""
        return f"{self.reason.value} {sign}{money(abs(self.value))} {self.source}{where}"


def chips_value(chips: Iterable[tuple[int, int]]) -> int:
    return sum(d * n for d, n in chips)


def normalise(chips: Iterable[tuple[int, int]] | Mapping[int, int]) -> Chips:
    """Chips with each denomination once, ascending, zero counts dropped."""
    items = chips.items() if isinstance(chips, Mapping) else chips
    merged: dict[int, int] = {}
    for d, n in items:
        if not isinstance(d, int) or not isinstance(n, int) or isinstance(d, bool) \
                or isinstance(n, bool):
            raise InvalidInput("chips are (denomination in cents, count) pairs of whole "
                               "numbers", rule="chips.denominations")
        merged[d] = merged.get(d, 0) + n
    return tuple((d, n) for d, n in sorted(merged.items()) if n)


def add(a: Chips, b: Chips) -> Chips:
    return normalise([*a, *b])


def negate(chips: Chips) -> Chips:
    return tuple((d, -n) for d, n in chips)


def money(cents: int) -> str:
    """``$1,234.50``; whole dollars without cents.

    >>> money(250), money(2_000_000), money(-2500)
    ('$2.50', '$20,000', '-$25')
    """
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}" + (f".{rest:02d}" if rest else "")


def breakdown(value: int, denominations: Iterable[int]) -> tuple[Chips, int]:
    """``value`` in the fewest chips, largest denomination first (the bank pack's
    ``chips.breakdown`` rule, ``largest-first``): the chips, and what no chip covers.

    >>> breakdown(35_00, [100, 250, 500, 2500])
    (((500, 2), (2500, 1)), 0)
    >>> breakdown(7_50, [100, 250, 500])
    (((250, 1), (500, 1)), 0)
    >>> breakdown(1_25, [100, 500])
    (((100, 1),), 25)
    """
    left = abs(value)
    out: dict[int, int] = {}
    for d in sorted(set(denominations), reverse=True):
        n, left = divmod(left, d)
        if n:
            out[d] = n
    return normalise(out), left
