"""A page's view, rebuilt from the hello and each push's merge patch, is the view the server
gives the same account (``GET /api/tables/{id}``) after every push: a player's table page and
the dealer's console, through a join, bets, a roll and its settlement."""

from __future__ import annotations

import time
from typing import Any

import httpx
from playwright.sync_api import Page

from dicetable.application.accounts import Kind
from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import LiveServer, OpenScreen

CRAPS = "craps-pa-1"
BOTH = """async (table) => {
  const r = await fetch(`/api/tables/${table}`, { credentials: "same-origin" });
  return [await r.json(), globalThis.__dicetableView || null];
}"""


def views_agree(page: Page, seq: int) -> None:
    """Wait for the page's rebuilt view of ``seq``, then hold it to the server's."""
    deadline = time.monotonic() + 8
    while True:
        server, rebuilt = page.evaluate(BOTH, CRAPS)
        assert server["seq"] == seq
        if rebuilt is not None and rebuilt["seq"] == seq:
            break
        assert time.monotonic() < deadline, f"the page never had seq {seq}"
        time.sleep(0.05)
    assert rebuilt == server


def test_the_view_a_page_rebuilds_from_patches_is_the_servers(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    live_server.floor.accounts.create("eve", DEMO_PASSWORD, Kind.PLAYER, "Eve")
    tokens: dict[str, str] = {}
    for name in ("alice", "bob", "eve", "sam", "dee"):
        tokens[name] = httpx.post(f"{live_server.url}/api/login", json={
            "username": name, "password": DEMO_PASSWORD}).json()["token"]
    alice, dee = open_screen("alice"), open_screen("dee")
    pages = [alice.page, dee.page]

    def seq() -> int:
        return live_server.floor.tables[CRAPS].table.state.seq

    def act(who: str, path: str, body: dict[str, Any]) -> None:
        reply = httpx.post(f"{live_server.url}/api/tables/{CRAPS}{path}", json=body,
                           headers={"authorization": f"Bearer {tokens[who]}"})
        assert reply.status_code == 200, reply.text
        for page in pages:
            views_agree(page, seq())

    for page in pages:
        views_agree(page, seq())  # the hello
    act("eve", "/join", {})                                   # a player joins, standing
    act("bob", "/bets", {"wager": "pass", "amount": 500})     # someone else's bet
    act("alice", "/bets", {"wager": "pass", "amount": 1000})  # her own
    act("alice", "/bets", {"wager": "field", "amount": 500})
    act("sam", "/offer-dice", {"patron": "alice"})
    act("alice", "/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    act("sam", "/roll", {"faces": "6-5"})                     # a natural: the field wins too
    act("dee", "/settle", {})
    rebuilt = alice.page.evaluate("() => globalThis.__dicetableView")
    assert rebuilt["me"]["balance"] == live_server.balance(CRAPS, "alice")
    assert "eve" in rebuilt["seats"]
    assert rebuilt["seats"]["eve"] is None
    assert rebuilt["limits"]  # the pack's fixed members, kept from the hello
