"""Game variants: how Craps, Mini-Craps, Crapless Craps and Props & Hops differ, as hooks
(python-chess style).

Every difference between the games lives in its variant, declared in the game's own module
(``dicetable.games.craps``, ``dicetable.games.crapless``, ``dicetable.games.props_hops``):
its facts (shooter or shaker, puck, felt, point numbers, what ends a round), which the pages
read from the view (``facts``); what its pack must hold (the rules it needs, the wagers it
lacks), which ``dicetable.games.packs`` checks at pack load and from which the wagers compile;
and the live procedure's hooks (``before_throw`` ...). Everything else asks the
variant of the table (``variant_of(state.game)``) and never compares the game's name, in
Python or JavaScript; ``tools/check_game_names.py`` keeps it so.

>>> variant_of("props-and-hops").has_shaker, variant_of("mini-craps").has_shooter
(True, True)
>>> variant_of("baccarat")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: no game variant 'baccarat' (crapless-craps, ...) [rule game]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from dicetable.core.dice import POINTS, Roll
from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games.catalogue import CATALOGUE
from dicetable.games.phase import Phase
from dicetable.rules.model import RulePack


class DiceAtTable(Protocol):
    """What a variant's procedure hooks read of the table's live procedure
    (``dicetable.table.procedure_state.Procedure``)."""

    @property
    def dice(self) -> Mapping[str, str]: ...
    @property
    def shooter(self) -> str | None: ...
    @property
    def shooter_dice(self) -> tuple[str, ...]: ...
    @property
    def shaker(self) -> str: ...
    @property
    def dealer_shook(self) -> bool: ...
    def holds(self, person: str, role: Role) -> bool: ...


class Variant:
    """The hooks a game fills in. One instance per game name, registered by its module."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    has_shooter: ClassVar[bool] = False
    """Craps: a shooter is offered the dice and keeps them until a seven-out."""
    has_shaker: ClassVar[bool] = False
    """Props & Hops: a covered shaker, loaded in a dealer's presence, passed after a 7."""
    closed_rule: ClassVar[str] = "wagering.late_bets"
    """The rule that refuses a wager while betting is closed."""
    final_chore: ClassVar[type[cmd.Command]] = cmd.MovePuck
    """The last settlement chore of a roll."""
    round_ends: ClassVar[tuple[str, ...]] = ()
    """Event kinds that end a round (for recall)."""
    after_no_roll: ClassVar[Phase] = Phase.BETTING
    """Where the table stands after a no roll."""
    staffing_rule: ClassVar[str] = ""
    """The table-bank rule of the crew this game needs while it runs (58 Pa. Code
    § 465a.35(b)); "" when the bank packs set none."""
    has_puck: ClassVar[bool] = False
    """Craps: a point, marked by the puck, carries from roll to roll."""
    layout: ClassVar[str] = ""
    """Which felt the pages draw (``craps`` or ``props``); its numbers are ``points``."""
    final_chore_label: ClassVar[str] = ""
    """The last settlement chore, as the dealer's console names it."""
    points: ClassVar[tuple[int, ...]] = POINTS
    """The totals that become the point on the come-out (and on which a come bet travels);
    the rest of 2, 3, 11, 12 decide a line bet on the come-out. The line bets compile from
    them."""
    required_rules: ClassVar[frozenset[str]] = frozenset()
    """Rules every pack of this game defines."""
    not_offered: ClassVar[frozenset[str]] = frozenset()
    """Wager families the game does not have."""
    not_offered_codes: ClassVar[frozenset[str]] = frozenset()
    """Single wagers of an offered family the game does not have."""
    offer_references: ClassVar[frozenset[str]] = frozenset()
    """The seats of reference from which the dice are first offered (``shooter.first_offer``);
    empty where the game has no shooter."""

    def offers(self, family: str) -> bool:
        return family not in self.not_offered

    def offers_code(self, code: str, family: str) -> bool:
        return self.offers(family) and code not in self.not_offered_codes

    def next_point(self, point: int | None, roll: Roll) -> tuple[int | None, bool]:
        """The puck after ``roll`` and whether it was a seven-out (no puck: None, False)."""
        return None, False

    def round_label(self, hand: int, hand_rolls: int, round_no: int) -> str:
        return f"round {round_no}"

    # -- the live procedure's hooks (dicetable.table.procedure asks them, never the game) ---
    def before_throw(self, p: DiceAtTable, pack: RulePack) -> None:
        """Refuse a throw recorded before the dice are ready for it."""

    def before_close(self, p: DiceAtTable, pack: RulePack) -> None:
        """Refuse 'no more bets' before the dice are ready for the round."""

    def thrown(self, p: DiceAtTable, serials: tuple[str, ...], thrower: str | None,
               facts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The dice a recorded throw used (``serials``, or those in play) and its facts."""
        return serials, facts

    def dice_keepers(self, pack: RulePack) -> tuple[frozenset[Role], str]:
        """Who answers for the dice at the table, and how a refusal says so."""
        keepers = pack.roles("authority.dice")
        return keepers, ("nobody else here may handle them "
                         f"({', '.join(sorted(r.value for r in keepers))})")

    def check_brought(self, p: DiceAtTable, pack: RulePack, serials: tuple[str, ...],
                      witness: str | None, actor: str) -> None:
        """Refuse dice brought to the table in a way the game does not allow."""

    def dice_change_closed(self, phase: Phase) -> bool:
        """Whether the dice may not be changed in ``phase`` (a roll being settled)."""
        return phase is Phase.SETTLING

    def facts(self) -> dict[str, Any]:
        """What the pages need to know of the game, so none of them compares its name.

        >>> f = variant_of("props-and-hops").facts()
        >>> f["layout"], f["has_shaker"], f["round_ends"], f["final_chore"]["route"]
        ('props', True, ['RoundCompleted'], 'complete-round')
        """
        known = _FACTS.get(self.name)
        if known is not None:
            return dict(known)
        chore = CATALOGUE.of(self.final_chore)
        known = _FACTS[self.name] = {
                "name": self.name, "title": self.title, "has_shooter": self.has_shooter,
                "has_shaker": self.has_shaker, "has_puck": self.has_puck,
                "layout": self.layout, "points": list(self.points),
                "round_ends": list(self.round_ends),
                "final_chore": {"command": chore.name, "route": chore.route,
                                "label": self.final_chore_label}}
        return dict(known)


_REGISTRY: dict[str, Variant] = {}
_FACTS: dict[str, dict[str, Any]] = {}


def register(variant: Variant) -> Variant:
    """Declare a variant (its module calls this once)."""
    _REGISTRY[variant.name] = variant
    return variant


def known_variant(game: str) -> Variant | None:
    """The variant of ``game``, or None when no module declares it."""
    return _REGISTRY.get(game)


def variant_of(game: str) -> Variant:
    """The variant a table of ``game`` plays."""
    found = _REGISTRY.get(game)
    if found is None:
        raise InvalidInput(f"no game variant {game!r} ({', '.join(sorted(_REGISTRY))})",
                           rule="game")
    return found


def variants() -> tuple[Variant, ...]:
    return tuple(_REGISTRY[name] for name in sorted(_REGISTRY))
