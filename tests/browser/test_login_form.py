"""The login form, driven as a person drives it: each kind of account lands on its own page
(the page's ``landing``, which the other browser tests' windows open directly after logging
in through ``/api/login``: ``conftest.landing`` is held to it here), and a ``next`` path is
honoured."""

from __future__ import annotations

from urllib.parse import quote, urlparse

from playwright.sync_api import Page

from dicetable.server.demo import DEMO_PASSWORD
from tests.browser.conftest import LiveServer, OpenScreen, landing, log_in

ACCOUNTS = ("alice", "dee", "sam", "fran", "pat", "ann", "sid", "cass", "cole")
"""A player, the crew, the pit's supervisors, a shift manager, and staff at no table who work
in the dice room: security, the chip bank's cashier and the count team."""


def _log_in(page: Page, url: str, username: str) -> str:
    """Where the form sends ``username`` from ``url`` (the page it goes to is not drawn)."""
    page.goto("about:blank")  # the last landing's page gone before its session is
    page.context.clear_cookies()
    page.goto(url)
    page.fill("#username", username)
    page.fill("#password", DEMO_PASSWORD)
    page.click("#login-button")
    page.wait_for_url(lambda at: urlparse(at).path != "/", wait_until="commit")
    return page.url


def test_the_form_lands_each_account_where_the_tests_windows_open_it(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = open_screen(None).page
    for username in ACCOUNTS:
        went = _log_in(page, live_server.url + "/", username)
        account = log_in(page.context, live_server.url, username)
        assert went == live_server.url + landing(account), username


def test_the_form_opens_the_page_asked_for_after_the_login(
        live_server: LiveServer, open_screen: OpenScreen) -> None:
    page = open_screen(None).page
    asked = "/rules?table=craps-pa-1"
    went = _log_in(page, f"{live_server.url}/?next={quote(asked)}", "alice")
    assert went == live_server.url + asked
