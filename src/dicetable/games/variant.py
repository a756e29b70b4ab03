"""Game variants: how Craps, Mini-Craps and Props & Hops differ, as hooks (python-chess style).

Every difference between the games lives in its variant, declared in the game's own module
(``dicetable.games.craps``, ``dicetable.games.props_hops``). Everything else asks the
variant of the table (``variant_of(state.game)``) and never compares the game's name; the
check in ``tools/check_one_declaration.py`` keeps it so.

>>> variant_of("props-and-hops").has_shaker, variant_of("mini-craps").has_shooter
(True, True)
>>> variant_of("baccarat")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: no game variant 'baccarat' (craps, ...) [rule game]
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.core.dice import Roll
from dicetable.core.errors import InvalidInput
from dicetable.games import commands as cmd
from dicetable.games.phase import Phase


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

    def next_point(self, point: int | None, roll: Roll) -> tuple[int | None, bool]:
        """The puck after ``roll`` and whether it was a seven-out (no puck: None, False)."""
        return None, False

    def round_label(self, hand: int, hand_rolls: int, round_no: int) -> str:
        return f"round {round_no}"


_REGISTRY: dict[str, Variant] = {}


def register(variant: Variant) -> Variant:
    """Declare a variant (its module calls this once)."""
    _REGISTRY[variant.name] = variant
    return variant


def variant_of(game: str) -> Variant:
    """The variant a table of ``game`` plays."""
    found = _REGISTRY.get(game)
    if found is None:
        raise InvalidInput(f"no game variant {game!r} ({', '.join(sorted(_REGISTRY))})",
                           rule="game")
    return found


def variants() -> tuple[Variant, ...]:
    return tuple(_REGISTRY[name] for name in sorted(_REGISTRY))
