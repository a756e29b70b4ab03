"""The pit report: every die in the building, where it is, and its history (text and JSON)."""

from __future__ import annotations

import json

from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import RemovalReason
from dicetable.custody.reports import pit_report, pit_report_text
from tests.custody.scenario import (
    ANN,
    BOB,
    PAT,
    SAM,
    STU,
    as_,
    cancel,
    in_play,
    on_duty,
    receive,
    remove_and_transfer,
    serials,
)


def building() -> CustodyLedger:
    led, clock, dice = in_play("pa", n=5, table="craps-1")
    receive(led, serials("E", 3), shipment="S2")                   # still in receiving
    clock.advance(hours=2)
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                               signs="bevelled 6-1 edges", table_staff=(BOB, STU),
                               assigned_at_table=on_duty(BOB, STU),
                               envelope="E-1"))
    remove_and_transfer(led, dice[1:3])
    cancel(led, dice[1:2])
    clock.advance(hours=23)
    led.execute(cmd.CheckDeadlines(actor="sweep", role=Role.SYSTEM))
    return led


def test_pit_report_json_has_every_die_its_place_and_history() -> None:
    led = building()
    report = pit_report(led.state, led.log)
    json.dumps(report)                                   # plain JSON types only
    where = {d["serial"]: (d["state"], d["location"]) for d in report["dice"]}
    assert where == {
        "D0001": ("sealed", "envelope:E-1"),
        "D0002": ("cancelled", "cancelled"),
        "D0003": ("in-cancellation-room", "cancellation room"),
        "D0004": ("at-table", "table:craps-1"),
        "D0005": ("at-table", "table:craps-1"),
        "E0001": ("received", "receiving"),
        "E0002": ("received", "receiving"),
        "E0003": ("received", "receiving"),
    }
    assert report["in_building"] == 7
    die = next(d for d in report["dice"] if d["serial"] == "D0002")
    kinds = [h["event"] for h in die["history"]]
    assert kinds == ["ShipmentReceived", "DiceStored", "DiceIssuedForGamingDay", "DiceInspected",
                     "DiceIssuedToTable", "DiceRemoved", "DiceTransferredToCancellation",
                     "DiceCancelled"]
    assert all(h["rule"] and h["actor"] for h in die["history"])
    assert die["history"][0]["witnesses"] == [str(SAM)]
    at_table = next(d for d in report["dice"] if d["serial"] == "D0004")
    assert at_table["at_table_since"] == "2026-03-02T08:00:00+00:00"
    assert at_table["history"][-1]["event"] == "DiceOverdue"
    assert [a["event"] for a in report["alerts"]] == ["DiceOverdue"]
    only_here = pit_report(led.state, led.log, include_gone=False)
    assert "D0002" not in {d["serial"] for d in only_here["dice"]}


def test_pit_report_text_reads_like_the_log() -> None:
    led = building()
    text = pit_report_text(pit_report(led.state, led.log))
    assert "7 dice in the building" in text
    assert "ALERTS (1):" in text
    assert "D0004        at-table              table:craps-1" in text
    assert f"received by {ANN.name} with {SAM}" in text
    assert "sealed in envelope E-1 for the enforcement agent: bevelled 6-1 edges" in text
    short = pit_report_text(pit_report(led.state, led.log), history=False)
    assert "sealed in envelope" not in short


def test_pit_report_is_the_same_after_replay() -> None:
    led = building()
    again = CustodyLedger.replay(led.log)
    assert pit_report(again.state, again.log) == pit_report(led.state, led.log)
