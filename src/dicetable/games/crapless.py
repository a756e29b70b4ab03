"""Crapless Craps: Craps where every total but 7 is a point (a house game, industry default).

On the come-out only 7 wins a Pass bet and 2, 3, 11 and 12 become points like 4 to 10; there
is nothing to bar, so the game has no Don't bets. What the rules layer needs of it (the
point numbers, the wagers it does not offer) is its entry in ``dicetable.rules.variants``; the
felt, the paytables and the limits are its pack's (``crapless-craps``).

>>> from dicetable.core.dice import Roll
>>> CRAPLESS.next_point(None, Roll(1, 1)), CRAPLESS.next_point(None, Roll(5, 6))
((2, False), (11, False))
>>> CRAPLESS.next_point(None, Roll(3, 4)), CRAPLESS.next_point(2, Roll(3, 4))
((None, False), (None, True))
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.games.craps import Craps, CrapsEngine
from dicetable.games.engine import plays
from dicetable.games.variant import register


class CraplessEngine(CrapsEngine):
    game = "crapless-craps"

    @property
    def games(self) -> tuple[str, ...]:
        return (self.game,)


class CraplessCraps(Craps):
    """Crapless Craps: the Craps procedure with ten points and no Don't side."""

    name: ClassVar[str] = "crapless-craps"
    title: ClassVar[str] = "Crapless Craps"


CRAPLESS = register(CraplessCraps())
plays(CRAPLESS, CraplessEngine)
