"""The four defects of issue 10, each with the test that would have caught it."""

from __future__ import annotations

from datetime import timedelta
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dicetable.core.clock import FixedClock
from dicetable.core.errors import IllegalWager, InvalidInput, ProcedureViolation
from dicetable.core.money import is_whole_units
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games.engine import check_amount
from dicetable.games.events import DiceRolled
from dicetable.games.state import Phase
from dicetable.rules.loader import PRESETS, derive_pack, load_preset
from dicetable.rules.model import Rule, RulePack, Status
from dicetable.table import Table
from dicetable.table.table import Automation
from dicetable.wagers.compile import LEAVES, CompiledWager, Outcome, compile_pack

from .conftest import funded

# -- 1. odds amounts are checked against the price of their own point -----------------------


def _dont_on_four() -> tuple[Table, str]:
    t = Table.open("pa-craps", "t1", mode="bare")
    t.join("alice")
    t.buy_in("alice", 500_00)
    line = t.bet("alice", "dontpass", 10_00)
    t.roll("2-2")
    t.settle()
    return t, line


@pytest.mark.parametrize("amount", [4_00, 10_00, 20_00])
def test_payout_inexact_lay_odds_on_the_4_are_priced_at_1_to_2(amount: int) -> None:
    # N.J.A.C. 13:69F-13.6(b)1 stand-in (payout.inexact): $4, $10, $20 laid against the 4
    # win $2, $5, $10 at 1 to 2 exactly; 2 to 3 is the price on the 6 and 8, not the 4.
    t, line = _dont_on_four()
    t.odds("alice", line, amount)
    assert t.state.conserved()


def test_payout_inexact_taken_odds_on_the_4_are_priced_at_2_to_1() -> None:
    t = Table.open("pa-craps", "t1", mode="bare")
    t.join("alice")
    t.buy_in("alice", 500_00)
    line = t.bet("alice", "pass", 10_00)
    t.roll("2-2")
    t.settle()
    t.odds("alice", line, 2_00)  # wins $4 at 2 to 1; 6 to 5 is the price on the 5 and 9
    with pytest.raises(IllegalWager, match="payout.inexact"):
        t.bet("alice", "place5", 6_00)  # still refused where the state's price is inexact


def _reachable_wins(wager: CompiledWager, state: int) -> set[Fraction]:
    """The oracle: walk every roll from ``state`` (independently of the engine)."""
    seen, todo, wins = {state}, [state], set()
    while todo:
        s = todo.pop()
        for index in range(36):
            step = wager.steps[s][index]
            if step.outcome is Outcome.WIN:
                wins.add(step.payout)
            if step.next_state != LEAVES and step.next_state not in seen:
                seen.add(step.next_state)
                todo.append(step.next_state)
    return wins


_WAGER_STATES = [(name, code, s) for name in PRESETS
                 for code, w in sorted(compile_pack(load_preset(name)).items())
                 for s in range(len(w.states))]


@given(case=st.sampled_from(_WAGER_STATES), amount=st.integers(1, 600_00))
def test_payout_inexact_amount_accepted_exactly_when_limits_unit_and_state_payout_allow(
        case: tuple[str, str, int], amount: int) -> None:
    """Every wager of every preset, every wager state, every roll from it."""
    name, code, state = case
    pack = load_preset(name)
    wager = compile_pack(pack)[code]
    limit_code = "odds" if wager.family == "odds" else code
    limits, _ = pack.limits(limit_code)
    expected = (amount % limits.unit == 0 and limits.minimum <= amount <= limits.maximum
                and amount % (wager.parts * limits.unit) == 0
                and all(is_whole_units(amount * net, pack.payout_unit)
                        for net in _reachable_wins(wager, state)))
    try:
        check_amount(pack, wager, amount, limit_code, state=state)
        accepted = True
    except (IllegalWager, InvalidInput):
        accepted = False
    assert accepted == expected


# -- 2. every rule value is read ---------------------------------------------------------------


def test_noroll_effect_wagers_returned_at_craps_returns_every_wager() -> None:
    house = derive_pack(load_preset("pa-craps"), "returns",
                        {"noroll.effect": "wagers-returned"})
    t = funded(house)
    t.bet("alice", "pass", 10_00)
    t.bet("bob", "field", 5_00)
    events = t.roll("3-4", facts=("die-off-table",))  # 623a.8(b): invalid without a call
    kinds = [e.kind for e in events]
    assert kinds == ["DiceRolled", "NoRollCalled", "WagersReturned"]
    assert events[-1].rule.startswith("house rule of returns")
    assert not t.state.bets
    assert t.balance("alice") == t.balance("bob") == 1_000_00
    # The preset keeps 'wagers-stand': the same throw leaves every wager where it was.
    stand = funded("pa-craps")
    stand.bet("alice", "pass", 10_00)
    stand.roll("3-4", facts=("die-off-table",))
    assert len(stand.state.bets) == 1


def _with_rule(rule: Rule) -> RulePack:
    """A full pack for another jurisdiction: the PA preset with one rule of its own."""
    base = load_preset("pa-craps")
    return RulePack("elsewhere", "elsewhere", {**base.rules, rule.id: rule})


def _live_in(pack: RulePack) -> Table:
    t = Table.open(pack, "t1", mode="live", clock=FixedClock(), actor="fran",
                   staff={"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER})
    t.join("ann", seat=1)
    t.buy_in("ann", 100_00)
    t.bring_dice("A1", "A2", "A3", "A4", "A5")
    t.new_shooter("ann")
    return t


def test_pa_623a_8_a_throw_line_bet_required_is_read() -> None:
    with pytest.raises(ProcedureViolation, match="shooter.line_bet"):
        _live_in(load_preset("pa-craps")).roll("3-4")
    # 623a.8(a) is regulation text in the preset; a pack for elsewhere may say otherwise,
    # and then the shooter throws with no line bet.
    relaxed = _live_in(_with_rule(Rule("throw.line_bet_required", False, "elsewhere",
                                       Status.INDUSTRY_DEFAULT)))
    assert relaxed.roll("3-4")[0].kind == "DiceRolled"


# -- 3. a player with a wager on the layout does not leave it orphaned --------------------------


def test_pa_668a_2_c_a_player_who_has_wagered_stays_seated_until_the_round_is_complete() -> None:
    t = funded("pa-props-and-hops", seated=True)
    t.bet("alice", "any7", 1_00)
    with pytest.raises(ProcedureViolation, match="668a.2"):
        t.execute(cmd.LeaveTable(actor="alice", role=Role.PLAYER, player="alice"))
    t.no_more_bets()
    t.roll("3-4")
    t.execute(cmd.LeaveTable(actor="alice", role=Role.PLAYER, player="alice"))
    assert t.state.players["alice"].seat is None


def test_leaving_wagers_refuse_keeps_the_player_until_the_wagers_are_down() -> None:
    t = funded("pa-craps", seated=True)
    t.bet("alice", "place6", 6_00)
    leave = cmd.LeaveTable(actor="alice", role=Role.PLAYER, player="alice")
    with pytest.raises(ProcedureViolation, match="leaving.wagers") as refused:
        t.execute(leave)
    assert "industry practice" in refused.value.citation
    assert "industry-default" in refused.value.citation
    t.remove("b1")
    t.execute(leave)


def test_leaving_wagers_take_down_returns_what_may_be_taken_down_and_refuses_a_contract() -> None:
    house = derive_pack(load_preset("pa-craps"), "h", {"leaving.wagers": "take-down"})
    t = funded(house, seated=True)
    t.bet("alice", "place6", 6_00)
    events = t.execute(cmd.LeaveTable(actor="alice", role=Role.PLAYER, player="alice"))
    assert [e.kind for e in events] == ["BetRemoved", "PlayerLeft"]
    assert t.balance("alice") == 1_000_00
    assert not t.state.bets
    t.bet("bob", "pass", 10_00)
    t.roll("2-2")  # the pass line is a contract bet once its point is set
    with pytest.raises(IllegalWager, match="removal.line_after_point"):
        t.execute(cmd.LeaveTable(actor="bob", role=Role.PLAYER, player="bob"))
    assert len(t.state.bets) == 1


# -- 4. the electronic round is the table's own automation ------------------------------------


def _electronic(clock: FixedClock) -> Table:
    t = Table.open("pa-craps", "e1", mode="electronic", clock=clock, actor="fran",
                   staff={"dee": Role.DEALER}, betting_seconds=20)
    t.join("alice", seat=1)
    t.buy_in("alice", 100_00, actor="table", role=Role.SYSTEM)
    return t


def test_design_3_electronic_round_betting_timer_csprng_roll_and_chores_are_automations() -> None:
    clock = FixedClock()
    t = _electronic(clock)
    assert t.automations == frozenset(Automation)
    t.bet("alice", "field", 5_00)
    clock.advance(seconds=19)
    assert t.advance() == []  # the betting time is not up: nothing happens
    clock.advance(seconds=1)
    kinds = [(e.kind, e.actor, e.role) for e in t.advance()]
    assert kinds[0] == ("BettingClosed", "table", Role.SYSTEM)
    assert kinds[1][0] == "DiceRolled"
    rolled = t.log[-4]
    assert isinstance(rolled, DiceRolled)
    assert rolled.source == "csprng"
    assert [k for k, _, _ in kinds[2:]] == ["LosersCollected", "WinnersPaid", "PuckMoved"]
    assert t.phase is Phase.BETTING
    assert t.state.conserved()
    assert t.bets_close_at == (clock.now() + timedelta(seconds=20)).isoformat()


def test_design_3_one_code_path_per_chore_dealer_or_automation() -> None:
    """The same roll settled by hand (live: no automations) and by the table: same events."""
    by_hand = funded("pa-craps", automations=())
    automatic = funded("pa-craps")
    for t in (by_hand, automatic):
        t.bet("alice", "pass", 10_00)
        t.bet("bob", "field", 5_00)
    by_hand.roll("1-1")
    assert by_hand.phase is Phase.SETTLING
    hand_events = by_hand.settle()
    auto_events = automatic.roll("1-1")[1:]
    strip = [(e.kind, getattr(e, "items", None), e.rule) for e in hand_events]
    assert strip == [(e.kind, getattr(e, "items", None), e.rule) for e in auto_events]
    assert by_hand.balances == automatic.balances
