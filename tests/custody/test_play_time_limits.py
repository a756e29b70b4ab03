"""The time dice may stay in play: 24 hours in a shaker (PA 668a.3(b)(1), regulation) and at a
craps table (PA 661a.4(d) by analogy, NJ 13:69E-1.16(b): stand-ins, configurable). One rule,
the game pack's ``dice.max_hours``, read by the table and by custody alike."""

from __future__ import annotations

import pytest

from dicetable.core.errors import ProcedureViolation, RoleNotPermitted, RulePackInvalid
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.model import PlayMode
from dicetable.custody.rules import (
    derive_custody_pack,
    dice_limit,
    load_custody_pack,
    pack_from_dict,
)
from tests.custody.scenario import (
    DEE,
    FLO,
    PAT,
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
    assert issued.rule == "58 Pa. Code § 585.3(b)(1); § 668a.3(b)(1) [regulation]"
    clock.advance(hours=24)                  # exactly 24 hours is not "more than 24 hours"
    led.check_dice_in_play("props-1", dice)
    assert led.execute(SWEEP) == []
    clock.advance(seconds=1)
    with pytest.raises(ProcedureViolation) as info:
        led.check_dice_in_play("props-1", dice)
    assert info.value.rule == "dice.max_hours"
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


def test_pa_661a_4_d_craps_dice_24_hours_is_a_stand_in_of_the_game_pack() -> None:
    hours, citation = dice_limit("PA", "craps")
    assert hours == 24
    assert "661a.4(d)" in citation
    assert "[other-jurisdiction]" in citation
    led, clock, _ = in_play("pa")
    assert led.log[-1].rule == citation
    clock.advance(hours=24)
    assert led.execute(SWEEP) == []
    clock.advance(seconds=1)
    overdue = led.execute(SWEEP)
    assert [e.kind for e in overdue] == ["DiceOverdue"]
    assert isinstance(overdue[0], ev.DiceOverdue)
    assert overdue[0].rule == citation
    assert overdue[0].limit_hours == 24


def test_the_retired_custody_time_limits_are_refused_in_a_house_pack() -> None:
    """``play.max_hours.*`` became the game pack's ``dice.max_hours``: a house custody pack
    that still sets them is refused, saying where the rule went."""
    pa = load_custody_pack("pa")
    with pytest.raises(RulePackInvalid) as info:
        derive_custody_pack(pa, "river-house", {"play.max_hours.table": 12,
                                                "play.max_hours.shaker": 24})
    assert {p[0] for p in info.value.problems} == {"play.max_hours.table",
                                                   "play.max_hours.shaker"}
    assert all("set dice.max_hours in the game pack" in p[1] for p in info.value.problems)


def test_a_stored_custody_pack_with_the_retired_limits_still_replays() -> None:
    """A custody log opened before the limits moved carries them in its pack: they are
    dropped when the pack is read back (the dice keep the expiry they were issued with)."""
    data = load_custody_pack("pa").to_dict()
    data["rules"]["play.max_hours.shaker"] = {"value": 24, "citation": "58 Pa. Code § 668a.3",
                                              "status": "regulation"}
    data["rules"]["play.max_hours.table"] = {"value": 12, "citation": "old",
                                             "status": "other-jurisdiction"}
    pack = pack_from_dict(data)
    assert "play.max_hours.table" not in pack.rules
    assert pack.digest == load_custody_pack("pa").digest


def test_dice_in_play_are_checked_against_their_table() -> None:
    led, _, dice = in_play("pa", table="craps-1")
    led.check_dice_in_play("craps-1", dice[:2])
    with pytest.raises(ProcedureViolation) as info:
        led.check_dice_in_play("craps-2", dice[:2])
    assert info.value.rule == "storage.source_only"
    with pytest.raises(ProcedureViolation):
        led.check_dice_in_play("craps-1", ("NOPE",))
