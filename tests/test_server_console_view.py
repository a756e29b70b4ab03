"""What the pages are given to offer: the pack's own choices in the table view, the dice on
offer and whose turn it is, and the dice timer's length."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from tests.demo_floor import CHEAP_HASHER

pytestmark = pytest.mark.xdist_group("console-view")  # one worker builds the module's floor
CRAPS, PROPS = "craps-pa-1", "props-pa-1"


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Floor]:
    floor, _ = build_floor(tmp_path_factory.mktemp("floor") / "floor.db",
                           hasher=CHEAP_HASHER)
    yield floor
    floor.close()


@pytest.fixture(scope="module")
def app(floor: Floor) -> FastAPI:
    return create_app(floor, electronic_loop=False)


def client(app: FastAPI, username: str) -> TestClient:
    c = TestClient(app)
    assert c.post("/api/login", json={"username": username,
                                       "password": DEMO_PASSWORD}).status_code == 200
    return c


def test_pa_623a_8_c_the_console_offers_the_packs_no_roll_grounds(app: FastAPI,
                                                                 floor: Floor) -> None:
    view = client(app, "sam").get(f"/api/tables/{CRAPS}").json()
    rules = view["rules"]
    pack = floor.tables[CRAPS].table.pack
    assert [g["ground"] for g in rules["noroll_grounds"]] == pack.value("noroll.grounds")
    assert all(g["text"] for g in rules["noroll_grounds"])
    assert rules["noroll_citation"] == pack.cite("noroll.grounds")
    assert rules["noroll_excluded"] == ["die-on-chips"]
    assert {f["fact"] for f in rules["throw_facts"]} >= {"die-off-table", "die-on-chips"}
    assert rules["removal_grounds"] == pack.value("shooter.removal_grounds")
    assert rules["authority"]["authority.record_roll"] == ["stickperson"]
    assert rules["dice_max_hours"] == 24


def test_pa_585_3_e_the_player_page_knows_the_minimum_shakes(app: FastAPI) -> None:
    view = client(app, "alice").get(f"/api/tables/{PROPS}").json()
    assert view["rules"]["min_shakes"] == 3
    assert view["next_shooter"] is None  # no shooter at Props & Hops


def test_the_dice_on_offer_and_whose_turn_it_is_are_public(app: FastAPI) -> None:
    alice, sam = client(app, "alice"), client(app, "sam")
    before = alice.get(f"/api/tables/{CRAPS}").json()
    assert before["next_shooter"] == "alice"
    assert before["offered"] == []
    assert sam.post(f"/api/tables/{CRAPS}/offer-dice", json={"patron": "alice"}).status_code \
        == 200
    offered = alice.get(f"/api/tables/{CRAPS}").json()["offered"]
    assert len(offered) == 5
    r = alice.post(f"/api/tables/{CRAPS}/select-dice", json={"serials": offered[:2]},
                   headers={"prefer": "return=representation"})  # the page asks for the view
    assert r.status_code == 200
    after = r.json()["view"]
    assert (after["shooter"], after["offered"], after["next_shooter"]) == ("alice", [], None)


def test_the_pit_summary_carries_the_dice_time_limit(app: FastAPI) -> None:
    tables = client(app, "pat").get("/api/pit").json()["tables"]
    assert {t["table"]: t["dice_max_hours"] for t in tables}[CRAPS] == 24
