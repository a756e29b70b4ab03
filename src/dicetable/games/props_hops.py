"""Props & Hops: rounds of one-roll wagers made before the shake (58 Pa. Code 668a.2, 585.3).

A round: wagers, 'no more bets', the shake, the result (or a no roll that returns every
wager), losers collected, winners paid, round complete.
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.catalogue import DiceAtTable, Variant, decides, register
from dicetable.games.engine import Emitter, Engine, at_step, plays
from dicetable.games.fold import returns_follow
from dicetable.games.state import Phase, TableState
from dicetable.rules.model import RulePack


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

    @decides(cmd.CompleteRound, needs=at_step(2))
    def _complete(self, state: TableState, c: cmd.CompleteRound, out: Emitter) -> None:
        pending = self._pending_step(state, 2, "complete the round")
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
    layout: ClassVar[str] = "props"
    final_chore_label: ClassVar[str] = "Complete the round"
    required_rules: ClassVar[frozenset[str]] = frozenset(
        {"wagering.seated_only", "wagering.before_shake", "authority.shaker", "authority.shake",
         "shaker.min_shakes", "shaker.first_to", "shaker.passes_on", "shaker.six_eight_shake"})
    not_offered: ClassVar[frozenset[str]] = frozenset(
        {"line", "odds", "put", "place", "lose", "buy", "lay", "big", "hard", "fire", "bonus"})

    def before_throw(self, p: DiceAtTable, pack: RulePack) -> None:
        if p.shaker != "uncovered":
            raise ProcedureViolation(
                "the dealer uncovers the shaker in the designated circle before the "
                "result is read", rule="authority.shaker", citation=pack.cite("authority.shaker"))

    def before_close(self, p: DiceAtTable, pack: RulePack) -> None:
        if p.shaker == "empty":
            raise ProcedureViolation("the floorperson loads the shaker first",
                                     rule="authority.dice", citation=pack.cite("authority.dice"))
        if not p.dealer_shook:
            raise ProcedureViolation("the dealer shakes the covered shaker before each round",
                                     rule="authority.shaker",
                                     citation=pack.cite("authority.shaker"))

    def thrown(self, p: DiceAtTable, serials: tuple[str, ...], thrower: str | None,
               facts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return serials or tuple(sorted(p.dice)), facts

    def dice_keepers(self, pack: RulePack) -> tuple[frozenset[Role], str]:
        """585.3(c) / 668a.3(c): the dealer is responsible for the shaker."""
        return frozenset({Role.DEALER}), "the dealer is responsible for the shaker"

    def check_brought(self, p: DiceAtTable, pack: RulePack, serials: tuple[str, ...],
                      witness: str | None, actor: str) -> None:
        """585.3(a), (d): two dice, placed in the shaker in the dealer's presence."""
        if p.dice:
            raise ProcedureViolation("the shaker holds its two dice; remove them first",
                                     rule="authority.dice", citation=pack.cite("authority.dice"))
        if len(serials) != 2:
            raise ProcedureViolation("Props & Hops is played with two dice",
                                     rule="authority.dice",
                                     citation="58 Pa. Code § 585.3(a) [regulation]")
        if witness is None or witness == actor or not p.holds(witness, Role.DEALER):
            raise ProcedureViolation(
                "the floorperson places the dice in the shaker in the presence of the "
                "dealer, another person (name the dealer as witness)", rule="authority.dice",
                citation=pack.cite("authority.dice"))

    def dice_change_closed(self, phase: Phase) -> bool:
        """Between rounds only: not once bets are closed for the shake, nor while settling."""
        return phase in (Phase.SETTLING, Phase.CLOSED)


PROPS_AND_HOPS = register(PropsAndHops())
plays(PROPS_AND_HOPS, PropsHopsEngine)
