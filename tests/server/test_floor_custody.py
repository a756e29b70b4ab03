"""Custody on the floor, through the server with an injected clock: a live table takes only
dice custody issued to it; the floor's clock blocks a shaker's dice past 24 hours and raises
the pit alert until they are replaced; the dice leave through custody; the quarterly
inventory falls due; fairness alerts go into the die's custody history."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dicetable.core.clock import FixedClock
from dicetable.custody.events import DiceOverdue
from dicetable.games.packs import derive_pack, load_preset
from dicetable.server.app import create_app
from dicetable.server.demo import STAFF
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from dicetable.server.scheduler import FloorScheduler
from dicetable.table.script_export import export_custody_script
from tests.demo_floor import CHEAP_HASHER
from tests.server.conftest import Client
from tests.server.test_api import refused

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
pytestmark = pytest.mark.xdist_group("floor-custody")  # one worker builds the module's floor
T, PH, IN = "/api/tables/craps-pa-1", "/api/tables/props-pa-1", "/api/tables/craps-in-1"
ROOM = "/api/dice-room/demo-pa"


@pytest.fixture(scope="module")
def clocked_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clocked") / "floor.db"
    built, credentials = build_floor(path, clock=FixedClock(START), hasher=CHEAP_HASHER)
    assert credentials
    built.close()
    built.store.close()
    built.accounts.close()
    return path


@pytest.fixture
def setup(clocked_db: Path, tmp_path: Path) -> Iterator[tuple[Floor, FixedClock, TestClient]]:
    copy = tmp_path / "floor.db"
    shutil.copyfile(clocked_db, copy)
    shutil.copyfile(f"{clocked_db}.key", f"{copy}.key")  # the chain key lives beside the file
    clock = FixedClock(START)
    floor, _ = build_floor(copy, clock=clock)
    with TestClient(create_app(floor, electronic_loop=False, clock_seconds=None)) as http:
        yield floor, clock, http
    floor.close()
    floor.store.close()
    floor.accounts.close()


def test_the_demo_floor_is_compliant_from_its_first_roll(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    floor, _, http = setup
    pat = Client(http, "pat")
    report = pat.get(f"{ROOM}/report").json()
    by_serial = {d["serial"]: d for d in report["dice"]}
    for demo_table, serials in [("craps-pa-1", [f"PA1-{i}" for i in range(1, 6)]),
                                ("props-pa-1", ["PH1-1", "PH1-2"])]:
        held = set(floor.tables[demo_table].table.procedure.dice)
        assert held == set(serials)
        for s in serials:
            d = by_serial[s]
            assert d["state"] == "at-table"
            assert d["table"] == demo_table
            kinds = [h["event"] for h in d["history"]]
            assert kinds == ["ShipmentReceived", "DiceStored", "DiceIssuedForGamingDay",
                             "DiceInspected", "DiceIssuedToTable"]
            stored = next(h for h in d["history"] if h["event"] == "DiceStored")
            assert len(stored["witnesses"]) == 1  # both key holders: the actor and security
    assert not report["open_alerts"]
    assert Client(http, "pat").get("/api/pit").json()["custody"]["alerts"] == []


def test_a_live_table_refuses_dice_custody_never_issued_to_it(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    _, _, http = setup
    bo = Client(http, "bo")
    bo.post(f"{T}/dice/remove", {"serials": ["PA1-5"], "reason": "chipped"})
    unknown = refused(bo.post(f"{T}/dice", {"serials": ["ZZ-9"]}), 409, "ProcedureViolation",
                      "storage.source_only")
    assert "no record" in unknown["message"]
    assert unknown["citation"]
    # inspected and waiting in the pit, but not issued to this table
    refused(bo.post(f"{T}/dice", {"serials": ["PA1-S1"]}), 409, "ProcedureViolation",
            "storage.source_only")
    # issued to another table (and another site's ledger)
    refused(bo.post(f"{T}/dice", {"serials": ["IN1-6"]}), 409, "ProcedureViolation")
    pat = Client(http, "pat")
    ok = pat.post(f"{ROOM}/issue-table", {"dice": ["PA1-S1"], "table": "craps-pa-1",
                                          "received_by": "bo"})
    assert ok.status_code == 200, ok.text
    assert bo.post(f"{T}/dice", {"serials": ["PA1-S1"]}).status_code == 200


def test_pa_585_3_b_1_shaker_dice_past_24_hours_block_play_until_replaced(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    floor, clock, http = setup
    scheduler: FloorScheduler = http.app.state.scheduler  # type: ignore[attr-defined]
    alice, fran, pat = Client(http, "alice"), Client(http, "fran"), Client(http, "pat")
    assert alice.post(f"{PH}/bets", {"wager": "double4", "amount": 500}).status_code == 200
    clock.advance(hours=23, minutes=59)
    quiet = scheduler.tick()
    assert quiet.errors == []
    assert quiet.custody_events == []
    assert "props-pa-1" not in quiet.table_events
    clock.advance(minutes=2)
    report = scheduler.tick()
    assert report.errors == []
    assert report.table_events["props-pa-1"] == ["AlertRaised"]
    assert "DiceOverdue" in report.custody_events
    assert scheduler.tick().table_events == {}  # raised once, not on every tick
    refused(alice.post(f"{PH}/bets", {"wager": "double4", "amount": 500}), 409,
            "ProcedureViolation", "dice.max_hours")
    pit = pat.get("/api/pit").json()
    props = next(t for t in pit["tables"] if t["table"] == "props-pa-1")
    assert props["blocked"]
    assert props["alerts"][0]["name"] == "dice-expired"
    assert any(a["type"] == "DiceOverdue" and a["dice"] == ["PH1-1", "PH1-2"]
               for a in pit["custody"]["alerts"])
    # The dice leave the table, then through custody: removed, to the cancellation room,
    # cancelled under surveillance.
    assert fran.post(f"{PH}/dice/remove", {"serials": ["PH1-1", "PH1-2"],
                                           "reason": "24-hour limit"}).status_code == 200
    waiting = pat.get("/api/pit").json()["custody"]["awaiting_removal"]
    assert {w["serial"] for w in waiting} == {"PH1-1", "PH1-2"}
    assert pat.post(f"{ROOM}/remove", {"dice": ["PH1-1", "PH1-2"], "reason": "routine",
                                       "detail": "24-hour limit"}).status_code == 200
    assert pat.post(f"{ROOM}/transfer", {"dice": ["PH1-1", "PH1-2"],
                                         "accepted_by": "sid"}).status_code == 200
    cancelled = Client(http, "sid").post(f"{ROOM}/cancel", {
        "dice": ["PH1-1", "PH1-2"], "method": "drill", "hole_in": "0.25", "present": ["val"]})
    assert cancelled.status_code == 200, cancelled.text
    # Still blocked until new dice are issued and brought.
    refused(alice.post(f"{PH}/bets", {"wager": "double4", "amount": 500}), 409,
            "ProcedureViolation", "dice.max_hours")
    issued = fran.post(f"{ROOM}/issue-table", {"dice": ["PH1-S1", "PH1-S2"],
                                               "table": "props-pa-1", "received_by": "dee",
                                               "shaker": True})
    assert issued.status_code == 200, issued.text
    brought = fran.post(f"{PH}/dice", {"serials": ["PH1-S1", "PH1-S2"], "witness": "dee"})
    assert [e["type"] for e in brought.json()["events"]] == ["DiceBrought", "PlayUnblocked"]
    # 585.3(d): the newly loaded shaker is shaken by the dealer before the round's wagers.
    refused(alice.post(f"{PH}/bets", {"wager": "double2", "amount": 500}), 409,
            "ProcedureViolation", "wagering.after_dealer_shake")
    assert Client(http, "dee").post(f"{PH}/shake").status_code == 200
    assert alice.post(f"{PH}/bets", {"wager": "double2", "amount": 500}).status_code == 200
    pit = pat.get("/api/pit").json()
    assert not any("PH1-1" in a["dice"] for a in pit["custody"]["alerts"])
    assert not next(t for t in pit["tables"] if t["table"] == "props-pa-1")["blocked"]
    assert floor.custody.site("demo-pa").ledger.state.dice["PH1-1"].state.value == "cancelled"


def test_in_14_3_5_d_the_quarterly_inventory_falls_due_and_says_so(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    _, clock, http = setup
    scheduler: FloorScheduler = http.app.state.scheduler  # type: ignore[attr-defined]
    clock.advance(days=93)
    assert "InventoryOverdue" in scheduler.tick().custody_events
    pat = Client(http, "pat")
    due = [a for a in pat.get("/api/pit").json()["custody"]["alerts"]
           if a["type"] == "InventoryOverdue"]
    assert {a["site"] for a in due} == {"demo-pa", "demo-in"}
    report = pat.get(f"{ROOM}/report").json()
    every = [d["serial"] for d in report["dice"] if d["in_building"]]
    counted = Client(http, "ann").post(f"{ROOM}/inventory", {"counted": every,
                                                            "present": ["sid"]})
    assert counted.status_code == 200, counted.text
    left = [a for a in pat.get("/api/pit").json()["custody"]["alerts"]
            if a["type"] == "InventoryOverdue"]
    assert [a["site"] for a in left] == ["demo-in"]


def test_fairness_alerts_from_rolls_go_into_the_dice_custody_history(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    floor, _, http = setup
    sam, dee = Client(http, "sam"), Client(http, "dee")
    alice = Client(http, "alice")  # don't pass: a 12 on the come-out is barred, a push
    assert alice.post(f"{T}/bets", {"wager": "dontpass", "amount": 500}).status_code == 200
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    rolls = 0
    ledger = floor.custody.site("demo-pa").ledger
    while not ledger.state.dice["PA1-1"].fairness_alerts and rolls < 200:
        alice.post(f"{T}/bets", {"wager": "dontpass", "amount": 500})  # (a 422 if it stands)
        reply = sam.post(f"{T}/roll", {"faces": "6-6", "serials": ["PA1-1", "PA1-2"]})
        assert reply.status_code == 200, reply.text
        dee.post(f"{T}/settle")
        rolls += 1
    assert ledger.state.dice["PA1-1"].fairness_alerts >= 1
    history = {h["event"] for d in Client(http, "pat").get(f"{ROOM}/report").json()["dice"]
               if d["serial"] == "PA1-1" for h in d["history"]}
    assert "FairnessAlertRaised" in history
    # A roll naming dice custody did not issue to this table is refused.
    refused(sam.post(f"{T}/roll", {"faces": "6-6", "serials": ["PA1-1", "IN1-1"]}), 409,
            "ProcedureViolation")


def test_the_pit_links_each_table_to_its_rules_submission(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    floor, _, http = setup
    pat = Client(http, "pat")
    page = pat.get("/api/tables/craps-in-1/rules-submission")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    digest = floor.tables["craps-in-1"].table.pack.digest
    assert f'data-digest="{digest}"' in page.text
    custody = floor.custody.site_for("IN")
    assert custody is not None  # Indiana's custody rules in the dice procedure, on the cover
    assert f'data-custody-digest="{custody.ledger.pack.digest}"' in page.text
    site = next(name for name, d in floor.custody.sites.items() if d is custody)
    assert f'<td data-cover="site">{site}</td>' in page.text
    refused(Client(http, "alice").get("/api/tables/craps-in-1/rules-submission"), 403,
            "RoleNotPermitted")
    assert "/rules-submission" in http.get("/static/js/pit.js").text


def test_dice_room_refusals_name_the_rule_and_change_nothing(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    floor, _, http = setup
    ledger = floor.custody.site("demo-pa").ledger
    before = ledger.state.seq
    ann, pat = Client(http, "ann"), Client(http, "pat")
    refused(Client(http, "alice").post(f"{ROOM}/key-draw", {"key": "security"}), 403,
            "RoleNotPermitted", "custody.staff")
    # the role comes from the site's staff list, not the request: a pit boss may not use the
    # table games key (only an assistant shift manager or above)
    drawn = refused(pat.post(f"{ROOM}/key-draw", {"key": "table-games", "role": "shift-manager"}),
                    403, "RoleNotPermitted", "storage.keys")
    assert "603a.13(c)" in drawn["citation"]
    refused(ann.post(f"{ROOM}/store", {"dice": ["PA1-S1"], "present": ["mallory"]}), 422,
            "InvalidInput", "custody.person")
    refused(ann.post(f"{ROOM}/store", {"dice": ["PA1-S1"], "present": ["ann"]}), 422,
            "InvalidInput", "custody.person")  # one person cannot be both
    refused(ann.post(f"{ROOM}/receive", {
        "shipment": "S9", "manufacturer": "Acme", "address": "x", "phone": "1",
        "boxes": [{"box": "B", "serials": ["X000001-X099999"]}], "present": ["sid"]}), 422,
        "InvalidInput", "custody.serials")
    refused(ann.post(f"{ROOM}/receive", {"shipment": "S9"}), 422, "InvalidInput")
    refused(ann.post("/api/dice-room/nowhere/key-draw", {"key": "security"}), 422,
            "InvalidInput", "custody.open")
    # receipt needs security present (603a.13(a))
    alone = refused(ann.post(f"{ROOM}/receive", {
        "shipment": "S9", "manufacturer": "Acme", "address": "x", "phone": "1",
        "boxes": [{"box": "B", "serials": ["X1"]}]}), 403, "RoleNotPermitted", "receipt.roles")
    assert alone["citation"].startswith("58 Pa. Code § 603a.13(a)")
    assert ledger.state.seq == before


def test_pa_603a_13_in_68_iac_14_3_the_sweep_keeps_the_house_packs_dice_limit(
        setup: tuple[Floor, FixedClock, TestClient]) -> None:
    """A house pack that sets ``dice.max_hours`` (a stand-in for Craps) moves when the custody
    sweep reports the table's dice overdue: the one limit, read from the site's own pack."""
    floor, clock, http = setup
    scheduler: FloorScheduler = http.app.state.scheduler  # type: ignore[attr-defined]
    house = derive_pack(load_preset("pa-craps"), "short-dice", {"dice.max_hours": 12})
    floor.open_table(house, "craps-pa-9", mode="live", opener="fran",
                     staff={p: STAFF[p][1] for p in ("pat", "sam", "bo", "dee")})
    issued = Client(http, "pat").post(f"{ROOM}/issue-table", {
        "dice": ["PA1-S1", "PA1-S2"], "table": "craps-pa-9", "received_by": "dee"})
    assert issued.status_code == 200, issued.text
    clock.advance(hours=12)
    assert "DiceOverdue" not in scheduler.tick().custody_events  # at the limit is not over it
    clock.advance(minutes=1)
    assert "DiceOverdue" in scheduler.tick().custody_events
    alerts = Client(http, "pat").get("/api/pit").json()["custody"]["alerts"]
    overdue = [a for a in alerts if a["type"] == "DiceOverdue"]
    assert [a["dice"] for a in overdue] == [["PA1-S1", "PA1-S2"]]  # the shipped 24 hours: not yet
    assert "house rule of short-dice" in overdue[0]["rule"]
    assert "past 12 hours" in overdue[0]["message"]
    ledger = floor.custody.site("demo-pa").ledger
    assert [e.limit_hours for e in ledger.alerts if isinstance(e, DiceOverdue)] == [12]
    # The ledger still exports as a script that replays to the same events (the sweep's
    # limits are written with its step: check limit=craps-pa-9:12:...).
    script = export_custody_script(floor.store.events("custody:demo-pa"))
    assert "limit=craps-pa-9:12:" in script
