"""What a wager costs a player in expectation, per unit staked, from the pack's own paytable.

Two ways of counting, as the spec asks (spec/table-bank.md §7 item 3), both exact in
expectation because a player can act only between rolls:

- **per roll** - a wager that stands in one state and may be taken down or left off (place,
  buy, lay, lose, hardways, big 6/8, field, every one-roll proposition): the expected loss of
  one roll in action, so its theo is amount x per-roll rate x rolls it actually worked (a
  one-roll bet works one roll: its edge);
- **held** - a contract or multi-state wager (pass, come, don't pass, don't come, put, odds,
  Fire, the bonus bets): the expected loss from the state it is in until it is decided, booked
  when placed; taking it down (or reducing it) in a state books back what the player gave up
  there (a don't pass taken down on its point adds the value of the don't on that point).
  Odds at true odds come out at zero by themselves.

Both are read from the compiled wager through the odds engine (``dicetable.odds.exact``):
commission is counted at the pack's exact rate and practice, before rounding to the table's
unit, as the odds engine counts it.

>>> from dicetable.rules.loader import load_preset
>>> rates = TheoRates(load_preset("pa-craps"))
>>> rates.per_roll("place6"), rates.per_roll("field"), rates.per_roll("pass")
(Fraction(1, 216), Fraction(1, 18), None)
>>> rates.held("pass", 0), rates.held("odds:take", 0), rates.held("dontpass", 1)
(Fraction(7, 495), Fraction(0, 1), Fraction(-1, 3))
"""

from __future__ import annotations

from fractions import Fraction

from dicetable.odds.exact import WagerOdds, analyse, commission_terms
from dicetable.rules.model import RulePack
from dicetable.wagers.compile import CompiledWager, compile_pack

CONTRACT_FAMILIES = frozenset({"line", "put"})
"""Line bets are rated when placed even where they stand in one state (a put bet)."""


class TheoRates:
    """The per-unit rates of one pack's wagers, each worked out once, when first asked."""

    def __init__(self, pack: RulePack) -> None:
        self.pack = pack
        self._wagers = compile_pack(pack)
        self._per_roll: dict[str, Fraction | None] = {}
        self._held: dict[tuple[str, int], Fraction] = {}

    def wager(self, code: str) -> CompiledWager:
        return self._wagers[code]

    def rated_per_roll(self, code: str) -> bool:
        """Is ``code`` rated per roll in action (else: held, from its state to its decision)?"""
        wager = self._wagers[code]
        return len(wager.states) == 1 and wager.family not in CONTRACT_FAMILIES

    def per_roll(self, code: str) -> Fraction | None:
        """Expected loss per unit staked per roll in action; None for a held wager."""
        if code not in self._per_roll:
            rate: Fraction | None = None
            if self.rated_per_roll(code):
                odds = self._analyse(code, 0)
                rate = -odds.expected / odds.expected_rolls
            self._per_roll[code] = rate
        return self._per_roll[code]

    def held(self, code: str, state: int) -> Fraction:
        """Expected loss per unit staked of a wager standing in ``state`` until decided
        (negative where the player is favoured from there, as a don't bet on its point)."""
        key = (code, state)
        if key not in self._held:
            self._held[key] = -self._analyse(code, state).expected
        return self._held[key]

    def _analyse(self, code: str, state: int) -> WagerOdds:
        wager = self._wagers[code]
        fee_win, fee_front, when = commission_terms(self.pack, wager)
        return analyse(wager, state, fee_win, fee_front, when)
