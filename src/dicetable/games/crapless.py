"""Crapless Craps: Craps where every total but 7 is a point (a house game, industry default).

On the come-out only 7 wins a Pass bet and 2, 3, 11 and 12 become points like 4 to 10; there
is nothing to bar, so the game has no Don't bets. Its point numbers and the wagers it does not
offer are its variant's facts below (the wagers compile from them and its pack is checked
against them); the felt, the paytables and the limits are its pack's (``crapless-craps``).

>>> from dicetable.core.dice import Roll
>>> CRAPLESS.next_point(None, Roll(1, 1)), CRAPLESS.next_point(None, Roll(5, 6))
((2, False), (11, False))
>>> CRAPLESS.next_point(None, Roll(3, 4)), CRAPLESS.next_point(2, Roll(3, 4))
((None, False), (None, True))
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.games.catalogue import register
from dicetable.games.craps import Craps, CrapsEngine
from dicetable.games.engine import plays


class CraplessEngine(CrapsEngine):
    game = "crapless-craps"

    @property
    def games(self) -> tuple[str, ...]:
        return (self.game,)


class CraplessCraps(Craps):
    """Crapless Craps: the Craps procedure with ten points and no Don't side."""

    name: ClassVar[str] = "crapless-craps"
    title: ClassVar[str] = "Crapless Craps"
    points: ClassVar[tuple[int, ...]] = (2, 3, 4, 5, 6, 8, 9, 10, 11, 12)
    # With nothing to bar, no Don't bets (nor Put, Lose, Lay, Fire or bonus bets, whose
    # tables are written for the six points).
    not_offered: ClassVar[frozenset[str]] = Craps.not_offered | {
        "put", "lose", "lay", "fire", "bonus"}
    not_offered_codes: ClassVar[frozenset[str]] = frozenset({"dontpass", "dontcome"})


CRAPLESS = register(CraplessCraps())
plays(CRAPLESS, CraplessEngine)
