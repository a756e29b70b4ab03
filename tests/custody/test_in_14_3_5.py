"""68 IAC 14-3-5: storage, never unattended, the inventory record and the quarterly count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.model import Box, Manufacturer, Person, RemovalReason
from dicetable.custody.reports import inventory_record
from tests.custody.scenario import (
    ACME,
    ANN,
    BOB,
    DEE,
    PAT,
    SAM,
    STU,
    as_,
    cancel,
    in_play,
    inspect,
    new_ledger,
    on_duty,
    receive,
    refused,
    remove_and_transfer,
    serials,
    stock,
)


def test_in_14_3_5_a_dice_not_in_use_are_kept_locked() -> None:
    led, _ = new_ledger("in")
    receive(led, ("D0001",))
    refused(led, cmd.StoreDice(**as_(ANN, SAM), dice=("D0001",), area="dice-storage"),
            ProcedureViolation, "storage.keys")
    assert led.pack.rule("storage.locked").citation == "68 IAC 14-3-5(a)"
    # IN holds no two-key text: the PA rule stands in, labelled as such
    assert led.pack.rule("storage.keys").status.value == "other-jurisdiction"


def test_in_14_3_5_b_dice_at_a_table_are_never_left_unattended() -> None:
    led, _ = new_ledger("in")
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice)
    player = Person("Joe Public", Role.PLAYER)
    # the dice are handed to a named member of the table crew
    refused(led, cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-2", received_by=player),
            RoleNotPermitted, "play.receive_roles")
    refused(led, cmd.IssueToTable(**as_(DEE), dice=dice, table="craps-2", received_by=STU),
            RoleNotPermitted, "play.issue_roles")
    refused(led, cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-2",
                                  received_by=Person(PAT.name, Role.BOXPERSON)),
            InvalidInput, "custody.person")                   # the same person twice
    event = led.execute(cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-2",
                                         received_by=STU))[0]
    assert isinstance(event, ev.DiceIssuedToTable)
    assert event.received_by == STU
    assert led.state.dice[dice[0]].location == "table:craps-2"


def test_in_14_3_5_c_inventory_record_of_receipts_and_daily_quantities() -> None:
    led, clock = new_ledger("in")
    no_phone = cmd.ReceiveShipment(**as_(ANN, SAM), shipment="S1",
                                   manufacturer=Manufacturer("Acme Dice Co.", "1 Cube Way"),
                                   boxes=(Box("B1", ("D0001",)),))
    refused(led, no_phone, InvalidInput, "receipt.record_manufacturer", "14-3-5(c)")
    led, clock, dice = in_play("in", n=6)
    clock.advance(hours=2)
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                               signs="bevelled edge", table_staff=(BOB, STU),
                               assigned_at_table=on_duty(BOB, STU)))
    remove_and_transfer(led, dice[1:3])
    clock.advance(days=1)
    cancel(led, dice[1:3])
    record = inventory_record(led.state, led.log)
    assert record["receipts"] == [{"date": "2026-03-02", "quantity": 6, "shipment": "S1",
                                   "manufacturer": ACME.name, "address": ACME.address,
                                   "phone": ACME.phone}]
    day1, day2 = record["daily"]
    assert (day1["date"], day1["put_into_play"], day1["removed_tampering"]) == \
        ("2026-03-02", 6, 1)
    assert day1["tampering_removal_dates"] == ["2026-03-02T10:00:00+00:00"]
    assert (day2["date"], day2["cancelled"]) == ("2026-03-03", 2)
    assert record["on_record_now"] == 4              # 6 less 2 cancelled (the envelope is here)


def test_in_14_3_5_d_physical_inventory_reconciled_with_the_record() -> None:
    led, _, dice = in_play("in", n=4)
    events = led.execute(cmd.TakePhysicalInventory(**as_(ANN, SAM), counted=dice))
    assert [e.kind for e in events] == ["PhysicalInventoryTaken"]
    assert not led.alerts
    refused(led, cmd.TakePhysicalInventory(**as_(ANN), counted=dice),
            RoleNotPermitted, "inventory.roles")


def test_in_14_3_5_d_physical_inventory_every_three_months() -> None:
    led, clock, dice = in_play("in", n=2)   # opened 2026-03-02 03:00 in Indianapolis
    sweep = cmd.CheckDeadlines(actor="sweep", role=Role.SYSTEM)
    remove_and_transfer(led, dice)       # keeps the 24-hour alert out of this test
    clock.set(datetime(2026, 6, 3, 3, 59, tzinfo=UTC))      # 06-02 23:59 local: in time
    assert led.execute(sweep) == []
    clock.set(datetime(2026, 6, 3, 4, 0, tzinfo=UTC))       # 06-03 00:00 local: overdue
    alert = led.execute(sweep)
    assert [e.kind for e in alert] == ["InventoryOverdue"]
    assert isinstance(alert[0], ev.InventoryOverdue)
    assert (alert[0].due, alert[0].time_zone) == ("2026-06-02", "America/Indiana/Indianapolis")
    assert "14-3-5(d)" in alert[0].rule
    assert led.execute(sweep) == []                         # raised once, not on every sweep
    led.execute(cmd.TakePhysicalInventory(**as_(ANN, SAM), counted=dice))
    clock.advance(days=91)
    assert led.execute(sweep) == []
    assert led.state.last_inventory_at == (clock.now() - timedelta(days=91)).isoformat()
