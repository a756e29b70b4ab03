"""spec/table-bank.md §7 item 3, §8 in the pit console: after a demo player's bets are in
action, the pit shows their exact theo and the industry formula's theo side by side."""

from __future__ import annotations

from fractions import Fraction

from playwright.sync_api import expect

from dicetable.ratings.formula import display_cents
from tests.browser.conftest import LiveServer, OpenScreen
from tests.browser.test_felt import Staff, throw


def test_8_the_pit_shows_exact_and_industry_theo_for_a_demo_player(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice, sam, dee = (Staff(live_server, who) for who in ("alice", "sam", "dee"))
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    alice.do("/bets", {"wager": "field", "amount": 500})
    throw(sam, dee, "2-2")  # the point is 4; the field wins on the 4
    alice.do("/bets", {"wager": "place6", "amount": 1200})
    throw(sam, dee, "1-2")

    pat = open_screen("pat", width=1500, height=1200)
    row = pat.page.locator('#ratings-table tr[data-player="alice"][data-table="craps-pa-1"]')
    expect(row).to_have_count(1)
    exact = 1000 * Fraction(7, 495) + 500 * Fraction(1, 18) + 1200 * Fraction(1, 216)
    cents = display_cents(exact)
    expect(row.locator(".theo-exact")).to_have_text(f"${cents // 100}.{cents % 100:02d}")
    expect(row.locator("td").nth(4)).to_have_text("2")  # two rolls in action
    rated = Staff(live_server, "pat").http.get("/api/ratings").json()["ratings"]
    [mine] = [r for r in rated if r["player"] == "alice" and r["table"] == "craps-pa-1"]
    assert Fraction(mine["theo_exact"]) == exact
    industry = mine["industry_theo"]
    expect(row.locator(".theo-industry")).to_have_text(f"${industry // 100}.{industry % 100:02d}")
    expect(pat.page.locator("#ratings-rules")).to_contain_text("decisions an hour")
    expect(pat.page.locator("#ratings-rules")).to_contain_text("industry-default")
    assert not pat.errors
    pat.shot("pit-ratings")


def test_8_the_player_s_page_shows_their_own_rating_exact_beside_the_formula(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    alice, sam, dee = (Staff(live_server, who) for who in ("alice", "sam", "dee"))
    alice.do("/bets", {"wager": "pass", "amount": 1000})
    sam.do("/offer-dice", {"patron": "alice"})
    alice.do("/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    alice.do("/bets", {"wager": "field", "amount": 500})
    throw(sam, dee, "2-2")
    exact = 1000 * Fraction(7, 495) + 500 * Fraction(1, 18)
    cents = display_cents(exact)

    me = open_screen("alice", width=1500, height=1400)
    row = me.page.locator('#my-rating-table tr[data-session^="craps-pa-1#"]')
    expect(row).to_have_count(1)
    expect(row.locator(".exact-theo")).to_have_text(f"${cents // 100}.{cents % 100:02d}")
    own = alice.http.get("/api/ratings").json()["ratings"]
    [mine] = [r for r in own if r["table"] == "craps-pa-1"]
    industry = mine["industry_theo"]
    expect(row.locator(".industry-theo")).to_have_text(f"${industry // 100}.{industry % 100:02d}")
    expect(me.page.locator("#my-rating-rules")).to_contain_text("60 decisions an hour")
    expect(me.page.locator("#my-rating-rules")).to_contain_text("industry-default")
    assert me.page.locator('#my-rating-table tr[data-session^="craps-pa-1#"]').count() == 1
    me.shot("player-own-rating")
    assert not me.errors
