"""The cage's card on the pit page: the cashier deposits to and withdraws from a player's
wallet, a withdrawal beyond the wallet is refused naming its rule, and staff who are not the
cage are told the card is not theirs."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, OpenScreen
from tests.browser.test_accessibility import _violations
from tests.browser.test_felt import Staff


def test_the_cashier_moves_a_wallet_from_the_pit_page(live_server: LiveServer,
                                                      open_screen: OpenScreen) -> None:
    cass = open_screen("cass", width=1440, height=1000, at="/pit")
    page = cass.page
    alice = page.locator('#cage-wallets tr[data-account="alice"] td.num')
    expect(alice).to_have_attribute("data-cents", "100000")
    page.select_option("#cage-player", "alice")
    page.fill("#cage-amount", "50")
    page.fill("#cage-reason", "cash")
    page.click("#cage-deposit")
    expect(alice).to_have_attribute("data-cents", "105000")
    expect(page.locator("#cage-detail")).to_contain_text("WalletDeposited $50.00 by cass")
    page.fill("#cage-amount", "2000")
    page.click("#cage-withdraw")
    expect(page.locator('.refusal[data-rule="wallet.balance"]')).to_contain_text(
        "The wallet holds $1,050.00")
    expect(alice).to_have_attribute("data-cents", "105000")
    wallet = Staff(live_server, "alice").http.get("/api/tables/craps-pa-e1/money").json()
    assert wallet["wallet"] == 1_050_00
    assert _violations(page) == []  # the cashier's form, checked by axe-core
    cass.shot("pit-cage")

    pat = open_screen("pat", width=1440, height=1000)
    expect(pat.page.locator("#cage-closed")).to_contain_text("not the cage's")
    assert not pat.errors
