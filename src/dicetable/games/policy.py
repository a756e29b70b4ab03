"""Table policy read from the rule pack: working status, commissions and payout rounding."""

from __future__ import annotations

import functools
from fractions import Fraction

from dicetable.core.money import CommissionRounding, Rounding, commission, round_amount
from dicetable.games.state import Bet, TableState
from dicetable.rules.model import RulePack
from dicetable.rules.vocabulary import family_of
from dicetable.wagers.compiled import CompiledWager

TOGGLE_FAMILIES = frozenset({"place", "buy", "lay", "lose", "hard", "big", "odds"})
"""Multi-roll wagers a player may call on or off (working.player_may_toggle)."""

_COMEOUT_RULE = {f: f"working.comeout.{f}" for f in ("place", "buy", "lay", "lose", "hard",
                                                      "big")}


def working_rule(state: TableState, bet: Bet) -> str | None:
    """The rule deciding whether ``bet`` works on this roll, if any rule does."""
    if bet.working is not None:
        return "working.player_may_toggle"
    if state.point is not None:
        return None
    family = family_of(bet.layout_code)
    if family in _COMEOUT_RULE:
        return _COMEOUT_RULE[family]
    if family == "odds" and bet.base is not None:
        base = state.bets.get(bet.base)
        if base is not None and base.wager == "dontcome":
            return "working.comeout.dontcome_odds"
        if base is not None and (base.wager == "come" or base.wager.startswith("put")):
            return "working.comeout.come_odds"
    return None


def is_working(state: TableState, bet: Bet) -> bool:
    """Does ``bet`` act on the next roll? A player's own call wins over the table's policy."""
    if bet.working is not None:
        return bet.working
    rule = working_rule(state, bet)
    return True if rule is None else state.rules().flag(rule, True)


def commission_kind(wager: str) -> str | None:
    fam = family_of(wager) if not wager.startswith("odds:") else "odds"
    return fam if fam in ("buy", "lay") else None


def commission_for(pack: RulePack, wager: CompiledWager, amount: int) -> int:
    """The commission on a buy or lay bet of ``amount`` (buy: on the wager; lay: on the win)."""
    kind = commission_kind(wager.code)
    if kind is None:
        return 0
    base: Fraction | int = amount
    if kind == "lay":
        base = amount * max(wager.payouts)
    return commission(base, *_commission_terms(pack, kind))


@functools.lru_cache(maxsize=256)  # packs are immutable: their terms are read once
def _commission_terms(pack: RulePack, kind: str
                      ) -> tuple[Fraction, int, int, CommissionRounding]:
    """The rate, unit, minimum and rounding of a buy or lay commission."""
    return (pack.rate(f"commission.{kind}.rate"), int(pack.value(f"commission.{kind}.unit")),
            int(pack.value(f"commission.{kind}.minimum")), pack.commission_rounding(kind))


def commission_up_front(pack: RulePack, wager: str) -> bool:
    kind = commission_kind(wager)
    return kind is not None and pack.value(f"commission.{kind}.when") == "up-front"


def stake(pack: RulePack, wager: CompiledWager, amount: int) -> int:
    """What placing ``amount`` on ``wager`` takes from the player's balance: the amount, and
    the commission where it is paid up front (the engine's ``money.balance`` check)."""
    if commission_up_front(pack, wager.code):
        return amount + commission_for(pack, wager, amount)
    return amount


def change_cost(pack: RulePack, wager: CompiledWager, bet: Bet, amount: int) -> int:
    """What changing ``bet`` to ``amount`` takes from the player's balance: the difference,
    and the difference in a commission paid up front (the engine's ``money.balance`` check
    on a change, its last; ``server.controls`` relies on that)."""
    fee = 0
    if commission_up_front(pack, bet.wager):
        fee = commission_for(pack, wager, amount) - bet.commission
    return amount - bet.amount + fee


def payout_amount(pack: RulePack, stake: int, net: Fraction) -> tuple[int, int]:
    """The win on ``stake`` at ``net`` to 1, rounded per the pack, and the rounding applied."""
    exact = stake * net
    rounding = pack.payout_rounding
    unit = pack.payout_unit
    if rounding is Rounding.REFUSE:
        # Placement refused every unpayable amount, so only a whole cent count remains here.
        paid = round_amount(exact, 1, Rounding.CENT)
    else:
        paid = round_amount(exact, unit, rounding)
    return paid, paid - int(exact // 1)
