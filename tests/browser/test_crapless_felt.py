"""Crapless Craps on the floor: a table of the house pack opens on the running server, and the
player's felt draws what the view's game facts say (ten point numbers, the puck, no Don't
bets) -- no page compares the game's name."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from dicetable.core.roles import Role
from dicetable.games.packs import load_preset
from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import LiveServer, OpenScreen

TABLE = "crapless-1"


def _as(server: LiveServer, username: str) -> httpx.Client:
    http = httpx.Client(base_url=server.url, timeout=10)
    reply = http.post("/api/login", json={"username": username, "password": DEMO_PASSWORD})
    assert reply.status_code == 200, reply.text
    http.headers["authorization"] = f"Bearer {reply.json()['token']}"
    return http


def test_crapless_craps_table_opens_and_its_felt_has_ten_points_and_no_dont_bets(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    live_server.floor.open_table(load_preset("crapless-craps"), TABLE, mode="live",
                                 opener="fran", staff={"sam": Role.STICKPERSON,
                                                       "bo": Role.BOXPERSON, "dee": Role.DEALER})
    alice, dee = _as(live_server, "alice"), _as(live_server, "dee")
    assert alice.post(f"/api/tables/{TABLE}/join", json={"seat": 9}).status_code == 200
    bought = dee.post(f"/api/tables/{TABLE}/chips", json={"player": "alice", "amount": 500_00})
    assert bought.status_code == 200, bought.text
    view = alice.get(f"/api/tables/{TABLE}").json()
    assert view["variant"]["layout"] == "craps"
    assert view["variant"]["points"] == [2, 3, 4, 5, 6, 8, 9, 10, 11, 12]

    screen = open_screen("alice", at=f"/play?table={TABLE}&pause=0")
    page = screen.page
    expect(page.locator("#balance")).to_have_attribute("data-cents", str(500_00))
    for n in (2, 3, 4, 5, 6, 8, 9, 10, 11, 12):
        expect(page.locator(f'svg.layout [data-code="place{n}"]')).to_be_visible()
        expect(page.locator(f'svg.layout [data-code="buy{n}"]')).to_be_visible()
    for code in ("dontpass", "dontcome", "lay4", "lose10", "put6"):
        spot = page.locator(f'svg.layout [data-code="{code}"]')
        expect(spot).to_have_class(re.compile(r"\babsent\b"))
        expect(spot).to_be_hidden()
    expect(page.locator("#layout-puck")).to_have_attribute("data-point", "")
    expect(page.locator("#puck")).to_have_text("OFF")

    # A Place 12 bet through the felt: 11 to 2, so $10 is paid exactly.
    page.click('.chip-btn[data-cents="500"]')
    spot = page.locator('svg.layout [data-code="place12"]')
    expect(spot).to_have_class(re.compile(r"\bopen\b"))
    spot.click()
    spot.click()
    page.click("#confirm")
    expect(page.locator("#balance")).to_have_attribute("data-cents", str(490_00))
    bets = live_server.floor.tables[TABLE].table.state.bets_of("alice")
    assert [(b.wager, b.amount) for b in bets] == [("place12", 10_00)]
    screen.shot("crapless-felt")
