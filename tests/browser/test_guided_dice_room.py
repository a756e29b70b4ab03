"""The guided dice room (issue 31): each step says who may sign it and who must be present, and
a step with someone missing is refused before it is sent, naming the rule (58 Pa. Code
603a.13(a): receipt by an assistant shift manager or above with security); serials go in as
ranges or scanned lists; dates carry their day and the site's zone; headers are words; a step
one person takes shows on every open page; the site of the user's own tables comes first.
The walk from receipt to cancellation with the right people is ``test_dice_room``'s."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Request, expect

from tests.browser.conftest import LiveServer, log_in
from tests.browser.test_role_consoles import TABLET, Console, counted


class RoomPage(Console):
    sent: list[str]


@pytest.fixture
def open_room(browser: Browser, live_server: LiveServer) -> Iterator[object]:
    opened: list[tuple[object, RoomPage]] = []

    def open_as(user: str) -> RoomPage:
        context = browser.new_context(viewport=TABLET)
        context.set_default_timeout(10000)
        base = counted(context.new_page())
        room = RoomPage(base.page, base.refused, base.errors)
        room.sent = []

        def sent(request: Request) -> None:
            # a step taken (the ledger's check of a step before it is sent takes nothing)
            if request.method == "POST" and "/api/dice-room/" in request.url \
                    and not request.url.endswith("/check"):
                room.sent.append(request.url)

        room.page.on("request", sent)
        page = room.page
        log_in(context, live_server.url, user)
        page.goto(live_server.url + "/dice-room")
        page.wait_for_selector("#report-table")
        opened.append((context, room))
        return room

    yield open_as
    for context, room in opened:
        context.close()  # type: ignore[attr-defined]
        assert not room.errors, f"JavaScript errors in the dice room: {room.errors}"
        assert room.refused == [], f"steps the server refused: {room.refused}"


def test_pa_603a_13_a_the_room_says_who_and_refuses_early_when_someone_is_missing(
        open_room: object, live_server: LiveServer) -> None:
    ann = open_room("ann")  # type: ignore[operator]
    sid = open_room("sid")  # type: ignore[operator]
    page = ann.page
    # a PA shift manager starts at the PA site (the floor's tables are mostly PA)
    expect(page.locator("#site")).to_have_value("demo-pa")
    expect(page.locator("[data-guide='receive'] .who-present")).to_contain_text("security")
    expect(page.locator("[data-guide='inspect'] .you-may-not")).to_contain_text(
        "ask boxperson or floorperson or pit boss")
    ann.shot("dice-room-1024x768")

    form = page.locator("#step-receive")
    for name, value in (("shipment", "S-RANGE"), ("manufacturer", "Acme Dice Co."),
                        ("address", "1 Cube Way, Reno NV"), ("phone", "+1 775 555 0100"),
                        ("box", "B9=T0001..T0003")):
        form.locator(f"[name='{name}']").fill(value)
    form.locator("button[type=submit]").click()
    refusal = page.locator(".refusal[data-rule='receipt.roles']")
    expect(refusal).to_contain_text("a security")
    expect(refusal.locator(".citation")).to_contain_text("603a.13(a)")
    assert ann.sent == []  # refused before anything was sent
    form.locator("[name='present']").fill("sid")
    form.locator("button[type=submit]").click()
    expect(page.locator("#result [data-event='ShipmentReceived']")).to_be_visible()
    assert len(ann.sent) == 1
    for serial in ("T0001", "T0002", "T0003"):  # the range, one die each
        expect(page.locator(f"#report-table tr[data-serial='{serial}']")).to_have_count(1)

    # the other person in the room sees it without reloading
    expect(sid.page.locator("#report-table tr[data-serial='T0002']")).to_have_count(1)
    expect(sid.page.locator("#last-step [data-last-event='ShipmentReceived']")).to_contain_text(
        "ann")

    # scanned: one serial a line
    page.locator("#step-key-draw [name='key']").select_option("table-games")
    page.locator("#step-key-draw button[type=submit]").click()
    expect(page.locator("#result [data-event='KeyDrawn']")).to_be_visible()
    sid.page.locator("#step-key-draw [name='key']").select_option("security")
    sid.page.locator("#step-key-draw button[type=submit]").click()
    expect(sid.page.locator("#result [data-event='KeyDrawn']")).to_be_visible()
    store = page.locator("#step-store")
    store.locator("[name='dice']").fill("T0001\nT0002\nT0003")
    store.locator("[name='present']").fill("sid")
    store.locator("button[type=submit]").click()
    expect(page.locator("#result [data-event='DiceStored']")).to_be_visible()
    expect(page.locator("#report-table tr[data-serial='T0003']")).to_have_attribute(
        "data-state", "in-storage")
    # the same dice stored again: everyone needed is here, but the ledger's check refuses
    # it, with its rule, and the step is never sent
    taken = len(ann.sent)
    store.locator("[name='dice']").fill("T0001")
    store.locator("[name='present']").fill("sid")
    store.locator("button[type=submit]").click()
    refusal = page.locator(".refusal").last
    expect(refusal).to_contain_text("Not sent")
    expect(refusal).to_have_attribute("data-rule", re.compile(r"\w"))
    assert len(ann.sent) == taken

    # dates with their day and the site's zone; headers in words
    until = page.locator("#report-table tr[data-serial='PA1-1'] td.until")
    expect(until).to_have_text(re.compile(r"^[A-Z][a-z]{2} \d{1,2}, \d{4}, .* E[SD]T$"))
    headers = page.locator("#logs th").all_inner_texts()
    assert "Dice removed" in headers, headers
    assert not any("_" in h for h in headers), headers
    ledger = live_server.floor.custody.site("demo-pa").ledger
    assert ledger.state.dice["T0002"].state.value == "in-storage"
