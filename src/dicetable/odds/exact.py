"""Exact figures of a single wager, read from its compiled table.

>>> from dicetable.rules.loader import load_preset
>>> pack = load_preset("pa-craps")
>>> wager_odds(pack, "pass").house_edge
Fraction(7, 495)
>>> wager_odds(pack, "place6").house_edge
Fraction(1, 66)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from dicetable.core.money import percent
from dicetable.odds.markov import absorbing_values
from dicetable.rules.model import RulePack
from dicetable.wagers.compile import ODDS_LAY, ODDS_TAKE, compile_pack
from dicetable.wagers.compiled import CompiledWager, Outcome, Step


@dataclass(frozen=True)
class WagerOdds:
    """A wager's exact figures from one starting state, per unit staked."""

    code: str
    start: str
    expected: Fraction
    """Expected net result per unit staked, commission included (negative favours the house)."""
    house_edge: Fraction
    """Expected loss over the money put up (the stake plus any commission paid in advance)."""
    p_win: Fraction
    p_lose: Fraction
    p_push: Fraction
    expected_rolls: Fraction
    """Rolls until the wager is decided (1 for a one-roll wager)."""
    variance: Fraction
    commission: str = ""
    """'up-front' or 'on-win' for buy and lay bets; '' otherwise."""

    @property
    def p_decided_per_roll(self) -> Fraction:
        return 1 / self.expected_rolls

    @property
    def edge_per_roll(self) -> Fraction:
        """House edge per roll the wager is in action."""
        return self.house_edge / self.expected_rolls


def _adjusted(wager: CompiledWager, fee_on_win: Fraction) -> CompiledWager:
    """The wager with a commission taken from each win (``fee_on_win`` per unit staked)."""
    if not fee_on_win:
        return wager
    rows = tuple(
        tuple(Step(s.outcome, s.payout - fee_on_win, s.next_state)
              if s.outcome is Outcome.WIN else s for s in row)
        for row in wager.steps
    )
    return CompiledWager(wager.code, wager.name, wager.family, wager.states, rows, wager.start,
                         wager.payout_rules, wager.parts, wager.one_roll)


def commission_terms(pack: RulePack, wager: CompiledWager,
                     exact_rate: bool = True) -> tuple[Fraction, Fraction, str]:
    """(fee taken from a win, fee paid up front) per unit staked, and when it is taken.

    The exact rate is used (5% of the wager for a buy, 5% of the win for a lay): the edge of
    the rule, before rounding to the table's unit.
    """
    fam = wager.family
    if fam not in ("buy", "lay"):
        return Fraction(0), Fraction(0), ""
    rate = percent(pack.value(f"commission.{fam}.rate"))
    per_unit = rate if fam == "buy" else rate * max(wager.payouts)
    when = str(pack.value(f"commission.{fam}.when"))
    if when == "on-win":
        return per_unit, Fraction(0), when
    return Fraction(0), per_unit, when


def analyse(wager: CompiledWager, start: int, fee_on_win: Fraction = Fraction(0),
            fee_up_front: Fraction = Fraction(0), commission: str = "") -> WagerOdds:
    w = _adjusted(wager, fee_on_win)

    def won(s: Step) -> Fraction:
        return Fraction(1) if s.outcome is Outcome.WIN else Fraction(0)

    def lost(s: Step) -> Fraction:
        return Fraction(1) if s.outcome is Outcome.LOSE else Fraction(0)

    def pushed(s: Step) -> Fraction:
        return Fraction(1) if s.outcome is Outcome.PUSH else Fraction(0)

    ev = absorbing_values(w, lambda s: s.payout)[start] - fee_up_front
    second = absorbing_values(w, lambda s: (s.payout - fee_up_front) ** 2)[start]
    rolls = absorbing_values(w, lambda s: Fraction(0), per_roll=Fraction(1))[start]
    return WagerOdds(
        code=wager.code,
        start=wager.states[start],
        expected=ev,
        house_edge=-ev / (1 + fee_up_front),
        p_win=absorbing_values(w, won)[start],
        p_lose=absorbing_values(w, lost)[start],
        p_push=absorbing_values(w, pushed)[start],
        expected_rolls=rolls,
        variance=second - ev * ev,
        commission=commission,
    )


def wager_odds(pack: RulePack, code: str, start: str | None = None) -> WagerOdds:
    """Exact figures for wager ``code`` of ``pack``.

    ``start`` names the state it starts in: by default where a new wager starts on the
    come-out (or, for come bets and odds, the come box / the point named, e.g. 'on 4').
    """
    menu = compile_pack(pack)
    wager = menu[code] if code in menu else menu[ODDS_TAKE if code == "odds" else code]
    if start is not None:
        index = wager.state_index(start)
    elif wager.start:
        index = wager.start.get(None, next(iter(wager.start.values())))
    else:
        index = 0
    fee_win, fee_front, when = commission_terms(pack, wager)
    return analyse(wager, index, fee_win, fee_front, when)


__all__ = ["ODDS_LAY", "ODDS_TAKE", "WagerOdds", "analyse", "wager_odds"]
