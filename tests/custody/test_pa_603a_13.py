"""58 Pa. Code § 603a.13: dice receipt, storage and the gaming day's issue (subsections (a)-(d))."""

from __future__ import annotations

import pytest

from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.model import Box, BoxInspection, DieState, Finding, Key, Person
from tests.custody.scenario import (
    ACME,
    ANN,
    FLO,
    PAT,
    SAM,
    TOOLS,
    as_,
    draw_keys,
    good_check,
    new_ledger,
    receive,
    refused,
    serials,
    stock,
)


def receipt(by: Person, *present: Person, shipment: str = "S1",
            boxes: tuple[Box, ...] = (Box("B1", ("D0001", "D0002")),),
            opened: tuple[BoxInspection, ...] = ()) -> cmd.ReceiveShipment:
    return cmd.ReceiveShipment(**as_(by, *present), shipment=shipment, manufacturer=ACME,
                               boxes=boxes, opened=opened)


def test_pa_603a_13_a_receipt_needs_assistant_shift_manager_and_security() -> None:
    led, _ = new_ledger("pa")
    refused(led, receipt(ANN), RoleNotPermitted, "receipt.roles", "603a.13(a)")
    refused(led, receipt(PAT, SAM), RoleNotPermitted, "receipt.roles", "603a.13(a)")
    refused(led, receipt(ANN, FLO), RoleNotPermitted, "receipt.roles", "603a.13(a)")
    # one person cannot be both of the two people
    refused(led, receipt(ANN, Person(ANN.name, Role.SECURITY)), InvalidInput, "custody.person")
    events = led.execute(receipt(ANN, SAM))
    assert [e.kind for e in events] == ["ShipmentReceived"]
    assert events[0].actor == ANN.name
    assert events[0].witnesses == (SAM,)
    assert "603a.13(a)" in events[0].rule
    assert led.state.dice["D0001"].state is DieState.RECEIVED


def test_pa_603a_13_a_box_with_failed_seal_is_opened_and_inspected_at_once() -> None:
    led, _ = new_ledger("pa")
    boxes = (Box("B1", ("D0001", "D0002")), Box("B2", ("D0003", "D0004"), seal_intact=False))
    err = refused(led, receipt(ANN, SAM, boxes=boxes), ProcedureViolation,
                  "receipt.open_failed_seals", "603a.13(a)")
    assert "B2" in str(err)
    opened = (BoxInspection("B2", (Finding("D0004", "drill mark near the 5 spot", True),)),)
    events = led.execute(receipt(ANN, SAM, boxes=boxes, opened=opened))
    assert [e.kind for e in events] == ["ShipmentReceived", "BoxOpenedAndInspected"]
    inspected = events[1]
    assert isinstance(inspected, ev.BoxOpenedAndInspected)
    assert inspected.dice == ("D0003", "D0004")
    assert inspected.findings[0].tampering
    assert led.state.dice["D0003"].state is DieState.RECEIVED
    assert led.state.dice["D0004"].state is DieState.QUARANTINED
    # a quarantined die is never stored; its box-mates are
    draw_keys(led)
    refused(led, cmd.StoreDice(**as_(ANN, SAM), dice=("D0004",), area="dice-storage"),
            ProcedureViolation, "receipt.seal_check")
    led.execute(cmd.StoreDice(**as_(ANN, SAM), dice=("D0001", "D0002", "D0003"),
                              area="dice-storage"))
    assert led.state.dice["D0003"].location == "storage:dice-storage"


def test_pa_603a_13_a_storage_area_is_an_approved_one() -> None:
    led, _ = new_ledger("pa")
    receive(led, ("D0001",))
    draw_keys(led)
    refused(led, cmd.StoreDice(**as_(ANN, SAM), dice=("D0001",), area="coat-closet"),
            InvalidInput, "storage.areas", "601a.10(f)")


def test_pa_603a_13_b_dice_reach_pits_and_tables_only_from_storage() -> None:
    led, _ = new_ledger("pa")
    dice = serials("D", 2)
    receive(led, dice)                               # received, never stored
    refused(led, cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-1",
                                  received_by=Person("Bob", Role.BOXPERSON)),
            ProcedureViolation, "storage.source_only", "603a.13(b)")
    refused(led, cmd.InspectDice(**as_(PAT), checks=tuple(good_check(s) for s in dice),
                                 tools=TOOLS, under_surveillance=True),
            ProcedureViolation, "storage.source_only", "603a.13(b)")
    draw_keys(led)
    refused(led, cmd.IssueForGamingDay(**as_(ANN, SAM), dice=dice, gaming_day="2026-03-02"),
            ProcedureViolation, "storage.source_only", "603a.13(b)")


def test_pa_603a_13_c_storage_has_two_locks_opened_by_both_key_holders() -> None:
    led, _ = new_ledger("pa")
    receive(led, ("D0001",))
    store = cmd.StoreDice(**as_(ANN, SAM), dice=("D0001",), area="dice-storage")
    refused(led, store, ProcedureViolation, "storage.keys", "603a.13(c)")   # both locked
    led.execute(cmd.DrawKey(**as_(ANN), key=Key.TABLE_GAMES))
    refused(led, store, ProcedureViolation, "storage.keys", "603a.13(c)")   # security locked
    # one person may not hold both keys
    refused(led, cmd.DrawKey(actor=ANN.name, role=Role.SECURITY, key=Key.SECURITY),
            ProcedureViolation, "storage.keys")
    led.execute(cmd.DrawKey(**as_(SAM), key=Key.SECURITY))
    # the key holders themselves open it
    other = Person("Tom Bell", Role.SECURITY)
    refused(led, cmd.StoreDice(**as_(ANN, other), dice=("D0001",), area="dice-storage"),
            ProcedureViolation, "storage.keys")
    led.execute(store)
    assert led.state.dice["D0001"].location == "storage:dice-storage"


@pytest.mark.parametrize("role", [Role.FLOORPERSON, Role.PIT_BOSS, Role.BOXPERSON,
                                  Role.STICKPERSON, Role.DEALER, Role.SECURITY, Role.PLAYER])
def test_pa_603a_13_c_table_games_key_only_at_assistant_shift_manager_or_above(
        role: Role) -> None:
    led, _ = new_ledger("pa")
    refused(led, cmd.DrawKey(actor="Someone", role=role, key=Key.TABLE_GAMES),
            RoleNotPermitted, "storage.keys", "603a.13(c)")


@pytest.mark.parametrize("role", [Role.SHIFT_MANAGER, Role.PIT_BOSS, Role.FLOORPERSON])
def test_pa_603a_13_c_security_key_is_held_by_security(role: Role) -> None:
    led, _ = new_ledger("pa")
    refused(led, cmd.DrawKey(actor="Someone", role=role, key=Key.SECURITY),
            RoleNotPermitted, "storage.keys", "603a.13(c)")
    led.execute(cmd.DrawKey(**as_(SAM), key=Key.SECURITY))
    refused(led, cmd.DrawKey(actor="Tom", role=Role.SECURITY, key=Key.SECURITY),
            ProcedureViolation, "storage.keys")           # already drawn
    refused(led, cmd.ReturnKey(**as_(PAT), key=Key.SECURITY), RoleNotPermitted, "storage.keys")
    led.execute(cmd.ReturnKey(**as_(SAM), key=Key.SECURITY))
    assert Key.SECURITY not in led.state.keys


def test_pa_603a_13_d_gaming_day_dice_removed_by_shift_manager_with_security_present() -> None:
    led, _ = new_ledger("pa")
    dice = serials("D", 3)
    receive(led, dice)
    draw_keys(led)
    led.execute(cmd.StoreDice(**as_(ANN, SAM), dice=dice, area="dice-storage"))
    issue = cmd.IssueForGamingDay(**as_(ANN, SAM), dice=dice, gaming_day="2026-03-02")
    refused(led, cmd.IssueForGamingDay(**as_(ANN), dice=dice, gaming_day="2026-03-02"),
            RoleNotPermitted, "issue.day_roles", "603a.13(d)")
    refused(led, cmd.IssueForGamingDay(**as_(PAT, SAM), dice=dice, gaming_day="2026-03-02"),
            RoleNotPermitted, "issue.day_roles", "603a.13(d)")
    refused(led, cmd.IssueForGamingDay(**as_(ANN, SAM), dice=dice, gaming_day="tomorrow"),
            InvalidInput, "custody.gaming_day")
    events = led.execute(issue)
    assert isinstance(events[0], ev.DiceIssuedForGamingDay)
    assert events[0].gaming_day == "2026-03-02"
    assert "603a.13(d)" in events[0].rule
    assert {led.state.dice[s].state for s in dice} == {DieState.ISSUED}


def test_pa_603a_13_unused_dice_go_back_to_storage_but_played_dice_never_do() -> None:
    led, _ = new_ledger("pa")
    dice = serials("D", 2)
    stock(led, dice)
    draw_keys(led)
    led.execute(cmd.ReturnToStorage(**as_(ANN, SAM), dice=dice[:1], area="dice-storage"))
    assert led.state.dice[dice[0]].state is DieState.IN_STORAGE
    assert led.state.dice[dice[1]].state is DieState.ISSUED
