"""Hypothesis properties over random command sequences from random roles:
money is conserved on every settlement, replay rebuilds the same state, refused commands change
nothing, and ``can`` is true exactly when the command would be accepted."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from dicetable.core.dice import ALL_ROLLS
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games.events import event_from_dict, event_to_dict
from dicetable.games.packs import PRESETS, load_preset
from dicetable.table import Table
from tests.conftest import funded

PLAYERS = ("alice", "bob", "zed")
AMOUNTS = (100, 200, 400, 500, 600, 1000, 1100, 1200, 2000, 2400, 3000, 4000, 6000, 999_999)
FACTS = ((), (), (), ("die-off-table",), ("die-on-die",), ("more-than-two-dice",),
         ("die-fell-out",), ("die-not-flat",))


@st.composite
def command(draw: st.DrawFn, table: Table) -> cmd.Command:
    menu = sorted(table.pack.menu)
    bets = sorted(table.state.bets) or ["b1"]
    role = draw(st.sampled_from(list(Role)))
    player = draw(st.sampled_from(PLAYERS))
    actor = player if draw(st.booleans()) else draw(st.sampled_from(["dealer", "stick", "box"]))
    kind = draw(st.sampled_from(["bet", "bet", "bet", "bet", "odds", "remove", "change",
                                 "working", "close", "roll", "roll", "roll", "no-roll",
                                 "collect", "pay", "finish", "settle", "buy", "cash"]))
    if kind == "bet":
        return cmd.PlaceBet(actor=actor, role=role, player=player,
                            wager=draw(st.sampled_from(menu)),
                            amount=draw(st.sampled_from(AMOUNTS)),
                            working=draw(st.sampled_from([None, None, True, False])))
    if kind == "odds":
        return cmd.PlaceBet(actor=actor, role=role, player=player, wager="odds",
                            amount=draw(st.sampled_from(AMOUNTS)),
                            base=draw(st.sampled_from(bets)))
    if kind == "remove":
        return cmd.RemoveBet(actor=actor, role=role, bet=draw(st.sampled_from(bets)))
    if kind == "change":
        return cmd.ChangeBet(actor=actor, role=role, bet=draw(st.sampled_from(bets)),
                             amount=draw(st.sampled_from(AMOUNTS)))
    if kind == "working":
        return cmd.SetWorking(actor=actor, role=role, bet=draw(st.sampled_from(bets)),
                              working=draw(st.booleans()))
    if kind == "close":
        return cmd.CloseBetting(actor=actor, role=role)
    if kind == "roll":
        return cmd.RecordRoll(actor=actor, role=role, roll=draw(st.sampled_from(ALL_ROLLS)),
                              facts=draw(st.sampled_from(FACTS)))
    if kind == "no-roll":
        return cmd.CallNoRoll(actor=actor, role=role, grounds=("improper",))
    if kind == "collect":
        return cmd.CollectLosers(actor=actor, role=role)
    if kind == "pay":
        return cmd.PayWinners(actor=actor, role=role)
    if kind == "finish":
        return cmd.MovePuck(actor=actor, role=role) if table.state.game != "props-and-hops" \
            else cmd.CompleteRound(actor=actor, role=role)
    if kind == "buy":
        return cmd.BuyChips(actor=actor, role=role, player=player,
                            amount=draw(st.sampled_from(AMOUNTS)))
    return cmd.CashOut(actor=actor, role=role, player=player,
                       amount=draw(st.sampled_from(AMOUNTS)))


@given(st.data(), st.sampled_from(PRESETS))
def test_random_commands_conserve_money_and_replay(data: st.DataObject, preset: str) -> None:
    table = funded(preset, seated=True)
    for _ in range(60):
        c = data.draw(command(table))
        before = table.state.snapshot()
        allowed = table.can(c)
        try:
            table.execute(c)
            accepted = True
        except ValueError:
            accepted = False
            assert table.state.snapshot() == before  # a refusal changes nothing
        assert allowed == accepted  # can_x is true exactly when x does not raise
        assert table.state.conserved()
        for player in table.state.players.values():
            assert player.balance >= 0
    replayed = Table.replay(table.log)
    assert replayed.state.snapshot() == table.state.snapshot()
    wire = [event_from_dict(json.loads(json.dumps(event_to_dict(e)))) for e in table.log]
    assert wire == table.log
    assert Table.replay(wire).state.snapshot() == table.state.snapshot()


@given(st.lists(st.sampled_from(ALL_ROLLS), min_size=1, max_size=80))
def test_settlement_conserves_money_with_every_wager_up(rolls: list[object]) -> None:
    pack = load_preset("pa-craps")
    table = funded(pack, ("p", "q"), amount=10_000_00)
    stakes = {"pass": 1000, "field": 100, "any7": 100, "hard6": 100, "place6": 1200,
              "buy4": 2000, "lay10": 4000, "lose5": 800, "big8": 500, "horn": 400,
              "fire": 100, "allsmall": 100}
    for roll in rolls:
        for code, amount in stakes.items():
            for who in ("p", "q"):
                c = cmd.PlaceBet(actor=who, role=Role.PLAYER, player=who, wager=code,
                                 amount=amount)
                if table.can(c):
                    table.execute(c)
        table.roll(roll)  # type: ignore[arg-type]
        table.settle()
        assert table.state.conserved()
    assert Table.replay(table.log).state.snapshot() == table.state.snapshot()
