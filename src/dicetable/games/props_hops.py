"""Props & Hops: rounds of one-roll wagers made before the shake (58 Pa. Code 668a.2, 585.3).

A round: wagers, 'no more bets', the shake, the result (or a no roll that returns every
wager), losers collected, winners paid, round complete.
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.core.errors import ProcedureViolation
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.catalogue import decides
from dicetable.games.engine import Emitter, Engine, plays
from dicetable.games.fold import returns_follow
from dicetable.games.state import Phase, TableState
from dicetable.games.variant import Variant, register


class PropsHopsEngine(Engine):
    game = "props-and-hops"

    def roll_allowed(self, state: TableState) -> None:
        if state.phase is not Phase.CLOSED:
            raise ProcedureViolation("the dice are shaken after 'no more bets'",
                                     rule="wagering.before_shake",
                                     citation=state.rules().cite("wagering.before_shake"))

    def after_no_roll(self, state: TableState, out: Emitter) -> None:
        """585.3(f)-(g): a no roll returns every wager (``noroll.effect``), and the round is
        over: at once where nothing is to be returned, else once the wagers are back."""
        if not returns_follow(state):
            self.after_return(state, out)

    def after_return(self, state: TableState, out: Emitter) -> None:
        out.emit(ev.RoundCompleted, rule=state.rules().cite("noroll.effect"),
                 round=state.round, total=None)

    @decides(cmd.CompleteRound)
    def _complete(self, state: TableState, c: cmd.CompleteRound, out: Emitter) -> None:
        self._pending_step(state, 2, "complete the round")
        pending = state.pending
        assert pending is not None
        out.emit(ev.RoundCompleted, rule=state.rules().cite("settlement.order"),
                 round=state.round, total=pending.roll.total)


class PropsAndHops(Variant):
    """Props & Hops: rounds of one-roll wagers, a covered shaker passed on a 7 (668a, 585)."""

    name: ClassVar[str] = "props-and-hops"
    title: ClassVar[str] = "Props & Hops"
    has_shaker: ClassVar[bool] = True
    closed_rule: ClassVar[str] = "wagering.before_shake"
    final_chore: ClassVar[type[cmd.Command]] = cmd.CompleteRound
    round_ends: ClassVar[tuple[str, ...]] = ("RoundCompleted",)
    after_no_roll: ClassVar[Phase] = Phase.CLOSED

PROPS_AND_HOPS = register(PropsAndHops())
plays(PROPS_AND_HOPS, PropsHopsEngine)
