"""Is an amount a wager may be made in: limits, betting unit, equal parts, an exact payout.

One check for the live engine and the simulator's strategy files alike.
"""

from __future__ import annotations

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
