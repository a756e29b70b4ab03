"""The felt as players and the crew use it (issue 14), in a real browser against a real server.

Players bet through the felt with the bet builder (chips stack until Confirm; ``pause=0``
turns the automatic placement off so each test decides when), the crew's steps that are not
under test go through the API. Every amount is checked against the engine. Screenshots
(``DICETABLE_SCREENSHOTS=1``) go to ``artifacts/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import re
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from dicetable.core.roles import Role
from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import LiveServer, OpenScreen, screenshot

CRAPS = "craps-pa-1"
START = 500_00


class Staff:
    """A member of the crew (or a player) acting through the API."""

    def __init__(self, server: LiveServer, username: str) -> None:
        self.http = httpx.Client(base_url=server.url, timeout=10)
        reply = self.http.post("/api/login", json={"username": username,
                                                   "password": DEMO_PASSWORD})
        assert reply.status_code == 200, reply.text
        self.http.headers["authorization"] = f"Bearer {reply.json()['token']}"

    def do(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = self.http.post(f"/api/tables/{CRAPS}{path}", json=body or {})
        assert reply.status_code == 200, reply.text
        data: dict[str, Any] = reply.json()
        return data


def felt(open_screen: OpenScreen, who: str, *, width: int = 1500, height: int = 1000) -> Page:
    """``who``'s player page with automatic placement off (only Confirm places chips)."""
    page = open_screen(who, width=width, height=height, at=f"/play?table={CRAPS}&pause=0").page
    expect(page.locator("#balance")).to_be_attached()
    return page


def chip(page: Page, cents: int) -> None:
    page.click(f'.chip-btn[data-cents="{cents}"]')


def tap(page: Page, code: str, times: int = 1) -> None:
    spot = page.locator(f'svg.layout [data-code="{code}"]')
    expect(spot).to_have_class(re.compile(r"\bopen\b"))
    for _ in range(times):
        if code in ("pass", "come"):  # aim clear of chips standing on the spot
            box = spot.bounding_box()
            assert box is not None
            y = 0.94 if code == "pass" else 0.5
            spot.click(position={"x": box["width"] * 0.3, "y": box["height"] * y})
        else:
            spot.click()


def confirm(page: Page, balance_after: int) -> None:
    page.click("#confirm")
    expect(page.locator("#balance")).to_have_attribute("data-cents", str(balance_after))
    expect(page.locator("#builder .stack-line")).to_have_count(0)


def bets_of(server: LiveServer, player: str) -> list[Any]:
    state = server.floor.tables[CRAPS].table.state
    return sorted(state.bets_of(player), key=lambda b: b.id)


def shooter(server: LiveServer, page: Page) -> tuple[Staff, Staff]:
    """The stickperson offers alice the dice and she takes two (her pass line is down)."""
    sam, dee = Staff(server, "sam"), Staff(server, "dee")
    sam.do("/offer-dice", {"patron": "alice"})
    offered = page.locator("#offered-dice button")
    expect(offered).to_have_count(5)
    offered.nth(0).click()
    offered.nth(1).click()
    page.click("#take-dice")
    expect(page.locator("#turn")).to_contain_text("You are the shooter")
    return sam, dee


def throw(sam: Staff, dee: Staff, faces: str) -> None:
    sam.do("/roll", {"faces": faces})
    dee.do("/settle")


def test_pa_craps_place_6_with_6_and_12_dollars_horn_with_1_dollar_chips_and_off_markers(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    p = felt(open_screen, "alice")
    chip(p, 100)
    p.locator('svg.layout [data-code="place6"]').hover()
    expect(p.locator("#spot-label")).to_have_text("Place 6 to Win: $6, $9, $12 ... up to $4,998")

    # Place 6 with six $1 chips: they stack on the spot until confirmed.
    tap(p, "place6", 6)
    expect(p.locator('#builder .stack-line[data-key="new:place6"]')).to_have_attribute(
        "data-amount", "600")
    expect(p.locator("#balance")).to_have_attribute("data-cents", str(START))  # not yet placed
    confirm(p, START - 600)
    six = p.locator('svg.layout .chip[data-wager="place6"]')
    expect(six).to_have_attribute("data-amount", "600")
    # The come-out: a place bet is off (the table's policy), and the felt says so.
    expect(six).to_have_attribute("data-off", "true")
    expect(six.locator(".off-marker")).to_have_count(1)
    expect(p.locator('.bet-row[data-wager="place6"] .off-tag')).to_have_text("OFF")

    # A $5 chip on it: $6 + $5 = $11 is no Place 6 amount; the stack snaps DOWN to $9 (the
    # $2 stays with the player) and offers $12, which the player chooses.
    chip(p, 500)
    tap(p, "place6")
    expect(p.locator("#builder .stack-line")).to_have_attribute("data-amount", "900")
    expect(p.locator("#builder")).to_contain_text("$2.00 stays with you")
    p.click("#builder .make-above")
    expect(p.locator("#builder .stack-line")).to_have_attribute("data-amount", "1200")
    confirm(p, START - 1200)
    expect(six).to_have_attribute("data-amount", "1200")
    assert [(b.wager, b.amount) for b in bets_of(live_server, "alice")] == [("place6", 1200)]

    # Horn with $1 chips: four parts, $4.
    chip(p, 100)
    tap(p, "horn", 4)
    expect(p.locator('#builder .stack-line[data-key="new:horn"]')).to_have_attribute(
        "data-amount", "400")
    screenshot(p, "felt-stacking-horn-over-place6-off")
    confirm(p, START - 1200 - 400)
    assert sorted((b.wager, b.amount) for b in bets_of(live_server, "alice")) == [
        ("horn", 400), ("place6", 1200)]

    # The per-bet on/off call: turn the Place 6 on for the come-out, and off again.
    row = p.locator('.bet-row[data-wager="place6"]')
    row.locator('[data-action="toggle"]').click()
    expect(six).to_have_attribute("data-off", "false")
    row.locator('[data-action="toggle"]').click()
    expect(six).to_have_attribute("data-off", "true")

    # Undo and Clear work on the stack before anything is sent.
    chip(p, 2500)
    tap(p, "field")
    tap(p, "field")
    expect(p.locator("#builder .stack-line")).to_have_attribute("data-amount", "5000")
    p.click("#undo")
    expect(p.locator("#builder .stack-line")).to_have_attribute("data-amount", "2500")
    p.click("#clear")
    expect(p.locator("#builder .stack-line")).to_have_count(0)
    assert live_server.balance(CRAPS, "alice") == START - 1600
    screenshot(p, "felt-come-out-off-markers")
    # Nothing refused was offered: no refusal was shown.
    expect(p.locator(".refusal")).to_have_count(0)


def test_pa_craps_two_come_bets_travel_to_their_numbers_with_odds_on_each(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    p = felt(open_screen, "alice")
    chip(p, 500)
    tap(p, "pass", 2)
    confirm(p, START - 1000)
    sam, dee = shooter(live_server, p)
    throw(sam, dee, "2-2")                      # the point is 4
    expect(p.locator("#layout-puck")).to_have_attribute("data-point", "4")
    balance = START - 1000
    for faces, number in (("3-3", 6), ("4-4", 8)):
        tap(p, "come")
        balance -= 500
        confirm(p, balance)
        throw(sam, dee, faces)                  # the come bet travels to the number
        moved = p.locator(f'svg.layout .chip[data-wager="come"][data-point="{number}"]')
        expect(moved).to_have_count(1)
        box = moved.bounding_box()
        spot = p.locator(f'svg.layout [data-code="place{number}"]').bounding_box()
        assert box is not None
        assert spot is not None
        centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        assert spot["x"] <= centre[0] <= spot["x"] + spot["width"]   # on its number,
        assert spot["y"] <= centre[1] <= spot["y"] + spot["height"]  # not in the COME box
    expect(p.locator("#result-banner")).to_contain_text("Come")

    # Odds on each: a chip on the come bet standing on its number.
    for number in (6, 8):
        p.locator(f'svg.layout .chip[data-wager="come"][data-point="{number}"]').click()
        balance -= 500
        confirm(p, balance)
    state = live_server.floor.tables[CRAPS].table.state
    comes = {b.id: b for b in state.bets_of("alice") if b.wager == "come"}
    odds = [b for b in state.bets_of("alice") if b.base in comes]
    assert sorted((b.amount, comes[b.base or ""].amount) for b in odds) == [(500, 500),
                                                                          (500, 500)]
    assert len({b.base for b in odds}) == 2
    labels = p.locator("#my-bets .bet-row .name").all_inner_texts()
    assert "Come on 6" in labels
    assert "Come on 8" in labels
    assert "Odds on Come (6)" in labels
    assert "Odds on Come (8)" in labels
    assert not any(re.search(r"\bb\d+\b", label) for label in labels)  # no bet ids
    screenshot(p, "felt-two-come-bets-with-odds")


def test_pa_craps_lay_odds_on_a_dont_pass_through_the_felt(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice = Staff(live_server, "alice")
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    p = felt(open_screen, "bob")
    chip(p, 500)
    tap(p, "dontpass", 2)
    confirm(p, START - 1000)
    sam, dee = Staff(live_server, "sam"), Staff(live_server, "dee")
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    throw(sam, dee, "2-2")                      # the point is 4: lay odds pay 1 to 2
    odds_spot = p.locator('svg.layout [data-code="odds"]')
    expect(odds_spot).to_have_class(re.compile(r"\bopen\b"))
    chip(p, 2500)
    tap(p, "odds")
    # $25 laid on the 4 wins $12.50: the stack snaps DOWN to the amount below the odds take.
    stack = p.locator("#builder .stack-line")
    expect(stack).to_contain_text("stays with you")
    amount = int(stack.get_attribute("data-amount") or 0)
    assert 2000 < amount < 2500
    confirm(p, START - 1000 - amount)
    state = live_server.floor.tables[CRAPS].table.state
    line = next(b for b in state.bets_of("bob") if b.wager == "dontpass")
    laid = next(b for b in state.bets_of("bob") if b.base == line.id)
    assert (laid.wager, laid.amount) == ("odds:lay", amount)
    expect(p.locator("#my-bets")).to_contain_text("Lay odds on Don't Pass Bar (4)")
    screenshot(p, "felt-lay-odds-on-dont-pass")


def test_pa_craps_dealer_books_a_called_bet_and_the_player_sees_it(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    p = felt(open_screen, "alice")
    dee = open_screen("dee", width=1024, height=1300).page   # a tablet in landscape
    expect(dee.locator("#book-card")).to_be_visible()
    dee.select_option("#book-player", "alice")
    dee.select_option("#book-wager", "place8")
    dee.fill("#book-amount", "10")
    expect(dee.locator("#book-hint")).to_contain_text("$10.00 is not one of them")
    expect(dee.locator("#book-bet")).to_be_disabled()         # the engine would refuse it
    dee.fill("#book-amount", "12")
    expect(dee.locator("#book-bet")).to_be_enabled()
    dee.click("#book-bet")
    expect(p.locator("#balance")).to_have_attribute("data-cents", str(START - 1200))
    expect(p.locator('.bet-row[data-wager="place8"] .amt')).to_have_text("$12.00")
    expect(p.locator("#feed")).to_contain_text("dee (dealer) for you: alice bets $12.00 on "
                                               "Place 8 to Win")
    placed = [e for e in live_server.floor.store.events(CRAPS) if e.kind == "BetPlaced"][-1]
    assert (placed.actor, placed.role) == ("dee", Role.DEALER)
    # What is open to the player booked is asked again after the push: her Place 8 stands
    # (it is pressed now, not placed), and another player's choice shows their own.
    expect(dee.locator('#book-wager option[value="place8"]')).to_have_count(0)
    dee.select_option("#book-player", "bob")
    expect(dee.locator('#book-wager option[value="place8"]')).to_have_count(1)
    dee.select_option("#book-player", "alice")
    expect(dee.locator('#book-wager option[value="place6"]')).to_have_count(1)
    expect(dee.locator('#book-wager option[value="place8"]')).to_have_count(0)

    # The player calls "press it", then "off", then "take it down": the dealer does each.
    row = dee.locator('#players-table tr[data-player="alice"]')
    press = row.locator('[data-action="press"]')
    expect(press).to_have_text("press $15.00")  # the next amount Place 8 takes
    press.click()
    expect(p.locator('.bet-row[data-wager="place8"] .amt')).to_have_text("$15.00")
    row.locator('[data-action="toggle"]').click()           # on for the come-out
    expect(p.locator('svg.layout .chip[data-wager="place8"]')).to_have_attribute(
        "data-off", "false")
    screenshot(dee, "dealer-books-a-called-bet-1024")
    # The console fits a tablet: nothing runs off to the side.
    for width in (1024, 820):
        dee.set_viewport_size({"width": width, "height": 1300})
        overflow = dee.evaluate("document.documentElement.scrollWidth - innerWidth")
        assert overflow <= 0, f"the console overflows by {overflow}px at {width}px"
    screenshot(dee, "dealer-console-820")
    row.locator('[data-action="remove"]').click()
    expect(p.locator('.bet-row[data-wager="place8"]')).to_have_count(0)
    assert live_server.balance(CRAPS, "alice") == START

    # A relieving dealer opening the console sees the table's history.
    dee.reload()
    expect(dee.locator("#feed")).to_contain_text("alice bets $12.00 on Place 8 to Win")
    p.reload()
    expect(p.locator("#feed")).to_contain_text("dee (dealer) for you")
    # The player reads wager names, dollars and local times: no ids, no raw values.
    p.click("#load-recall")
    expect(p.locator("#load-recall")).to_have_text("Refresh")
    text = p.locator("main").inner_text() + " ".join(
        p.locator("#feed .line").evaluate_all("(els) => els.map((e) => e.title)"))
    assert not re.search(r"\bb\d+\b", text)
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:", text)
    assert not re.search(r"\b(CollectLosers|PayWinners|MovePuck|BetPlaced|odds:lay)\b", text)
    assert "COMAR" not in text
    assert "N.J.A.C." not in text


def test_pa_craps_phone_layout_at_390_px(live_server: LiveServer,
                                         open_screen: OpenScreen) -> None:
    p = felt(open_screen, "alice", width=390, height=844)
    expect(p.locator("#spot-list")).to_be_visible()
    # No sideways scrolling.
    assert p.evaluate("document.documentElement.scrollWidth") <= 390
    # Every control a thumb can reach is at least 44 px each way.
    small = p.evaluate("""() => [...document.querySelectorAll(
        'button, a, select, input, [role=button]')].filter((el) => {
          const r = el.getBoundingClientRect();
          const style = getComputedStyle(el);
          const shown = r.width > 0 && r.height > 0 && style.visibility !== 'hidden'
            && style.pointerEvents !== 'none';
          return shown && (r.width < 44 || r.height < 44);
        }).map((el) => `${el.tagName} ${el.id || el.dataset.code || el.textContent.trim()}`)""")
    assert small == [], f"touch targets under 44 px: {small}"
    # Tap a wager in the list: its amounts show without hovering; the chip stacks.
    chip(p, 500)
    p.click('.spot-btn[data-code="field"]')
    expect(p.locator("#hover-info")).to_contain_text("Field: $1, $2, $3 ... up to $500")
    expect(p.locator("#hover-info")).to_be_in_viewport()   # one tap, no hover, in view
    expect(p.locator("#hover-min")).to_have_text("$1.00")
    # The balance stays in view wherever the page is scrolled.
    p.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    bar = p.locator("#balance-bar")
    expect(bar).to_be_in_viewport()
    expect(p.locator("#bar-balance")).to_have_text("$500.00")
    p.click("#bar-confirm")
    expect(p.locator("#bar-balance")).to_have_attribute("data-cents", str(START - 500))
    assert live_server.balance(CRAPS, "alice") == START - 500
    assert p.evaluate("document.documentElement.scrollWidth") <= 390
    p.evaluate("window.scrollTo(0, 0)")
    screenshot(p, "phone-390-player")
