"""A real server (uvicorn on loopback, a fresh SQLite file holding the demo floor) and the
system Chromium (Debian's; Playwright cannot download its own browser here).

The pages are driven by Debian's ``chromium-headless-shell`` where it is installed: the same
Chromium source and version as the ``chromium`` package, built as the headless shell that
Playwright itself runs for headless tests; the full browser took longer on the same tests
(the browser tests, ``-n 2``: 171 against 104 s). Set
``DICETABLE_TEST_CHROMIUM`` to a browser's path (``/usr/bin/chromium``) to run them on another.

The browser tests skip only when that browser is absent AND ``DICETABLE_CI`` is not set;
in CI (``.ci/run`` installs the packages and sets the variable) they always run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

import pytest
from fastapi import FastAPI

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from tests.demo_floor import CHEAP_HASHER, as_created, copy_demo_db
from tests.uvicorn_thread import serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = Path(os.environ.get("DICETABLE_TEST_CHROMIUM")
                or (HEADLESS_SHELL if HEADLESS_SHELL.exists() else "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
SCREENSHOTS_WANTED = "DICETABLE_SCREENSHOTS"
"""Set (to a folder, or to ``1`` for ``SCREENSHOTS``) to keep the pages' screenshots for a
review. Unset, none is taken: they are artifacts, not checks, and the browser spent some
0.3-1.5 s painting and encoding each of about fifty in every run."""


@dataclass
class LiveServer:
    url: str
    floor: Floor
    app: FastAPI

    def balance(self, table: str, player: str) -> int:
        return self.floor.tables[table].table.balance(player)


@pytest.fixture
def live_server(demo_db: Path, tmp_path: Path) -> Iterator[LiveServer]:
    floor, _ = build_floor(copy_demo_db(demo_db, tmp_path / "floor.db"), bet_seconds=15,
                           hasher=CHEAP_HASHER)
    as_created(floor, demo_db)
    app = create_app(floor)
    try:
        with serving(app) as port:
            yield LiveServer(f"http://127.0.0.1:{port}", floor, app)
    finally:
        floor.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists() and not os.environ.get("DICETABLE_CI"):
        pytest.skip(f"the browser tests drive the system Chromium and {CHROMIUM} is absent "
                    "(install Debian's chromium-headless-shell; .ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Screen:
    """One person's browser window (its own context: its own session cookie)."""

    context: BrowserContext
    page: Page
    errors: list[str] = field(default_factory=list)

    def shot(self, name: str) -> Path | None:
        return screenshot(self.page, name)


def screenshot(page: Page, name: str, *, full: bool = True) -> Path | None:
    """Keep a screenshot (``full``: the whole page) for a review, where one is asked for
    (``SCREENSHOTS_WANTED``); the path, or None when none is."""
    # The mouse is moved away either way (no hover highlight where a full-page capture
    # scrolls to), so that a test runs the same whether its screenshots are kept or not.
    page.mouse.move(1, 1)
    wanted = os.environ.get(SCREENSHOTS_WANTED, "")
    if not wanted:
        return None
    folder = SCREENSHOTS if wanted == "1" else Path(wanted)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    # An artifact, not a check: a loaded machine may take a while to paint a long page.
    page.screenshot(path=str(path), full_page=full, timeout=30_000)
    return path


def open_felt(open_screen: OpenScreen, who: str, table: str, width: int = 1440,
              height: int = 1000) -> Page:
    """``who``'s play page at ``table``, once it has settled: the first view drawn, the live
    socket's hello handled and the money push's first reading done. Each of those redraws
    the page, so a test that clicks or hovers before them can find the element moved or
    replaced under it."""
    page = open_screen(who, width=width, height=height,
                       at=f"/play?table={table}&pause=0").page
    page.wait_for_function("() => window.dicetable && window.dicetable.live.heard >= 1"
                           " && window.dicetable.st.moneyLoads >= 2")
    return page


def log_in(context: BrowserContext, url: str, username: str) -> dict[str, Any]:
    """Log ``username`` (the demo password) in, in ``context``'s cookie jar, through
    ``/api/login`` as the login form does, without drawing the form; the account's
    description. A window that is to work on a page opens that page next: the form's own
    landing is ``test_login_form.py``'s to check."""
    answer = context.request.post(url + "/api/login",
                                  data={"username": username, "password": DEMO_PASSWORD})
    assert answer.ok, answer.text()
    account: dict[str, Any] = answer.json()["account"]
    return account


def landing(account: dict[str, Any]) -> str:
    """Where the login page sends ``account`` when no ``next`` is asked for: ``landing`` in
    ``static/js/login.js``, which ``test_login_form.py`` holds this to."""
    tables = list(account["tables"].items())
    if account["kind"] == "player":
        return f"/play?table={quote(tables[0][0], safe='')}" if tables else "/"
    overseers, crew = {"pit-boss", "floorperson", "shift-manager"}, {"dealer", "stickperson",
                                                                     "boxperson"}
    if (any(overseers & set(roles) for _, roles in tables)
            and not any(crew & set(roles) for _, roles in tables)):
        return "/pit"
    return f"/dealer?table={quote(tables[0][0], safe='')}" if tables else "/dice-room"


class OpenScreen(Protocol):
    def __call__(self, username: str | None, *, width: int = ..., height: int = ...,
                 at: str | None = ...) -> Screen: ...


@pytest.fixture
def open_screen(browser: Browser, live_server: LiveServer) -> Iterator[OpenScreen]:
    screens: list[Screen] = []

    def open_as(username: str | None, *, width: int = 1500, height: int = 1000,
                at: str | None = None) -> Screen:
        """A window of its own: at the login page (``username`` None; ``at`` its ``next``),
        or logged in as ``username`` and opened at ``at`` (a path) or else the account's own
        page (``landing``). The session comes from ``/api/login`` in the window's own cookie
        jar, as the form's would: drawing the login page first cost each window a third of
        its browser CPU, and the form itself is driven by the tests that are about it
        (``test_login_form.py`` holds ``landing`` to the page's own)."""
        context = browser.new_context(viewport={"width": width, "height": height})
        context.set_default_timeout(8000)
        page = context.new_page()
        screen = Screen(context, page)
        page.on("pageerror", lambda e: screen.errors.append(str(e)))
        screens.append(screen)
        if username is None:
            page.goto(live_server.url + "/" + ("" if at is None else "?next=" + quote(at)))
            return screen
        account = log_in(context, live_server.url, username)
        page.goto(live_server.url + (at or landing(account)))
        return screen

    yield open_as
    for screen in screens:
        screen.context.close()
    errors = [e for screen in screens for e in screen.errors]
    assert not errors, f"JavaScript errors in the pages: {errors}"


def count_fetches(page: Page, method: str, path_end: str) -> Callable[[], int]:
    """Count, in the page itself, its ``fetch`` calls of ``method`` to a URL ending in
    ``path_end`` (from its next navigation on). Asked after ``page.clock.run_for``, the count
    includes every call its timers made, with no wait for the browser's request events."""
    page.add_init_script(f"""(() => {{
      const real = window.fetch;
      window.__counted = 0;
      window.fetch = (url, init) => {{
        const m = ((init && init.method) || "GET").toUpperCase();
        if (m === {method.upper()!r} && String(url).endsWith({path_end!r})) window.__counted++;
        return real(url, init);
      }};
    }})()""")
    return lambda: int(page.evaluate("window.__counted"))
