"""A Hypothesis state machine over live tables: random command sequences from random people in
random roles. Refused commands change nothing, money is conserved, and replaying the log
equals the live state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from dicetable.core.clock import FixedClock
from dicetable.core.dice import ALL_ROLLS
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.packs import PRESETS
from dicetable.rules.model import NO_ROLL_GROUNDS, THROW_FACTS
from dicetable.table import Table
from dicetable.table import commands as t
from dicetable.table.procedure import ACTION_RULE
from tests.profiles import examples

PEOPLE = {Role.STICKPERSON: "sam", Role.BOXPERSON: "bo", Role.DEALER: "dee",
          Role.FLOORPERSON: "fran", Role.PIT_BOSS: "pat"}
PLAYERS = ("ann", "ben", "cy")
DICE = ("D1", "D2", "D3", "D4", "D5", "D6")
roles = st.sampled_from(list(Role))
players = st.sampled_from(PLAYERS)
amounts = st.sampled_from([100, 200, 500, 600, 1000, 1200, 2000, 4000])


class LiveTable(RuleBasedStateMachine):
    table: Table

    @initialize(preset=st.sampled_from(PRESETS))
    def open(self, preset: str) -> None:
        self.clock = FixedClock()
        self.table = Table.open(preset, "s", mode="live", clock=self.clock, actor="fran",
                                staff={p: r for r, p in PEOPLE.items() if r is not
                                       Role.FLOORPERSON})
        for seat, name in enumerate(PLAYERS, start=1):
            self.table.join(name, seat)
            self.table.buy_in(name, 50_000)

    def who(self, role: Role, player: str) -> str:
        if role is Role.PLAYER:
            return player
        return PEOPLE.get(role, "auto")

    def attempt(self, command: g.Command) -> None:
        before = self.table.state.snapshot()
        allowed = self.table.can(command)
        try:
            self.table.execute(command)
        except ValueError:
            assert not allowed
            assert self.table.state.snapshot() == before
        else:
            assert allowed

    def kw(self, data: st.DataObject, cls: type[g.Command] | None = None,
           player: str | None = None) -> dict[str, Any]:
        """Mostly someone allowed to give ``cls``; sometimes anyone at all."""
        allowed = sorted(self.table.pack.roles(ACTION_RULE[cls])) if cls in ACTION_RULE else []
        if allowed and data.draw(st.integers(0, 3)) > 0:
            role = data.draw(st.sampled_from(allowed))
        else:
            role = data.draw(roles)
        return {"actor": self.who(role, player or data.draw(players)), "role": role}

    @rule(data=st.data(), player=players, amount=amounts)
    def bet(self, data: st.DataObject, player: str, amount: int) -> None:
        menu = sorted(self.table.pack.menu)
        lines = [w for w in ("pass", "dontpass") if w in menu]
        wager = data.draw(st.sampled_from(lines + menu if lines else menu))
        self.attempt(g.PlaceBet(**self.kw(data, g.PlaceBet, player), player=player,
                                wager=wager, amount=amount))

    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        bets = sorted(self.table.state.bets) or ["b1"]
        bet = data.draw(st.sampled_from(bets))
        owner = self.table.state.bets[bet].player if bet in self.table.state.bets else None
        self.attempt(g.RemoveBet(**self.kw(data, g.RemoveBet, owner), bet=bet))

    @rule(data=st.data())
    def dice(self, data: st.DataObject) -> None:
        serials = tuple(data.draw(st.lists(st.sampled_from(DICE), min_size=1, max_size=6,
                                           unique=True)))
        kind = data.draw(st.sampled_from(["bring", "remove"]))
        if kind == "bring":
            self.attempt(t.BringDice(**self.kw(data, t.BringDice), serials=serials,
                                     witness="dee"))
        else:
            self.attempt(t.RemoveDice(**self.kw(data, t.RemoveDice), serials=serials))

    @rule(data=st.data(), patron=players)
    def shooter(self, data: st.DataObject, patron: str) -> None:
        p = self.table.procedure
        kind = data.draw(st.sampled_from(["offer", "select", "decline", "relinquish", "remove"]))
        if kind == "offer":
            self.attempt(t.OfferDice(**self.kw(data, t.OfferDice), patron=patron,
                                     serials=tuple(p.bowl)))
        elif kind == "select":
            self.attempt(t.SelectDice(**self.kw(data, t.SelectDice, p.offer_to),
                                      serials=tuple(p.offered[:2])))
        elif kind == "decline":
            self.attempt(t.DeclineDice(**self.kw(data, t.DeclineDice, p.offer_to)))
        elif kind == "relinquish":
            self.attempt(t.RelinquishDice(**self.kw(data, t.RelinquishDice, p.shooter)))
        else:
            self.attempt(t.RemoveShooter(**self.kw(data, t.RemoveShooter),
                                         ground="unreasonable-delay"))

    @rule(data=st.data())
    def shaker(self, data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(["shake", "offer", "player", "lid", "return",
                                          "uncover"]))
        cls: type[g.Command] = {
            "shake": t.ShakeShaker, "offer": t.OfferShaker, "player": t.PlayerShake,
            "lid": t.RemoveLid, "return": t.ReturnShaker, "uncover": t.UncoverShaker}[kind]
        holder = self.table.procedure.shaker_holder or "ann"
        kw = self.kw(data, cls, holder)
        makers: dict[str, Callable[[], g.Command]] = {
                   "shake": lambda: t.ShakeShaker(**kw),
                   "offer": lambda: t.OfferShaker(**kw, player=holder),
                   "player": lambda: t.PlayerShake(**kw, times=data.draw(st.integers(1, 4))),
                   "lid": lambda: t.RemoveLid(**kw),
                   "return": lambda: t.ReturnShaker(**kw),
                   "uncover": lambda: t.UncoverShaker(**kw)}
        self.attempt(makers[kind]())

    @rule()
    def get_ready(self) -> None:
        """The regular way into play: dice at the table, then a shooter or a shaken shaker."""
        table, p = self.table, self.table.procedure
        from dicetable.table.procedure import offer_order

        if not p.dice:
            self.attempt(t.BringDice(**self.staff(t.BringDice), witness="dee",
                                     serials=("D1", "D2") if table.state.game ==
                                     "props-and-hops" else DICE[:5]))
        elif table.state.game == "props-and-hops":
            self.shaker_step()
        elif p.shooter is None and p.offer_to is None and offer_order(table.state):
            patron = offer_order(table.state)[0]
            self.attempt(g.PlaceBet(actor=patron, role=Role.PLAYER, player=patron,
                                    wager="pass", amount=500))
            self.attempt(t.OfferDice(**self.staff(t.OfferDice), patron=patron,
                                     serials=tuple(p.bowl)))
        elif p.offer_to is not None:
            self.attempt(t.SelectDice(actor=p.offer_to, role=Role.PLAYER,
                                      serials=tuple(p.offered[:2])))

    def shaker_step(self) -> None:
        from dicetable.table.procedure import next_shaker_holder

        table, p = self.table, self.table.procedure
        dealer = self.staff(t.ShakeShaker)
        holder = p.shaker_holder or next_shaker_holder(table.state, None, first=True) or "ann"
        player: dict[str, Any] = {"actor": holder, "role": Role.PLAYER}
        if table.phase.value == "betting":
            if p.dealer_shook:
                self.attempt(g.CloseBetting(**dealer))
            else:
                self.attempt(t.ShakeShaker(**dealer))
        elif p.shaker == "covered":
            self.attempt(t.OfferShaker(**dealer, player=holder))
        elif p.shaker == "offered":
            self.attempt(t.PlayerShake(**player, times=3))
            self.attempt(t.ReturnShaker(**player))
        elif p.shaker == "returned":
            self.attempt(t.UncoverShaker(**dealer))

    def staff(self, cls: type[g.Command]) -> dict[str, Any]:
        role = sorted(self.table.pack.roles(ACTION_RULE[cls]))[0]
        return {"actor": self.who(role, "ann"), "role": role}

    @rule(data=st.data())
    def settle(self, data: st.DataObject) -> None:
        if self.table.phase.value == "settling":
            kw = self.kw(data, g.CollectLosers)
            for cmd in (g.CollectLosers(**kw), g.PayWinners(**kw),
                        g.MovePuck(**kw) if self.table.state.game != "props-and-hops"
                        else g.CompleteRound(**kw)):
                self.attempt(cmd)

    @rule(data=st.data(), roll=st.sampled_from(ALL_ROLLS))
    def throw(self, data: st.DataObject, roll: Any) -> None:
        facts = tuple(data.draw(st.lists(st.sampled_from(sorted(THROW_FACTS)), max_size=1)))
        self.attempt(g.RecordRoll(**self.kw(data, g.RecordRoll), roll=roll, facts=facts))

    @rule(data=st.data())
    def table_chores(self, data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(["close", "collect", "pay", "puck", "round",
                                          "no-roll", "overturn", "tick"]))
        cls: type[g.Command] = {
            "close": g.CloseBetting, "collect": g.CollectLosers, "pay": g.PayWinners,
            "puck": g.MovePuck, "round": g.CompleteRound, "no-roll": g.CallNoRoll,
            "overturn": t.OverturnNoRoll, "tick": t.Tick}[kind]
        kw = self.kw(data, cls)
        makers: dict[str, Callable[[], g.Command]] = {
                   "close": lambda: g.CloseBetting(**kw),
                   "collect": lambda: g.CollectLosers(**kw),
                   "pay": lambda: g.PayWinners(**kw),
                   "puck": lambda: g.MovePuck(**kw),
                   "round": lambda: g.CompleteRound(**kw),
                   "no-roll": lambda: g.CallNoRoll(**kw, grounds=(data.draw(
                       st.sampled_from(sorted(NO_ROLL_GROUNDS))),)),
                   "overturn": lambda: t.OverturnNoRoll(**kw),
                   "tick": lambda: t.Tick(**kw)}
        self.attempt(makers[kind]())

    @precondition(lambda self: hasattr(self, "table"))
    @rule(minutes=st.sampled_from([0, 1, 10, 60, 600, 1500]))
    def time_passes(self, minutes: int) -> None:
        self.clock.advance(minutes=minutes)

    @invariant()
    def money_is_conserved(self) -> None:
        if hasattr(self, "table"):
            assert self.table.state.conserved()

    def teardown(self) -> None:
        if hasattr(self, "table"):
            again = Table.replay(self.table.log)
            assert again.state.snapshot() == self.table.state.snapshot()


LiveTable.TestCase.settings = settings(max_examples=examples(60), stateful_step_count=50,
                                       deadline=None)
TestLiveTable = LiveTable.TestCase
