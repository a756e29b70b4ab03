"""Craps and Mini-Craps: come-out and point, the puck, and a roll settled in three chores.

Mini-Craps is the same game with its own rule pack (58 Pa. Code ch. 623a covers both).
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.core.dice import Roll
from dicetable.core.errors import ProcedureViolation
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.catalogue import DiceAtTable, Variant, decides, register
from dicetable.games.engine import Emitter, Engine, at_step, plays
from dicetable.games.settlement import next_point
from dicetable.games.state import Phase, TableState
from dicetable.rules.model import RulePack


class CrapsEngine(Engine):
    game = "craps"

    @property
    def games(self) -> tuple[str, ...]:
        return ("craps", "mini-craps")

    def roll_allowed(self, state: TableState) -> None:
        if state.phase not in (Phase.BETTING, Phase.CLOSED):
            raise ProcedureViolation("settle the last roll before the next throw",
                                     rule="settlement.order",
                                     citation=state.rules().cite("settlement.order"))

    @decides(cmd.MovePuck, needs=at_step(2))
    def _move_puck(self, state: TableState, c: cmd.MovePuck, out: Emitter) -> None:
        pending = self._pending_step(state, 2, "move the puck")
        out.emit(ev.PuckMoved, rule=state.rules().cite("settlement.order"),
                 point=pending.point_after, moves=pending.moves, seven_out=pending.seven_out)


_SHOOTER_RULES = frozenset(
    {"throw.line_bet_required", "noroll.excluded_grounds",
     "noroll.improper_callers", "authority.offer_dice", "authority.select_dice",
     "authority.remove_shooter",
     "authority.overturn_no_roll"} | {f"shooter.{k}" for k in (
         "dice_offered", "first_offer", "next_offer", "line_bet", "keeps_dice",
         "may_relinquish", "removal_grounds")})


class Craps(Variant):
    """Craps: come-out and point, a shooter with the dice, the puck moved after each roll."""

    name: ClassVar[str] = "craps"
    title: ClassVar[str] = "Craps"
    has_shooter: ClassVar[bool] = True
    staffing_rule: ClassVar[str] = "staffing.craps"
    closed_rule: ClassVar[str] = "wagering.late_bets"
    final_chore: ClassVar[type[cmd.Command]] = cmd.MovePuck
    round_ends: ClassVar[tuple[str, ...]] = ("PuckMoved", "NoRollCalled")
    after_no_roll: ClassVar[Phase] = Phase.BETTING
    has_puck: ClassVar[bool] = True
    layout: ClassVar[str] = "craps"
    final_chore_label: ClassVar[str] = "Move the puck"
    required_rules: ClassVar[frozenset[str]] = _SHOOTER_RULES
    not_offered: ClassVar[frozenset[str]] = frozenset({"double"})
    offer_references: ClassVar[frozenset[str]] = frozenset(
        {"left-of-boxperson", "left-of-stickperson"})

    def next_point(self, point: int | None, roll: Roll) -> tuple[int | None, bool]:
        return next_point(point, roll, self.points)

    def round_label(self, hand: int, hand_rolls: int, round_no: int) -> str:
        return f"hand {hand}, roll {hand_rolls + 1}"

    def before_throw(self, p: DiceAtTable, pack: RulePack) -> None:
        if p.shooter is None:
            raise ProcedureViolation("there is no shooter; offer the dice first",
                                     rule="authority.offer_dice",
                                     citation=pack.cite("authority.offer_dice"))
        if len(p.shooter_dice) != 2:
            raise ProcedureViolation("the shooter throws two selected dice",
                                     rule="shooter.dice_offered",
                                     citation=pack.cite("shooter.dice_offered"))

    def thrown(self, p: DiceAtTable, serials: tuple[str, ...], thrower: str | None,
               facts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if thrower and thrower != p.shooter and "thrown-by-non-shooter" not in facts:
            facts += ("thrown-by-non-shooter",)
        return serials or p.shooter_dice, facts


class MiniCraps(Craps):
    """Mini-Craps: Craps on a smaller table with its own pack (58 Pa. Code ch. 623a)."""

    name: ClassVar[str] = "mini-craps"
    title: ClassVar[str] = "Mini-Craps"
    staffing_rule: ClassVar[str] = "staffing.mini_craps"
    offer_references: ClassVar[frozenset[str]] = frozenset({"left-of-dealer"})
    """With neither boxperson nor stickperson, the dice are first offered from the dealer."""


CRAPS = register(Craps())
MINI_CRAPS = register(MiniCraps())
plays(CRAPS, CrapsEngine)
plays(MINI_CRAPS, CrapsEngine)
