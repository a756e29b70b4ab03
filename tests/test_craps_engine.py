"""The Craps and Mini-Craps engine: come-out and point, travelling bets, odds, working status,
contract bets, limits, the settlement order, and the automatic no roll."""

from __future__ import annotations

import pytest

from dicetable.core.errors import IllegalWager, InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.packs import derive_pack, load_preset
from dicetable.table import Table
from tests.conftest import funded


def roll(t: Table, faces: str) -> list[ev.Event]:
    return t.roll(faces) + t.settle()


def test_come_out_sets_the_point_and_the_puck() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    events = roll(t, "2-2")
    assert t.point == 4
    assert isinstance(events[-1], ev.PuckMoved)
    assert events[-1].point == 4
    roll(t, "5-6")  # an 11 during the point does nothing to the pass line
    assert t.point == 4
    assert t.balance("alice") == 100000 - 1000


def test_natural_and_craps_on_the_come_out() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    t.bet("bob", "dontpass", 1000)
    roll(t, "5-6")  # 11: pass wins, don't pass loses
    assert t.balance("alice") == 101000
    assert t.balance("bob") == 99000
    assert t.point is None
    t.bet("alice", "pass", 1000)
    t.bet("bob", "dontpass", 1000)
    roll(t, "1-2")  # 3: craps
    assert t.balance("alice") == 100000
    assert t.balance("bob") == 100000


def test_dont_pass_bars_12_france_55_8_a() -> None:
    t = funded("pa-craps")
    t.bet("bob", "dontpass", 1000)
    events = roll(t, "6-6")
    paid = next(e for e in events if isinstance(e, ev.WinnersPaid))
    assert paid.items[0].win == 0
    assert paid.items[0].stake_returned == 1000
    assert t.balance("bob") == 100000
    bar2 = derive_pack(load_preset("pa-craps"), "bar2", {"line.dontpass.bar": 2})
    t = funded(bar2)
    t.bet("bob", "dontpass", 1000)
    roll(t, "6-6")
    assert t.balance("bob") == 101000  # with bar 2 the 12 wins for the don't


def test_come_out_seven_is_not_a_seven_out() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    events = roll(t, "3-4")
    puck = events[-1]
    assert isinstance(puck, ev.PuckMoved)
    assert not puck.seven_out
    assert t.state.hand == 1
    assert t.balance("alice") == 101000


def test_seven_out_ends_the_hand() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    roll(t, "3-3")
    events = roll(t, "3-4")
    puck = events[-1]
    assert isinstance(puck, ev.PuckMoved)
    assert puck.seven_out
    assert puck.point is None
    assert t.state.hand == 2
    assert t.state.hand_rolls == 0


def test_come_bet_travels_to_its_number_and_wins_there() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    roll(t, "2-2")
    come = t.bet("alice", "come", 1000)
    events = roll(t, "3-5")  # 8: the come bet travels to the 8
    puck = events[-1]
    assert isinstance(puck, ev.PuckMoved)
    assert [(m.bet, m.state_name) for m in puck.moves] == [(come, "on 8")]
    odds = t.odds("alice", come, 5000)  # 5x on the 8
    roll(t, "6-2")  # 8 again: the come bet and its odds win
    assert come not in t.state.bets
    assert odds not in t.state.bets
    assert t.balance("alice") == 100000 - 1000 + 1000 + 6000


def test_come_bet_cannot_be_made_on_the_come_out_and_pass_not_after() -> None:
    t = funded("pa-craps")
    with pytest.raises(IllegalWager, match="come-out"):
        t.bet("alice", "come", 1000)
    roll(t, "3-3")
    with pytest.raises(IllegalWager, match="Put"):
        t.bet("alice", "pass", 1000)
    put = t.bet("alice", "put6", 1000)
    roll(t, "3-3")
    assert put not in t.state.bets
    assert t.balance("alice") == 101000


def test_come_odds_are_off_on_the_come_out_and_returned() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    roll(t, "2-2")
    come = t.bet("alice", "come", 1000)
    roll(t, "3-3")
    t.odds("alice", come, 1000)
    roll(t, "2-2")  # the point is made: back to the come-out
    assert t.point is None
    events = roll(t, "3-4")  # come-out 7: the come bet loses, its odds were off
    collected = next(e for e in events if isinstance(e, ev.LosersCollected))
    paid = next(e for e in events if isinstance(e, ev.WinnersPaid))
    assert [i.wager for i in collected.items] == ["come"]
    assert [(i.wager, i.win, i.stake_returned) for i in paid.items
            if i.wager == "odds"] == [("odds", 0, 1000)]


def test_place_bets_are_off_on_the_come_out_unless_called_on_quebec_95_17() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    roll(t, "2-2")
    six = t.bet("alice", "place6", 1200)
    roll(t, "1-3")  # point made: come-out next
    roll(t, "3-3")  # a come-out 6: the place bet is off
    assert t.state.bets[six].amount == 1200
    assert t.balance("alice") == 100000 - 1200 + 1000
    t2 = funded("pa-craps")
    on = t2.bet("alice", "place6", 1200, working=True)
    events = roll(t2, "3-3")
    paid = next(e for e in events if isinstance(e, ev.WinnersPaid))
    assert [(i.bet, i.win) for i in paid.items] == [(on, 1400)]


def test_player_may_turn_a_bet_off() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    roll(t, "2-2")
    six = t.bet("alice", "place6", 1200)
    t.execute(cmd.SetWorking(actor="alice", role=Role.PLAYER, bet=six, working=False))
    roll(t, "3-4")  # seven-out: the place bet is off, so it survives
    assert six in t.state.bets
    with pytest.raises(IllegalWager, match="working.player_may_toggle"):
        t.bet("alice", "field", 100, working=False)


def test_contract_pass_bet_cannot_be_removed_or_reduced_once_the_point_is_set() -> None:
    t = funded("pa-craps")
    line = t.bet("alice", "pass", 1000)
    roll(t, "2-3")
    with pytest.raises(IllegalWager, match="removal.line_after_point"):
        t.remove(line)
    with pytest.raises(IllegalWager, match="removal.line_after_point"):
        t.execute(cmd.ChangeBet(actor="alice", role=Role.PLAYER, bet=line, amount=500))
    with pytest.raises(IllegalWager, match="removal.line_after_point"):
        t.execute(cmd.ChangeBet(actor="alice", role=Role.PLAYER, bet=line, amount=2000))
    assert t.state.bets[line].amount == 1000


def test_dont_pass_may_be_reduced_or_removed_but_never_increased() -> None:
    t = funded("pa-craps")
    dont = t.bet("bob", "dontpass", 2000)
    roll(t, "2-3")
    with pytest.raises(IllegalWager, match="increased"):
        t.execute(cmd.ChangeBet(actor="bob", role=Role.PLAYER, bet=dont, amount=3000))
    t.execute(cmd.ChangeBet(actor="bob", role=Role.PLAYER, bet=dont, amount=1000))
    assert t.balance("bob") == 99000
    odds = t.bet("bob", "odds", 1500, base=dont)
    t.remove(dont)  # its odds come down with it
    assert dont not in t.state.bets
    assert odds not in t.state.bets
    assert t.balance("bob") == 100000
    locked = derive_pack(load_preset("pa-craps"), "fr", {"removal.dont_after_point": "locked"})
    t = funded(locked)
    dont = t.bet("bob", "dontpass", 2000)
    roll(t, "2-3")
    with pytest.raises(IllegalWager, match="removal.dont_after_point"):
        t.remove(dont)


def test_odds_limit_3_4_5x_and_flat_multiple() -> None:
    t = funded("pa-craps")
    line = t.bet("alice", "pass", 1000)
    roll(t, "2-2")
    with pytest.raises(IllegalWager, match="odds.limit.mode"):
        t.odds("alice", line, 3100)
    t.odds("alice", line, 3000)
    dont_t = funded("pa-craps")
    dont = dont_t.bet("bob", "dontpass", 1000)
    roll(dont_t, "3-3")
    with pytest.raises(IllegalWager):
        dont_t.odds("bob", dont, 6100)  # 3-4-5x lets the don't lay 6x: $60 to win $50
    dont_t.odds("bob", dont, 6000)
    flat = derive_pack(load_preset("pa-craps"), "flat", {"odds.limit.mode": "flat",
                                                         "odds.limit.multiple": 2})
    t = funded(flat)
    line = t.bet("alice", "pass", 1000)
    roll(t, "2-2")
    with pytest.raises(IllegalWager, match="odds.limit.multiple"):
        t.odds("alice", line, 2100)


def test_odds_need_a_base_with_a_point() -> None:
    t = funded("pa-craps")
    line = t.bet("alice", "pass", 1000)
    with pytest.raises(IllegalWager, match="no point"):
        t.odds("alice", line, 1000)
    with pytest.raises(IllegalWager):
        t.odds("bob", line, 1000)  # not bob's bet
    with pytest.raises(IllegalWager):
        t.bet("alice", "place6", 1200, base=line)


def test_limits_minimum_maximum_and_unit() -> None:
    t = funded("pa-craps")
    with pytest.raises(IllegalWager, match="minimum"):
        t.bet("alice", "pass", 400)
    with pytest.raises(IllegalWager, match="maximum"):
        t.bet("alice", "any7", 60000)
    with pytest.raises(IllegalWager, match="multiple"):
        t.bet("alice", "pass", 1050)
    with pytest.raises(IllegalWager, match="equal parts"):
        t.bet("alice", "horn", 500)
    with pytest.raises(InvalidInput):
        t.bet("alice", "pass", -500)
    with pytest.raises(IllegalWager, match="short"):
        t.bet("alice", "pass", 500000)  # more than her balance
    assert t.state.bets == {}


def test_unknown_or_unoffered_wager_is_refused() -> None:
    t = funded("pa-craps")
    with pytest.raises(IllegalWager, match="no wager"):
        t.bet("alice", "bigred", 100)
    with pytest.raises(IllegalWager, match="menu.double"):
        t.bet("alice", "double4", 100)


def test_one_bet_per_spot() -> None:
    t = funded("pa-craps")
    t.bet("alice", "field", 100)
    with pytest.raises(IllegalWager, match="change that bet"):
        t.bet("alice", "field", 100)


def test_losers_are_collected_before_winners_are_paid() -> None:
    t = funded("pa-craps", automations=())
    t.bet("alice", "field", 100)
    t.bet("bob", "any7", 100)
    t.roll("3-4")
    with pytest.raises(ProcedureViolation, match="settlement.order"):
        t.execute(cmd.PayWinners(actor="dealer", role=Role.DEALER))
    with pytest.raises(ProcedureViolation, match="settle the last roll"):
        t.roll("1-1")
    with pytest.raises(ProcedureViolation):
        t.bet("alice", "any7", 100)
    kinds = [e.kind for e in t.settle()]
    assert kinds == ["LosersCollected", "WinnersPaid", "PuckMoved"]
    assert t.balance("alice") == 99900
    assert t.balance("bob") == 100400


def test_pa_623a_8_b_die_off_the_table_is_invalid_automatically() -> None:
    t = funded("pa-craps")
    t.bet("alice", "pass", 1000)
    events = t.roll(None, facts=("die-off-table",))
    assert [e.kind for e in events] == ["DiceRolled", "NoRollCalled"]
    no_roll = events[1]
    assert isinstance(no_roll, ev.NoRollCalled)
    assert no_roll.automatic
    assert "623a.8(b)" in no_roll.rule
    assert t.point is None
    assert t.state.bets["b1"].amount == 1000


def test_pa_623a_8_b_die_on_die_is_invalid_automatically() -> None:
    t = funded("pa-mini-craps")
    t.bet("alice", "field", 100)
    events = t.roll("3-4", facts=("die-on-die",))
    assert events[-1].kind == "NoRollCalled"
    assert t.state.rolls == 0
    assert t.state.bets["b1"].amount == 100
    assert t.state.last_roll_valid is False


def test_in_10_4_4_b_more_than_two_dice_is_invalid_and_die_on_die_is_not_automatic() -> None:
    t = funded("in-craps", automations=())
    events = t.roll("3-4", facts=("more-than-two-dice",))
    assert events[-1].kind == "NoRollCalled"
    events = t.roll("3-4", facts=("die-on-die",))  # 10-4-4(c)(1): the stickperson's call
    assert events[-1].kind == "DiceRolled"
    assert t.phase.value == "settling"


def test_faces_are_required_unless_the_throw_is_void() -> None:
    t = funded("pa-craps")
    with pytest.raises(InvalidInput, match="faces"):
        t.roll(None)


def test_pa_623a_8_e_no_roll_called_by_the_wrong_role_is_refused() -> None:
    t = funded("pa-craps", automations=())
    t.bet("alice", "field", 100)
    t.roll("3-4")
    with pytest.raises(RoleNotPermitted, match="623a.8"):
        t.execute(cmd.CallNoRoll(actor="dave", role=Role.DEALER, grounds=("improper",)))
    t.execute(cmd.CallNoRoll(actor="box", role=Role.BOXPERSON, grounds=("improper",)))
    assert t.phase.value == "betting"
    assert t.state.bets["b1"].amount == 100


def test_no_roll_cannot_be_called_once_settlement_started() -> None:
    t = funded("pa-craps", automations=())
    t.bet("alice", "field", 100)
    t.roll("3-4")
    t.execute(cmd.CollectLosers(actor="dealer", role=Role.DEALER))
    with pytest.raises(ProcedureViolation, match="noroll.window"):
        t.execute(cmd.CallNoRoll(actor="box", role=Role.BOXPERSON, grounds=("improper",)))


def test_fire_bet_only_before_a_new_shooter_and_pays_on_four_points() -> None:
    t = funded("pa-craps")
    fire = t.bet("alice", "fire", 100)
    t.bet("alice", "pass", 1000)
    roll(t, "2-2")
    with pytest.raises(IllegalWager, match="fire.placement"):
        t.bet("bob", "fire", 100)
    with pytest.raises(IllegalWager, match="removal.fire"):
        t.remove(fire)
    for point in ("2-2", "2-3", "2-3", "3-3", "3-3", "4-4", "4-4", "5-5"):
        roll(t, point)  # makes 4, then 5, 6 and 8 (four distinct points), then point 10
    events = roll(t, "3-4")  # seven-out with 4 points made: 24 to 1
    paid = next(e for e in events if isinstance(e, ev.WinnersPaid))
    assert [(i.wager, i.win) for i in paid.items] == [("fire", 2400)]


def test_bonus_craps_all_small_and_placement() -> None:
    t = funded("pa-craps")
    small = t.bet("alice", "allsmall", 100)
    for faces in ("1-1", "1-2", "2-2", "2-3"):
        roll(t, faces)
        with pytest.raises(IllegalWager, match="bonus.placement"):
            t.bet("bob", "alltall", 100)
    events = roll(t, "3-3")
    paid = next(e for e in events if isinstance(e, ev.WinnersPaid))
    assert [(i.bet, i.win) for i in paid.items] == [(small, 3400)]


def test_bonus_craps_loses_on_a_come_out_seven() -> None:
    t = funded("pa-craps")
    t.bet("alice", "makeemall", 100)
    events = roll(t, "3-4")
    collected = next(e for e in events if isinstance(e, ev.LosersCollected))
    assert [i.wager for i in collected.items] == ["makeemall"]
    t.bet("alice", "makeemall", 100)  # after a 7 the bonus bets open again


def test_buy_commission_is_refunded_when_taken_down() -> None:
    t = funded("pa-craps")
    buy = t.bet("alice", "buy4", 2000)
    assert t.balance("alice") == 100000 - 2100
    t.remove(buy)
    assert t.balance("alice") == 100000


def test_players_act_only_for_themselves() -> None:
    t = funded("pa-craps")
    with pytest.raises(RoleNotPermitted):
        t.bet("alice", "pass", 1000, actor="bob")
    t.bet("alice", "pass", 1000, actor="dealer", role=Role.DEALER)  # the dealer books it
    with pytest.raises(RoleNotPermitted):
        t.roll("3-4", actor="alice", role=Role.PLAYER)


def test_cash_out_and_buy_in() -> None:
    t = funded("pa-craps")
    t.execute(cmd.CashOut(actor="dealer", role=Role.DEALER, player="alice", amount=50000))
    assert t.balance("alice") == 50000
    assert t.state.conserved()
    with pytest.raises(InvalidInput, match="money.balance"):
        t.execute(cmd.CashOut(actor="dealer", role=Role.DEALER, player="alice", amount=50001))
    with pytest.raises(InvalidInput):
        t.buy_in("alice", 0)
    with pytest.raises(InvalidInput, match="has not joined"):
        t.buy_in("zed", 100)


def test_mini_craps_is_the_same_game_with_its_own_pack() -> None:
    t = funded("pa-mini-craps", automations=())
    t.bet("alice", "pass", 1000)
    roll(t, "4-4")
    assert t.point == 8
    assert t.pack.game == "mini-craps"
    t.roll("3-4")
    t.execute(cmd.CallNoRoll(actor="fl", role=Role.FLOORPERSON, grounds=("dice-in-cup",)))
    assert t.point == 8  # 623a.8(e)(2): the floorperson may call it at Mini-Craps


def test_refused_command_changes_nothing() -> None:
    t = funded("pa-craps", automations=())
    before = t.state.snapshot()
    for bad in (lambda: t.bet("alice", "pass", 333), lambda: t.bet("zed", "pass", 1000),
                lambda: t.remove("b99"), lambda: t.settle()):
        with pytest.raises(ValueError):
            bad()
    assert t.state.snapshot() == before
    assert len(t.log) == before["seq"]


def test_table_cannot_open_twice_or_with_the_wrong_engine() -> None:
    t = funded("pa-craps")
    with pytest.raises(ProcedureViolation):
        t.execute(cmd.OpenTable(actor="f", role=Role.FLOORPERSON, table="x", pack=t.pack))
    with pytest.raises(InvalidInput):
        t.engine.decide(type(t.state)(), cmd.OpenTable(
            actor="f", role=Role.FLOORPERSON, table="x",
            pack=load_preset("pa-props-and-hops")), "")


def test_electronic_table_settles_automatically() -> None:
    auto = derive_pack(load_preset("pa-craps"), "auto", {"settlement.automatic": True})
    t = funded(auto)
    t.bet("alice", "field", 100)
    events = t.roll("1-1")
    assert [e.kind for e in events] == ["DiceRolled", "LosersCollected", "WinnersPaid",
                                        "PuckMoved"]
    assert all(e.role is Role.SYSTEM for e in events[1:])
    assert t.balance("alice") == 100200
