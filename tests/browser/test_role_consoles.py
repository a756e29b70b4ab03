"""A console per role, each walked through its job on a 1024×768 tablet: the stickperson
through a hand, the boxperson settling a disputed throw, the dealer through a hand's
settlement. Every control the page lights is one the engine takes: each page counts the 4xx
answers to the commands it sent, and the count is 0. Screenshots go to
``/work/helpers/shots/consoles31/`` when that folder exists, else to ``artifacts/screenshots``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import APIRequestContext, Browser, Page, expect

from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import SCREENSHOTS, LiveServer

CRAPS = "craps-pa-1"
INDIANA = "craps-in-1"
TABLET = {"width": 1024, "height": 768}
SHOTS = Path("/work/helpers/shots/consoles31")


@dataclass
class Console:
    """One member of staff's console in a browser window of its own, counting every command
    the page sent that the server refused (a 4xx to a write)."""

    page: Page
    refused: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def shot(self, name: str) -> None:
        folder = SHOTS if SHOTS.is_dir() else SCREENSHOTS
        folder.mkdir(parents=True, exist_ok=True)
        self.page.mouse.move(1, 1)
        self.page.screenshot(path=str(folder / f"{name}.png"))

    def above_the_fold(self, selector: str) -> None:
        box = self.page.locator(selector).bounding_box()
        assert box is not None, f"{selector} is not on the page"
        assert box["y"] >= 0 and box["y"] + box["height"] <= TABLET["height"], \
            f"{selector} is below the fold at 1024×768: {box}"


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
        page = context.new_page()
        console = Console(page)
        page.on("pageerror", lambda e: console.errors.append(str(e)))

        def answered(response: object) -> None:
            r = response  # playwright Response
            request = r.request  # type: ignore[attr-defined]
            if request.method != "GET" and "/api/" in r.url and 400 <= r.status < 500 \
                    and "/api/login" not in r.url:  # type: ignore[attr-defined]
                console.refused.append(f"{request.method} {r.url} {r.status} "  # type: ignore
                                       f"{r.text()}")  # type: ignore[attr-defined]

        page.on("response", answered)
        page.goto(self.server.url + "/")
        page.fill("#username", user)
        page.fill("#password", DEMO_PASSWORD)
        page.click("#login-button")
        page.wait_for_url(re.compile(r"/(dealer|pit|play)"))
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


def test_each_role_gets_its_own_console(crew: Crew) -> None:
    sam, bo, dee, fran = (crew.console(u) for u in ("sam", "bo", "dee", "fran"))
    expect(sam.page.locator("#console-role")).to_have_text("Stickperson")
    expect(bo.page.locator("#console-role")).to_have_text("Boxperson")
    expect(dee.page.locator("#console-role")).to_have_text("Dealer")
    expect(fran.page.locator("#console-role")).to_have_text("Floorperson")
    for console, name in ((sam, "stickperson"), (bo, "boxperson"), (dee, "dealer"),
                          (fran, "floorperson")):
        console.shot(f"{name}-console-1024x768")
