"""68 IAC 14-3-7: the pit boss inspects dice before play, on camera, with the tools."""

from __future__ import annotations

import pytest

from dicetable.core.errors import ProcedureViolation, RoleNotPermitted
from dicetable.custody import commands as cmd
from dicetable.custody.model import DieState
from tests.custody.scenario import (
    BOB,
    FLO,
    PAT,
    TOOLS,
    as_,
    good_check,
    inspect,
    new_ledger,
    refused,
    serials,
    stock,
)


def test_in_14_3_7_a_the_pit_boss_inspects_before_play() -> None:
    led, _ = new_ledger("in")
    dice = serials("D", 2)
    stock(led, dice)
    refused(led, cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-1", received_by=BOB),
            ProcedureViolation, "inspection.required_before_play", "14-3-7(a)")
    refused(led, cmd.InspectDice(**as_(FLO), checks=tuple(good_check(s) for s in dice),
                                 tools=TOOLS, under_surveillance=True),
            RoleNotPermitted, "inspection.roles", "14-3-7(a)")
    inspect(led, dice, PAT)
    assert {led.state.dice[s].state for s in dice} == {DieState.INSPECTED}
    led.execute(cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-1", received_by=BOB))


def test_in_14_3_7_a_pa_stand_in_lets_the_floorperson_inspect_at_mini_craps() -> None:
    led, _ = new_ledger("pa")
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice, FLO)                         # MA 146.46(6)(a) standing in for PA
    rule = led.pack.rule("inspection.roles")
    assert rule.status.value == "other-jurisdiction"
    assert "146.46" in rule.citation


def test_in_14_3_7_b_inspection_is_under_surveillance_monitoring() -> None:
    led, _ = new_ledger("in")
    dice = serials("D", 1)
    stock(led, dice)
    refused(led, cmd.InspectDice(**as_(PAT), checks=(good_check(dice[0]),), tools=TOOLS,
                                 under_surveillance=False),
            ProcedureViolation, "inspection.surveillance", "14-3-7(b)")


@pytest.mark.parametrize("missing", TOOLS)
def test_in_14_3_7_b_inspection_uses_micrometer_caliper_set_square_and_magnet(
        missing: str) -> None:
    led, _ = new_ledger("in")
    dice = serials("D", 1)
    stock(led, dice)
    tools = tuple(t for t in TOOLS if t != missing)
    err = refused(led, cmd.InspectDice(**as_(PAT), checks=(good_check(dice[0]),), tools=tools,
                                       under_surveillance=True),
                  ProcedureViolation, "inspection.tools", "14-3-7(b)")
    assert missing in str(err)
