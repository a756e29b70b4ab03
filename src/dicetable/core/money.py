"""Money is integer cents; odds are exact fractions. No float ever touches an amount.

>>> format_cents(123456)
'$1,234.56'
>>> parse_money("$12.50")
1250
>>> Odds.parse("7 to 6").net
Fraction(7, 6)
>>> Odds.parse("8 for 1").net      # 'for' includes the stake: 8 for 1 is 7 to 1
Fraction(7, 1)
>>> str(Odds.parse("9 to 5"))
'9 to 5'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from dicetable.core.errors import InvalidInput

Cents = int
"""An amount of money in US cents. Always an ``int``."""

_MONEY = re.compile(r"^\s*(-)?\$?\s*(\d{1,12})(?:\.(\d{1,2}))?\s*$")


def format_cents(cents: Cents) -> str:
    """Render cents as dollars: ``-$5.00``, ``$1,234.56``."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


def parse_money(text: str) -> Cents:
    """Parse ``12``, ``12.5``, ``$12.50`` into cents; anything else is ``InvalidInput``.

    >>> parse_money("0.05")
    5
    >>> parse_money("1e3")
    Traceback (most recent call last):
    ...
    dicetable.core.errors.InvalidInput: not an amount of money: '1e3' [rule money.format]
    """
    # Bounded before it is matched: an amount is a few characters (no long input to scan).
    m = _MONEY.match(text) if len(text) <= 32 else None
    if not m:
        raise InvalidInput(f"not an amount of money: {text[:40]!r}", rule="money.format")
    sign, whole, frac = m.groups()
    cents = int(whole) * 100 + int((frac or "0").ljust(2, "0"))
    return -cents if sign else cents


def fraction_text(value: Fraction) -> str:
    """An exact fraction as its JSON text (``core.events``' codec, the simulator's report).

    >>> fraction_text(Fraction(7, 6)), fraction_text(Fraction(0))
    ('7/6', '0/1')
    """
    return f"{value.numerator}/{value.denominator}"


def percent(text: str) -> Fraction:
    """Parse a rate written ``5%`` or ``1/20`` into an exact fraction.

    >>> percent("5%"), percent("1/20"), percent("2.5%")
    (Fraction(1, 20), Fraction(1, 20), Fraction(1, 40))
    """
    t = text.strip()
    try:
        if t.endswith("%"):
            return Fraction(t[:-1].strip()) / 100
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise InvalidInput(f"not a rate: {text!r}", rule="money.rate") from None


class OddsBasis(StrEnum):
    """How a payout is stated (NJAC 13:69F-13.6(a); COMAR 36.05.03.14(E))."""

    TO = "to"
    """``a to b``: the win is a/b of the stake, and the stake is returned on top."""
    FOR = "for"
    """``a for b``: a/b of the stake comes back in all, the stake included."""


_ODDS = re.compile(r"^\s*(\d+)\s*(to|for|:)\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class Odds:
    """A payout ratio as stated on the layout, kept exact."""

    win: int
    stake: int
    basis: OddsBasis = OddsBasis.TO

    def __post_init__(self) -> None:
        if self.stake <= 0 or self.win < 0:
            raise InvalidInput(f"odds out of range: {self.win} {self.basis} {self.stake}",
                               rule="money.odds")
        if self.basis is OddsBasis.FOR and self.win < self.stake:
            raise InvalidInput(f"'{self.win} for {self.stake}' returns less than the stake",
                               rule="money.odds")

    @classmethod
    def parse(cls, text: str) -> Odds:
        m = _ODDS.match(text) if len(text) <= 32 else None  # bounded before it is matched
        if not m:
            raise InvalidInput(f"not odds: {text[:40]!r} (write '7 to 6' or '8 for 1')",
                               rule="money.odds")
        a, basis, b = m.groups()
        return cls(int(a), int(b), OddsBasis.TO if basis in ("to", ":") else OddsBasis.FOR)

    @property
    def net(self) -> Fraction:
        """Net win per unit staked ("to 1"), the stake not included."""
        ratio = Fraction(self.win, self.stake)
        return ratio if self.basis is OddsBasis.TO else ratio - 1

    def __str__(self) -> str:
        return f"{self.win} {self.basis} {self.stake}"


class Rounding(StrEnum):
    """What to do with a payout that is not a whole number of the table's payout unit."""

    REFUSE = "refuse"
    """Refuse the wager at placement (NJAC 13:69F-13.6(b)1)."""
    DOWN = "round-down"
    """Pay down to the unit below; the house keeps the remainder (industry practice)."""
    UP = "round-up"
    """Pay up to the next unit (Ohio OAC 3772-11-37(C); CO 30-2306(4) reported)."""
    CENT = "exact-cents"
    """Pay to the cent, rounding fractions of a cent down (electronic tables)."""


def is_whole_units(amount: Fraction | int, unit: Cents) -> bool:
    """True when ``amount`` cents is a whole number of ``unit`` cents.

    >>> is_whole_units(Fraction(700), 100), is_whole_units(Fraction(1750, 3), 100)
    (True, False)
    """
    if isinstance(amount, int):
        return amount % unit == 0
    return amount.numerator % (amount.denominator * unit) == 0


def pays_whole(amount: Cents, net: Fraction, unit: Cents) -> bool:
    """True when ``amount`` cents paid at ``net`` to one is a whole number of ``unit`` cents
    (``is_whole_units(amount * net, unit)``, without building the product).

    >>> pays_whole(600, Fraction(7, 6), 25), pays_whole(500, Fraction(7, 6), 25)
    (True, False)
    """
    return amount * net.numerator % (net.denominator * unit) == 0


def round_amount(amount: Fraction, unit: Cents, rounding: Rounding) -> Cents:
    """Round an exact amount of cents to the unit per ``rounding``.

    >>> round_amount(Fraction(1750, 3), 100, Rounding.DOWN)
    500
    >>> round_amount(Fraction(1750, 3), 100, Rounding.UP)
    600
    >>> round_amount(Fraction(1750, 3), 25, Rounding.CENT)
    583
    """
    if rounding is Rounding.CENT:
        return int(amount // 1)
    units = amount / unit
    if units.denominator == 1:
        return int(amount)
    if rounding is Rounding.DOWN:
        return int(units // 1) * unit
    if rounding is Rounding.UP:
        return -int(-units // 1) * unit
    raise InvalidInput(f"{amount} cents is not a whole number of {unit}-cent units",
                       rule="payout.rounding")


class CommissionRounding(StrEnum):
    """How a commission (vig) is brought to a payable amount (spec/standards.md §5.2)."""

    FLOOR_TO_UNIT = "floor-to-unit"
    """5% rounded down to the table unit, subject to the minimum ($1 on $20-$39)."""
    CEIL_TO_UNIT = "ceil-to-unit"
    """Rounded up to the table unit."""
    EXACT_CENTS = "exact-cents"
    """To the cent, fractions of a cent dropped."""


def commission(base: Cents | Fraction, rate: Fraction, unit: Cents, minimum: Cents,
               rounding: CommissionRounding) -> Cents:
    """The commission on ``base`` cents at ``rate``, rounded, never below ``minimum``.

    >>> commission(2000, Fraction(1, 20), 100, 100, CommissionRounding.FLOOR_TO_UNIT)
    100
    >>> commission(3900, Fraction(1, 20), 100, 100, CommissionRounding.FLOOR_TO_UNIT)
    100
    >>> commission(1000, Fraction(1, 20), 100, 100, CommissionRounding.FLOOR_TO_UNIT)
    100
    >>> commission(4000, Fraction(1, 20), 100, 100, CommissionRounding.FLOOR_TO_UNIT)
    200
    """
    return _commissions((base.numerator,), rate.numerator, base.denominator * rate.denominator,
                        unit, minimum, rounding)[0]


def commissions(bases: Iterable[Cents], per: int | Fraction, rate: Fraction, unit: Cents,
                minimum: Cents, rounding: CommissionRounding) -> list[Cents]:
    """``commission`` on ``base * per`` cents for each of ``bases``, their ratio worked out
    once (a ladder's every rung: a server's start works out some 130,000).

    >>> commissions((2000, 3900, 4000), 1, Fraction(1, 20), 100, 100,
    ...             CommissionRounding.FLOOR_TO_UNIT)
    [100, 100, 200]
    >>> commissions((2000,), Fraction(3, 2), Fraction(1, 20), 100, 100,
    ...             CommissionRounding.CEIL_TO_UNIT)  # a lay's win on 2000 is 3000
    [200]
    """
    return _commissions(bases, per.numerator * rate.numerator,
                        per.denominator * rate.denominator, unit, minimum, rounding)


def _commissions(bases: Iterable[int], num: int, den: int, unit: Cents, minimum: Cents,
                 rounding: CommissionRounding) -> list[Cents]:
    """The commission on ``base * num / den`` cents for each of ``bases``, rounded, never
    below ``minimum``: floored by integer division, the exact value without building
    Fractions (one rounding for ``commission`` and ``commissions``)."""
    if rounding is CommissionRounding.EXACT_CENTS:
        return [max(b * num // den, minimum) for b in bases]
    whole = den * unit
    if rounding is CommissionRounding.FLOOR_TO_UNIT:
        return [max(b * num // whole * unit, minimum) for b in bases]
    return [max(-(-b * num // whole) * unit, minimum) for b in bases]
