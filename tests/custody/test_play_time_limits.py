"""The time dice may stay in play: 24 hours in a shaker (PA 668a.3(b)(1), regulation) and at a
craps table (PA 661a.4(d) by analogy, NJ 13:69E-1.16(b): stand-ins, configurable)."""

from __future__ import annotations

import pytest

from dicetable.core.clock import FixedClock
from dicetable.core.errors import ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import PlayMode
from dicetable.custody.rules import derive_custody_pack, load_custody_pack
from tests.custody.scenario import (
    DEE,
    FLO,
    PAT,
    START,
    as_,
    in_play,
    inspect,
    new_ledger,
    refused,
    serials,
    stock,
    to_table,
)

SWEEP = cmd.CheckDeadlines(actor="sweep", role=Role.SYSTEM)


def test_pa_668a_3_b_1_shaker_dice_stay_on_the_table_at_most_24_hours() -> None:
    led, clock = new_ledger("pa")
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice, FLO)
    to_table(led, dice, "props-1", PlayMode.SHAKER)
    issued = led.log[-1]
    assert isinstance(issued, ev.DiceIssuedToTable)
    assert issued.rule == "58 Pa. Code § 668a.3(b)(1); § 585.3(b)(1) [regulation]"
    clock.advance(hours=24)                  # exactly 24 hours is not "more than 24 hours"
    led.check_dice_in_play("props-1", dice)
    assert led.execute(SWEEP) == []
    clock.advance(seconds=1)
    with pytest.raises(ProcedureViolation) as info:
        led.check_dice_in_play("props-1", dice)
    assert info.value.rule == "play.max_hours.shaker"
    overdue = led.execute(SWEEP)
    assert [e.kind for e in overdue] == ["DiceOverdue"]
    assert overdue[0].alert
    assert led.execute(SWEEP) == []                 # one alert per issue, not one per sweep


def test_pa_668a_3_d_the_floorperson_loads_the_shaker_while_the_dealer_watches() -> None:
    led, _ = new_ledger("pa")
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice, FLO)
    refused(led, cmd.IssueToTable(**as_(PAT), dice=dice, table="props-1", game="props-and-hops",
                                  mode=PlayMode.SHAKER, received_by=DEE),
            RoleNotPermitted, "play.shaker_loader", "668a.3(d)")
    to_table(led, dice, "props-1", PlayMode.SHAKER)


def test_pa_661a_4_d_craps_dice_24_hours_is_a_configurable_stand_in() -> None:
    pa = load_custody_pack("pa")
    rule = pa.rule("play.max_hours.table")
    assert rule.status.value == "other-jurisdiction"
    assert "661a.4(d)" in rule.citation
    house = derive_custody_pack(pa, "river-house", {"play.max_hours.table": 12})
    clock = FixedClock(START)
    led = CustodyLedger.open(house, "river", clock=clock)
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice)
    to_table(led, dice)
    clock.advance(hours=12)
    assert led.execute(SWEEP) == []
    clock.advance(seconds=1)
    assert [e.kind for e in led.execute(SWEEP)] == ["DiceOverdue"]


def test_dice_in_play_are_checked_against_their_table() -> None:
    led, _, dice = in_play("pa", table="craps-1")
    led.check_dice_in_play("craps-1", dice[:2])
    with pytest.raises(ProcedureViolation) as info:
        led.check_dice_in_play("craps-2", dice[:2])
    assert info.value.rule == "storage.source_only"
    with pytest.raises(ProcedureViolation):
        led.check_dice_in_play("craps-1", ("NOPE",))
