"""Every page checked with axe-core in the real browser (``axe-playwright-python``): no serious
or critical accessibility violation, on a desktop and on a phone."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, OpenScreen

SERIOUS = ("serious", "critical")


def _violations(page: Page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found: list[dict[str, Any]] = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} — "
            f"{[n['target'] for n in v['nodes']][:4]}"
            for v in found if v["impact"] in SERIOUS]


PAGES = (
    ("alice", "/play?table=craps-pa-1", "#balance"),
    ("alice", "/play?table=props-pa-1", "#balance"),
    ("alice", "/play?table=craps-pa-e1", "#balance"),
    ("alice", "/rules?table=craps-pa-1", "#paytable"),
    ("alice", "/", "#lobby a.table-link"),
    (None, "/", "#login-form"),
    ("dee", "/dealer?table=craps-pa-1", "#feed"),
    ("pat", "/pit", ".table-card"),
    ("pat", "/dice-room", "main"),
)


@pytest.mark.parametrize("width", [1440, 390])
def test_no_serious_or_critical_axe_violation_on_any_page(
        live_server: LiveServer, open_screen: OpenScreen, width: int) -> None:
    report: dict[str, list[str]] = {}
    page: Page | None = None
    for i, (who, path, ready) in enumerate(PAGES):
        if i == 0 or who != PAGES[i - 1][0]:  # one window per person, their pages in turn
            if page is not None:
                page.context.close()
            page = open_screen(who, width=width, height=900, at=path).page
        else:
            assert page is not None
            page.goto(live_server.url + path)
        expect(page.locator(ready).first).to_be_attached()
        page.wait_for_timeout(300)
        found = _violations(page)
        if found:
            report[f"{who} {path}"] = found
    assert not report, "\n".join(f"{where}: {v}" for where, vs in report.items() for v in vs)
