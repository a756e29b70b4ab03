"""The pages in a real browser against a real server: a player, the crew and the pit at once.

Every balance a page shows is checked against the engine (``floor.tables[...].table.balance``).
Screenshots (``DICETABLE_SCREENSHOTS=1``) go to ``artifacts/screenshots/``.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, OpenScreen, screenshot

CRAPS = "craps-pa-1"
PROPS = "props-pa-1"
START = 500_00  # the demo floor's buy-in


def click_spot(page: Page, code: str) -> None:
    spot = page.locator(f'svg.layout [data-code="{code}"]')
    expect(spot).to_have_class(re.compile(r"\bopen\b"))
    if code == "pass":  # an L-shaped spot: aim at its strip along the bottom
        box = spot.bounding_box()
        assert box is not None
        spot.click(position={"x": box["width"] * 0.5, "y": box["height"] * 0.94})
    else:
        spot.click()


def bet(page: Page, code: str, balance_after: int) -> None:
    """Click a spot with the selected chip, confirm, and wait for the balance the bet leaves
    (nothing is placed without Confirm)."""
    click_spot(page, code)
    page.click("#confirm")
    expect(page.locator("#balance")).to_have_attribute("data-cents", str(balance_after))


def record_throw(page: Page, a: int, b: int, *, facts: tuple[str, ...] = (),
                 distance: str | None = None) -> None:
    page.click(f'#die-1 button[data-face="{a}"]')
    page.click(f'#die-2 button[data-face="{b}"]')
    for fact in facts:
        page.check(f'#facts input[data-fact="{fact}"]')
    if distance:
        page.fill("#distance", distance)
    page.click("#record-roll")


def balances_match(server: LiveServer, table: str, player_page: Page, dealer_page: Page,
                   player: str, expected: int) -> None:
    """Both screens show ``expected``, and so does the engine."""
    expect(player_page.locator("#balance")).to_have_attribute("data-cents", str(expected))
    row = dealer_page.locator(f'#players-table tr[data-player="{player}"] .balance-cell')
    expect(row).to_have_attribute("data-cents", str(expected))
    assert server.balance(table, player) == expected


def test_issue_6_player_and_crew_through_a_point_and_a_seven_out(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice = open_screen("alice")
    assert f"/play?table={CRAPS}" in alice.page.url
    sam = open_screen("sam", width=1500, height=1100)  # stickperson: offers the dice, records
    dee = open_screen("dee", width=1500, height=1100)  # dealer: settles
    assert f"/dealer?table={CRAPS}" in sam.page.url
    assert f"/dealer?table={CRAPS}" in dee.page.url
    p = alice.page

    # The stickperson offers the dice to the patron whose turn it is; she takes two of them.
    expect(sam.page.locator("#offer-dice")).to_have_text("Offer the dice to alice")
    sam.page.click("#offer-dice")
    offered = p.locator("#offered-dice button")
    expect(offered).to_have_count(5)
    offered.nth(0).click()
    offered.nth(2).click()
    p.click("#take-dice")
    expect(p.locator("#turn")).to_contain_text("You are the shooter")
    # the dealer's console shows who shoots in its betting line (the shooter card is the
    # stickperson's and the boxperson's at PA Craps)
    expect(dee.page.locator("#betting-shooter")).to_have_text("shooter alice")

    # Come-out: $10 on the pass line (a $5 bet, then raised), $5 on the field.
    p.click('.chip-btn[data-cents="500"]')
    expect(p.locator('svg.layout [data-code="come"]')).to_have_class(re.compile(r"\bshut\b"))
    bet(p, "pass", START - 500)
    bet(p, "pass", START - 1000)
    assert len([b for b in live_server.floor.tables[CRAPS].table.state.bets.values()
                if b.player == "alice"]) == 1  # raised, not a second bet
    bet(p, "field", START - 1500)
    p.hover('svg.layout [data-code="field"]')
    expect(p.locator("#hover-min")).to_have_text("$1.00")
    expect(p.locator("#hover-max")).to_have_text("$500.00")
    alice.shot("player-come-out")

    # 4-4: the point is 8, the field loses.
    record_throw(sam.page, 4, 4, distance="4/5")
    expect(dee.page.locator("#settle")).to_be_visible()
    dee.page.click("#settle")
    expect(p.locator("#puck")).to_have_text("ON 8")
    expect(p.locator("#layout-puck")).to_have_attribute("data-point", "8")
    balances_match(live_server, CRAPS, p, dee.page, "alice", START - 1500)

    # Odds behind the line ($10), a come bet, the field again.
    bet(p, "odds", START - 2000)
    bet(p, "odds", START - 2500)
    bet(p, "come", START - 3000)
    bet(p, "field", START - 3500)
    expect(p.locator("#my-bets .bet-row")).to_have_count(4)
    alice.shot("player-point-8")

    # 5-4: the field pays even money, the come bet travels to the 9.
    record_throw(sam.page, 5, 4, facts=("die-on-chips",), distance="3/4")
    expect(dee.page.locator("#settle")).to_be_visible()
    dee.shot("dealer-settlement-pending")
    dee.page.click("#settle")
    balances_match(live_server, CRAPS, p, dee.page, "alice", START - 2500)
    expect(p.locator('svg.layout .chip[data-wager="come"]')).to_have_count(1)

    # The player's page goes away; the seven-out is settled step by step while it is away.
    p.evaluate("window.dicetable.live.pause()")
    expect(p.locator("#connection")).to_have_class(re.compile(r"\boffline\b"))
    record_throw(sam.page, 6, 1)
    # noroll.window: while a no roll may be called, the seven-out's consequences stay hidden.
    expect(dee.page.locator("#noroll-window")).to_be_visible()
    expect(dee.page.locator("#collect-items")).to_have_count(0)
    dee.page.click("#collect")
    expect(dee.page.locator("#noroll-window")).to_have_count(0)
    expect(dee.page.locator("#collect-items tr")).to_have_count(3)  # pass, odds, come on 9
    # nothing won on the seven-out: the empty pay step is done by itself, said in one line
    expect(dee.page.locator("#skipped-chores")).to_contain_text("done by itself")
    dee.page.click("#move-puck")
    expect(dee.page.locator("#nothing-to-settle")).to_be_visible()
    sam.shot("stickperson-console-after-seven-out")
    assert live_server.balance(CRAPS, "alice") == START - 2500

    # Back online: the page shows what was settled while it was away.
    p.evaluate("window.dicetable.live.resume()")
    expect(p.locator("#while-away")).to_be_visible()
    expect(p.locator("#feed")).to_contain_text("Seven out")
    expect(p.locator("#feed")).to_contain_text("Collected: alice Pass Line $10.00")
    expect(p.locator("#puck")).to_have_text("OFF")
    balances_match(live_server, CRAPS, p, dee.page, "alice", START - 2500)
    expect(p.locator("#my-bets .bet-row")).to_have_count(0)
    expect(p.locator("#rolls .roll")).to_have_count(3)
    expect(p.locator("#rolls .hand-end")).to_have_count(1)
    expect(p.locator('#freq .bar[data-total="7"]')).to_have_attribute("data-count", "1")

    p.click("#load-recall")
    expect(p.locator("#recall .recall-round")).to_have_count(3)
    expect(p.locator("#recall")).to_contain_text("seven out")
    alice.shot("player-after-seven-out")
    dee.shot("dealer-console-after-seven-out")
    assert live_server.floor.tables[CRAPS].table.state.conserved()


def test_pa_585_3_f_g_props_and_hops_no_roll_returns_the_wagers(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice = open_screen("alice", at=f"/play?table={PROPS}")
    dee = open_screen("dee", width=1500, height=1100, at=f"/dealer?table={PROPS}")
    p = alice.page
    expect(p.locator('svg.layout [data-code="double4"]')).to_have_class(re.compile(r"\bopen\b"))

    p.click('.chip-btn[data-cents="500"]')
    bet(p, "double4", START - 500)
    bet(p, "any7", START - 1000)
    p.click('.chip-btn[data-cents="100"]')
    bet(p, "hop1-2", START - 1100)
    balances_match(live_server, PROPS, p, dee.page, "alice", START - 1100)

    # The shaker goes out only after 'no more bets': until then the engine would refuse it
    # (authority.shaker, 585.3), so the button is not lit.
    expect(dee.page.locator("#offer-shaker")).to_be_disabled()
    dee.shot("dealer-offer-shaker-dark-before-no-more-bets")

    dee.page.click("#no-more-bets")
    expect(p.locator('svg.layout [data-code="any7"]')).to_have_class(re.compile(r"\bshut\b"))
    expect(dee.page.locator("#offer-shaker")).to_have_text("Offer the shaker to alice")
    expect(dee.page.locator("#offer-shaker")).to_be_enabled()
    dee.page.click("#offer-shaker")

    # The player shakes the covered shaker at least three times and returns it.
    p.click("#shake-once")
    expect(p.locator("#shakes")).to_have_text("1 / 3 shakes")
    # 585.3(e): the lid comes off; the player puts it back and the shaking starts again.
    p.click("#remove-lid")
    expect(p.locator("#re-cover-shaker")).to_be_visible()
    expect(p.locator("#return-shaker")).to_have_count(0)
    p.click("#re-cover-shaker")
    expect(p.locator("#shakes")).to_have_text("0 / 3 shakes")
    p.click("#shake-once")
    expect(p.locator("#shakes")).to_have_text("1 / 3 shakes")
    expect(p.locator("#return-shaker")).to_be_disabled()
    p.click("#shake-three")
    expect(p.locator("#return-shaker")).to_be_enabled()
    alice.shot("player-props-shaker")
    p.click("#return-shaker")

    # A die falls out as the shaker is uncovered: no roll, and the dealer gives every wager
    # back (a live table automates none of its chores: noroll.effect says what, the dealer does).
    dee.page.click("#uncover")
    record_throw(dee.page, 6, 5, facts=("die-fell-out",))
    expect(dee.page.locator("#return-wagers")).to_have_text("Return the wagers (no roll)")
    dee.page.click("#return-wagers")
    balances_match(live_server, PROPS, p, dee.page, "alice", START)
    expect(p.locator("#feed")).to_contain_text("NO ROLL (automatic): die-fell-out")
    expect(p.locator("#feed")).to_contain_text("Returned: alice Four the Hardway $5.00")
    expect(p.locator('#rolls .roll[data-valid="false"]')).to_have_count(1)
    expect(p.locator("#my-bets .bet-row")).to_have_count(0)
    alice.shot("player-props-after-no-roll")
    dee.shot("dealer-props-after-no-roll")

    # 585.3(d): the next round's wagers follow the dealer's shake (wagering.after_dealer_shake).
    dee.page.click("#dealer-shake")
    expect(p.locator('svg.layout [data-code="any7"]')).to_have_class(re.compile(r"\bopen\b"))
    # Repeat the wagers, double them, undo the last change, clear the round.
    p.click("#repeat")  # stacked like any chips: placed on Confirm
    p.click("#confirm")
    expect(p.locator("#balance")).to_have_attribute("data-cents", str(START - 1100))
    expect(p.locator("#my-bets .bet-row")).to_have_count(3)
    p.click("#double")
    p.click("#confirm")
    expect(p.locator("#balance")).to_have_attribute("data-cents", str(START - 2200))
    p.click("#undo")
    expect(p.locator("#balance")).to_have_attribute("data-cents", str(START - 2100))
    p.click("#clear")
    balances_match(live_server, PROPS, p, dee.page, "alice", START)
    expect(p.locator("#my-bets .bet-row")).to_have_count(0)
    assert live_server.floor.tables[PROPS].table.state.conserved()


def test_accounts_lock_after_three_failed_logins_and_the_pit_unlocks(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    pat = open_screen("pat", width=1500, height=1100)
    assert pat.page.url.endswith("/pit")
    page = open_screen(None).page  # a window of its own: a background tab would be throttled
    for _ in range(3):
        page.fill("#username", "carol")
        page.fill("#password", "not her password")
        page.click("#login-button")
        expect(page.locator("#login-error .kind")).to_be_visible()
    # Locked now: even her right password does not let her in, and the words are the same as
    # for a wrong password or a name that does not exist (no account is confirmed to exist).
    words = page.locator("#login-message").inner_text()
    page.fill("#username", "carol")
    page.fill("#password", "dicetable-demo")
    page.click("#login-button")
    expect(page.locator("#login-message")).to_have_text(words)
    page.fill("#username", "nobody-here")
    page.fill("#password", "not a password")
    page.click("#login-button")
    expect(page.locator("#login-message")).to_have_text(words)
    expect(page.locator("#login-error .kind")).to_have_text("Could not log you in")
    assert "AccountLocked" not in page.locator("#login-error").inner_text()
    screenshot(page, "login-locked")

    # The pit sees every table, its dice timers and the lock; it unlocks the account.
    pit = pat.page
    pit.reload()
    expect(pit.locator(".table-card")).to_have_count(len(live_server.floor.tables))
    expect(pit.locator('.table-card[data-table="craps-pa-1"] .dice-timer')).to_have_count(5)
    expect(pit.locator('.table-card[data-table="craps-pa-1"] .dice-timer').first).to_contain_text(
        re.compile(r"2[34]h \d\dm"))
    pit.click('.table-card[data-table="craps-pa-1"]')
    expect(pit.locator("#audit-ok")).to_have_text("hash chain verified")
    pit.click('[data-unlock="carol"]')
    expect(pit.locator('[data-unlock="carol"]')).to_have_count(0)
    pat.shot("pit-console")

    page.fill("#username", "carol")
    page.fill("#password", "dicetable-demo")
    page.click("#login-button")
    page.wait_for_url(re.compile(r"/play\?table="))

    # The pit's console for the electronic table shows its RNG cycle, not a throw to record.
    pit.goto(f"{live_server.url}/dealer?table=craps-pa-e1")
    expect(pit.locator("#rng")).to_contain_text("cryptographic random number generator")
    expect(pit.locator("#record-roll")).to_have_count(0)
    pat.shot("console-electronic")

    # An electronic table counts down to 'no more bets'.
    page.goto(f"{live_server.url}/play?table=craps-pa-e1")
    expect(page.locator("#countdown")).to_have_text(re.compile(r"^(\d+s|No more bets — rolling)$"))
    screenshot(page, "player-electronic")


def test_pa_623a_8_c_the_stickperson_records_what_was_seen_with_the_call(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice = open_screen("alice")
    sam = open_screen("sam", width=1500, height=1100)
    p = alice.page
    sam.page.click("#offer-dice")
    offered = p.locator("#offered-dice button")
    offered.nth(0).click()
    offered.nth(1).click()
    p.click("#take-dice")
    p.click('.chip-btn[data-cents="500"]')
    bet(p, "pass", START - 500)
    record_throw(sam.page, 5, 6)                    # a clean 5-6: no die on the rail recorded
    sam.page.check('#grounds input[value="die-on-rail"]')
    # the record does not show it: the call is not offered until the caller says they saw it
    expect(sam.page.locator("#call-no-roll")).to_be_disabled()
    sam.page.check("#noroll-observed")
    sam.page.click("#call-no-roll")
    expect(p.locator("#feed")).to_contain_text("NO ROLL: die-on-rail (seen by sam: die-on-rail)")
    sam.shot("dealer-no-roll-observed")
    assert live_server.floor.tables[CRAPS].table.state.last_roll_valid is False
