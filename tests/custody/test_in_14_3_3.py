"""68 IAC 14-3-3: dice specifications, judged at the pre-play inspection."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.inspection import CHECK_RULES, judge
from dicetable.custody.model import Check, DieCheck, DieState
from dicetable.custody.rules import load_custody_pack
from tests.custody.scenario import PAT, TOOLS, as_, new_ledger, serials, stock

IN = load_custody_pack("in")


def sides(*values: str) -> tuple[Decimal, ...]:
    return tuple(Decimal(v) for v in values)


@pytest.mark.parametrize("side", ["0.750", "0.7500", "0.760", "0.775", "0.7750"])
def test_in_14_3_3_b_1_sides_from_0_750_to_0_775_inclusive_pass(side: str) -> None:
    assert judge(IN, DieCheck("A", sides(side, side, side))).passed


@pytest.mark.parametrize("side", ["0.7499", "0.700", "0.7751", "0.800"])
def test_in_14_3_3_b_1_sides_outside_the_range_fail(side: str) -> None:
    result = judge(IN, DieCheck("A", sides(side, side, side)))
    assert not result.passed
    assert "68 IAC 14-3-3(b)(1)" in result.problems[0]


def test_in_14_3_3_b_1_a_perfect_cube_within_the_measuring_tolerance() -> None:
    assert judge(IN, DieCheck("A", sides("0.7500", "0.7502", "0.7501"))).passed
    result = judge(IN, DieCheck("A", sides("0.7500", "0.7600", "0.7500")))
    assert not result.passed
    assert "not a cube" in result.problems[0]
    assert "[industry-default]" in result.problems[0]     # the tolerance is a stand-in


@pytest.mark.parametrize("check", list(Check))
def test_in_14_3_3_b_each_required_check_must_pass(check: Check) -> None:
    passed = tuple(c for c in Check if c is not check)
    result = judge(IN, DieCheck("A", sides("0.75", "0.75", "0.75"), passed))
    assert not result.passed
    assert result.problems == (f"failed the {check} check [{IN.cite(CHECK_RULES[check])}]",)


@pytest.mark.parametrize(("check", "section"), [
    (Check.LOGO, "14-3-3(b)(2)"), (Check.FLAT_FACES, "14-3-3(b)(4)"),
    (Check.SQUARE_EDGES, "14-3-3(b)(5)"), (Check.BALANCED, "14-3-3(b)(7)"),
    (Check.OPPOSITE_FACES, "14-3-3(b)(9)")])
def test_in_14_3_3_b_checks_cite_their_subsection_as_regulation(check: Check,
                                                                 section: str) -> None:
    rule = IN.rule(CHECK_RULES[check])
    assert section in rule.citation
    assert rule.status.value == "regulation"


def test_in_14_3_3_b_9_opposite_faces_failure_keeps_the_die_out_of_play() -> None:
    led, _ = new_ledger("in")
    dice = serials("D", 2)
    stock(led, dice)
    bad = DieCheck(dice[1], sides("0.75", "0.75", "0.75"),
                   tuple(c for c in Check if c is not Check.OPPOSITE_FACES))
    events = led.execute(cmd.InspectDice(**as_(PAT), checks=(DieCheck(dice[0], bad.measurements),
                                                             bad),
                                         tools=TOOLS, under_surveillance=True))
    inspected = events[0]
    assert isinstance(inspected, ev.DiceInspected)
    assert [r.passed for r in inspected.results] == [True, False]
    assert led.state.dice[dice[1]].state is DieState.QUARANTINED


def test_in_14_3_3_measurements_are_three_exact_decimals() -> None:
    from dicetable.core.errors import InvalidInput

    with pytest.raises(InvalidInput):
        judge(IN, DieCheck("A", sides("0.75", "0.75")))
