"""The pit console is honest about time and liveness (issue 31): every figure is as of the
server's time (the dice's hours too, never the browser's clock), the connection is shown and
retried with backoff when answers stop, load and refusals are on screen, a blocked table is
not also "betting", and the pit acts from its alerts: replace dice past their 24 hours,
clear an integrity fault. No command the page sent was refused (4xx count: 0)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Route, expect

from dicetable.core.clock import FixedClock
from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import LiveServer, log_in
from tests.browser.test_role_consoles import TABLET, Console, counted
from tests.demo_floor import as_created, copy_demo_db
from tests.server.test_fault_state import _raise_chips, _restore
from tests.uvicorn_thread import serving

CRAPS = "craps-pa-1"
FAULTED = "craps-in-1"


@pytest.fixture
def clocked(demo_db: Path, tmp_path: Path) -> Iterator[tuple[LiveServer, FixedClock]]:
    """The demo floor on a clock the test sets: 23 h 30 min after the dice reached the table."""
    from dicetable.server.main import build_floor

    clock = FixedClock()
    floor, _ = build_floor(copy_demo_db(demo_db, tmp_path / "floor.db"), clock=clock)
    as_created(floor, demo_db)
    since = floor.tables[CRAPS].table.procedure.dice["PA1-1"]
    clock.set(datetime.fromisoformat(since) + timedelta(hours=23, minutes=30))
    app = create_app(floor, electronic_loop=False, clock_seconds=None)
    try:
        with serving(app) as port:
            yield LiveServer(f"http://127.0.0.1:{port}", floor, app), clock
    finally:
        floor.close()


@pytest.fixture
def pit(browser: Browser, clocked: tuple[LiveServer, FixedClock]) -> Iterator[Console]:
    live, _ = clocked
    context = browser.new_context(viewport=TABLET)
    context.set_default_timeout(10000)
    console = counted(context.new_page())
    page = console.page
    log_in(context, live.url, "pat")
    page.goto(live.url + "/pit")
    page.wait_for_selector(f".table-card[data-table='{CRAPS}']")
    yield console
    context.close()
    assert not console.errors, f"JavaScript errors in the pit: {console.errors}"
    assert console.refused == [], f"commands the server refused: {console.refused}"


def test_the_pit_counts_the_dice_hours_on_the_servers_clock(
        pit: Console, clocked: tuple[LiveServer, FixedClock]) -> None:
    page = pit.page
    card = page.locator(f".table-card[data-table='{CRAPS}']")
    # the browser's clock says the dice arrived moments ago; the server's says 23 h 30 min
    # (the page counts on from the server's last answer with its monotonic clock: 29 or 30)
    expect(card.locator(".dice-timer[data-serial='PA1-1']")).to_contain_text(
        re.compile(r"0h (29|30)m"))
    expect(page.locator("#connection")).to_have_attribute("data-state", "live")
    expect(page.locator("#as-of")).to_contain_text("server time")
    expect(card.locator(".as-of")).to_contain_text("server time")
    expect(page.locator("#load [data-figure='refused']")).to_contain_text("refused for load")
    # served in the test's own process, which no test pins (``server.cpu_pin``)
    expect(page.locator("#load [data-figure='cpu']")).to_have_text("not kept to one CPU")
    pit.shot("pit-console-1024x768")


def test_the_pit_replaces_dice_after_the_24_hour_alert(
        pit: Console, clocked: tuple[LiveServer, FixedClock]) -> None:
    live, clock = clocked
    page = pit.page
    card = page.locator(f".table-card[data-table='{CRAPS}']")
    clock.advance(hours=1)
    live.app.state.scheduler.tick()
    expect(card.locator("[data-alert='dice-expired']")).to_be_visible()
    # one status: blocked, never "betting" beside "Play is blocked"
    expect(card.locator("[data-status='blocked']")).to_have_text("play blocked")
    expect(card.locator("[data-status='betting']")).to_have_count(0)
    expect(card).not_to_contain_text("bets close at")
    expect(card.locator(f"[data-dice-room='{CRAPS}']")).to_have_attribute(
        "href", f"/dice-room?table={CRAPS}")
    card.locator(f"[data-replace='{CRAPS}']").click()
    form = card.locator("#replace-form")
    expect(form.locator("#issue-spares")).to_be_disabled()
    form.locator("input[value='PA1-S1']").check()
    form.locator("input[value='PA1-S2']").check()
    form.locator("input[aria-label='received at the table by']").fill("bo")
    pit.shot("pit-replace-dice-1024x768")
    form.locator("#issue-spares").click()
    expect(card.locator("#replace-done")).to_contain_text("Issued PA1-S1, PA1-S2")
    ledger = live.floor.custody.ledger_for_table(CRAPS).ledger
    assert ledger.state.dice["PA1-S1"].table == CRAPS


def test_the_pit_removes_expired_dice_only_when_the_table_would_take_it(
        pit: Console, clocked: tuple[LiveServer, FixedClock]) -> None:
    live, clock = clocked
    page = pit.page
    card = page.locator(f".table-card[data-table='{CRAPS}']")
    clock.advance(hours=1)
    live.app.state.scheduler.tick()
    expect(card.locator("[data-alert='dice-expired']")).to_be_visible()
    remove = card.locator(f"[data-remove='{CRAPS}']")
    # a pit boss is not the boxperson, who handles the dice at PA Craps: dark, and why
    expect(remove).to_contain_text("Remove expired dice (PA1-1")
    expect(remove).to_be_disabled()
    expect(card.locator(f"[data-remove-refused='{CRAPS}']")).to_contain_text("authority.dice")
    # the floorperson puts the pit boss on the box (nobody assigns themselves): now the
    # table takes it from him
    with httpx.Client(base_url=live.url) as http:
        token = http.post("/api/login", json={"username": "fran",
                                              "password": DEMO_PASSWORD}).json()["token"]
        answer = http.post(f"/api/tables/{CRAPS}/staff", json={"person": "pat",
                                                              "role": "boxperson"},
                           headers={"authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
    expect(remove).to_be_enabled()
    expect(card.locator(f"[data-remove-refused='{CRAPS}']")).to_have_count(0)
    pit.shot("pit-remove-expired-dice-1024x768")
    remove.click()
    expect(card.locator(".dice-timers")).to_contain_text("no dice at the table")
    assert live.floor.tables[CRAPS].table.procedure.dice == {}
    expect(page.locator("#awaiting-removal")).to_contain_text(f"PA1-1 ({CRAPS})")


def test_the_pit_clears_a_fault_and_says_when_the_server_stops_answering(
        pit: Console, clocked: tuple[LiveServer, FixedClock]) -> None:
    live, _ = clocked
    page = pit.page
    floor = live.floor
    seq, body = _raise_chips(Path(floor.store.location), FAULTED)
    assert floor.verify_all() == [FAULTED]
    expect(page.locator(f'#faults-card [data-fault="{FAULTED}"]')).to_contain_text("altered")
    pit.shot("pit-fault-1024x768")
    _restore(Path(floor.store.location), seq, body, FAULTED)
    page.on("dialog", lambda dialog: dialog.accept("restored from the backup"))
    page.click(f'[data-clear="{FAULTED}"]')
    expect(page.locator("#faults-card")).to_have_count(0)

    # the server stops answering: said at once, the figures greyed, retried ever later
    def down(route: Route) -> None:
        route.abort()

    page.clock.install()  # the page's timers on a clock the test moves on
    page.route("**/api/pit", down)
    expect(page.locator("#connection")).to_have_attribute("data-state", "offline")
    expect(page.locator("#stale-banner")).to_contain_text("Not updated since")
    expect(page.locator("body")).to_have_class("pit stale")
    page.wait_for_function("window.dicetable.link.failures >= 1")
    first = page.evaluate("window.dicetable.link.wait")
    page.clock.run_for(first)  # the retry comes due
    page.wait_for_function("window.dicetable.link.failures >= 2")
    second = page.evaluate("window.dicetable.link.wait")
    assert (first, second) == (3000, 6000)  # the wait doubles with each try that fails
    pit.shot("pit-offline-1024x768")
    page.unroute("**/api/pit", down)
    page.click("#retry-now")
    expect(page.locator("#connection")).to_have_attribute("data-state", "live")
    expect(page.locator("#stale-banner")).to_have_count(0)
