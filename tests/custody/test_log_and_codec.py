"""The custody log is the truth: every event round-trips through JSON, replay rebuilds the
state exactly, and a refused command changes nothing."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dicetable.core.errors import InvalidInput
from dicetable.core.events import EVENT_TYPES, Event, event_from_dict, event_to_dict
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import BoxInspection, Finding, Key, RemovalReason
from dicetable.custody.transport import FileTransportNotice, Party, ProveReceipt
from dicetable.games import events as games_events
from tests.custody.scenario import (
    ANN,
    BOB,
    PAT,
    SAM,
    as_,
    cancel,
    draw_keys,
    in_play,
    on_duty,
    receive,
    remove_and_transfer,
    return_keys,
    serials,
    stock,
)


def every_kind_of_event() -> CustodyLedger:
    led, clock, dice = in_play("in", n=6)
    spare = serials("S", 2)
    stock(led, spare, shipment="S2")
    draw_keys(led)
    led.execute(cmd.ReturnToStorage(**as_(ANN, SAM), dice=spare, area="dice-storage"))
    return_keys(led)
    receive(led, serials("B", 2), shipment="S3", seal_intact=False,
            opened=(BoxInspection("S3-B1", (Finding("B0002", "cracked"),)),))
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                               signs="magnetic", table_staff=(BOB,), envelope="E-1",
                               assigned_at_table=on_duty(BOB)))
    led.execute(cmd.DeliverEnvelope(**as_(PAT), envelope="E-1", agent="Agent Cole"))
    remove_and_transfer(led, dice[1:3])
    cancel(led, dice[1:3])
    led.execute(cmd.RecordFairnessAlert(actor="monitor", role=Role.SYSTEM, serial=dice[3],
                                        test="CUSUM face 6", detail="face 6 too often",
                                        statistic="4.71", threshold="4.6", rolls=431))
    led.execute(cmd.TakePhysicalInventory(**as_(ANN, SAM), counted=dice[3:]))
    led.execute(FileTransportNotice(
        **as_(ANN), notice="N-1", supplier=Party("Acme", "1 Cube Way", "555-0100"),
        method="road", carriers=(Party("Fast Freight", "2 Dock St", "555-0101"),),
        recipient=Party("River Casino", "3 River Rd", "555-0102"), responsible_supplier="Al",
        responsible_carrier="Cy", responsible_recipient=ANN.name, quantity=6,
        description="red dice", delivery_at="2026-04-01T10:00:00+00:00"))
    led.execute(ProveReceipt(**as_(ANN), notice="N-1", shipment="S1",
                             requested_by="executive director"))
    clock.advance(days=100)
    led.execute(cmd.CheckDeadlines(actor="sweep", role=Role.SYSTEM))
    return led


def test_every_custody_event_round_trips_through_json() -> None:
    led = every_kind_of_event()
    custody_kinds = {name for name, cls in EVENT_TYPES.items()
                     if issubclass(cls, ev.CustodyEvent)}
    assert {e.kind for e in led.log} == custody_kinds
    lines = [json.dumps(event_to_dict(e)) for e in led.log]
    back = [event_from_dict(json.loads(line)) for line in lines]
    assert back == led.log
    assert [type(e) for e in back] == [type(e) for e in led.log]


def test_replay_rebuilds_the_state_exactly() -> None:
    led = every_kind_of_event()
    again = CustodyLedger.replay(event_from_dict(event_to_dict(e)) for e in led.log)
    assert dataclasses.asdict(again.state.dice[serials("D", 1)[0]]) == \
        dataclasses.asdict(led.state.dice[serials("D", 1)[0]])
    assert again.state.dice == led.state.dice
    assert again.state.keys == led.state.keys
    assert again.state.envelopes == led.state.envelopes
    assert again.state.seq == led.state.seq
    assert again.pack.digest == led.pack.digest


def test_replay_refuses_a_broken_log() -> None:
    led = every_kind_of_event()
    with pytest.raises(InvalidInput):
        CustodyLedger.replay(led.log[1:])                       # no CustodyOpened
    with pytest.raises(InvalidInput):
        CustodyLedger.replay([led.log[0], led.log[2]])          # a gap in the sequence


def test_malformed_events_are_invalid_input_not_crashes() -> None:
    good = event_to_dict(every_kind_of_event().log[3])
    for bad in ({**good, "type": "NoSuchEvent"}, {**good, "seq": None, "extra": 1},
                {**good, "key": "master"}):
        with pytest.raises(InvalidInput):
            event_from_dict(bad)


def test_a_refused_command_changes_nothing() -> None:
    led = every_kind_of_event()
    before = json.dumps([event_to_dict(e) for e in led.log])
    state = dataclasses.replace(led.state)
    for command in (cmd.DrawKey(actor="Gail", role=Role.FLOORPERSON, key=Key.TABLE_GAMES),
                    cmd.StoreDice(**as_(ANN, SAM), dice=("NOPE",), area="dice-storage")):
        assert not led.can(command)
    assert json.dumps([event_to_dict(e) for e in led.log]) == before
    assert led.state.seq == state.seq


def test_two_event_classes_may_not_share_a_name() -> None:
    assert EVENT_TYPES["DiceRolled"] is games_events.DiceRolled
    with pytest.raises(TypeError):
        class DiceRolled(Event):                                # clashes with games' event
            pass


def test_events_name_their_stream() -> None:
    led = every_kind_of_event()
    assert {e.stream for e in led.log} == {"custody:river"}  # the kind, then the site
