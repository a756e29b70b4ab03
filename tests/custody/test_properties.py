"""Properties over random sequences of custody steps (Hypothesis): whatever people try, a
refused step changes nothing, no die is lost, the order of custody holds, and the log
replays to the same state."""

from __future__ import annotations

import json
from decimal import Decimal

from hypothesis import HealthCheck, event, given, settings, target
from hypothesis import strategies as st

from dicetable.core.errors import DicetableError
from dicetable.core.events import event_to_dict
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import CancelMethod, DieCheck, RemovalReason
from tests.custody.scenario import (
    ANN,
    BOB,
    PAT,
    SAM,
    SUE,
    TOOLS,
    as_,
    draw_keys,
    good_check,
    new_ledger,
    on_duty,
    receive,
)
from tests.profiles import examples

N = 8
OPS = ("store", "issue_day", "inspect_ok", "inspect_bad", "to_table", "remove", "tamper",
       "deliver", "transfer", "cancel", "count", "sweep", "wait")


def build(op: str, dice: tuple[str, ...], led: CustodyLedger) -> cmd.CustodyCommand | None:
    if op == "store":
        return cmd.StoreDice(**as_(ANN, SAM), dice=dice, area="dice-storage")
    if op == "issue_day":
        return cmd.IssueForGamingDay(**as_(ANN, SAM), dice=dice, gaming_day="2026-03-02")
    if op == "inspect_ok":
        return cmd.InspectDice(**as_(PAT), checks=tuple(good_check(s) for s in dice),
                               tools=TOOLS, under_surveillance=True)
    if op == "inspect_bad":
        return cmd.InspectDice(**as_(PAT), checks=tuple(DieCheck(s, (Decimal("0.749"),) * 3)
                                                        for s in dice),
                               tools=TOOLS, under_surveillance=True)
    if op == "to_table":
        return cmd.IssueToTable(**as_(PAT), dice=dice, table="craps-1", received_by=BOB)
    if op == "remove":
        return cmd.RemoveDice(**as_(PAT), dice=dice, reason=RemovalReason.ROUTINE)
    if op == "tamper":
        return cmd.RemoveDice(**as_(PAT), dice=dice, reason=RemovalReason.TAMPERED,
                              signs="shaved", table_staff=(BOB,),
                              assigned_at_table=on_duty(BOB))
    if op == "deliver":
        envelopes = sorted(e for e, v in led.state.envelopes.items() if v.agent is None)
        return cmd.DeliverEnvelope(**as_(PAT), envelope=envelopes[0] if envelopes else "E-0",
                                   agent="Agent Cole")
    if op == "transfer":
        return cmd.TransferToCancellation(**as_(PAT), dice=dice, accepted_by=SAM)
    if op == "cancel":
        return cmd.CancelDice(**as_(SAM, SUE), dice=dice, method=CancelMethod.SHRED)
    if op == "count":
        return cmd.TakePhysicalInventory(**as_(ANN, SAM), counted=dice)
    if op == "sweep":
        return cmd.CheckDeadlines(actor="sweep", role=Role.SYSTEM)
    return None


PROGRESS = ["ShipmentReceived", "DiceStored", "DiceIssuedForGamingDay", "DiceInspected",
            "DiceIssuedToTable", "DiceRemoved", "DiceTransferredToCancellation", "DiceCancelled"]


def dump(led: CustodyLedger) -> str:
    return json.dumps([event_to_dict(e) for e in led.log])


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(OPS),
                          st.lists(st.integers(1, N), min_size=1, max_size=3, unique=True)),
                max_size=40))
def test_custody_holds_whatever_people_try(steps: list[tuple[str, list[int]]]) -> None:
    led, clock = new_ledger("pa")
    draw_keys(led)
    receive(led, tuple(f"D{i:04d}" for i in range(1, N + 1)))
    for op, picks in steps:
        dice = tuple(f"D{i:04d}" for i in picks)
        command = build(op, dice, led)
        if command is None:
            clock.advance(hours=13)
            continue
        before = dump(led)
        refusal: DicetableError | None = None
        try:
            led.execute(command)
        except DicetableError as error:
            refusal = error
        if refusal is not None:
            assert refusal.rule, refusal                        # every refusal names a rule
            assert dump(led) == before                          # and changes nothing
        assert len(led.state.dice) == N                         # no die is ever lost

    seen: dict[str, set[str]] = {}
    for e in led.log:
        for s in e.serials:
            kinds = seen.setdefault(s, set())
            if isinstance(e, ev.DiceIssuedToTable):
                assert {"DiceStored", "DiceIssuedForGamingDay", "DiceInspected"} <= kinds
            if isinstance(e, ev.DiceCancelled):
                assert "TamperEnvelopeSealed" not in kinds      # tampered dice go to the agent
                assert "DiceTransferredToCancellation" in kinds
            kinds.add(e.kind)
    assert [e.seq for e in led.log] == list(range(1, len(led.log) + 1))
    target(float(len({e.kind for e in led.log})), label="kinds of event")
    event(f"reached {max((e.kind for e in led.log if e.kind in PROGRESS), key=PROGRESS.index)}")
    again = CustodyLedger.replay(led.log)
    assert again.state.dice == led.state.dice
    assert again.state.envelopes == led.state.envelopes
