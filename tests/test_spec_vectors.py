"""Every test vector of spec/regulations.md §8 that concerns the table (TV-01 .. TV-61), written
as table scripts. Each test is named after the vector and the section it encodes.

(TV-63 .. TV-72 concern dice custody and inventory and are tested with that subsystem.)
"""

from __future__ import annotations

import pytest

from dicetable.application.scripts import run_script

PA = """dicetable-script 1
pack {pack}
opener fran floorperson
staff sam stickperson
staff bo boxperson
staff dee dealer
seat 9 alice 500
seat 10 bob 300
seat 11 carl 300
"""
PA_SHOOTER = """bo boxperson bring-dice A1 A2 A3 A4 A5
sam stickperson offer-dice alice
alice player select-dice A1 A2
alice player bet pass 10
"""
MINI = """dicetable-script 1
pack pa-mini-craps
opener fran floorperson
staff dee dealer
staff sam stickperson
seat 1 alice 500
seat 2 bob 300
fran floorperson bring-dice M1 M2 M3 M4 M5
dee dealer offer-dice alice
alice player select-dice M1 M2
alice player bet pass 10
"""
IN = """dicetable-script 1
pack in-craps
opener fran floorperson
staff sam stickperson
staff bo boxperson
staff dee dealer
staff pat pit-boss
seat 1 ann 500
seat 2 ben 300
seat 3 cy 300
bo boxperson bring-dice I1 I2 I3 I4 I5
"""
IN_SHOOTER = """ann player bet pass 10
sam stickperson offer-dice ann
ann player select-dice I1 I2
"""
PH = """dicetable-script 1
pack pa-props-and-hops
opener fran floorperson
staff dee dealer
seat 1 amy 100
seat 2 bea 100
seat 3 cal 100
fran floorperson bring-dice P1 P2 witness=dee
dee dealer shake
"""
PH_SHAKE = """dee dealer no-more-bets
dee dealer offer-shaker amy
amy player player-shake 3
amy player return-shaker
dee dealer uncover
"""

VECTORS: dict[str, str] = {
    "tv01_pa_623a_8_a_no_throw_without_a_line_bet": PA.format(pack="pa-craps") + """
bo boxperson bring-dice A1 A2 A3 A4 A5
sam stickperson offer-dice alice
alice player select-dice A1 A2
sam stickperson roll 3-4 ! ProcedureViolation shooter.line_bet
expect phase betting
""",
    "tv02_pa_623a_8_a_dont_pass_satisfies_the_line_bet": PA.format(pack="pa-craps") + """
bo boxperson bring-dice A1 A2 A3 A4 A5
sam stickperson offer-dice alice
alice player select-dice A1 A2
alice player bet dontpass 10
sam stickperson roll 3-4
expect valid yes
""",
    "tv03_pa_623a_8_b_one_die_off_the_table_is_invalid_automatically":
        PA.format(pack="pa-craps") + PA_SHOOTER + """
sam stickperson roll - die-off-table
expect valid no
expect phase betting
expect bet b1 10
""",
    "tv04_pa_623a_8_b_mini_craps_both_dice_off_the_table": MINI + """
dee dealer roll - die-off-table
expect valid no
""",
    "tv06_pa_623a_8_d_dice_on_a_players_chips_is_no_ground": PA.format(pack="pa-craps")
        + PA_SHOOTER + """
sam stickperson roll 2-3 die-on-chips
bo boxperson no-roll die-on-chips ! ProcedureViolation noroll.excluded_grounds
dee dealer settle
expect point 5
""",
    "tv08_pa_623a_8_c_3_dice_on_the_bank_boxperson_calls_no_roll":
        PA.format(pack="pa-craps") + PA_SHOOTER + """
sam stickperson roll 2-3 die-on-bank
bo boxperson no-roll die-on-bank
expect valid no
expect point none
""",
    "tv09_pa_623a_8_c_4_die_in_the_cup_stickperson_calls_no_roll":
        PA.format(pack="pa-craps") + PA_SHOOTER + """
sam stickperson roll 2-3 die-in-cup
sam stickperson no-roll die-in-cup
expect valid no
""",
    "tv10_pa_623a_8_e_1_base_dealer_may_not_call_no_roll": PA.format(pack="pa-craps")
        + PA_SHOOTER + """
sam stickperson roll 2-3 not-released-together
dee dealer no-roll not-released-together ! RoleNotPermitted noroll.callers
expect phase settling
""",
    "tv12_pa_623a_8_e_2_mini_craps_floorperson_calls_no_roll": MINI + """
dee dealer roll 4-5 not-released-together
fran floorperson no-roll not-released-together
expect valid no
""",
    "tv13_pa_623a_8_e_2_mini_craps_dealer_calls_no_roll_die_in_cup": MINI + """
dee dealer roll 4-5 die-in-cup
dee dealer no-roll die-in-cup
expect valid no
""",
    "tv15_pa_623a_8_c_4_die_on_a_rail": PA.format(pack="pa-craps") + PA_SHOOTER + """
sam stickperson roll 6-5 die-on-rail
sam stickperson no-roll die-on-rail
expect valid no
expect balance alice 490
""",
    "tv16_pa_623a_8_c_5_cheating_technique": PA.format(pack="pa-craps") + PA_SHOOTER + """
sam stickperson roll 6-1
bo boxperson no-roll cheating
expect valid no
""",
    "tv17_pa_623a_8_c_6_stickperson_deems_the_throw_improper":
        PA.format(pack="pa-craps") + PA_SHOOTER + """
sam stickperson roll 6-1
sam stickperson no-roll improper-throw
expect valid no
""",
    "pa_623a_8_c_6_mini_craps_floorperson_may_not_call_improper": MINI + """
dee dealer roll 6-1
fran floorperson no-roll improper-throw ! ProcedureViolation noroll.improper_callers
dee dealer no-roll improper-throw
expect valid no
""",
    "tv18_in_10_4_3_a_four_dice_are_not_enough": IN + """
ann player bet pass 10
sam stickperson offer-dice ann I1 I2 I3 I4 ! ProcedureViolation shooter.dice_offered
""",
    "tv19_in_10_4_3_b_shooter_picks_two_the_rest_go_to_the_bowl": IN + IN_SHOOTER + """
expect shooter ann
""",
    "tv20_in_10_4_3_b_first_offer_left_of_the_boxperson": IN + """
sam stickperson offer-dice ben ! ProcedureViolation shooter.first_offer
sam stickperson offer-dice ann
""",
    "in_10_4_3_b_offer_goes_clockwise_after_a_decline": IN + """
sam stickperson offer-dice ann
ann player decline
sam stickperson offer-dice cy ! ProcedureViolation
sam stickperson offer-dice ben
ben player bet dontpass 10
ben player select-dice I3 I4
expect shooter ben
""",
    "tv22_in_10_4_3_c_no_line_bet_no_shooter": IN + """
sam stickperson offer-dice ann
ann player select-dice I1 I2 ! ProcedureViolation shooter.line_bet
expect shooter none
""",
    "tv23_in_10_4_3_c_dont_pass_is_enough_to_shoot": IN + """
ann player bet dontpass 10
sam stickperson offer-dice ann
ann player select-dice I1 I2
expect shooter ann
""",
    "tv25_in_10_4_3_d_1_seven_out_ends_the_shooter": IN + IN_SHOOTER + """
sam stickperson roll 3-3
dee dealer settle
sam stickperson roll 4-3
dee dealer settle
expect shooter none
sam stickperson offer-dice ann
""",
    "in_10_4_3_d_1_a_come_out_seven_does_not_end_the_shooter": IN + IN_SHOOTER + """
sam stickperson roll 4-3
dee dealer settle
expect shooter ann
""",
    "tv26_in_10_4_3_d_making_the_point_keeps_the_shooter": IN + IN_SHOOTER + """
sam stickperson roll 4-4
dee dealer settle
sam stickperson roll 6-2
dee dealer settle
expect shooter ann
expect point none
""",
    "tv27_in_10_4_3_d_2_a_continual_invalid_rolls_remove_the_shooter": IN + IN_SHOOTER + """
sam stickperson roll - die-off-table
sam stickperson roll - die-off-table
sam stickperson remove-shooter continual-invalid-rolls
expect shooter none
""",
    "tv28_in_10_4_3_d_2_b_boxperson_removes_for_delay": IN + IN_SHOOTER + """
dee dealer remove-shooter unreasonable-delay ! RoleNotPermitted authority.remove_shooter
bo boxperson remove-shooter unreasonable-delay
expect shooter none
""",
    "tv29_in_10_4_3_d_shooter_may_give_up_the_dice": IN + IN_SHOOTER + """
sam stickperson roll 4-4
dee dealer settle
ann player relinquish
expect shooter none
""",
    "tv30_in_10_4_4_b_1_die_off_the_table": IN + IN_SHOOTER + """
sam stickperson roll - die-off-table
expect valid no
""",
    "tv31_in_10_4_4_b_2_three_dice_thrown": IN + IN_SHOOTER + """
sam stickperson roll 2-2 more-than-two-dice
expect valid no
""",
    "tv33_in_10_4_4_c_1_die_on_die_stickperson_declares_and_it_may_be_overturned":
        IN + IN_SHOOTER + """
sam stickperson roll 3-4 die-on-die
expect valid yes
bo boxperson no-roll die-on-die ! RoleNotPermitted noroll.callers
sam stickperson no-roll die-on-die
expect valid no
bo boxperson overturn
dee dealer settle
expect balance ann 510
""",
    "tv34_in_10_4_4_c_2_thrown_by_a_patron_other_than_the_shooter": IN + IN_SHOOTER + """
sam stickperson roll 5-6 thrower=ben
sam stickperson no-roll thrown-by-non-shooter
expect valid no
""",
    "tv35_in_10_4_4_c_4_die_in_the_dice_bowl": IN + IN_SHOOTER + """
sam stickperson roll 5-6 die-in-bowl
sam stickperson no-roll die-in-bowl
expect valid no
""",
    "tv37_in_10_4_4_c_10_no_good_faith_and_short_of_half_the_table":
        IN + IN_SHOOTER + """
sam stickperson roll 5-6 no-good-faith-attempt distance=2/5
sam stickperson no-roll no-good-faith-and-short
expect valid no
""",
    "in_10_4_4_c_10_needs_both_conditions": IN + IN_SHOOTER + """
sam stickperson roll 5-6 no-good-faith-attempt distance=3/5
sam stickperson no-roll no-good-faith-and-short ! ProcedureViolation noroll.grounds
""",
    "tv39_in_10_4_4_c_11_top_face_cannot_be_determined": IN + IN_SHOOTER + """
sam stickperson roll 5-6 top-face-indeterminable
sam stickperson no-roll top-face-indeterminable
expect valid no
""",
    "tv41_in_10_4_4_c_8_slid_dice": IN + IN_SHOOTER + """
sam stickperson roll 5-6 slid
sam stickperson no-roll slid
expect valid no
""",
    "in_10_4_4_c_no_catch_all_improper_throw": IN + IN_SHOOTER + """
sam stickperson roll 5-6
sam stickperson no-roll improper-throw ! ProcedureViolation noroll.grounds
""",
    "pa_623a_8_has_no_overturn": PA.format(pack="pa-craps") + PA_SHOOTER + """
sam stickperson roll 6-1
sam stickperson no-roll improper-throw
bo boxperson overturn ! RoleNotPermitted authority.overturn_no_roll
""",
    "tv42_pa_668a_2_a_no_wager_once_the_dice_are_shaken": PH + """
amy player bet double6 1
dee dealer no-more-bets
dee dealer offer-shaker amy
bea player bet double6 1 ! ProcedureViolation wagering.before_shake
""",
    "tv43_pa_668a_2_b_no_cash_verbal_wager": PH + """
amy player bet double6 20 with=cash ! IllegalWager wagering.medium
""",
    "tv44_pa_668a_2_c_standing_patron_may_not_wager": PH + """
player-x dealer join stan ! RoleNotPermitted
stan player join stan
dee dealer buy stan 20
stan player bet double6 1 ! IllegalWager wagering.seated_only
""",
    "tv46_pa_668a_2_d_2_four_the_hardway_wins_on_2_2": PH + """
amy player bet double4 1
""" + PH_SHAKE + """
dee dealer roll 2-2
dee dealer settle
expect balance amy 130
""",
    "tv47_pa_668a_2_d_2_four_the_hardway_loses_on_1_3": PH + """
amy player bet double4 1
""" + PH_SHAKE + """
dee dealer roll 1-3
dee dealer settle
expect balance amy 99
""",
    "tv48_pa_668a_2_d_4_eight_the_hardway_loses_on_5_3": PH + """
amy player bet double8 1
""" + PH_SHAKE + """
dee dealer roll 5-3
dee dealer settle
expect balance amy 99
""",
    "tv49_pa_668a_2_d_1_two_the_hardway_wins_on_1_1": PH + """
amy player bet double2 1
""" + PH_SHAKE + """
dee dealer roll 1-1
dee dealer settle
expect balance amy 130
""",
    "tv51_pa_668a_2_d_5_ten_the_hardway_wins_on_5_5": PH + """
amy player bet double10 1
""" + PH_SHAKE + """
dee dealer roll 5-5
dee dealer settle
expect balance amy 130
""",
    "tv52_pa_585_3_e_two_shakes_are_not_enough": PH + """
dee dealer no-more-bets
dee dealer offer-shaker amy
amy player player-shake 2
amy player return-shaker ! ProcedureViolation shaker.min_shakes
amy player player-shake 1
amy player return-shaker
""",
    "pa_585_3_e_lid_removed_is_recovered_and_shaken_again": PH + """
dee dealer no-more-bets
dee dealer offer-shaker amy
amy player player-shake 3
amy player remove-lid
amy player return-shaker ! ProcedureViolation shaker.min_shakes
amy player player-shake 3
amy player return-shaker
""",
    "tv54_pa_585_3_f_die_falls_out_all_wagers_returned": PH + """
amy player bet double4 5
bea player bet field 3
""" + PH_SHAKE + """
dee dealer roll 2-2 die-fell-out
expect valid no
expect balance amy 100
expect balance bea 100
expect phase betting
""",
    "tv56_pa_585_3_g_die_not_flat_all_wagers_returned": PH + """
amy player bet any7 5
""" + PH_SHAKE + """
dee dealer roll 3-4 die-not-flat
expect balance amy 100
""",
    "tv57_pa_585_3_h_losers_collected_before_winners_paid": PH + """
amy player bet any7 1
bea player bet double4 1
""" + PH_SHAKE + """
dee dealer roll 3-4
dee dealer pay ! ProcedureViolation settlement.order
dee dealer collect
dee dealer pay
dee dealer complete-round
expect balance amy 104
expect balance bea 99
""",
    "tv59_pa_585_3_e_first_shaker_to_the_player_farthest_left": PH + """
dee dealer no-more-bets
dee dealer offer-shaker bea ! ProcedureViolation shaker.first_to
dee dealer offer-shaker amy
""",
    "pa_585_3_j_same_player_shakes_until_a_seven": PH + PH_SHAKE + """
dee dealer roll 2-3
dee dealer settle
expect shaker amy
dee dealer shake
""" + PH_SHAKE + """
dee dealer roll 3-4
dee dealer settle
expect shaker bea
dee dealer shake
dee dealer no-more-bets
dee dealer offer-shaker amy ! ProcedureViolation shaker.passes_on
dee dealer offer-shaker bea
""",
    "pa_585_3_d_dealer_shakes_before_play_and_after_each_round": PH + PH_SHAKE + """
dee dealer roll 2-3
dee dealer settle
dee dealer no-more-bets ! ProcedureViolation authority.shaker
dee dealer shake
dee dealer no-more-bets
""",
    "pa_585_3_d_floorperson_loads_the_shaker_with_the_dealer_present": """dicetable-script 1
pack pa-props-and-hops
opener fran floorperson
staff dee dealer
dee dealer bring-dice P1 P2 ! RoleNotPermitted authority.dice
fran floorperson bring-dice P1 P2 ! ProcedureViolation authority.dice
fran floorperson bring-dice P1 P2 P3 witness=dee ! ProcedureViolation
fran floorperson bring-dice P1 P2 witness=dee
""",
    "tv61_pa_668a_3_c_shaker_never_left_unattended": PH + """
fran floorperson relieve dee dealer ! ProcedureViolation dice.never_unattended
fran floorperson assign dora dealer
fran floorperson relieve dee dealer
""",
    "pa_585_3_b_1_shaker_dice_at_most_24_hours_then_play_is_blocked": PH + """
advance 23h
amy player bet any7 1
advance 2h
expect blocked yes
dee dealer no-more-bets ! ProcedureViolation dice.max_hours
clock-1 system tick
expect alert dice-expired
dee dealer no-more-bets ! ProcedureViolation dice.max_hours
fran floorperson remove-dice P1 P2 reason=24-hours
fran floorperson bring-dice Q1 Q2 witness=dee
expect blocked no
dee dealer shake
dee dealer no-more-bets
""",
}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_spec_vector(name: str) -> None:
    result = run_script(VECTORS[name])
    assert result.ok, str(result.failure)
    assert result.table is not None
    assert result.table.state.conserved()
