"""The custody catalogue (DESIGN.md, one declaration per concept): every custody command is
declared once, and the ``dicetable dice`` commands, the dice room's routes and the script
verbs are generated from it; every string a surface reads is bounded, and the dice room
checks the role before it reads the body (68 IAC 14-3, 58 Pa. Code 603a.13 through their
custody packs)."""

from __future__ import annotations

import ast
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import typer
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.cli import dice as cli_dice
from dicetable.core.clock import FixedClock
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.roles import Role
from dicetable.custody import commands as c
from dicetable.custody import transport as tr
from dicetable.custody.catalogue import CATALOGUE, MAX_DICE, BaseContext, Kind
from dicetable.custody.model import (
    Box,
    BoxInspection,
    CancelMethod,
    Check,
    DieCheck,
    Finding,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
)
from dicetable.server import dice_room
from dicetable.server.custody_floor import FloorCustody
from dicetable.server.session_reads import Fixed
from dicetable.store.memory import MemoryStore
from dicetable.table import script_custody
from tests.demo_floor import CHEAP_HASHER
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import check_one_declaration as check  # type: ignore[import-not-found]  # noqa: E402

SID, VAL = Person("Sid", Role.SECURITY, "SE-1"), Person("Val", Role.SURVEILLANCE)
WHO: dict[str, Any] = {"actor": "Ann", "role": Role.SHIFT_MANAGER, "licence": "SM-1"}
PARTY = tr.Party("Acme", "1 Cube Way", "555 0100")
SAMPLES: list[c.CustodyCommand] = [
    c.DrawKey(**WHO, key=Key.TABLE_GAMES),
    c.ReturnKey(**WHO, key=Key.SECURITY),
    c.ReceiveShipment(**WHO, witnesses=(SID,), shipment="S1",
                      manufacturer=Manufacturer("Acme Dice", "1 Cube Way", "555"),
                      boxes=(Box("B1", ("D1", "D2")), Box("B2", ("D3",), seal_intact=False)),
                      opened=(BoxInspection("B2", (Finding("D3", "chipped: corner"),
                                                   Finding("D3", "drilled", True))),),
                      delivery_witness="Agent Cole"),
    c.StoreDice(**WHO, witnesses=(SID,), dice=("D1", "D2"), area="vault two"),
    c.IssueForGamingDay(**WHO, witnesses=(SID,), dice=("D1",), gaming_day="2026-03-02"),
    c.ReturnToStorage(**WHO, witnesses=(SID,), dice=("D1",), area="dice-storage"),
    c.InspectDice(**WHO, witnesses=(VAL,), checks=(
        DieCheck("D1", (Decimal("0.750"), Decimal("0.75"), Decimal("0.7505"))),
        DieCheck("D2", (Decimal("0.25"),) * 3, tuple(k for k in Check if k is not Check.LOGO))),
        tools=("micrometer", "magnet"), under_surveillance=False),
    c.IssueToTable(**WHO, dice=("D1", "D2"), table="ph-1", game="props-and-hops",
                   mode=PlayMode.SHAKER, received_by=Person("Dee", Role.DEALER, "DL-5")),
    c.RemoveDice(**WHO, dice=("D1",), reason=RemovalReason.TAMPERED, signs="loaded, heavy",
                 table_staff=(Person("Dee", Role.DEALER),), assigned_at_table=("Dee",),
                 envelope="E-9", detail="seen by surveillance"),
    c.DeliverEnvelope(**WHO, envelope="E-9", agent="Agent Cole"),
    c.TransferToCancellation(**WHO, dice=("D2",), accepted_by=SID),
    c.CancelDice(**WHO, witnesses=(VAL,), dice=("D2",), method=CancelMethod.DRILL,
                 hole_in=Decimal("0.25"), approval=""),
    c.TakePhysicalInventory(**WHO, witnesses=(SID,), counted=("D1", "D3")),
    c.CheckDeadlines(actor="deadline-sweep", role=Role.SYSTEM),
    tr.FileTransportNotice(**WHO, notice="N-1", supplier=PARTY, method="road",
                           carriers=(PARTY, tr.Party("Fast", "2 Dock", "556")),
                           recipient=PARTY, responsible_supplier="Al",
                           responsible_carrier="Cy", responsible_recipient="Ann",
                           quantity=50, description="red dice",
                           delivery_at="2026-04-01T10:00:00+00:00",
                           notified_at="2026-03-01T10:00:00+00:00"),
    tr.ProveReceipt(**WHO, notice="N-1", shipment="S1", requested_by="the director"),
    c.RecordFairnessAlert(actor="fairness-monitor", role=Role.SYSTEM, serial="D1",
                          test="cusum", detail="faces drift", statistic="5.1",
                          threshold="4.6", rolls=300),
]


def _custody_commands() -> set[type[c.CustodyCommand]]:
    out: set[type[c.CustodyCommand]] = set()
    for module in (c, tr):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, c.CustodyCommand) \
                    and value is not c.CustodyCommand and value not in c.FIELD_GROUPS:
                out.add(value)
    return out


def test_every_custody_command_is_declared_once_in_the_catalogue() -> None:
    assert _custody_commands() - {c.OpenCustody} == set(CATALOGUE.by_command)
    assert {type(s) for s in SAMPLES} == set(CATALOGUE.by_command)
    names = [n for e in CATALOGUE for n in (e.name, *e.aliases)]
    assert len(names) == len(set(names))
    for e in CATALOGUE:
        assert e.help, e.name
        assert e.records is not None, e.name
        assert e.recover is not None, e.name
        for f in e.all_fields:  # every string a surface reads has a bound
            assert 0 < f.max_length <= 3000, (e.name, f.name)
            if f.multi:
                assert f.max_items >= 1, (e.name, f.name)


def test_canonical_names_and_their_older_aliases() -> None:
    table = {e.name: (e.verbs, e.route_paths, e.cli_words) for e in CATALOGUE}
    assert table["count"] == (("dice-count", "dice-inventory"), ("count", "inventory"),
                              ("count",))
    assert table["prove-receipt"][1] == ("prove-receipt", "receipt-proof")
    assert table["key-draw"] == (("dice-key-draw",), ("key-draw",), ("key", "draw"))
    assert table["check"][1] == ()  # the scheduler's sweep: no dice-room route
    assert table["fairness-alert"][1:] == ((), ())  # the fairness monitor's, scripts only


@pytest.mark.parametrize("command", SAMPLES, ids=lambda x: type(x).__name__)
def test_each_script_verb_formats_what_it_parses(command: c.CustodyCommand) -> None:
    entry = CATALOGUE.of(command)
    words = entry.format_words(command)
    again = entry.parse_words(BaseContext(), command.actor, command.role, words)
    assert again == command, words
    line = script_custody.CUSTODY_VERBS[entry.verb]
    assert line is entry


def _dice_cli() -> Any:
    group = typer.main.get_command(cli_dice.app)
    assert hasattr(group, "commands")
    return group


def test_each_step_has_its_dice_command_generated_from_the_catalogue() -> None:
    group = _dice_cli()
    for e in CATALOGUE:
        if not e.cli_words:
            continue
        where = group
        for word in e.cli_words:
            where = where.commands[word]
        assert where.callback is not None
        assert where.callback.__qualname__.startswith("_step."), e.name  # generated
        flags = {o for p in where.params for o in p.opts}
        for f in e.all_fields:
            if f.on_cli and not f.cli_positional:
                assert f.cli_flag.split("/")[0] in flags, (e.name, f.name)
        for alias in e.aliases:
            assert group.commands[alias].hidden
    assert set(group.commands) >= {"open", "report", "log", "rules", "fairness", "export",
                                   "import"}


def _room() -> FastAPI:
    app = FastAPI()
    dice_room.install(app, FloorCustody(MemoryStore(), FixedClock()),
                      Fixed(lambda r: None))  # type: ignore[arg-type,return-value]
    return app


def test_each_step_has_its_dice_room_route_generated_from_the_catalogue() -> None:
    spec = _room().openapi()
    for e in CATALOGUE:
        model = dice_room.body_model(e).model_json_schema()
        for path in e.route_paths:
            op = spec["paths"][f"/api/dice-room/{{site}}/{path}"]["post"]
            assert op["operationId"].startswith(f"dice_room_{path.replace('-', '_')}")
            body = op["requestBody"]["content"]["application/json"]["schema"]
            assert set(body["properties"]) == set(model["properties"]), path
            assert body.get("required") == model.get("required"), path
            for f in e.all_fields:
                if f.json_key and f.kind is Kind.TEXT:
                    assert body["properties"][f.json_key].get("maxLength") == f.max_length or \
                        "anyOf" in body["properties"][f.json_key], (path, f.name)


def test_the_check_finds_a_hand_written_custody_surface() -> None:
    custody = check.custody_command_names(ROOT / "src" / "dicetable")
    assert {"ReceiveShipment", "FileTransportNotice", "RecordFairnessAlert"} <= custody
    bad = ast.parse('VERBS = {"dice-a": 1, "dice-b": 2, "dice-c": 3}\n'
                    'def receive(): return c.ReceiveShipment(actor="a")\n'
                    'class Sneaky(CustodyCommand):\n    pass\n')
    assert check.custody_verb_tables(bad, custody) == [1]
    assert check.custody_declarations(bad) == [(3, "Sneaky")]
    problems = check.custody_problems(ROOT, "cli/dice.py", bad, custody)
    assert any("names ReceiveShipment by hand" in p for p in problems)
    assert check.catalogued_custody(ast.parse("Entry(c.DrawKey, 'key-draw')")) == {"DrawKey"}


# -- bounds and hostile input --------------------------------------------------------------
def test_a_40000_digit_serial_is_refused_before_any_range_is_read() -> None:
    entry = CATALOGUE.named("store")
    huge = "D" + "1" * 40_000 + "-D" + "2" * 40_000
    with pytest.raises(InvalidInput, match="at most 40 characters"):
        entry.parse_words(BaseContext(), "Ann", Role.SHIFT_MANAGER, [huge])
    with pytest.raises(InvalidInput, match=f"at most {MAX_DICE} dice"):
        entry.make("Ann", Role.SHIFT_MANAGER, "", {"dice": ["D00001-D05001"]}, BaseContext())


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from([e for e in CATALOGUE if e.script]),
       st.lists(st.text(min_size=0, max_size=60), max_size=6))
def test_any_words_give_a_command_or_a_named_refusal(entry: Any, words: list[str]) -> None:
    refusal: DicetableError | None = None
    try:
        command = entry.parse_words(BaseContext(), "Ann", Role.SHIFT_MANAGER, words)
    except DicetableError as e:
        refusal = e
    if refusal is not None:
        assert refusal.rule
    else:
        assert isinstance(command, entry.command)


def test_the_dice_room_checks_the_role_before_it_reads_the_body(tmp_path: Path) -> None:
    """Through the real server: a dealer (a role no storage rule lists) is refused 403 even
    with a body that would not parse; the shift manager gets the body's bounds (422); a
    40,000-digit serial never reaches the range reader; nothing is recorded."""
    from dicetable.server.app import create_app
    from dicetable.server.main import build_floor
    from tests.server.conftest import Client

    floor, _ = build_floor(tmp_path / "floor.db", clock=FixedClock(),
                           hasher=CHEAP_HASHER)
    try:
        with TestClient(create_app(floor, electronic_loop=False, clock_seconds=None)) as http:
            before = floor.custody.site("demo-pa").ledger.state.seq
            huge = {"dice": ["D" + "9" * 40_000], "present": ["sid"]}
            refused = Client(http, "dee").post("/api/dice-room/demo-pa/inspect", huge)
            assert refused.status_code == 403, refused.text
            assert refused.json()["rule"] == "inspection.roles"
            bounded = Client(http, "pat").post("/api/dice-room/demo-pa/store", huge)
            assert bounded.status_code == 422, bounded.text
            assert "40" in bounded.json()["message"]
            old = Client(http, "ann").post("/api/dice-room/demo-pa/inventory",
                                           {"counted": [], "present": ["sid"]})
            new = Client(http, "ann").post("/api/dice-room/demo-pa/count",
                                           {"counted": [], "present": ["sid"]})
            assert (old.status_code, new.status_code) == (200, 200)
            assert floor.custody.site("demo-pa").ledger.state.seq == before + 4
    finally:
        floor.close()
        floor.store.close()
        floor.accounts.close()


# -- a ledger of every step, written back as a script -----------------------------------------
def test_a_ledger_of_every_step_exports_and_replays_to_the_same_events() -> None:
    """IN custody with every catalogued step (a failed seal with findings, a failed die, a
    tampered removal at a table, the transport notice, an overdue sweep, a fairness alert),
    at times with microseconds: the exported script replays to the same events."""
    from datetime import timedelta

    from dicetable.application.scripts import run_script
    from dicetable.core.events import event_to_dict
    from dicetable.table.script_export import export_custody_script
    from tests.custody import scenario as s

    led, clock = s.new_ledger("in")
    clock.set(clock.now() + timedelta(microseconds=123_457))
    a = s.as_
    led.execute(tr.FileTransportNotice(**a(s.ANN), notice="N-1", supplier=PARTY,
                                       method="road", carriers=(PARTY,), recipient=PARTY,
                                       responsible_supplier="Al", responsible_carrier="Cy",
                                       responsible_recipient="Ann Lee", quantity=8,
                                       description="red dice; 0.750 in",
                                       delivery_at="2026-03-20T10:00:00+00:00"))
    clock.set(clock.now() + timedelta(days=18, seconds=7, microseconds=9))
    dice = s.serials("I", 6)
    led.execute(c.ReceiveShipment(**a(s.ANN, s.SAM), shipment="S1", manufacturer=s.ACME,
                                  delivery_witness=s.AGENT,
                                  boxes=(Box("B1", dice[:4]), Box("B2", dice[4:], False)),
                                  opened=(BoxInspection("B2", (Finding(dice[5], "chipped"),)),)))
    led.execute(tr.ProveReceipt(**a(s.ANN), notice="N-1", shipment="S1",
                                requested_by="the executive director"))
    s.draw_keys(led)
    led.execute(c.StoreDice(**a(s.ANN, s.SAM), dice=dice[:5], area="dice-storage"))
    led.execute(c.IssueForGamingDay(**a(s.ANN, s.SAM), dice=dice[:5], gaming_day="2026-03-20"))
    s.return_keys(led)
    led.execute(c.InspectDice(**a(s.PAT), tools=s.TOOLS, under_surveillance=True, checks=(
        *(s.good_check(x) for x in dice[:3]), s.good_check(dice[3], "0.749"),
        DieCheck(dice[4], (Decimal("0.75"),) * 3, tuple(k for k in Check
                                                      if k is not Check.BALANCED)))))
    clock.set(clock.now() + timedelta(minutes=3, microseconds=1))
    led.execute(c.IssueToTable(**a(s.PAT), dice=dice[:3], table="craps-1",
                               received_by=s.BOB))
    led.execute(c.RemoveDice(**a(s.PAT), dice=(dice[0],), reason=RemovalReason.TAMPERED,
                             signs="heavy side", table_staff=(s.BOB, s.STU),
                             assigned_at_table=s.on_duty(s.BOB, s.STU)))
    led.execute(c.DeliverEnvelope(**a(s.PAT), envelope=led.log[-1].envelope,  # type: ignore[attr-defined]
                                  agent="Agent Cole"))
    led.execute(c.RecordFairnessAlert(actor="fairness-monitor", role=Role.SYSTEM,
                                      serial=dice[1], test="cusum", detail="drift",
                                      statistic="5.2", threshold="4.6", rolls=400))
    s.remove_and_transfer(led, (dice[3],), RemovalReason.DEFECTIVE)
    s.cancel(led, (dice[3],))
    clock.set(clock.now() + timedelta(hours=25))
    led.execute(c.CheckDeadlines(actor="deadline-sweep", role=Role.SYSTEM))
    led.execute(c.TakePhysicalInventory(**a(s.ANN, s.SAM), counted=(*dice[1:3], "X9")))
    kinds = {e.kind for e in led.log}
    assert {"DiceOverdue", "TamperEnvelopeSealed", "BoxOpenedAndInspected", "ReceiptProved",
            "InventoryDiscrepancyReported", "FairnessAlertRaised", "DiceCancelled"} <= kinds
    script = export_custody_script(led.log)
    assert "advance" in script
    assert "us" in script
    result = run_script(script)
    assert result.ok, result.failure
    assert result.table is None
    assert result.custody is not None
    assert [event_to_dict(e) for e in result.custody.log] == \
        [event_to_dict(e) for e in led.log]
