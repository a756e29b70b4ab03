"""Exact figures of a single wager, read from its compiled table.

Each wager is modelled *in action*: every roll counts, as in the published tables (a place bet
that is off on the come-out is not in action then). ``dicetable.odds.layout`` models wagers
jointly with the table's puck and the pack's working rules instead.

>>> from dicetable.rules.loader import load_preset
>>> pack = load_preset("pa-craps")
>>> wager_odds(pack, "pass").house_edge
Fraction(7, 495)
>>> wager_odds(pack, "dontpass").house_edge, wager_odds(pack, "dontpass").p_push
(Fraction(3, 220), Fraction(1, 36))
>>> wager_odds(pack, "place6").house_edge, wager_odds(pack, "place6").edge_per_roll
(Fraction(1, 66), Fraction(1, 216))
>>> wager_odds(pack, "buy4").house_edge, wager_odds(pack, "buy4", commission="on-win").house_edge
(Fraction(1, 21), Fraction(1, 60))
>>> wager_odds(pack, "lay4").house_edge, wager_odds(pack, "lay6").house_edge
(Fraction(1, 41), Fraction(1, 25))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from dicetable.core.money import percent
from dicetable.odds.markov import Decision, absorption
from dicetable.rules.model import RulePack
from dicetable.wagers.compile import (
    ODDS_LAY,
    ODDS_TAKE,
    CompiledWager,
    Outcome,
    compile_pack,
    menu_wager,
)

COMMISSION_WHEN = ("up-front", "on-win")


class _Figures(Protocol):
    @property
    def house_edge(self) -> Fraction: ...
    @property
    def expected_rolls(self) -> Fraction: ...
    @property
    def variance(self) -> Fraction: ...


class PerRoll:
    """What follows from exact figures, a wager's or a layout's: the edge per roll in action
    and the spread of the net result."""

    @property
    def edge_per_roll(self: _Figures) -> Fraction:
        """House edge per roll in action: the edge over the expected rolls."""
        return self.house_edge / self.expected_rolls

    @property
    def std_dev(self: _Figures) -> float:
        """Standard deviation of the net result (irrational, so a float)."""
        return math.sqrt(self.variance)


@dataclass(frozen=True)
class WagerOdds(PerRoll):
    """A wager's exact figures from one starting state, per unit staked."""

    code: str
    name: str
    start: str
    expected: Fraction
    """Expected net result per unit staked, commission included (negative favours the house)."""
    house_edge: Fraction
    """Expected loss per wager resolved, over the money put up (the stake plus any commission
    paid in advance)."""
    p_win: Fraction
    p_lose: Fraction
    p_push: Fraction
    p_resolve_next_roll: Fraction
    """Chance the wager is decided by the very next roll."""
    expected_rolls: Fraction
    """Rolls in action until the wager is decided (1 for a one-roll wager)."""
    variance: Fraction
    """Variance of the net result per unit staked, commission included."""
    commission: str = ""
    """'up-front' or 'on-win' for buy and lay bets; '' otherwise."""
    fee: Fraction = Fraction(0)
    """Commission per unit staked on each decision (up front), or on each win (on-win)."""

    @property
    def p_decided_per_roll(self) -> Fraction:
        """Long-run chance that a roll decides the wager (one over the expected rolls)."""
        return 1 / self.expected_rolls


def commission_terms(pack: RulePack, wager: CompiledWager,
                     when: str | None = None) -> tuple[Fraction, Fraction, str]:
    """(fee taken from a win, fee paid up front) per unit staked, and when it is taken.

    The exact rate is used (5% of the wager for a buy, 5% of the win for a lay): the edge of
    the rule, before rounding to the table's unit. ``when`` overrides the pack's
    ``commission.<kind>.when`` to compare the two practices.
    """
    fam = wager.family
    if fam not in ("buy", "lay"):
        return Fraction(0), Fraction(0), ""
    rate = percent(pack.value(f"commission.{fam}.rate"))
    per_unit = rate if fam == "buy" else rate * max(wager.payouts)
    when = when or str(pack.value(f"commission.{fam}.when"))
    if when not in COMMISSION_WHEN:
        raise ValueError(f"commission is taken {' or '.join(COMMISSION_WHEN)}, not {when!r}")
    if when == "on-win":
        return per_unit, Fraction(0), when
    return Fraction(0), per_unit, when


def figures(wager: CompiledWager, start: int, dist: dict[Decision, Fraction], rolls: Fraction,
            fee_on_win: Fraction = Fraction(0), fee_up_front: Fraction = Fraction(0),
            commission: str = "") -> WagerOdds:
    """The figures of a wager from its decision distribution (see ``markov.absorption``)."""
    ev = Fraction(0)
    second = Fraction(0)
    p = {o: Fraction(0) for o in (Outcome.WIN, Outcome.LOSE, Outcome.PUSH)}
    for (outcome, payout), prob in dist.items():
        net = payout - (fee_on_win if outcome is Outcome.WIN else 0) - fee_up_front
        ev += prob * net
        second += prob * net * net
        p[outcome] += prob
    first = sum((Fraction(1, 36) for st in wager.steps[start] if st.decided), Fraction(0))
    return WagerOdds(
        code=wager.code, name=wager.name, start=wager.states[start], expected=ev,
        house_edge=-ev / (1 + fee_up_front), p_win=p[Outcome.WIN], p_lose=p[Outcome.LOSE],
        p_push=p[Outcome.PUSH], p_resolve_next_roll=first, expected_rolls=rolls,
        variance=second - ev * ev, commission=commission,
        fee=fee_on_win if commission == "on-win" else fee_up_front,
    )


def analyse(wager: CompiledWager, start: int, fee_on_win: Fraction = Fraction(0),
            fee_up_front: Fraction = Fraction(0), commission: str = "") -> WagerOdds:
    dist, rolls = absorption(wager, start)
    return figures(wager, start, dist, rolls, fee_on_win, fee_up_front, commission)


def default_start(wager: CompiledWager) -> int:
    """Where a new wager starts: on the come-out, else its first placeable state (come box)."""
    if wager.start:
        return wager.start.get(None, next(iter(wager.start.values())))
    return 0


def resolve_code(pack: RulePack, code: str) -> CompiledWager:
    if code == "odds":
        code = ODDS_TAKE
    try:
        return menu_wager(pack, code)  # this wager alone, not the whole menu
    except KeyError:
        from dicetable.core.errors import IllegalWager

        raise IllegalWager(f"{code!r} is not on the wager menu of {pack.id}", rule="menu",
                           citation=pack.cite("menu.line")) from None


def wager_odds(pack: RulePack, code: str, start: str | None = None,
               commission: str | None = None) -> WagerOdds:
    """Exact figures for wager ``code`` of ``pack``.

    ``start`` names the state it starts in: by default where a new wager starts on the
    come-out (or, for come bets and odds, the come box / the first point, 'on 4').
    ``commission`` ('up-front' or 'on-win') overrides the pack's rule for buy and lay bets.
    """
    wager = resolve_code(pack, code)
    index = default_start(wager) if start is None else wager.state_index(start)
    fee_win, fee_front, when = commission_terms(pack, wager, commission)
    return analyse(wager, index, fee_win, fee_front, when)


def pack_odds(pack: RulePack) -> list[WagerOdds]:
    """Every wager on the pack's menu, exactly; the odds once per point.

    Each wager's decision distribution is solved once; buy and lay bets are reported with the
    pack's commission practice (``alternative_commission`` gives the other one).
    """
    out: list[WagerOdds] = []
    for code, wager in compile_pack(pack).items():
        starts = range(len(wager.states)) if code in (ODDS_TAKE, ODDS_LAY) \
            else (default_start(wager),)
        for start in starts:
            dist, rolls = absorption(wager, start)
            fee_win, fee_front, when = commission_terms(pack, wager)
            out.append(figures(wager, start, dist, rolls, fee_win, fee_front, when))
    return out


def alternative_commission(pack: RulePack, odds: WagerOdds) -> WagerOdds | None:
    """The same buy or lay bet with its commission taken the other way, or None."""
    if not odds.commission:
        return None
    other = COMMISSION_WHEN[1 - COMMISSION_WHEN.index(odds.commission)]
    return wager_odds(pack, odds.code, odds.start, other)


__all__ = ["ODDS_LAY", "ODDS_TAKE", "WagerOdds", "alternative_commission", "analyse",
           "commission_terms", "pack_odds", "wager_odds"]
