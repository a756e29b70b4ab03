"""Payouts where a player looks: printed on the felt, on hover, in the phone's wager list, and on
the table's rules and payouts page, each equal to the pack's paytable (a real browser against a
real server, at 1440, 1024 and 390 px)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dicetable.games.paytable import paytable_of
from dicetable.server.floor import ROUND_NOW
from tests.browser.conftest import LiveServer, OpenScreen, count_fetches, open_felt, screenshot

TABLES = ("craps-pa-1", "minicraps-pa-1", "props-pa-1", "craps-in-1", "craps-pa-e1")
WIDTHS = ((1440, 1000), (1024, 768), (390, 844))


def _open(open_screen: OpenScreen, table: str, width: int, height: int) -> Page:
    page = open_felt(open_screen, "alice", table, width, height)
    expect(page.locator("svg.layout .spot text.pays").first).to_be_attached()
    return page


def _pack_prices(server: LiveServer, table: str) -> dict[str, dict[str, object]]:
    """The paytable as the view carries it, each price checked against the pack's own rule."""
    pack = server.floor.tables[table].table.pack
    prices = paytable_of(pack)
    for entry in prices.values():
        for line in entry["lines"]:
            value = pack.value(line["rule"])
            expected = value if isinstance(value, str) else list(value.values())
            assert line["pays"] in (expected if isinstance(expected, list) else [expected])
    return prices


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_every_wager_on_each_preset_layout_shows_its_paytable_price(
        live_server: LiveServer, open_screen: OpenScreen, width: int, height: int) -> None:
    for table in TABLES:
        prices = _pack_prices(live_server, table)
        p = _open(open_screen, table, width, height)
        menu = live_server.floor.tables[table].table.pack.menu_in_order
        spots = p.evaluate("""() => [...document.querySelectorAll('svg.layout .spot')]
            .filter((g) => !g.classList.contains('absent')).map((g) => {
              const t = g.querySelector('text.pays');
              const r = t ? t.getBoundingClientRect() : null;
              return { code: g.dataset.code, text: t ? t.textContent : null,
                       pays: t ? t.dataset.pays : null, shown: Boolean(r && r.width > 0),
                       label: g.getAttribute('aria-label') };
            })""")
        codes = {s["code"] for s in spots}
        assert codes == set(menu), f"{table}: spots {codes ^ set(menu)} differ from the menu"
        for spot in spots:
            entry = prices[spot["code"]]
            assert spot["shown"], f"{table} {spot['code']}: no price printed on the felt"
            assert spot["pays"] == entry["pays"]
            assert spot["text"] in (entry["felt"], entry["pays"])  # the field prints it whole
            if spot["code"] != "odds":
                assert f"pays {entry['pays']}" in spot["label"]
        if width <= 700:
            listed = p.evaluate("""() => [...document.querySelectorAll('#spot-list .spot-btn')]
                .map((b) => [b.dataset.code, (b.querySelector('.pays') || {}).textContent])""")
            assert {code for code, _ in listed} == set(menu) - {"odds"}
            for code, text in listed:
                assert text == f"pays {prices[code]['pays']}", (table, code, text)
            p.click('#spot-list .spot-btn[data-code="field"]')
            expect(p.locator("#hover-pays")).to_have_text(f"pays {prices['field']['pays']}")
        else:
            code = "place6" if "place6" in menu else "double6"
            p.locator(f'svg.layout .spot[data-code="{code}"]').hover()
            expect(p.locator("#hover-pays")).to_have_text(f"pays {prices[code]['pays']}")
        if table in ("craps-pa-1", "props-pa-1"):
            screenshot(p, f"felt30-payouts-{table}-{width}")
        p.context.close()


def test_the_rules_and_payouts_page_lists_every_wager_with_its_exact_house_edge(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    p = _open(open_screen, "craps-pa-1", 1440, 1000)
    p.click("#rules-panel summary")
    p.click("#rules-link")
    expect(p.locator("#paytable tbody tr").first).to_be_visible()
    pack = live_server.floor.tables["craps-pa-1"].table.pack
    rows = p.locator("#paytable tbody tr")
    expected = [c for c in pack.menu_in_order if c != "odds"]
    codes = [c for c in rows.evaluate_all("(rs) => rs.map((r) => r.dataset.code)")
             if not c.startswith("odds")]
    assert codes == expected  # the layout's order
    place6 = p.locator('#paytable tr[data-code="place6"]')
    expect(place6.locator(".pays")).to_have_text("7 to 6")
    expect(place6.locator(".edge")).to_have_text("1.515%")
    expect(place6.locator(".edge")).to_have_attribute("title", "exactly 1/66")
    expect(p.locator('#paytable tr[data-code="buy4"]')).to_contain_text("5% of the wager")
    expect(p.locator("#odds-words")).to_contain_text(
        "up to three times the bet on 4 and 10, four times on 5 and 9, five times on 6 and 8")
    p.click("#citations summary")
    expect(p.locator('#citations tr[data-rule="paytable.place.6"]').first).to_contain_text(
        "another regulator")
    screenshot(p, "felt30-rules-and-payouts-1440")


def test_no_chip_is_placed_without_confirm_and_press_doubles(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = open_screen("alice", width=1440, height=1000).page
    bets = count_fetches(page, "POST", "/tables/craps-pa-1/bets")
    page.clock.install()  # the page's timers on a clock the test moves on
    page.goto(page.url.split("?")[0] + "?table=craps-pa-1")  # no test switch: the default
    expect(page.locator("#balance")).to_have_attribute("data-cents", "50000")
    page.click('.chip-btn[data-cents="100"]')
    for _ in range(6):
        page.locator('svg.layout [data-code="place6"]').click()
    page.clock.run_for(3000)  # longer than any pause: nothing goes down by itself
    assert bets() == 0
    assert live_server.balance("craps-pa-1", "alice") == 50000
    assert not list(live_server.floor.tables["craps-pa-1"].table.state.bets_of("alice"))
    # Under the minimum: the chips wait, Confirm is not offered for them.
    page.click('.chip-btn[data-cents="100"]')
    page.locator('svg.layout [data-code="place8"]').click()
    expect(page.locator('#builder .stack-line[data-key="new:place8"]')).to_have_class(
        re.compile(r"\bshort\b"))
    page.click("#confirm")
    expect(page.locator("#balance")).to_have_attribute("data-cents", str(50000 - 600))
    assert bets() == 1  # what the count above would have seen: a bet sent
    expect(page.locator('#builder .stack-line[data-key="new:place8"]')).to_have_count(1)
    page.click("#clear")
    # "Press it" doubles: Place 6 $6 -> $12, placed on Confirm.
    row = page.locator('.bet-row[data-wager="place6"]')
    row.locator('[data-action="press"]').click()
    expect(page.locator("#builder .stack-line")).to_have_attribute("data-amount", "1200")
    assert live_server.balance("craps-pa-1", "alice") == 50000 - 600
    page.click("#confirm")
    expect(page.locator("#balance")).to_have_attribute("data-cents", str(50000 - 1200))
    # "By a unit" adds the wager's step beside it.
    step = live_server.floor.tables["craps-pa-1"].table.pack.limits("place6")[0]
    row.locator('[data-action="press-unit"]').click()
    amount = int(page.locator("#builder .stack-line").get_attribute("data-amount") or 0)
    assert 1200 < amount <= 1200 + max(step.unit, 600)
    page.click("#clear")
    # One-tap betting, once the player turns it on, places each chip as it is tapped.
    page.check("#one-tap")
    page.click('.chip-btn[data-cents="500"]')
    page.locator('svg.layout [data-code="field"]').click()
    expect(page.locator("#balance")).to_have_attribute("data-cents", str(50000 - 1200 - 500))
    screenshot(page, "felt30-consent-1440")


def test_first_contact_lobby_lists_tables_with_limits_players_and_point(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = open_screen("alice", width=1024, height=768, at="/").page
    links = page.locator("#lobby a.table-link")
    expect(links).to_have_count(len(live_server.floor.tables))
    expect(page.locator("#login-form")).to_be_hidden()  # logged in: no empty form above
    craps = page.locator('#lobby a.table-link[data-table="craps-pa-1"]')
    expect(craps).to_contain_text("Table minimum $5 · maximum $5,000")
    expect(craps).to_contain_text("4 players seated")
    expect(craps).to_contain_text("no point (come-out)")
    icon = page.locator('link[rel="icon"]').get_attribute("href")
    assert icon is not None
    assert page.request.get(live_server.url + icon).status == 200
    screenshot(page, "felt30-lobby-1024")


def test_electronic_table_shows_the_recorded_roll_large_with_a_ring_and_a_quiet_feed(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = open_screen("alice", width=1440, height=1000, at="/play?table=craps-pa-e1").page
    expect(page.locator(".countdown-ring")).to_be_visible()
    first = page.locator("#big-dice").get_attribute("data-roll")
    # The table rolls when betting closes: closed now, as the pit's "roll now" does (the
    # timer's own close is the same ``advance``; waiting out its 15 s held a worker idle).
    live_server.floor.submit("craps-pa-e1", ROUND_NOW).result()
    page.wait_for_function(
        "(first) => { const d = document.getElementById('big-dice');"
        " const r = d && d.dataset.roll; return Boolean(r) && r !== first; }",
        arg=first or "", timeout=45_000)
    table = live_server.floor.tables["craps-pa-e1"].table
    recorded = str(table.state.last_roll)
    expect(page.locator("#big-dice")).to_have_attribute("data-roll", recorded)
    a, b = (int(x) for x in recorded.split("-"))
    expect(page.locator("#big-dice .big-total")).to_contain_text(str(a + b))
    screenshot(page, "felt30-electronic-1440")
    # Nobody bet: the feed does not say "No winning wagers" or "No losing wagers".
    feed = page.locator("#feed").inner_text()
    assert "No winning" not in feed
    assert "No losing" not in feed


@pytest.mark.parametrize(("width", "height"), WIDTHS[:2])
def test_no_two_chip_stacks_overlap_after_a_come_bet_travels_with_odds(
        live_server: LiveServer, open_screen: OpenScreen, width: int, height: int) -> None:
    from tests.browser.test_felt import Staff, throw

    alice, sam, dee = (Staff(live_server, who) for who in ("alice", "sam", "dee"))
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    throw(sam, dee, "3-3")                          # the point is 6: the puck on the 6
    alice.do("/bets", {"wager": "come", "amount": 500})
    throw(sam, dee, "4-4")                          # the come bet travels to the 8
    state = live_server.floor.tables["craps-pa-1"].table.state
    come = next(b for b in state.bets_of("alice") if b.wager == "come")
    alice.do("/bets", {"wager": "odds", "amount": 1000, "base": come.id})
    for number in (6, 8):
        alice.do("/bets", {"wager": f"place{number}", "amount": 1200})
    page = _open(open_screen, "craps-pa-1", width, height)
    expect(page.locator("svg.layout .chip")).to_have_count(5)
    bases = {b.id: (b.base or b.id) for b in state.bets_of("alice")}
    circles = page.evaluate("""() => [...document.querySelectorAll(
        'svg.layout .chip circle.outer, #layout-puck circle:nth-of-type(2)')].map((c) => {
          const g = c.closest('[data-bet]') || c.closest('#layout-puck');
          return { id: g.dataset.bet || 'puck', x: +c.getAttribute('cx'),
                   y: +c.getAttribute('cy'), r: +c.getAttribute('r') };
        })""")
    assert len(circles) == 6
    for i, a in enumerate(circles):
        for b in circles[i + 1:]:
            if bases.get(a["id"], a["id"]) == bases.get(b["id"], b["id"]):
                continue  # a bet and its odds are one stack, offset on purpose
            apart = ((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2) ** 0.5
            assert apart >= a["r"] + b["r"], f"{a['id']} and {b['id']} overlap ({apart:.1f})"
    screenshot(page, f"felt30-chips-apart-{width}")
