"""68 IAC 14-3-4: removal of dice, tamper envelopes, and cancellation."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.model import CancelMethod, DieCheck, DieState, Person, RemovalReason
from tests.custody.scenario import (
    ANN,
    BOB,
    DEE,
    FLO,
    PAT,
    SAM,
    STU,
    SUE,
    TOOLS,
    as_,
    cancel,
    draw_keys,
    good_check,
    in_play,
    new_ledger,
    on_duty,
    refused,
    remove_and_transfer,
    serials,
    stock,
)


@pytest.mark.parametrize("reason", list(RemovalReason))
def test_in_14_3_4_a_dice_are_taken_out_of_play(reason: RemovalReason) -> None:
    led, _, dice = in_play("in")
    if reason is RemovalReason.TAMPERED:
        command = cmd.RemoveDice(**as_(PAT), dice=dice[:2], reason=reason,
                                 signs="loaded: sinks in water", table_staff=(BOB, STU),
                                 assigned_at_table=on_duty(BOB, STU))
    else:
        command = cmd.RemoveDice(**as_(PAT), dice=dice[:2], reason=reason)
    events = led.execute(command)
    removed = events[0]
    assert isinstance(removed, ev.DiceRemoved)
    assert removed.reason is reason
    assert removed.from_location == "table:craps-1"
    assert sorted(d.serial for d in led.state.at_table("craps-1")) == list(dice[2:])
    expected = DieState.SEALED if reason is RemovalReason.TAMPERED else DieState.REMOVED
    assert {led.state.dice[s].state for s in dice[:2]} == {expected}


def test_in_14_3_4_a_failed_inspection_dice_are_removed_never_played() -> None:
    led, _ = new_ledger("in")
    dice = serials("D", 2)
    stock(led, dice)
    led.execute(cmd.InspectDice(**as_(PAT), checks=(DieCheck(dice[0], (Decimal("0.74"),) * 3),
                                                    good_check(dice[1])),
                                tools=TOOLS, under_surveillance=True))
    err = refused(led, cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-1", received_by=BOB),
                  ProcedureViolation, "inspection.required_before_play")
    assert dice[0] in str(err)
    assert "failed inspection" in str(err)
    removed = led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1],
                                         reason=RemovalReason.FLAWED))[0]
    assert isinstance(removed, ev.DiceRemoved)
    assert removed.from_location == "pit (quarantine)"


def test_in_14_3_4_b_tampered_dice_sealed_in_an_envelope_for_the_enforcement_agent() -> None:
    led, clock, dice = in_play("in")
    clock.advance(hours=3)
    events = led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:2], reason=RemovalReason.TAMPERED,
                                        signs="rounded edges on the 6 and 1 faces",
                                        table_staff=(BOB, STU, DEE), envelope="E-77",
                                        assigned_at_table=on_duty(BOB, STU, DEE)))
    assert [e.kind for e in events] == ["DiceRemoved", "TamperEnvelopeSealed"]
    env = events[1]
    assert isinstance(env, ev.TamperEnvelopeSealed)
    assert env.removed_at == clock.now().isoformat()                   # (b)(1) date and time
    assert env.location == "table:craps-1"                             # (b)(2) the table
    assert env.signs == "rounded edges on the 6 and 1 faces"          # (b)(3) the signs
    assert [p.name for p in env.table_staff] == [BOB.name, STU.name, DEE.name]  # (b)(4)(A)
    assert env.removed_by.name == PAT.name                             # (b)(4)(B)
    assert env.recipient == "enforcement agent"
    assert "14-3-4(b)" in env.rule
    assert led.state.dice[dice[0]].state is DieState.SEALED
    led.execute(cmd.DeliverEnvelope(**as_(PAT), envelope="E-77", agent="Agent J. Cole"))
    assert led.state.dice[dice[0]].state is DieState.WITH_AGENT
    assert not led.state.dice[dice[0]].state.in_building
    refused(led, cmd.DeliverEnvelope(**as_(PAT), envelope="E-77", agent="Agent J. Cole"),
            ProcedureViolation, "custody.envelope")


def test_in_14_3_4_b_only_the_pit_boss_seals_and_the_envelope_is_complete() -> None:
    led, _, dice = in_play("in")

    def tampered(by: Person, signs: str, *staff: Person) -> cmd.RemoveDice:
        return cmd.RemoveDice(**as_(by), dice=dice[:1], reason=RemovalReason.TAMPERED,
                              signs=signs, table_staff=staff,
                              assigned_at_table=on_duty(BOB))

    refused(led, tampered(FLO, "x", BOB), RoleNotPermitted, "removal.tamper_roles", "14-3-4(b)")
    # what is missing is the envelope's marking, not the remover's authority
    refused(led, tampered(PAT, "", BOB), InvalidInput, "removal.envelope.signs",
            "14-3-4(b)(3)")                                               # no signs
    refused(led, tampered(PAT, "x"), InvalidInput, "removal.envelope.licensees",
            "14-3-4(b)(4)(A)")                                            # no table staff


def test_in_14_3_4_b_tampered_dice_are_not_cancelled() -> None:
    led, _, dice = in_play("in")
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                               signs="weighted", table_staff=(BOB,),
                               assigned_at_table=on_duty(BOB)))
    refused(led, cmd.TransferToCancellation(**as_(PAT), dice=dice[:1], accepted_by=SAM),
            ProcedureViolation, "cancellation.required", "14-3-4(c)")


def test_in_14_3_4_c_every_other_removed_die_is_cancelled_never_replayed() -> None:
    led, _, dice = in_play("in")
    remove_and_transfer(led, dice[:2], RemovalReason.ROUTINE)
    refused(led, cmd.IssueToTable(**as_(PAT), dice=dice[:1], table="craps-2", received_by=BOB),
            ProcedureViolation, "cancellation.required")
    draw_keys(led)
    refused(led, cmd.ReturnToStorage(**as_(ANN, SAM), dice=dice[:1], area="dice-storage"),
            ProcedureViolation, "cancellation.required", "14-3-4(c)")
    refused(led, cmd.ReturnToStorage(**as_(ANN, SAM), dice=dice[2:3], area="dice-storage"),
            ProcedureViolation, "cancellation.required")                # dice at a table
    cancel(led, dice[:2])
    assert {led.state.dice[s].state for s in dice[:2]} == {DieState.CANCELLED}


@pytest.mark.parametrize(("hole", "ok"), [("0.24", False), ("0.2499", False), ("0.25", True),
                                          ("0.3125", True)])
def test_in_14_3_4_c_1_drilled_hole_at_least_a_quarter_inch(hole: str, ok: bool) -> None:
    led, _, dice = in_play("in")
    remove_and_transfer(led, dice[:1])
    command = cmd.CancelDice(**as_(SAM, SUE), dice=dice[:1], method=CancelMethod.DRILL,
                             hole_in=Decimal(hole))
    if ok:
        event = led.execute(command)[0]
        assert isinstance(event, ev.DiceCancelled)
        assert event.hole_in == Decimal(hole)
    else:
        refused(led, command, ProcedureViolation, "cancellation.min_hole_in", "14-3-4(c)(1)")


def test_in_14_3_4_c_2_shredding_and_c_3_an_approved_method() -> None:
    led, _, dice = in_play("in")
    remove_and_transfer(led, dice[:3])
    led.execute(cmd.CancelDice(**as_(SAM, SUE), dice=dice[:1], method=CancelMethod.SHRED))
    refused(led, cmd.CancelDice(**as_(SAM, SUE), dice=dice[1:2], method=CancelMethod.APPROVED),
            ProcedureViolation, "cancellation.methods", "14-3-4(c)(1)-(3)")
    event = led.execute(cmd.CancelDice(**as_(SAM, SUE), dice=dice[1:2],
                                       method=CancelMethod.APPROVED,
                                       approval="IGC ED approval 2025-14 (crushing)"))[0]
    assert isinstance(event, ev.DiceCancelled)
    assert event.approval.startswith("IGC")


def test_in_14_3_4_c_4_cancellation_is_monitored_by_surveillance() -> None:
    led, _, dice = in_play("in")
    remove_and_transfer(led, dice[:1])
    refused(led, cmd.CancelDice(**as_(SAM), dice=dice[:1], method=CancelMethod.SHRED),
            ProcedureViolation, "cancellation.surveillance", "14-3-4(c)(4)")
    refused(led, cmd.CancelDice(**as_(SAM, PAT), dice=dice[:1], method=CancelMethod.SHRED),
            ProcedureViolation, "cancellation.surveillance")
    event = led.execute(cmd.CancelDice(**as_(SAM, SUE), dice=dice[:1],
                                       method=CancelMethod.SHRED))[0]
    assert isinstance(event, ev.DiceCancelled)
    assert event.surveillance.name == SUE.name


def test_in_14_3_4_c_cancellation_happens_in_the_cancellation_room() -> None:
    led, _, dice = in_play("in")
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.FLAWED))
    refused(led, cmd.CancelDice(**as_(SAM, SUE), dice=dice[:1], method=CancelMethod.SHRED),
            ProcedureViolation, "logs.pit_manager_roles")
