"""The dice room console in a real browser: a die walked from receipt to cancellation by the
shift manager, security and the pit boss (each in their own window), a refusal shown with its
rule and citation, and a tampered die taken to its sealed envelope and the enforcement agent.
Screenshots (``DICETABLE_SCREENSHOTS=1``) go to ``artifacts/screenshots/``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from dicetable.core.clock import FixedClock
from dicetable.server.app import create_app
from dicetable.server.main import build_floor
from tests.browser.conftest import LiveServer, log_in, screenshot
from tests.demo_floor import CHEAP_HASHER
from tests.uvicorn_thread import serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


class Room:
    """One person's dice room window."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def site(self, site: str) -> None:
        self.page.wait_for_selector("#report-table")
        self.page.select_option("#site", site)
        self.page.wait_for_selector("#report-table tr[data-serial='PA1-1']")

    def reload(self) -> None:
        self.page.reload()
        self.site("demo-pa")

    def step(self, step: str, **fields: str | bool) -> None:
        # start clean: only what this step brings back is read afterwards
        self.page.evaluate("document.querySelectorAll('.refusal, #result > *')"
                           ".forEach((e) => e.remove())")
        form = self.page.locator(f"#step-{step}")
        for name, value in fields.items():
            target = form.locator(f"[name='{name}']")
            if isinstance(value, bool):
                target.set_checked(value)
            elif target.evaluate("e => e.tagName") == "SELECT":
                target.select_option(value)
            else:
                target.fill(value)
        form.locator("button[type=submit]").click()

    def expect_event(self, kind: str) -> None:
        found = self.page.wait_for_selector(f"#result [data-event='{kind}'], .refusal")
        assert found is not None
        if "refusal" in (found.get_attribute("class") or ""):
            text = found.evaluate("e => e.textContent")
            raise AssertionError(f"refused instead of {kind}: {text}")

    def state_of(self, serial: str) -> str:
        row = self.page.locator(f"#report-table tr[data-serial='{serial}']")
        row.wait_for()
        return str(row.get_attribute("data-state"))

    def wait_state(self, serial: str, state: str) -> None:
        self.page.wait_for_selector(f"#report-table tr[data-serial='{serial}']"
                                    f"[data-state='{state}']")


@pytest.fixture
def rooms(browser: Browser, live_server: LiveServer) -> Iterator[dict[str, Room]]:
    opened: dict[str, Room] = {}
    contexts = []
    for user in ("ann", "sid", "pat"):
        context = browser.new_context(viewport={"width": 1500, "height": 1000})
        context.set_default_timeout(10000)
        contexts.append(context)
        page = context.new_page()
        room = Room(page)
        log_in(context, live_server.url, user)
        page.goto(live_server.url + "/dice-room")
        room.site("demo-pa")
        opened[user] = room
    yield opened
    for context in contexts:
        context.close()
    errors = [e for room in opened.values() for e in room.errors]
    assert not errors, f"JavaScript errors in the dice room: {errors}"


def _stock(ann: Room, sid: Room, serials: str) -> None:
    """Receipt (shift manager with security), both keys, storage, the gaming day's issue."""
    ann.step("receive", shipment="S-NEW", manufacturer="Acme Dice Co.",
             address="1 Cube Way, Reno NV", phone="+1 775 555 0100",
             box=f"B9={serials}", present="sid")
    ann.expect_event("ShipmentReceived")
    screenshot(ann.page, "dice-room-received")
    ann.step("key-draw", key="table-games")
    ann.expect_event("KeyDrawn")
    sid.step("key-draw", key="security")
    sid.expect_event("KeyDrawn")
    ann.step("store", dice=serials, present="sid")
    ann.expect_event("DiceStored")


def test_pa_603a_13_a_die_from_receipt_to_cancellation(rooms: dict[str, Room],
                                                        live_server: LiveServer) -> None:
    ann, sid, pat = rooms["ann"], rooms["sid"], rooms["pat"]
    _stock(ann, sid, "T0001")
    ann.step("issue-day", dice="T0001", present="sid")
    ann.expect_event("DiceIssuedForGamingDay")
    ann.step("key-return", key="table-games")
    sid.step("key-return", key="security")
    sid.expect_event("KeyReturned")
    # Refused: the inspection is done under surveillance; the refusal names rule and citation.
    pat.reload()
    pat.step("inspect", dice="T0001", measurements="0.7500 0.7502 0.7501",
             under_surveillance=False, present="val")
    refusal = pat.page.locator(".refusal[data-rule='inspection.surveillance']")
    refusal.wait_for()
    assert "603a" in refusal.locator(".citation").inner_text() or \
        "14-3-7" in refusal.locator(".citation").inner_text()
    screenshot(pat.page, "dice-room-refusal")
    pat.step("inspect", dice="T0001", measurements="0.7500 0.7502 0.7501",
             under_surveillance=True, present="val")
    pat.expect_event("DiceInspected")
    pat.step("issue-table", dice="T0001", table="craps-pa-1", received_by="bo")
    pat.expect_event("DiceIssuedToTable")
    pat.wait_state("T0001", "at-table")
    pat.step("remove", dice="T0001", reason="routine", detail="end of the gaming day")
    pat.expect_event("DiceRemoved")
    pat.step("transfer", dice="T0001", accepted_by="sid")
    pat.expect_event("DiceTransferredToCancellation")
    sid.reload()
    sid.step("cancel", dice="T0001", method="drill", hole_in="0.10", present="val")
    sid.page.locator(".refusal[data-rule='cancellation.min_hole_in']").wait_for()
    sid.step("cancel", dice="T0001", method="drill", hole_in="0.25", present="val")
    sid.expect_event("DiceCancelled")
    sid.wait_state("T0001", "cancelled")
    history = sid.page.locator("#report-table tr[data-serial='T0001'] .history").inner_text()
    for step in ("received", "stored", "inspect", "cancelled"):
        assert step in history.lower(), step
    assert "destroyed" in sid.page.locator("#cancellation-log").inner_text()
    screenshot(sid.page, "dice-room-cancelled")
    sid.page.emulate_media(media="print")
    assert not sid.page.locator(".steps").is_visible()  # the printout is the report and logs
    screenshot(sid.page, "dice-room-print")
    ledger = live_server.floor.custody.site("demo-pa").ledger
    assert ledger.state.dice["T0001"].state.value == "cancelled"


def test_in_14_3_4_b_a_tampered_die_to_its_sealed_envelope(rooms: dict[str, Room],
                                                           live_server: LiveServer) -> None:
    ann, sid, pat = rooms["ann"], rooms["sid"], rooms["pat"]
    _stock(ann, sid, "T0002")
    pat.reload()
    pat.step("remove", dice="T0002", reason="tampered", signs="")
    pat.page.locator(".refusal[data-rule='removal.envelope.signs']").wait_for()
    pat.step("remove", dice="T0002", reason="tampered",
             signs="a weight inside: reacts to the magnet", envelope="ENV-9")
    pat.expect_event("TamperEnvelopeSealed")
    pat.wait_state("T0002", "sealed")
    screenshot(pat.page, "dice-room-sealed")
    # A sealed die is never cancelled: it goes to the enforcement agent.
    pat.step("transfer", dice="T0002", accepted_by="sid")
    pat.page.locator(".refusal[data-rule='cancellation.required']").wait_for()
    pat.step("deliver", envelope="ENV-9", agent="Agent Cole")
    pat.expect_event("EnvelopeDelivered")
    pat.wait_state("T0002", "with-agent")
    screenshot(pat.page, "dice-room-with-agent")
    state = live_server.floor.custody.site("demo-pa").ledger.state
    assert state.envelopes["ENV-9"].agent == "Agent Cole"
    assert state.dice["T0002"].state.value == "with-agent"


def test_the_pit_console_links_each_table_to_its_rules_submission(
        rooms: dict[str, Room], live_server: LiveServer) -> None:
    page = rooms["pat"].page
    page.goto(live_server.url + "/pit")
    page.wait_for_selector("#custody-card")
    link = page.locator("a[data-submission='craps-in-1']")
    href = link.get_attribute("href")
    assert href is not None
    page.goto(live_server.url + href)
    page.wait_for_selector("h1")
    digest = live_server.floor.tables["craps-in-1"].table.pack.digest
    assert page.locator(f"[data-digest='{digest}']").count() == 1
    assert page.locator("tr[data-wager='pass']").count() >= 1
    screenshot(page, "rules-submission-in-craps")


@pytest.fixture
def clocked_server(tmp_path: Path) -> Iterator[tuple[LiveServer, FixedClock]]:
    """The demo floor on a clock the test moves (the floor's scheduler reads it)."""
    clock = FixedClock(datetime(2026, 3, 2, 8, 0, tzinfo=UTC))
    floor, _ = build_floor(tmp_path / "floor.db", clock=clock, hasher=CHEAP_HASHER)
    app = create_app(floor, electronic_loop=False, clock_seconds=None)
    try:
        with serving(app) as port:
            yield LiveServer(f"http://127.0.0.1:{port}", floor, app), clock
    finally:
        floor.close()


def test_pa_585_3_b_1_the_pit_console_shows_expired_shaker_dice_until_replaced(
        browser: Browser, clocked_server: tuple[LiveServer, FixedClock]) -> None:
    live, clock = clocked_server
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    context.set_default_timeout(10000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    log_in(context, live.url, "pat")
    page.goto(live.url + "/pit")
    card = "section.table-card[data-table='props-pa-1']"
    page.wait_for_selector(card)
    assert page.locator(f"{card} [data-alert='dice-expired']").count() == 0
    clock.advance(hours=24, minutes=1)
    live.app.state.scheduler.tick()
    page.wait_for_selector(f"{card} [data-alert='dice-expired']")
    page.wait_for_selector("#pit-custody [data-custody-alert='DiceOverdue']")
    screenshot(page, "pit-dice-expired")
    context.close()
    assert not errors
