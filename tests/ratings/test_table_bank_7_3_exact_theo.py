"""spec/table-bank.md §7 item 3 and §8: each wager at its own edge, beside the pit's formula.

Every figure is worked by hand from the paytable and checked against what the fold of a real
table's log gives.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role
from dicetable.games.packs import load_preset, pack_from_data
from dicetable.odds.exact import wager_odds
from dicetable.ratings.fold import RatingsFold
from dicetable.ratings.formula import IndustryFormula, display_cents
from dicetable.ratings.rates import TheoRates
from dicetable.table import Table
from tests.ratings.helpers import only, table, throw

PA = load_preset("pa-craps")


def per_roll(code: str) -> Fraction:
    rate = TheoRates(PA).per_roll(code)
    assert rate is not None, f"{code} is rated per roll"
    return rate


NO_SIX_NO_SEVEN = ("1-2", "5-6", "2-3", "4-5", "5-5", "6-6", "1-1", "3-5", "2-6", "4-6")


def test_7_3_place_6_working_30_rolls_is_1_39_beside_the_formulas_4_23() -> None:
    """$10 Place 6 working 30 rolls: 10 x 1/216 x 30 = $1.39; the one-edge method at $10,
    60 decisions an hour, half an hour and 1.41% says $4.23 (about 3x)."""
    exact = 10_00 * per_roll("place6") * 30
    assert exact == Fraction(1000 * 30, 216)
    assert display_cents(exact) == 139
    assert display_cents(IndustryFormula().theo(Fraction(10_00), Fraction(1, 2))) == 423


def test_7_3_place_6_on_the_table_counts_the_rolls_it_worked() -> None:
    """A $12 Place 6 (payable at 7 to 6) set after the point, 30 rolls without 6 or 7, half an
    hour: 12 x 30/216 exactly, and the formula's 12 x 60 x 1/2 x 1.41%."""
    t, clock = table()
    throw(t, "2-2")  # the point is 4: nothing of alice's in action yet
    t.bet("alice", "place6", 12_00)
    for i in range(30):
        clock.advance(minutes=1)
        throw(t, NO_SIX_NO_SEVEN[i % len(NO_SIX_NO_SEVEN)])
    t.remove(next(b.id for b in t.state.bets_of("alice")))
    r = only(t)
    assert r.rolls == 30
    assert r.average_bet == 12_00
    assert r.seconds == 30 * 60
    assert r.theo == Fraction(12_00 * 30, 216)
    assert display_cents(r.theo) == 167
    assert r.industry_theo == Fraction(12_00) * 60 * Fraction(1, 2) * Fraction(141, 10_000)
    assert r.result == 0  # nothing won or lost: the theo is what it cost in expectation


def test_7_3_place_bets_off_on_the_come_out_do_not_count() -> None:
    """A place bet is off on the come-out (working.comeout.place): those rolls are not in
    action and cost nothing."""
    t, _ = table()
    t.bet("alice", "place8", 12_00)
    throw(t, "1-2", "5-6", "2-3")  # come-out rolls: craps, 11, then the point 5
    throw(t, "1-2")  # the first roll the 8 works
    assert only(t).theo == Fraction(12_00, 216)
    assert only(t).rolls == 1


def test_7_3_one_roll_bets_at_their_edge() -> None:
    """The field and a hop bet work one roll: amount x edge."""
    t, _ = table()
    t.bet("alice", "field", 5_00)
    t.bet("alice", "hop1-2", 1_00)
    throw(t, "3-3")
    field = wager_odds(PA, "field").house_edge
    hop = wager_odds(PA, "hop1-2").house_edge
    assert only(t).theo == 5_00 * field + 1_00 * hop
    assert field == Fraction(1, 18)


def test_7_3_contract_bets_at_their_edge_when_placed_and_odds_at_zero() -> None:
    """Pass $10 with $20 odds: 10 x 7/495, however many rolls it takes; the odds add 0."""
    t, _ = table()
    line = t.bet("alice", "pass", 10_00)
    throw(t, "2-2")
    t.odds("alice", line, 20_00)
    throw(t, "1-2", "5-6", "2-6", "1-3")  # the point made
    r = only(t)
    assert r.theo == 10_00 * Fraction(7, 495)
    assert dict(r.theo_by_wager)["odds:take"] == 0
    assert r.result == 10_00 + 40_00
    assert r.rolls == 5
    assert r.average_bet == Fraction(10_00 + 4 * 30_00, 5)  # odds counted, as the pit does


def test_7_3_dont_pass_taken_down_after_a_point_adds_what_was_given_up() -> None:
    """Don't pass $10 (3/220), taken down on the 4 where it wins 2 in 3: + 10 x 1/3."""
    t, _ = table()
    dont = t.bet("alice", "dontpass", 10_00)
    throw(t, "2-2", "1-2")
    t.remove(dont)
    assert only(t).theo == 10_00 * (Fraction(3, 220) + Fraction(1, 3))


def test_7_3_a_come_bet_is_rated_from_the_come_box() -> None:
    t, _ = table()
    throw(t, "2-2")
    t.bet("alice", "come", 10_00)
    throw(t, "3-3", "2-2")  # travels to the 6; the point 4 is made
    assert only(t).theo == 10_00 * wager_odds(PA, "come").house_edge


def test_7_3_krigman_same_dollars_per_roll_whatever_the_mix() -> None:
    """$10 on the 5 and $5 on the 5 plus $5 on the 9 lose the same per roll ($4 every 36
    rolls), though the pair is decided twice as often: dollars per roll, not an edge per
    decision, is what the theo counts."""
    ten_on_five = 10_00 * per_roll("place5")
    split = 5_00 * per_roll("place5") + 5_00 * per_roll("place9")
    assert ten_on_five == split
    assert 36 * ten_on_five == 4_00
    decision_edges = (wager_odds(PA, "place5").house_edge, wager_odds(PA, "place9").house_edge)
    assert decision_edges == (Fraction(1, 25), Fraction(1, 25))


def test_7_3_a_house_pack_paytable_changes_the_theo() -> None:
    """The field's 12 at 3 to 1 halves its edge (1/36): the theo follows the pack."""
    house = pack_from_data({"id": "river-house", "name": "River", "extends": "pa-craps",
                            "overrides": {"paytable.field.12": "3 to 1"}})
    t, _ = table(house)
    t.bet("alice", "field", 10_00)
    throw(t, "3-3")
    assert only(t).theo == Fraction(10_00, 36)


def test_8_industry_formula_values_are_cited_configurable_defaults() -> None:
    formula = IndustryFormula.parse(45, "7/495")
    assert formula.decisions_per_hour == 45
    assert formula.edge == Fraction(7, 495)
    assert all(rule.status.value == "industry-default" and "table-bank.md §8" in rule.citation
               for rule in formula.rules())
    with pytest.raises(InvalidInput, match="decisions per hour"):
        IndustryFormula.parse(0)
    with pytest.raises(InvalidInput, match="industry edge"):
        IndustryFormula.parse(60, "lots")


def test_7_3_a_no_roll_is_no_roll_worked() -> None:
    """A die off the table voids the roll (no settlement): the place bet did not work it."""
    t, _ = table()
    throw(t, "2-2")
    t.bet("alice", "place6", 12_00)
    events = t.roll("3-4", facts=("die-off-table",))
    assert [e.kind for e in events] == ["DiceRolled", "NoRollCalled"]
    t.settle()
    throw(t, "1-2")
    assert only(t).rolls == 1
    assert only(t).theo == Fraction(12_00, 216)


def test_7_3_props_and_hops_one_roll_bets_per_round() -> None:
    """At Props & Hops (Any 7 at 4 to 1, a hop at 15 to 1) each round is one roll."""
    t = Table.open("pa-props-and-hops", "ph-1", mode="live", actor="fran",
                   staff={"dee": Role.DEALER})
    t.bring_dice("P1", "P2", witness="dee")
    t.join("alice", 1)
    t.buy_in("alice", 100_00, actor="dee", role=Role.DEALER)
    t.shake(actor="dee", role=Role.DEALER)
    t.bet("alice", "any7", 5_00)
    t.shaker_round("3-4")
    t.bet("alice", "hop1-2", 5_00)
    t.shaker_round("5-5")
    fold = RatingsFold()
    fold.feed_all(t.log)
    [r] = fold.ratings()
    assert dict(r.theo_by_wager) == {"any7": 5_00 * Fraction(1, 6), "hop1-2": 5_00 * Fraction(1, 9)}
    assert r.rolls == 2
    assert r.result == 20_00 - 5_00


def test_7_3_an_overturned_no_roll_counts_as_the_roll_it_was() -> None:
    """IN 68 IAC 10-4-4(c)(1): the stickperson's die-on-die declaration may be overturned;
    the roll is then settled, and the wagers in action on it worked it."""
    t = Table.open("in-craps", "in-1", mode="live", actor="fran",
                   staff={"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER})
    t.join("ann", 1)
    t.buy_in("ann", 500_00)
    t.bring_dice("I1", "I2", "I3", "I4", "I5")
    t.bet("ann", "pass", 10_00)
    t.offer_dice("ann")
    t.select_dice()
    t.bet("ann", "field", 5_00)
    t.roll("3-4", facts=("die-on-die",))
    t.call_no_roll("die-on-die", actor="sam", role=Role.STICKPERSON)
    voided = RatingsFold()
    voided.feed_all(t.log)
    assert voided.ratings()[0].rolls == 0
    t.overturn(actor="bo", role=Role.BOXPERSON)
    t.settle()
    fold = RatingsFold()
    fold.feed_all(t.log)
    [r] = fold.ratings()
    field = wager_odds(t.pack, "field").house_edge
    assert r.rolls == 1
    assert r.theo == 10_00 * Fraction(7, 495) + 5_00 * field
    assert r.result == 10_00 - 5_00
