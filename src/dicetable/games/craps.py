"""Craps and Mini-Craps: come-out and point, the puck, and a roll settled in three chores.

Mini-Craps is the same game with its own rule pack (58 Pa. Code ch. 623a covers both).
"""

from __future__ import annotations

from dicetable.core.errors import ProcedureViolation
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.engine import Emitter, Engine
from dicetable.games.state import Phase, TableState


class CrapsEngine(Engine):
    game = "craps"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._handlers[cmd.MovePuck] = self._move_puck

    @property
    def games(self) -> tuple[str, ...]:
        return ("craps", "mini-craps")

    def roll_allowed(self, state: TableState) -> None:
        if state.phase not in (Phase.BETTING, Phase.CLOSED):
            raise ProcedureViolation("settle the last roll before the next throw",
                                     rule="settlement.order",
                                     citation=state.rules().cite("settlement.order"))

    def after_no_roll(self, state: TableState, out: Emitter) -> None:
        # noroll.effect 'wagers-stand': the roll does not count and nothing moves.
        return

    def _move_puck(self, state: TableState, c: cmd.MovePuck, out: Emitter) -> None:
        self._pending_step(state, 2, "move the puck")
        pending = state.pending
        assert pending is not None
        out.emit(ev.PuckMoved, rule=state.rules().cite("settlement.order"),
                 point=pending.point_after, moves=pending.moves, seven_out=pending.seven_out)
