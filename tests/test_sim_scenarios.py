"""The simulator on hand-written dice: every cent as the table pays it (pa-craps rules)."""

from __future__ import annotations

from typing import Any

from dicetable.sim.engine import LENGTH, RUIN, STOP_LOSS, STOP_WIN, Limits
from tests.sim_helpers import lane, path


def bets(*items: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"pack": "pa-craps", "bets": list(items), **top}


def test_pass_line_with_2x_odds_makes_the_point() -> None:
    # Come-out 4, then the 4: the flat pays 1 to 1, $20 odds pay 2 to 1.
    assert path(bets({"wager": "pass", "amount": 10, "odds": 2}), "2-2 1-3") == [0, 1000 + 4000]


def test_pass_line_with_odds_sevens_out() -> None:
    assert path(bets({"wager": "pass", "amount": 10, "odds": 2}), "3-3 3-4") == [0, -3000]


def test_pass_line_come_out_naturals_and_craps() -> None:
    assert path(bets({"wager": "pass", "amount": 10}), "3-4 5-6 1-1 6-6 1-2") == \
        [1000, 2000, 1000, 0, -1000]


def test_working_comeout_place_off_means_no_action_on_the_come_out() -> None:
    """working.comeout.place = false: the come-out 6 sets the point but pays no place bet."""
    place = {"wager": "place6", "amount": 12}
    assert path(bets(place), "3-3 3-3 3-4") == [0, 1400, 1400]
    # The player's own call (working.player_may_toggle) turns it on.
    assert path(bets({**place, "working": True}), "3-3 3-3 3-4") == [1400, 2800, 1600]


def test_winning_stays_up_and_press_after_each_win() -> None:
    # Point 4, then three 6s: $6 wins $7, pressed to $12 wins $14, to $18 wins $21; a
    # seven-out loses the $18 and the progression goes back to $6.
    press = {"wager": "place6", "amount": 6, "press": {"by": 6, "max": 18}}
    assert path(bets(press), "2-2 3-3 3-3 3-3 3-4") == [0, 700, 2100, 4200, 2400]


def test_regress_after_a_win() -> None:
    regress = {"wager": "place6", "amounts": ["$30", "$12"]}  # $30 wins $35, then $12 ($14)
    assert path(bets(regress), "2-2 3-3 3-3 3-4") == [0, 3500, 4900, 3700]


def test_come_odds_are_off_on_the_come_out_and_come_back() -> None:
    """working.comeout.come_odds = false: a come-out 7 takes the come bet, returns its odds."""
    come = {"wager": "come", "amount": 5, "odds": 2, "max_bets": 1}
    dice = "2-2 3-3 1-3 3-4"  # point 4; come to 6 (+$10 odds); point made; come-out 7
    assert path(bets(come), dice) == [0, 0, 0, -500]
    assert path(bets({**come, "odds_working": True}), dice) == [0, 0, 0, -1500]


def test_dont_pass_bar_12_and_laid_odds() -> None:
    dont = {"wager": "dontpass", "amount": 10, "odds": "max"}  # 6x laid: $60 on the 4
    assert path(bets(dont), "6-6 1-1 2-2 3-4") == [0, 1000, 1000, 1000 + 1000 + 3000]


def test_buy_commission_up_front_is_paid_per_decision_and_refunded_at_the_end() -> None:
    """commission.buy.when = up-front: $1 on $20; a win that stays up pays the next one."""
    buy = {"wager": "buy4", "amount": 20}
    # Placed before the first roll (-$1); off on the come-out (working.comeout.buy = false);
    # then the 4 wins $40 less the next $1; the last roll ends the session: taken down, and
    # the commission paid for a decision that never came is returned.
    assert path(bets(buy), "2-2 1-3 5-5") == [-100, 3800, 3900]


def test_fire_bet_pays_on_four_points_and_the_seven_out() -> None:
    made = "2-2 2-2 2-3 2-3 3-3 3-3 4-4 4-4"
    assert path(bets({"wager": "fire", "amount": 1}), made + " 2-2 3-4")[-1] == 2400
    # A come-out seven is no seven-out: the Fire Bet stays.
    assert path(bets({"wager": "fire", "amount": 1}), made + " 3-4 1-1")[-2:] == [0, 0]


def test_bonus_craps_all_small_needs_every_small_number_before_a_seven() -> None:
    small = {"wager": "allsmall", "amount": 1}
    assert path(bets(small), "1-1 1-2 2-2 2-3 3-3")[-1] == 3400
    assert path(bets(small), "1-1 1-2 3-4")[-1] == -100


def test_horn_pays_its_parts() -> None:
    # $4 horn on 2: one $1 part at 30 to 1 wins $30, three parts lose $3.
    assert path(bets({"wager": "horn", "amount": 4}), "1-1") == [2700]


def test_skip_point_takes_the_bet_down_while_its_number_is_the_point() -> None:
    place = {"wager": "place6", "amount": 12, "when": "point-on", "skip_point": True}
    # Point 6: no place 6; point made; new point 8: place 6 up, and the 6 pays it.
    assert path(bets(place), "3-3 3-3 4-4 3-3") == [0, 0, 0, 1400]
    # Made on the come-out (off), its number becomes the point: taken down, not paid.
    both = bets({**place, "when": "always"})
    assert path(both, "3-3 3-3 4-4 3-3") == [0, 0, 0, 1400]


def test_stop_loss_stops_betting_and_lets_contract_bets_ride() -> None:
    data = bets({"wager": "pass", "amount": 10}, {"wager": "field", "amount": 10},
                bankroll="$100", session={"max_rolls": 50, "stop_loss": "$20"})
    # The field loses twice (-$20 after the second roll) while the pass is on a point of 6;
    # the pass rides until the 6 (+$10) and nothing new is bet.
    result = lane(data, "3-3 2-3 2-2 3-3", Limits(50, 0, 10_000, None, 2000))
    assert result.reason[0] == STOP_LOSS
    assert result.final_net[0] == -2000 + 1000
    assert result.rolls[0] == 4


def test_stop_win() -> None:
    data = bets({"wager": "pass", "amount": 10})
    result = lane(data, "3-4 " * 10, Limits(10, 0, None, 2500, None))
    assert result.reason[0] == STOP_WIN
    assert result.final_net[0] == 3000
    assert result.rolls[0] == 3


def test_ruin_when_the_next_bets_cannot_be_covered() -> None:
    data = bets({"wager": "pass", "amount": 10, "odds": 2})
    # $15: the flat bet, yes; with a point on, $20 of odds, no: ruin; the flat bet rides.
    result = lane(data, "3-3 3-3 3-4", Limits(3, 0, 1500, None, None))
    assert result.reason[0] == RUIN
    assert result.final_net[0] == 1000
    assert result.rolls[0] == 2


def test_session_length() -> None:
    result = lane(bets({"wager": "field", "amount": 5}), "3-4 3-4 3-4", Limits(2))
    assert result.reason[0] == LENGTH
    assert result.rolls[0] == 2
    assert result.final_net[0] == -1000
