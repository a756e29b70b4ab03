"""A console per role, each walked through its job on a 1024×768 tablet: the stickperson
through a hand, the boxperson settling a disputed throw, the dealer through a hand's
settlement. Every control the page lights is one the engine takes: each page counts the 4xx
answers to the commands it sent, and the count is 0. Screenshots (where
asked for: ``conftest.SCREENSHOTS_WANTED``) go to ``artifacts/screenshots``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import APIRequestContext, Browser, Page, Response, ViewportSize, expect

from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import LiveServer, log_in, screenshot

CRAPS = "craps-pa-1"
INDIANA = "craps-in-1"
PROPS = "props-pa-1"
TABLET: ViewportSize = {"width": 1024, "height": 768}


@dataclass
class Console:
    """One member of staff's console in a browser window of its own, counting every command
    the page sent that the server refused (a 4xx to a write)."""

    page: Page
    refused: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def shot(self, name: str) -> None:
        screenshot(self.page, name, full=False)

    def above_the_fold(self, selector: str) -> None:
        box = self.page.locator(selector).bounding_box()
        assert box is not None, f"{selector} is not on the page"
        assert box["y"] >= 0, f"{selector} is above the page's top: {box}"
        assert box["y"] + box["height"] <= TABLET["height"], \
            f"{selector} is below the fold at 1024×768: {box}"


def counted(page: Page) -> Console:
    """``page`` with its JavaScript errors and the 4xx answers to its writes counted."""
    console = Console(page)
    page.on("pageerror", lambda e: console.errors.append(str(e)))

    def answered(response: Response) -> None:
        request = response.request
        if request.method != "GET" and "/api/" in response.url \
                and 400 <= response.status < 500 and "/api/login" not in response.url:
            console.refused.append(f"{request.method} {response.url} {response.status} "
                                   f"{response.text()}")

    page.on("response", answered)
    return console


class Crew:
    """Consoles and players' API sessions on one live server."""

    def __init__(self, browser: Browser, server: LiveServer) -> None:
        self.browser, self.server = browser, server
        self.consoles: list[Console] = []
        self.sessions: list[APIRequestContext] = []
        self.contexts: list[object] = []

    def console(self, user: str, table: str = CRAPS, role: str | None = None) -> Console:
        context = self.browser.new_context(viewport=TABLET)
        self.contexts.append(context)
        context.set_default_timeout(8000)
        console = counted(context.new_page())
        page = console.page
        log_in(context, self.server.url, user)
        extra = f"&role={role}" if role else ""
        page.goto(f"{self.server.url}/dealer?table={table}{extra}")
        page.wait_for_selector(".console-grid")
        self.consoles.append(console)
        return console

    def player(self, user: str) -> APIRequestContext:
        session = self.browser.new_context().request
        self.sessions.append(session)
        answer = session.post(f"{self.server.url}/api/login",
                              data={"username": user, "password": DEMO_PASSWORD})
        assert answer.ok, answer.text()
        return session

    def say(self, session: APIRequestContext, table: str, path: str, body: dict[str, object]
            ) -> None:
        answer = session.post(f"{self.server.url}/api/tables/{table}{path}", data=body)
        assert answer.ok, answer.text()

    def close(self) -> None:
        refused = [r for c in self.consoles for r in c.refused]
        errors = [e for c in self.consoles for e in c.errors]
        for session in self.sessions:
            session.dispose()
        for context in self.contexts:
            context.close()  # type: ignore[attr-defined]
        assert not errors, f"JavaScript errors in the consoles: {errors}"
        assert refused == [], f"lit controls the engine refused: {refused}"


@pytest.fixture
def crew(browser: Browser, live_server: LiveServer) -> Iterator[Crew]:
    crew = Crew(browser, live_server)
    yield crew
    crew.close()


def record(page: Page, a: int, b: int) -> None:
    page.click(f'#die-1 button[data-face="{a}"]')
    page.click(f'#die-2 button[data-face="{b}"]')
    page.click("#record-roll")


def _shooter_with_a_line_bet(crew: Crew, sam: APIRequestContext | None, table: str,
                             dice: tuple[str, str]) -> APIRequestContext:
    """The stickperson offers the dice (when ``sam`` is given), alice bets $10 on the pass
    line and takes two (IN 10-4-3(c): a line bet before she may shoot); alice's session is
    returned."""
    alice = crew.player("alice")
    if sam is not None:
        crew.say(sam, table, "/offer-dice", {"patron": "alice"})
    crew.say(alice, table, "/bets", {"wager": "pass", "amount": 1000})
    crew.say(alice, table, "/select-dice", {"serials": list(dice)})
    return alice


def test_the_stickperson_walks_a_hand_and_no_lit_control_is_refused(crew: Crew) -> None:
    sam = crew.console("sam")
    page = sam.page
    expect(page.locator("#console-role")).to_have_text("Stickperson")
    sam.above_the_fold("#record-roll")
    sam.above_the_fold("#offer-dice")
    # the dealer's cards are not the stickperson's; nobody may overturn a no roll in PA
    for card in ("#settle-card", "#chips-card", "#bank-card"):
        expect(page.locator(card)).to_have_count(0)
    expect(page.locator("#overturn")).to_be_hidden()
    expect(page.locator("#record-roll")).to_be_disabled()  # no shooter yet
    with page.expect_response(lambda r: r.url.endswith("/offer-dice")) as offered:
        page.click("#offer-dice")  # answered before alice, offered them, picks her dice
    assert offered.value.ok
    alice = crew.player("alice")
    crew.say(alice, CRAPS, "/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    page.click('#die-1 button[data-face="4"]')
    page.click('#die-2 button[data-face="4"]')
    expect(page.locator("#record-roll")).to_be_disabled()  # 623a.8(a): no line bet yet
    crew.say(alice, CRAPS, "/bets", {"wager": "pass", "amount": 1000})
    expect(page.locator("#record-roll")).to_be_enabled()
    sam.shot("stickperson-console-1024x768")
    page.click("#record-roll")

    dee = crew.console("dee")
    dee.page.click("#settle")
    expect(dee.page.locator("#nothing-to-settle")).to_be_visible()
    expect(page.locator("#record-roll")).to_be_disabled()  # faces are picked afresh
    # the seven-out: a no roll may be called until the losers are collected, then not
    record(page, 6, 1)
    expect(page.locator("#call-no-roll")).to_be_disabled()  # no ground ticked
    page.check('#grounds input[value="die-on-rail"]')
    expect(page.locator("#call-no-roll")).to_be_disabled()  # not on the recorded throw
    page.check("#noroll-observed")
    expect(page.locator("#call-no-roll")).to_be_enabled()  # seen by the caller
    dee.page.click("#collect")
    expect(page.locator("#call-no-roll")).to_be_disabled()  # noroll.window: closed
    page.uncheck("#noroll-observed")
    page.uncheck('#grounds input[value="die-on-rail"]')
    # nothing won on a seven-out here: the empty pay step is done by itself, in one line
    expect(dee.page.locator("#skipped-chores")).to_contain_text("done by itself")
    dee.page.click("#move-puck")
    expect(dee.page.locator("#nothing-to-settle")).to_be_visible()
    # the next shooter in turn
    expect(page.locator("#offer-dice")).to_have_text("Offer the dice to bob")
    page.click("#offer-dice")
    expect(page.locator("#shooter-info")).to_contain_text("bob")


def test_the_boxperson_settles_a_disputed_throw(crew: Crew) -> None:
    bo = crew.console("bo")
    page = bo.page
    expect(page.locator("#console-role")).to_have_text("Boxperson")
    bo.above_the_fold("#dispute-card")
    bo.above_the_fold("#call-no-roll")
    expect(page.locator("#overturn")).to_be_hidden()  # PA: nobody overturns a no roll
    expect(page.locator("#offer-dice")).to_be_hidden()  # the stickperson's
    expect(page.locator("#call-no-roll")).to_be_disabled()  # nothing thrown yet
    sam = crew.player("sam")
    _shooter_with_a_line_bet(crew, sam, CRAPS, ("PA1-1", "PA1-2"))
    crew.say(sam, CRAPS, "/roll", {"faces": "5-2"})
    # the player says a die came to rest on the rail: the box sees the throw and the window
    expect(page.locator("#dispute-standing")).to_have_text("stands")
    expect(page.locator("#dispute-window")).to_contain_text("may still be called")
    page.check('#grounds input[value="die-on-rail"]')
    expect(page.locator("#call-no-roll")).to_be_disabled()  # the record does not show it
    page.check("#noroll-observed")  # the box saw it: the call records it
    page.click("#call-no-roll")
    expect(page.locator("#dispute-standing")).to_have_text("no roll")
    # the grounds on the card, each with its citation, and who called under which rule
    pack = crew.server.floor.tables[CRAPS].table.pack
    ground = page.locator('#dispute-grounds li[data-ground="die-on-rail"]')
    expect(ground).to_contain_text("seen by bo")
    expect(ground).to_contain_text(pack.cite("noroll.grounds"))
    expect(page.locator("#dispute-window")).to_contain_text("called by bo (boxperson)")
    expect(page.locator("#dispute-window")).to_contain_text(pack.cite("noroll.callers"))
    expect(page.locator("#call-no-roll")).to_be_disabled()
    page.click("#recall")
    expect(page.locator("#dispute-recall")).to_contain_text("no roll")
    bo.shot("boxperson-console-1024x768")


def test_in_the_boxperson_overturns_the_stickpersons_no_roll(crew: Crew) -> None:
    bo = crew.console("bo", INDIANA)
    page = bo.page
    asked: list[str] = []  # the box books no bets: its console never asks what is open
    page.on("request", lambda r: asked.append(r.url) if "/controls" in r.url else None)
    expect(page.locator("#overturn")).to_be_disabled()  # IN: the box may; nothing to overturn
    expect(page.locator("#call-no-roll")).to_be_hidden()  # IN: the stickperson calls
    sam = crew.player("sam")
    _shooter_with_a_line_bet(crew, sam, INDIANA, ("IN1-1", "IN1-2"))
    crew.say(sam, INDIANA, "/roll", {"faces": "6-5"})
    crew.say(sam, INDIANA, "/no-roll", {"grounds": ["slid"], "observed": ["slid"]})
    expect(page.locator("#dispute-standing")).to_have_text("no roll")
    expect(page.locator('#dispute-grounds li[data-ground="slid"]')).to_contain_text(
        crew.server.floor.tables[INDIANA].table.pack.cite("noroll.grounds"))
    page.fill("#overturn-reason", "surveillance shows the dice tumbled")
    page.click("#overturn")
    expect(page.locator("#dispute-standing")).to_have_text("stands")
    expect(page.locator("#dispute-window")).to_contain_text("overturned by bo (boxperson)")
    expect(page.locator("#overturn")).to_be_disabled()
    assert asked == []


def test_the_dealer_books_settles_and_cashes_out(crew: Crew, live_server: LiveServer) -> None:
    dee = crew.console("dee")
    page = dee.page
    expect(page.locator("#console-role")).to_have_text("Dealer")
    dee.above_the_fold("#settle-card")
    dee.above_the_fold("#no-more-bets")
    expect(page.locator("#cash-out-all-slot")).to_have_count(1)  # felt30's cash out all
    for card in ("#throw-card", "#noroll-card", "#dice-card"):
        expect(page.locator(card)).to_have_count(0)
    # a called bet, booked for alice
    sam = crew.player("sam")
    crew.say(sam, CRAPS, "/offer-dice", {"patron": "alice"})
    alice = crew.player("alice")
    crew.say(alice, CRAPS, "/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    page.select_option("#book-player", "alice")
    page.select_option("#book-wager", "pass")
    expect(page.locator("#book-bet")).to_be_disabled()
    page.fill("#book-amount", "10")
    page.click("#book-bet")
    expect(page.locator('#players-table tr[data-player="alice"]')).to_contain_text("Pass Line")
    # cash-out: lit only for an amount the player's balance covers
    page.select_option("#chip-player", "bob")
    expect(page.locator("#sell-chips")).to_be_disabled()  # no amount typed
    expect(page.locator("#cash-out")).to_be_disabled()
    page.fill("#chip-amount", "600")
    expect(page.locator("#cash-out")).to_be_disabled()
    page.fill("#chip-amount", "100")
    page.click("#cash-out")
    expect(page.locator('#players-table tr[data-player="bob"] .balance-cell')
           ).to_have_attribute("data-cents", "40000")
    # the yo on the come-out: collect (nothing), pay alice, the puck stays off
    crew.say(sam, CRAPS, "/roll", {"faces": "6-5"})
    expect(page.locator("#noroll-window")).to_be_visible()
    page.click("#collect")
    expect(page.locator("#pay-items")).to_contain_text("alice")
    dee.shot("dealer-console-1024x768")
    page.click("#pay")
    page.click("#move-puck")
    expect(page.locator("#nothing-to-settle")).to_be_visible()
    alice_row = page.locator('#players-table tr[data-player="alice"] .balance-cell')
    expect(alice_row).to_have_attribute("data-cents", str(live_server.balance(CRAPS, "alice")))
    assert live_server.balance(CRAPS, "alice") > 490_00  # the $10 bet won
    assert live_server.floor.tables[CRAPS].table.state.conserved()
    assert live_server.balance(CRAPS, "bob") == 400_00


def test_the_count_of_refused_commands_sees_a_refusal(crew: Crew) -> None:
    """The 0 the walks assert is a count that can be more: a command sent anyway (here a
    throw before there is a shooter, from the page's own fetch) is counted."""
    sam = crew.console("sam")
    expect(sam.page.locator("#record-roll")).to_be_disabled()
    status = sam.page.evaluate("""async () => (await fetch('/api/tables/craps-pa-1/roll', {
        method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({faces: '3-4'})})).status""")
    assert status == 409
    sam.page.wait_for_timeout(200)
    assert len(sam.refused) == 1, sam.refused
    assert "/roll 409" in sam.refused[0], sam.refused
    sam.refused.clear()


def test_the_floorperson_watches_the_table_and_removes_a_shooter(crew: Crew) -> None:
    fran = crew.console("fran")
    page = fran.page
    expect(page.locator("#console-role")).to_have_text("Floorperson")
    fran.above_the_fold("#dispute-card")
    fran.above_the_fold("#remove-shooter")
    expect(page.locator("#offer-dice")).to_be_hidden()  # the stickperson's
    expect(page.locator("#remove-shooter")).to_be_disabled()  # no shooter yet
    expect(page.locator("#bank-link")).to_be_visible()
    sam = crew.player("sam")
    _shooter_with_a_line_bet(crew, sam, CRAPS, ("PA1-1", "PA1-2"))
    page.select_option("#removal-ground", "unreasonable-delay")
    fran.shot("floorperson-console-1024x768")
    page.click("#remove-shooter")
    expect(page.locator("#shooter-info")).to_contain_text("—")


def _props_round_to_a_no_roll(crew: Crew, dee: APIRequestContext, alice: APIRequestContext,
                              bet: bool) -> None:
    """A Props & Hops round (PA 585.3) up to a no roll on a die resting on the other."""
    crew.say(dee, PROPS, "/shake", {})
    if bet:
        crew.say(alice, PROPS, "/bets", {"wager": "any7", "amount": 500})
    crew.say(dee, PROPS, "/no-more-bets", {})
    crew.say(dee, PROPS, "/offer-shaker", {"player": "alice"})
    crew.say(alice, PROPS, "/player-shake", {"times": 3})
    crew.say(alice, PROPS, "/return-shaker", {})
    crew.say(dee, PROPS, "/uncover", {})
    crew.say(dee, PROPS, "/roll", {"faces": "5-2"})
    crew.say(dee, PROPS, "/no-roll", {"grounds": ["die-on-die"], "observed": ["die-on-die"]})


def test_the_dealer_is_told_when_a_no_roll_left_nothing_to_return(crew: Crew) -> None:
    dealer = crew.console("dee", PROPS)
    page = dealer.page
    dee, alice = crew.player("dee"), crew.player("alice")
    # nobody bet: the engine leaves no return to do, and the console says so in one line
    _props_round_to_a_no_roll(crew, dee, alice, bet=False)
    expect(page.locator("#skipped-chores")).to_contain_text(
        "nothing to return (58 Pa. Code § 585.3")
    expect(page.locator("#return-wagers")).to_have_count(0)
    # a wager on the layout: the return is the dealer's click, lit, and taken
    _props_round_to_a_no_roll(crew, dee, alice, bet=True)
    expect(page.locator("#return-wagers")).to_be_enabled()
    page.click("#return-wagers")
    expect(page.locator("#return-wagers")).to_have_count(0)
    assert crew.server.floor.tables[PROPS].table.state.bets == {}


def test_bring_dice_is_lit_only_for_dice_custody_issued_to_the_table(crew: Crew) -> None:
    bo = crew.console("bo")  # the boxperson brings the dice at PA Craps
    page = bo.page
    page.fill("#bring-serials", "PA1-S1 PA1-S2")
    # inspected spares in the pit, not issued to this table: dark, and the rule says why
    expect(page.locator("#bring-check")).to_contain_text("storage.source_only")
    expect(page.locator("#bring-dice")).to_be_disabled()
    pat = crew.player("pat")
    answer = pat.post(f"{crew.server.url}/api/dice-room/demo-pa/issue-table", data={
        "dice": ["PA1-S1", "PA1-S2"], "table": CRAPS, "received_by": "bo"})
    assert answer.ok, answer.text()
    # custody issued them: asked again, the table takes them
    expect(page.locator("#bring-dice")).to_be_enabled(timeout=10000)
    expect(page.locator("#bring-check")).to_have_text("")
    page.click("#bring-dice")
    expect(page.locator("#bring-serials")).to_have_value("")
    assert {"PA1-S1", "PA1-S2"} <= set(crew.server.floor.tables[CRAPS].table.procedure.dice)
