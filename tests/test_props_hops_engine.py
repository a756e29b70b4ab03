"""Props & Hops rounds: wagers before the shake, chips only, seated players, a no roll returns
every wager, losers collected before winners are paid (58 Pa. Code 668a.2, 585.3)."""

from __future__ import annotations

import pytest

from dicetable.core.errors import IllegalWager, ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.table import Table
from tests.conftest import funded


def table(by_hand: bool = False) -> Table:
    return funded("pa-props-and-hops", seated=True, automations=() if by_hand else None)


def test_pa_668a_2_a_wager_after_the_shake_is_refused() -> None:
    # TV-42: the dice are being shaken; a seated player tries to bet.
    t = table()
    t.bet("alice", "double6", 100)
    t.no_more_bets()
    with pytest.raises(ProcedureViolation, match="668a.2\\(a\\)"):
        t.bet("bob", "double6", 100)
    with pytest.raises(ProcedureViolation):
        t.remove("b1")


def test_pa_668a_2_b_cash_verbal_wager_is_refused() -> None:
    # TV-43
    t = table()
    with pytest.raises(IllegalWager, match="668a.2\\(b\\)"):
        t.execute(cmd.PlaceBet(actor="alice", role=Role.PLAYER, player="alice",
                               wager="double6", amount=2000, medium="cash"))
    t.execute(cmd.PlaceBet(actor="alice", role=Role.PLAYER, player="alice", wager="double6",
                           amount=2000, medium="plaques"))


def test_pa_668a_2_c_only_seated_players_wager() -> None:
    # TV-44
    t = funded("pa-props-and-hops", ("alice",), seated=True)
    t.join("stan")  # standing
    t.buy_in("stan", 10000)
    with pytest.raises(IllegalWager, match="668a.2\\(c\\)"):
        t.bet("stan", "double6", 100)


def test_pa_668a_2_c_a_player_who_wagered_stays_seated_until_the_round_ends() -> None:
    t = table()
    t.bet("alice", "any7", 100)
    t.no_more_bets()
    with pytest.raises(ProcedureViolation, match="668a.2\\(c\\)"):
        t.execute(cmd.LeaveTable(actor="alice", role=Role.PLAYER, player="alice"))
    t.roll("3-4")
    t.settle()
    t.execute(cmd.LeaveTable(actor="alice", role=Role.PLAYER, player="alice"))


def test_pa_585_3_f_die_falls_out_no_roll_returns_every_wager() -> None:
    # TV-54
    t = table()
    t.bet("alice", "double4", 500)
    t.bet("bob", "field", 300)
    t.no_more_bets()
    events = t.roll("2-2", facts=("die-fell-out",))
    assert [e.kind for e in events] == ["DiceRolled", "NoRollCalled", "WagersReturned",
                                        "RoundCompleted"]
    returned = events[2]
    assert isinstance(returned, ev.WagersReturned)
    assert sorted((i.player, i.amount) for i in returned.items) == [("alice", 500), ("bob", 300)]
    assert t.balances == {"alice": 100000, "bob": 100000}
    assert not t.state.bets
    assert t.state.round == 2
    assert t.phase.value == "betting"


@pytest.mark.parametrize("fact", ["die-on-die", "die-not-flat"])
def test_pa_585_3_g_die_on_die_or_not_flat_is_a_no_roll(fact: str) -> None:
    # TV-56
    t = table()
    t.bet("alice", "any7", 100)
    t.no_more_bets()
    events = t.roll("3-4", facts=(fact,))
    assert isinstance(events[1], ev.NoRollCalled)
    assert events[1].automatic
    assert "585.3(f)-(g)" in events[1].rule
    assert t.balance("alice") == 100000


def test_pa_585_3_f_dealer_calls_no_roll_after_the_result_is_read() -> None:
    t = table(by_hand=True)
    t.bet("alice", "any7", 100)
    t.no_more_bets()
    t.roll("3-4")
    with pytest.raises(RoleNotPermitted):
        t.execute(cmd.CallNoRoll(actor="fl", role=Role.FLOORPERSON, grounds=("die-fell-out",)))
    events = t.execute(cmd.CallNoRoll(actor="dealer", role=Role.DEALER,
                                      grounds=("die-fell-out",)))
    # Nothing automated: returning the wagers is the dealer's chore (noroll.effect).
    assert [e.kind for e in events] == ["NoRollCalled"]
    events = t.settle()
    assert [e.kind for e in events] == ["WagersReturned", "RoundCompleted"]
    assert t.balance("alice") == 100000


def test_pa_585_3_f_a_table_that_automates_returns_returns_the_wagers_at_once() -> None:
    t = table()
    t.bet("alice", "any7", 100)
    t.no_more_bets()
    events = t.roll("3-4", facts=("die-fell-out",))  # an automatic no roll (noroll.automatic)
    assert [e.kind for e in events] == ["DiceRolled", "NoRollCalled", "WagersReturned",
                                        "RoundCompleted"]
    assert t.balance("alice") == 100000


def test_noroll_effect_nothing_moves_until_the_wagers_are_returned() -> None:
    t = table(by_hand=True)
    t.bet("alice", "any7", 100)
    t.no_more_bets()
    t.roll("3-4")
    t.call_no_roll("die-fell-out")
    for refused in (lambda: t.bet("bob", "any7", 100), lambda: t.roll("2-2"),
                    lambda: t.no_more_bets()):
        with pytest.raises(ProcedureViolation) as e:
            refused()
        assert e.value.rule in ("noroll.effect", "wagering.before_shake")
    assert t.balance("alice") == 100000 - 100
    t.do("return-wagers")
    assert t.balance("alice") == 100000
    with pytest.raises(ProcedureViolation) as again:
        t.do("return-wagers")
    assert again.value.rule == "noroll.effect"


def test_pa_585_3_h_losers_collected_before_winners_paid() -> None:
    # TV-57
    t = table(by_hand=True)
    t.bet("alice", "any7", 100)
    t.bet("bob", "double4", 100)
    t.no_more_bets()
    t.roll("3-4")
    with pytest.raises(ProcedureViolation, match="585.3\\(h\\)"):
        t.execute(cmd.PayWinners(actor="dealer", role=Role.DEALER))
    events = t.settle()
    assert [e.kind for e in events] == ["LosersCollected", "WinnersPaid", "RoundCompleted"]
    assert events[0].seq < events[1].seq
    assert t.balances == {"alice": 100400, "bob": 99900}


def test_the_dice_are_shaken_after_no_more_bets() -> None:
    t = table()
    with pytest.raises(ProcedureViolation, match="668a.2\\(a\\)"):
        t.roll("3-4")


def test_every_wager_is_one_roll() -> None:
    t = table()
    t.bet("alice", "hop1-2", 100)
    t.no_more_bets()
    t.roll("5-5")
    t.settle()
    assert not t.state.bets
    assert t.balance("alice") == 99900
