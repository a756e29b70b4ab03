"""Craps and Mini-Craps: come-out and point, the puck, and a roll settled in three chores.

Mini-Craps is the same game with its own rule pack (58 Pa. Code ch. 623a covers both).
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.core.dice import Roll
from dicetable.core.errors import ProcedureViolation
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.catalogue import decides
from dicetable.games.engine import Emitter, Engine, plays
from dicetable.games.settlement import next_point
from dicetable.games.state import Phase, TableState
from dicetable.games.variant import Variant, register


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

    @decides(cmd.MovePuck)
    def _move_puck(self, state: TableState, c: cmd.MovePuck, out: Emitter) -> None:
        self._pending_step(state, 2, "move the puck")
        pending = state.pending
        assert pending is not None
        out.emit(ev.PuckMoved, rule=state.rules().cite("settlement.order"),
                 point=pending.point_after, moves=pending.moves, seven_out=pending.seven_out)


class Craps(Variant):
    """Craps: come-out and point, a shooter with the dice, the puck moved after each roll."""

    name: ClassVar[str] = "craps"
    title: ClassVar[str] = "Craps"
    has_shooter: ClassVar[bool] = True
    closed_rule: ClassVar[str] = "wagering.late_bets"
    final_chore: ClassVar[type[cmd.Command]] = cmd.MovePuck
    round_ends: ClassVar[tuple[str, ...]] = ("PuckMoved", "NoRollCalled")
    after_no_roll: ClassVar[Phase] = Phase.BETTING

    def next_point(self, point: int | None, roll: Roll) -> tuple[int | None, bool]:
        return next_point(point, roll)

    def round_label(self, hand: int, hand_rolls: int, round_no: int) -> str:
        return f"hand {hand}, roll {hand_rolls + 1}"


class MiniCraps(Craps):
    """Mini-Craps: Craps on a smaller table with its own pack (58 Pa. Code ch. 623a)."""

    name: ClassVar[str] = "mini-craps"
    title: ClassVar[str] = "Mini-Craps"


CRAPS = register(Craps())
MINI_CRAPS = register(MiniCraps())
plays(CRAPS, CrapsEngine)
plays(MINI_CRAPS, CrapsEngine)
