"""What the rules layer knows of each game variant: the rules its pack must define and the
wager families it offers. The games layer's hooks (``dicetable.games.variant``) carry the rest;
this module exists because the rules layer may not import the games layer.

>>> GAME_RULES["props-and-hops"].offers("double"), GAME_RULES["mini-craps"].offers("double")
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

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

    def offers(self, family: str) -> bool:
        return family not in self.not_offered


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
)

GAME_RULES: dict[str, GameRules] = {g.name: g for g in _DECLARED}
GAMES: tuple[str, ...] = tuple(GAME_RULES)
