"""68 IAC 14-3-8: the pit-area removal log and the cancellation-room log."""

from __future__ import annotations

from decimal import Decimal

from dicetable.core.errors import InvalidInput, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody.model import CancelMethod, Person, RemovalReason
from dicetable.custody.reports import cancellation_log, pit_log
from tests.custody.scenario import FLO, PAT, SAM, SUE, as_, cancel, in_play, refused


def test_in_14_3_8_a_pit_log_of_removals_and_transfers() -> None:
    led, clock, dice = in_play("in", n=5)
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:3], reason=RemovalReason.ROUTINE))
    refused(led, cmd.TransferToCancellation(**as_(FLO), dice=dice[:3], accepted_by=SAM),
            RoleNotPermitted, "logs.pit_manager_roles", "14-3-8(a)(5)")
    refused(led, cmd.TransferToCancellation(actor=PAT.name, role=PAT.role, dice=dice[:3],
                                            accepted_by=SAM),
            InvalidInput, "logs.licence_numbers", "14-3-8")
    clock.advance(hours=5)
    led.execute(cmd.TransferToCancellation(**as_(PAT), dice=dice[:3], accepted_by=SAM))
    assert pit_log(led.state, led.log) == [{
        "date": "2026-03-02", "at": "2026-03-02T13:00:00+00:00",   # (a)(1)
        "decks_removed": 0,                                         # (a)(2): dice only
        "dice_removed": 3,                                          # (a)(3)
        "game_removed_from": "craps-1 (craps)",                     # (a)(4)
        "pit_manager": PAT.name, "pit_manager_licence": PAT.licence,  # (a)(5)
        "signed_by": PAT.name, "seq": led.log[-1].seq}]


def test_in_14_3_8_b_cancellation_room_log() -> None:
    led, clock, dice = in_play("in", n=5)
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:4], reason=RemovalReason.FLAWED))
    unlicensed = Person("Vic Lane", Role.SECURITY)
    refused(led, cmd.TransferToCancellation(**as_(PAT), dice=dice[:4], accepted_by=unlicensed),
            InvalidInput, "logs.licence_numbers", "14-3-8")
    led.execute(cmd.TransferToCancellation(**as_(PAT), dice=dice[:4], accepted_by=SAM))
    clock.advance(days=1)
    refused(led, cmd.CancelDice(actor=SAM.name, role=SAM.role, witnesses=(SUE,), dice=dice[:2],
                                method=CancelMethod.DRILL, hole_in=Decimal("0.25")),
            InvalidInput, "logs.licence_numbers")
    cancel(led, dice[:2])
    rows = cancellation_log(led.state, led.log)
    received, destroyed = rows
    assert (received["entry"], received["date"], received["dice"]) == ("received", "2026-03-02",
                                                                       4)   # (b)(1),(3)
    assert (received["person"], received["licence"]) == (SAM.name, SAM.licence)  # (b)(4)
    assert (destroyed["entry"], destroyed["date"], destroyed["dice"]) == ("destroyed",
                                                                          "2026-03-03", 2)
    assert (destroyed["person"], destroyed["licence"]) == (SAM.name, SAM.licence)  # (b)(8)
    assert [r["uncancelled_dice_held"] for r in rows] == [4, 2]              # (b)(9)
    assert destroyed["surveillance"] == SUE.name
