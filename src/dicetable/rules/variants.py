"""What the rules layer knows of each game variant: the rules its pack must define and the
wager families it offers. The games layer's hooks (``dicetable.games.variant``) carry the rest;
this module exists because the rules layer may not import the games layer.

>>> GAME_RULES["props-and-hops"].offers("double"), GAME_RULES["mini-craps"].offers("double")
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from dicetable.core.dice import POINTS

_CRAPS_FAMILIES = frozenset({"line", "odds", "put", "place", "lose", "buy", "lay", "big", "hard",
                             "fire", "bonus"})
_PROPS_AND_HOPS_FAMILIES = frozenset({"double"})


@dataclass(frozen=True)
class GameRules:
    name: str
    title: str
    required: frozenset[str]
    """Rules every pack of this game defines."""
    not_offered: frozenset[str]
    """Wager families the game does not have."""
    offer_references: frozenset[str] = frozenset()
    """The seats of reference from which the dice are first offered (``shooter.first_offer``):
    a Craps table counts from its boxperson or stickperson, a Mini-Craps table, which has
    neither, from its dealer."""
    points: tuple[int, ...] = POINTS
    """The totals that become the point on the come-out (and on which a come bet travels);
    the rest of 2, 3, 11, 12 decide a line bet on the come-out."""
    not_offered_codes: frozenset[str] = frozenset()
    """Single wagers of an offered family the game does not have."""

    def offers(self, family: str) -> bool:
        return family not in self.not_offered

    def offers_code(self, code: str, family: str) -> bool:
        return self.offers(family) and code not in self.not_offered_codes


class _Pack(Protocol):
    def get(self, rule_id: str, default: Any = None) -> Any: ...


def points_of(pack: _Pack) -> tuple[int, ...]:
    """The point numbers of the pack's game (read through ``get``, so a wager compiled from
    them is known to depend on the game).

    >>> from dicetable.rules.loader import load_preset
    >>> points_of(load_preset("pa-craps"))
    (4, 5, 6, 8, 9, 10)
    """
    facts = GAME_RULES.get(str(pack.get("game")))
    return facts.points if facts is not None else POINTS


_CRAPS_REQUIRED = frozenset(
    {"throw.line_bet_required", "noroll.excluded_grounds",
     "noroll.improper_callers", "authority.offer_dice", "authority.select_dice",
     "authority.remove_shooter",
     "authority.overturn_no_roll"} | {f"shooter.{k}" for k in (
         "dice_offered", "first_offer", "next_offer", "line_bet", "keeps_dice",
         "may_relinquish", "removal_grounds")})

_DECLARED = (
    GameRules("craps", "Craps", _CRAPS_REQUIRED, _PROPS_AND_HOPS_FAMILIES,
              frozenset({"left-of-boxperson", "left-of-stickperson"})),
    GameRules("mini-craps", "Mini-Craps", _CRAPS_REQUIRED, _PROPS_AND_HOPS_FAMILIES,
              frozenset({"left-of-dealer"})),
    GameRules("props-and-hops", "Props & Hops", frozenset(
        {"wagering.seated_only", "wagering.before_shake", "authority.shaker", "authority.shake",
         "shaker.min_shakes", "shaker.first_to", "shaker.passes_on", "shaker.six_eight_shake"}),
        _CRAPS_FAMILIES),
    # Crapless Craps: every total but 7 is a point, so the come-out has no craps and only 7
    # wins it; with nothing to bar, no Don't bets (nor Put, Lose, Lay, Fire or bonus bets,
    # whose tables are written for the six points).
    GameRules("crapless-craps", "Crapless Craps", _CRAPS_REQUIRED,
              _PROPS_AND_HOPS_FAMILIES | {"put", "lose", "lay", "fire", "bonus"},
              frozenset({"left-of-boxperson", "left-of-stickperson"}),
              points=(2, 3, 4, 5, 6, 8, 9, 10, 11, 12),
              not_offered_codes=frozenset({"dontpass", "dontcome"})),
)

GAME_RULES: dict[str, GameRules] = {g.name: g for g in _DECLARED}
GAMES: tuple[str, ...] = tuple(GAME_RULES)
