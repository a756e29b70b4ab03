"""A strategy that keeps every wager of a pack up at once: the simulator's self-check.

Each wager is bet at the smallest amount the pack accepts whose commission is exactly its rate
(so that the realised edge can be held against the exact one); line bets carry odds.

>>> from dicetable.rules.loader import load_preset
>>> s = every_wager(load_preset("pa-craps"))
>>> [(b.wager, b.amounts[0]) for b in s.bets][:3]
[('pass', 500), ('dontpass', 500), ('come', 500)]
>>> next(b.amounts[0] for b in s.bets if b.wager == "buy4")   # 5% of $20 is the $1 minimum
2000
"""

from __future__ import annotations

from fractions import Fraction

from dicetable.core.errors import DicetableError
from dicetable.games.engine import commission_for, commission_kind
from dicetable.rules.model import RulePack
from dicetable.rules.variants import points_of
from dicetable.sim.strategy import BetSpec, SessionSpec, Strategy, check_amount
from dicetable.wagers.compile import ODDS_LAY, ODDS_TAKE, compile_pack


def smallest_amount(pack: RulePack, code: str, limit: int = 1_000_00) -> int:
    """The smallest amount of ``code`` the pack accepts, with an exact-rate commission."""
    wager = compile_pack(pack)[code]
    limits, _ = pack.limits(code)
    kind = commission_kind(code)
    amount = limits.minimum
    while amount <= limit:
        try:
            check_amount(pack, wager, amount, code)
        except DicetableError:
            amount += limits.unit
            continue
        if kind is None:
            return amount
        rate = pack.rate(f"commission.{kind}.rate")
        base = amount * (max(wager.payouts) if kind == "lay" else 1)
        if commission_for(pack, wager, amount) == base * rate:
            return amount
        amount += limits.unit
    raise ValueError(f"no amount up to {limit} cents works for {code}")


def every_wager(pack: RulePack, odds: Fraction = Fraction(2)) -> Strategy:
    """Every wager of ``pack`` on the layout, always (odds behind the four line bets)."""
    bets = []
    for code in compile_pack(pack):
        if code in (ODDS_TAKE, ODDS_LAY):
            continue
        amount = smallest_amount(pack, code)
        multiples = {}
        if code in ("pass", "dontpass", "come", "dontcome") and pack.offers("odds"):
            lay = code.startswith("dont")
            # Laid odds: 6x the flat bet pays exactly on every point (1:2, 2:3, 5:6).
            multiples = dict.fromkeys(points_of(pack), Fraction(6) if lay else odds)
        bets.append(BetSpec(code, code, (amount,), odds_multiples=multiples))
    return Strategy(f"every wager of {pack.id}", pack, tuple(bets), SessionSpec())


__all__ = ["every_wager", "smallest_amount"]
