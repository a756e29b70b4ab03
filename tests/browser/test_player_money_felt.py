"""The player's own money in the browser (buy-in, cash-out, colour-up, leaving, the $0 prompt),
chips that never cover a number box's labels, the phone's pinned header, chip selector and
result banner, the words of the balance card and the recall, and axe-core after each of
these interactions (0 serious or critical)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from dicetable.server.floor import ROUND_NOW
from tests.browser.conftest import LiveServer, OpenScreen, count_fetches, screenshot
from tests.browser.conftest import open_felt as play
from tests.browser.test_accessibility import _violations
from tests.browser.test_felt import Staff, throw

E = "craps-pa-e1"
WIDTHS = ((1440, 1000), (1024, 768), (390, 844))


def axe_clean(page: Page, where: str) -> None:
    found = _violations(page)
    assert not found, f"{where}: " + "\n".join(found)


def _overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
            and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_chips_and_the_puck_never_cover_the_numeral_place_or_price_of_a_number_box(
        live_server: LiveServer, open_screen: OpenScreen, width: int, height: int) -> None:
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
    page = play(open_screen, "alice", "craps-pa-1", width, height)
    expect(page.locator("svg.layout .chip")).to_have_count(5)
    boxes = page.evaluate("""() => {
        const box = (el) => { const r = el.getBoundingClientRect();
                              return { x: r.x, y: r.y, w: r.width, h: r.height }; };
        const labels = [];
        for (const n of [6, 8]) for (const t of document.querySelectorAll(
                `svg.layout .spot[data-code="place${n}"] text`)) {
            const text = t.textContent.trim();
            if (text) labels.push({ text: `${n}: ${text}`, ...box(t) });
        }
        const chips = [...document.querySelectorAll(
            'svg.layout .chip circle.outer, #layout-puck circle.puck-face')].map((c) => ({
                id: (c.closest('[data-bet]') || {dataset: {bet: 'puck'}}).dataset.bet,
                ...box(c) }));
        return { labels, chips };
    }""")
    texts = [label["text"] for label in boxes["labels"]]
    assert any(t.startswith("8: 8") for t in texts), texts  # the numeral
    assert sum("PLACE" in t for t in texts) == 2, texts
    assert "8: 7 to 6" in texts, texts  # the price
    assert len(boxes["chips"]) == 6  # pass, come, its odds, place 6, place 8 and the puck
    covered = [(c["id"], label["text"]) for c in boxes["chips"] for label in boxes["labels"]
               if _overlaps(c, label)]
    assert not covered, covered
    if width in (1440, 390):
        screenshot(page, f"felt-{width}", full=False)


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_no_chip_covers_a_label_of_any_number_box_4_to_10(
        live_server: LiveServer, open_screen: OpenScreen, width: int, height: int) -> None:
    """Every number box (4, 5, 6, 8, 9, 10) with a place bet, come bets with odds on three
    of them and the puck on a fourth: no chip nor the puck covers a box's numeral, PLACE
    label or price."""
    alice, sam, dee = (Staff(live_server, who) for who in ("alice", "sam", "dee"))
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    throw(sam, dee, "2-2")                          # the point is 4: the puck on the 4
    state = live_server.floor.tables["craps-pa-1"].table.state
    for faces in ("2-3", "4-5", "5-5"):             # come bets travel to the 5, 9 and 10
        alice.do("/bets", {"wager": "come", "amount": 1000})
        throw(sam, dee, faces)
    for come in [b for b in state.bets_of("alice") if b.wager == "come"]:
        alice.do("/bets", {"wager": "odds", "amount": 1000, "base": come.id})
    for number in (4, 5, 6, 8, 9, 10):
        alice.do("/bets", {"wager": f"place{number}",
                           "amount": 1200 if number in (6, 8) else 1000})
    page = play(open_screen, "alice", "craps-pa-1", width, height)
    expect(page.locator("svg.layout .chip")).to_have_count(13)
    boxes = page.evaluate("""() => {
        const box = (el) => { const r = el.getBoundingClientRect();
                              return { x: r.x, y: r.y, w: r.width, h: r.height }; };
        const labels = [];
        for (const n of [4, 5, 6, 8, 9, 10]) for (const t of document.querySelectorAll(
                `svg.layout .spot[data-code="place${n}"] text`)) {
            const text = t.textContent.trim();
            if (text) labels.push({ text: `${n}: ${text}`, ...box(t) });
        }
        const chips = [...document.querySelectorAll(
            'svg.layout .chip circle.outer, #layout-puck circle.puck-face')].map((c) => ({
                id: (c.closest('[data-bet]') || {dataset: {bet: 'puck'}}).dataset.bet,
                ...box(c) }));
        return { labels, chips };
    }""")
    texts = [label["text"] for label in boxes["labels"]]
    for n in (4, 5, 6, 8, 9, 10):
        assert any(t.startswith(f"{n}: ") and "PLACE" in t for t in texts), (n, texts)
    assert len(boxes["chips"]) == 14  # pass, 3 come, 3 odds, 6 place and the puck
    covered = [(c["id"], label["text"]) for c in boxes["chips"] for label in boxes["labels"]
               if _overlaps(c, label)]
    assert not covered, covered


def test_electronic_table_buy_in_and_cash_out_through_the_dialog_conserve_money(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = play(open_screen, "alice", E)
    expect(page.locator("#wallet")).to_have_attribute("data-cents", "100000")
    page.click("#open-buy-in")
    expect(page.locator("#money-dialog")).to_be_visible()
    page.fill("#money-amount", "120")
    screenshot(page, "buy-in-dialog-1440", full=False)
    axe_clean(page, "the buy-in dialog")
    page.click("#money-submit")
    expect(page.locator("#money-dialog")).to_be_hidden()
    expect(page.locator("#wallet")).to_have_attribute("data-cents", "88000")
    expect(page.locator("#balance")).to_have_attribute("data-cents", "62000")
    assert live_server.balance(E, "alice") == 62000
    # A refusal names the house rule in the player's words and changes nothing.
    page.click("#open-buy-in")
    page.fill("#money-amount", "5")
    page.click("#money-submit")
    expect(page.locator(".refusal").last).to_contain_text("The smallest buy-in is $20.00")
    page.click("#money-cancel")
    expect(page.locator("#wallet")).to_have_attribute("data-cents", "88000")
    # Cash out all: the whole table balance back to the wallet; the $0 prompt offers a buy-in.
    page.click("#open-cash-out")
    screenshot(page, "cash-out-dialog-1440", full=False)
    page.click("#money-all")
    expect(page.locator("#wallet")).to_have_attribute("data-cents", "150000")
    expect(page.locator("#balance")).to_have_attribute("data-cents", "0")
    prompt = page.locator("#zero-prompt")
    expect(prompt).to_contain_text("Your balance is $0.")
    expect(prompt.locator("#zero-buy-in")).to_contain_text("wallet $1,500.00")
    expect(prompt.locator("#zero-leave")).to_be_visible()
    axe_clean(page, "the $0 prompt")


def test_electronic_table_mid_roll_screenshot(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = play(open_screen, "alice", E)
    first = page.locator("#big-dice").get_attribute("data-roll") or ""
    # Betting closed now, as the pit's "roll now" does, not by waiting out the 15 s timer.
    live_server.floor.submit(E, ROUND_NOW).result()
    page.wait_for_function(
        "(first) => { const d = document.getElementById('big-dice');"
        " return d && d.classList.contains('rolling') && d.dataset.roll !== first; }",
        arg=first, timeout=45_000, polling=50)
    screenshot(page, "electronic-mid-roll-1440", full=False)
    axe_clean(page, "the electronic table as the dice land")


def test_603a_10_a_live_player_asks_to_colour_up_and_leave_and_the_dealer_confirms(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = play(open_screen, "alice", "craps-pa-1")
    page.click("#ask-colour-up")
    expect(page.locator("#my-requests")).to_contain_text("You asked to colour up")
    dealer = open_screen("dee", width=1440, height=1000, at="/dealer?table=craps-pa-1").page
    request = dealer.locator('#requests li[data-what="colour-up"]')
    expect(request).to_contain_text("alice asks to colour up · balance $500.00")
    # The exchange for the bank (465a.36(b)(4)): out is suggested from the tray, largest
    # first ($1-$100 chips in the demo's opening count); in is the dealer's own count.
    expect(request.locator('input[id^="chips-out-"]')).to_have_value("10000x5")
    screenshot(dealer, "dealer-confirming-colour-up-1440", full=False)
    axe_clean(dealer, "the dealer's pending requests")
    bank = Staff(live_server, "dee").http
    before = bank.get("/api/bank/craps-pa-1").json()
    number = request.get_attribute("data-request")
    request.locator('input[id^="chips-in-"]').fill("500x20")  # $100 in for $500 out
    request.locator("button").click()
    refusal = dealer.locator('.refusal[data-rule="inventory.reasons"]')
    expect(refusal).to_contain_text("a colour change is an exchange of equal value")
    axe_clean(dealer, "the refused colour-up")
    expect(request).to_be_visible()  # still pending, what was typed kept
    expect(request.locator('input[id^="chips-in-"]')).to_have_value("500x20")
    assert bank.get("/api/bank/craps-pa-1").json() == before
    request.locator('input[id^="chips-in-"]').fill("500x100")
    request.locator("button").click()
    expect(dealer.locator("#no-requests")).to_be_visible()
    assert live_server.balance("craps-pa-1", "alice") == 50000  # equal value
    ref = f"request {number} (alice)"  # the bank's record names the request
    after = str(bank.get("/api/bank/craps-pa-1").json())
    assert "colour-change" in after
    assert ref in after
    assert ref not in str(before)
    page.click("#ask-leave")
    expect(dealer.locator('#requests li[data-what="leave"]')).to_be_visible(timeout=8000)
    dealer.locator('#requests li[data-what="leave"] button').click()
    prompt = page.locator("#zero-prompt")
    expect(prompt).to_contain_text("The dealer cashed you out: $500.00 in chips",
                                   timeout=10_000)
    expect(prompt).to_contain_text("no longer seated")
    expect(prompt.locator("#zero-join")).to_be_visible()
    state = live_server.floor.tables["craps-pa-1"].table.state
    assert state.players["alice"].seat is None
    assert state.balance("alice") == 0


def test_requests_reach_the_dealer_by_push_and_the_console_does_not_poll_while_it_is_open(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    dealer = open_screen("dee", width=1440, height=1000).page
    frames: list[str] = []
    fetched: list[str] = []
    dealer.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(
        str(f))) if ws.url.endswith("/money") else None)
    dealer.on("request", lambda r: fetched.append(r.url) if r.url.endswith(
        "/tables/craps-pa-1/money") else None)
    reads = count_fetches(dealer, "GET", "/tables/craps-pa-1/money")
    dealer.clock.install()  # the page's timers on a clock the test moves on
    dealer.goto(dealer.url.split("?")[0] + "?table=craps-pa-1")
    expect(dealer.locator("#no-requests")).to_be_visible()
    for _ in range(50):  # the push's hello (no speed is asserted: only what arrived)
        if frames:
            break
        dealer.wait_for_timeout(200)
    assert frames
    # The page reads the requests once as it opens and once on the push's hello; the hello's
    # frame can reach this test before the page has handled it, so wait for that read.
    dealer.wait_for_function("window.__counted >= 2")
    fetched.clear()
    before = reads()
    dealer.clock.run_for(7000)  # more than two polling intervals with nothing changing
    assert reads() == before  # the push is open: no polling
    assert fetched == []
    Staff(live_server, "alice").do("/money/requests", {"what": "colour-up"})
    expect(dealer.locator('#requests li[data-what="colour-up"]')).to_contain_text(
        "alice asks to colour up")
    assert len(frames) >= 2  # the hello and the change
    assert len(fetched) == 1  # read once, on the push


def test_the_dealer_cashes_out_all_and_the_player_is_told(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = play(open_screen, "bob", "craps-pa-1")
    dealer = open_screen("dee", width=1440, height=1000, at="/dealer?table=craps-pa-1").page
    dealer.locator('#players-table tr[data-player="bob"] [data-action="cash-out-all"]').click()
    expect(dealer.locator('#players-table tr[data-player="bob"] .balance-cell')).to_have_attribute(
        "data-cents", "0")
    prompt = page.locator("#zero-prompt")
    expect(prompt).to_contain_text("The dealer cashed you out: $500.00 in chips",
                                   timeout=10_000)
    expect(prompt).to_contain_text("Hand cash to the dealer to buy in")
    expect(prompt.locator("#zero-leave")).to_be_visible()


def test_phone_header_is_compact_and_pinned_chips_sit_by_the_list_and_the_result_shows(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice, sam, dee = (Staff(live_server, who) for who in ("alice", "sam", "dee"))
    page = play(open_screen, "alice", "craps-pa-1", 390, 844)
    bar = page.locator("#balance-bar")
    header = page.locator("header.topbar")
    assert (bar.bounding_box() or {"height": 999})["height"] <= 70
    assert (header.bounding_box() or {"height": 999})["height"] <= 60
    expect(bar).to_contain_text("Balance $500.00")
    # Scrolled down the wager list: the balance is still pinned at the top, and the chip
    # selector sits right above the list's buttons in view.
    page.locator('#spot-list .spot-btn[data-code="field"]').scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, 300)")
    top = page.evaluate("document.getElementById('balance-bar').getBoundingClientRect().top")
    assert top == 0
    rack = page.evaluate("(() => { const r = document.getElementById('rack')"
                         ".getBoundingClientRect(); return [r.top, r.bottom]; })()")
    assert rack[0] >= 0, rack
    assert rack[1] <= 844 * 0.45, rack
    axe_clean(page, "the phone's list, scrolled")
    # Chips stacked on the phone (the list), then a roll: the banner is in view.
    page.click('.chip-btn[data-cents="500"]')
    page.locator('#spot-list .spot-btn[data-code="field"]').click()
    expect(page.locator("#builder .stack-line")).to_have_count(1)
    axe_clean(page, "chips stacked on the phone")
    page.click("#bar-confirm")
    expect(page.locator("#bar-balance")).to_have_attribute("data-cents", "49500")
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    throw(sam, dee, "3-5")                           # 8: the field loses
    banner = page.locator("#result-banner")
    expect(banner).to_contain_text("Field $5.00 lost", timeout=8000)
    box = banner.bounding_box()
    assert box is not None
    assert box["y"] >= 0
    assert box["y"] + box["height"] <= 844
    screenshot(page, "phone-390-after-roll", full=False)
    axe_clean(page, "the result banner on the phone")


def test_words_hand_without_a_round_that_never_moves_and_recall_of_each_wager(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice, sam, dee = (Staff(live_server, who) for who in ("alice", "sam", "dee"))
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    alice.do("/bets", {"wager": "field", "amount": 500})
    alice.do("/bets", {"wager": "lay4", "amount": 4000})
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    throw(sam, dee, "3-5")                           # 8: the field loses, the lay stays
    throw(sam, dee, "2-2")                           # 4: the lay loses
    page = play(open_screen, "alice", "craps-pa-1")
    expect(page.locator("#hand")).to_have_text(re.compile(r"^\d+$"))
    page.click("#load-recall")
    recall = page.locator("#recall")
    expect(recall).to_contain_text("Field $5.00 lost")
    expect(recall).to_contain_text("Lay 4 $40.00 lost")
    assert "Balance $" not in recall.inner_text()
    # Press by a unit: the house rule's unit is shown beside Press.
    alice.do("/bets", {"wager": "place6", "amount": 600})
    row = page.locator('.bet-row[data-wager="place6"]')
    expect(row.locator('[data-action="press-unit"]')).to_have_text("by a unit ($6.00)")
    row.locator('[data-action="press-unit"]').click()
    expect(page.locator("#builder .stack-line")).to_have_attribute("data-amount", "1200")
    axe_clean(page, "chips stacked by a press")


def test_refusals_a_player_meets_read_as_player_words(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    import httpx

    alice, sam, dee = (Staff(live_server, who) for who in ("alice", "sam", "dee"))
    page = play(open_screen, "alice", "craps-pa-1")
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    sam.do("/roll", {"faces": "3-3"})            # not settled yet: betting is closed
    tries = [("/bets", {"wager": "field", "amount": 500}),
             ("/bets", {"wager": "place8", "amount": 600_00}),
             ("/leave", {})]
    refusals = []
    for path, body in tries:
        reply = alice.http.post(f"/api/tables/craps-pa-1{path}", json=body)
        assert isinstance(reply, httpx.Response)
        assert reply.status_code >= 400, reply.text
        refusals.append(reply.json())
    dee.do("/settle")
    over = alice.http.post("/api/tables/craps-pa-1/bets", json={"wager": "place8",
                                                                 "amount": 600_00})
    refusals.append(over.json())
    page.wait_for_function("() => window.dicetable && window.dicetable.playerSentence")
    said = page.evaluate("(rs) => rs.map((r) => window.dicetable.playerSentence(r))", refusals)
    for refusal, words in zip(refusals, said, strict=True):
        assert "alice" not in words, (refusal["message"], words)
        assert not re.search(r"\bb\d+\b", words), words
        assert words[0].isupper(), words
        assert words.endswith((".", "!", "?")), words
    assert said[0].startswith("Bets are closed"), said


def test_rules_page_after_opening_its_sections_has_no_serious_axe_violation(
        open_screen: OpenScreen) -> None:
    page = open_screen("alice", width=1440, height=1000, at="/rules?table=craps-pa-1").page
    expect(page.locator("#paytable")).to_be_attached()
    expect(page.locator("#money-rules")).to_be_attached()
    for summary in page.locator("details > summary").all():
        summary.click()
    unit = page.locator('#money-rules tr[data-rule="press.unit"]')
    expect(unit).to_contain_text("wager-minimum")
    expect(unit).to_have_attribute("data-status", "industry-default")
    expect(page.locator('#money-rules tr[data-rule="live.cash_out"]')).to_contain_text(
        "58 Pa. Code 603a.10(d)")
    axe_clean(page, "the rules page with every section open")
