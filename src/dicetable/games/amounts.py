"""Is an amount a wager may be made in: limits, betting unit, equal parts, an exact payout.

One check for the live engine and the simulator's strategy files alike.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dicetable.core.errors import IllegalWager, InvalidInput
from dicetable.core.money import Rounding, format_cents, is_whole_units
from dicetable.rules.model import RulePack
from dicetable.wagers.compiled import CompiledWager


def check_amount(pack: RulePack, wager: CompiledWager, amount: int, limit_code: str, *,
                 maximum: tuple[int, str] | None = None, state: int | None = None) -> None:
    """Raise unless ``amount`` cents may be wagered on ``wager``.

    ``limit_code`` names whose limits apply (``odds`` for odds); ``maximum`` replaces the
    posted maximum with another one and the rule it comes from (the odds multiple);
    ``state``, when known, is the wager state the stake stands in: only the payouts still
    reachable from it must be exact.
    """
    limits, limit_rule = pack.limits(limit_code)
    cite = pack.cite(limit_rule)
    if amount <= 0:
        raise InvalidInput("a wager is a positive amount", rule="money.amount")
    if amount % limits.unit:
        raise IllegalWager(f"{format_cents(amount)} is not a multiple of the "
                           f"{format_cents(limits.unit)} betting unit",
                           rule=limit_rule, citation=cite)
    if amount < limits.minimum:
        raise IllegalWager(f"{wager.name} minimum is {format_cents(limits.minimum)}",
                           rule=limit_rule, citation=cite)
    most, most_rule = maximum or (limits.maximum, limit_rule)
    if amount > most:
        raise IllegalWager(f"{wager.name} maximum here is {format_cents(most)}",
                           rule=most_rule, citation=pack.cite(most_rule))
    if wager.parts > 1 and amount % (wager.parts * limits.unit):
        raise IllegalWager(f"{wager.name} is {wager.parts} equal parts: bet a multiple of "
                           f"{format_cents(wager.parts * limits.unit)}",
                           rule=limit_rule, citation=cite)
    if pack.payout_rounding is Rounding.REFUSE:
        unit = pack.payout_unit
        payouts = wager.payouts if state is None else wager.payouts_from(state)
        for net in sorted(payouts):
            if not is_whole_units(amount * net, unit):
                raise IllegalWager(
                    f"{format_cents(amount)} on {wager.name} cannot be paid at "
                    f"{net.numerator} to {net.denominator} in {format_cents(unit)} units",
                    rule="payout.inexact", citation=pack.cite("payout.inexact"))


def amount_step(pack: RulePack, wager: CompiledWager, limit_code: str) -> int:
    """The step between the amounts ``check_amount`` accepts on ``wager`` (cents).

    Every accepted amount is a multiple of the betting unit, of the wager's equal parts and,
    where an unpayable win is refused, of what makes each net payout whole: the least common
    multiple of those, so the accepted amounts are that step's multiples within the limits.

    >>> from dicetable.games.packs import load_preset
    >>> from dicetable.games.packs import compile_pack
    >>> pack = load_preset("pa-craps")
    >>> amount_step(pack, compile_pack(pack)["place6"], "place6")   # 7 to 6 in $0.25 units
    300
    """
    limits, _ = pack.limits(limit_code)
    step = math.lcm(limits.unit, max(1, wager.parts) * limits.unit)
    if pack.payout_rounding is Rounding.REFUSE:
        unit = pack.payout_unit
        for net in wager.payouts:
            # amount * p / q is a whole number of units exactly when amount is a multiple of
            # q * unit / gcd(p, q * unit).
            whole = Fraction(net.denominator * unit, math.gcd(net.numerator,
                                                              net.denominator * unit))
            step = math.lcm(step, int(whole))
    return step


def legal_amounts(pack: RulePack, wager: CompiledWager, limit_code: str, *,
                  maximum: int | None = None) -> tuple[int, int, int] | None:
    """The accepted amounts as (first, step, last), or None when none is.

    ``maximum`` replaces the posted maximum (the odds behind a given line bet).
    """
    limits, _ = pack.limits(limit_code)
    step = amount_step(pack, wager, limit_code)
    first = -(-max(limits.minimum, 1) // step) * step
    most = limits.maximum if maximum is None else maximum
    last = most // step * step
    return (first, step, last) if first <= last else None
