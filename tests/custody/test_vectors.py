"""Test vectors from spec/regulations.md §8 on dice custody."""

from __future__ import annotations

from decimal import Decimal

from dicetable.core.errors import ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.model import CancelMethod, DieCheck, DieState, Key, RemovalReason
from tests.custody.scenario import (
    ANN,
    PAT,
    SAM,
    SUE,
    TOOLS,
    as_,
    in_play,
    new_ledger,
    refused,
    serials,
    stock,
)


def inspect_one(side: str) -> tuple[ev.InspectionResult, DieState]:
    led, _ = new_ledger("in")
    dice = serials("D", 1)
    stock(led, dice)
    d = Decimal(side)
    event = led.execute(cmd.InspectDice(**as_(PAT), checks=(DieCheck(dice[0], (d, d, d)),),
                                        tools=TOOLS, under_surveillance=True))[0]
    assert isinstance(event, ev.DiceInspected)
    return event.results[0], led.state.dice[dice[0]].state


def test_tv_63_in_14_3_3_b_1_edge_0_749_is_non_compliant() -> None:
    result, state = inspect_one("0.749")
    assert not result.passed
    assert "below the 0.750 in minimum [68 IAC 14-3-3(b)(1) [regulation]]" in result.problems[0]
    assert state is DieState.QUARANTINED


def test_tv_65_in_14_3_3_b_1_edge_0_776_is_non_compliant() -> None:
    result, state = inspect_one("0.776")
    assert not result.passed
    assert "above the 0.775 in maximum [68 IAC 14-3-3(b)(1) [regulation]]" in result.problems[0]
    assert state is DieState.QUARANTINED


def test_tv_67_in_14_3_4_a_2_c_chipped_die_cancelled_under_surveillance() -> None:
    led, _, dice = in_play("in")
    chipped = dice[:1]
    led.execute(cmd.RemoveDice(**as_(PAT), dice=chipped, reason=RemovalReason.FLAWED,
                               detail="chip visible on the 4 face"))
    led.execute(cmd.TransferToCancellation(**as_(PAT), dice=chipped, accepted_by=SAM))
    refused(led, cmd.CancelDice(**as_(SAM), dice=chipped, method=CancelMethod.DRILL,
                                hole_in=Decimal("0.25")),
            ProcedureViolation, "cancellation.surveillance", "14-3-4(c)(4)")
    refused(led, cmd.CancelDice(**as_(SAM, SUE), dice=chipped, method=CancelMethod.DRILL,
                                hole_in=Decimal("0.2")),
            ProcedureViolation, "cancellation.min_hole_in", "14-3-4(c)(1)")
    event = led.execute(cmd.CancelDice(**as_(SAM, SUE), dice=chipped, method=CancelMethod.DRILL,
                                       hole_in=Decimal("0.25")))[0]
    assert isinstance(event, ev.DiceCancelled)
    assert event.surveillance == SUE
    assert led.state.dice[chipped[0]].state is DieState.CANCELLED


def test_tv_70_in_14_3_5_d_count_differs_from_record_reported_at_once() -> None:
    led, clock, dice = in_play("in", n=5)
    clock.advance(days=90)
    counted = (*dice[:3], "Z9999")                          # two missing, one stranger
    events = led.execute(cmd.TakePhysicalInventory(**as_(ANN, SAM), counted=counted))
    assert [e.kind for e in events] == ["PhysicalInventoryTaken", "InventoryDiscrepancyReported"]
    alert = events[1]
    assert isinstance(alert, ev.InventoryDiscrepancyReported)
    assert alert.alert
    assert alert.at == events[0].at                          # immediately: the same instant
    assert alert.report_to == "gaming agent"
    assert alert.missing == dice[3:]
    assert alert.unexpected == ("Z9999",)
    assert alert.rule == "68 IAC 14-3-5(d) [regulation]"
    assert led.alerts == [alert]


def test_tv_72_pa_603a_13_c_supervisor_below_shift_manager_refused_table_games_key() -> None:
    led, _ = new_ledger("pa")
    err = refused(led, cmd.DrawKey(actor="Gail Stone", role=Role.FLOORPERSON,
                                   key=Key.TABLE_GAMES),
                  RoleNotPermitted, "storage.keys", "58 Pa. Code § 603a.13(c) [regulation]")
    assert "table-games key" in str(err)
    refused(led, cmd.DrawKey(**as_(PAT), key=Key.TABLE_GAMES), RoleNotPermitted, "storage.keys")
    assert Key.TABLE_GAMES not in led.state.keys
    led.execute(cmd.DrawKey(**as_(ANN), key=Key.TABLE_GAMES))
    assert led.state.keys[Key.TABLE_GAMES].name == ANN.name
