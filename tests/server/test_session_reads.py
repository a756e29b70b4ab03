"""A session not remembered is read off the event loop, on every route that runs on it
(issue 28, a request path near the ceiling: nothing on the loop that blocks it):
``server.session_reads``. Counted, never timed: the reads each request caused and the thread
each ran on."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest

from dicetable.application.accounts import Account, NotAuthenticated
from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.session_reads import SessionReads
from tests.server.pipeline_helpers import run_async


class Source:
    """Accounts named by their tokens (``t-NAME``); ``bad`` tokens are refused, ``t-db``
    fails as a broken store would. Records every read and the thread it ran on."""

    def __init__(self, remembered: frozenset[str] = frozenset()) -> None:
        self.kept = remembered
        self.read: list[str] = []
        self.threads: set[int] = set()

    def remembered(self, token: str) -> str | None:
        return token[2:] if token in self.kept else None

    def session(self, token: str | None) -> str:
        self.read.append(token or "")
        self.threads.add(threading.get_ident())
        if token == "t-db":
            raise OSError("disk I/O error")
        if not token or token.startswith("bad"):
            raise NotAuthenticated("the session has expired; log in again",
                                   rule="accounts.session")
        return token[2:]


def test_issue_28_each_request_is_answered_its_own_session_read_off_the_loop() -> None:
    source = Source(remembered=frozenset({"t-kept"}))
    reads: SessionReads[str] = SessionReads(source)
    asked = ["t-ann", "t-kept", "bad-one", "t-db", None, "t-bob"]

    async def together() -> tuple[list[Any], int]:
        found = await asyncio.gather(*(reads(t) for t in asked), return_exceptions=True)
        return found, threading.get_ident()

    found, loop_thread = run_async(together)
    assert (found[0], found[1], found[5]) == ("ann", "kept", "bob")
    assert isinstance(found[2], NotAuthenticated)  # only that request refused
    assert isinstance(found[3], OSError)  # only that request failed
    assert isinstance(found[4], NotAuthenticated)  # no token at all
    assert sorted(source.read) == sorted(["t-ann", "bad-one", "t-db", "", "t-bob"])
    assert "t-kept" not in source.read  # remembered: never read
    assert reads.reads == 5
    assert loop_thread not in source.threads


def test_issue_28_requests_carrying_one_forgotten_session_read_it_once() -> None:
    """A client sending on several connections after a restart: its requests that arrive
    while its session is being read wait for that read (before, each read it again)."""
    source = Source()
    reads: SessionReads[str] = SessionReads(source)
    asked = ["t-ann"] * 5 + ["bad-one"] * 3 + ["t-bob"]

    async def together() -> list[Any]:
        return await asyncio.gather(*(reads(t) for t in asked), return_exceptions=True)

    found = run_async(together)
    assert found[:5] == ["ann"] * 5
    assert all(isinstance(f, NotAuthenticated) for f in found[5:8])  # each told why
    assert found[8] == "bob"
    assert sorted(source.read) == ["bad-one", "t-ann", "t-bob"]  # one read each
    assert reads.reads == 3
    assert run_async(lambda: reads("t-ann")) == "ann"  # read over: a later request reads again
    assert source.read.count("t-ann") == 2


def test_issue_28_a_request_gone_while_its_session_is_read_leaves_the_read_to_the_others(
        ) -> None:
    source = Source()
    reads: SessionReads[str] = SessionReads(source)

    async def one_gone() -> str:
        first = asyncio.ensure_future(reads("t-ann"))
        second = asyncio.ensure_future(reads("t-ann"))
        await asyncio.sleep(0)
        first.cancel()
        return await second

    assert run_async(one_gone) == "ann"
    assert source.read == ["t-ann"]


# -- through the server ------------------------------------------------------------------------
T = "/api/tables/craps-pa-1"


def test_issue_28_the_servers_session_reads_never_run_on_its_event_loop(floor: Floor) -> None:
    """A server whose sessions are all forgotten (a restart, or their seconds of trust over):
    the bet route, a catalogue command route, a page's read and an async money route each
    find their caller without reading the store on the event loop. Before, every route but
    the bet route read it on the loop."""
    app = create_app(floor, electronic_loop=False)
    tokens = {who: floor.accounts.login(who, DEMO_PASSWORD)
              for who in ("alice", "bob", "carol", "dan")}
    read_on: list[tuple[str, str, int]] = []
    plain = floor.accounts.session
    asking = {"route": ""}

    def session(token: str | None) -> Account:
        read_on.append((asking["route"], str(token).rpartition(".")[2], threading.get_ident()))
        return plain(token)

    floor.accounts.session = session  # type: ignore[method-assign]
    routes: list[tuple[str, str, Any]] = [
        ("POST", f"{T}/bets", {"wager": "field", "amount": 500}),  # the door's route
        ("DELETE", f"{T}/bets/b999", None),  # a catalogue route (refused: no such bet)
        ("POST", f"{T}/money/buy-in", {"amount": 100}),  # an async router's
        ("GET", "/api/me", None)]  # a page's read (its dependency)

    async def each_forgotten() -> tuple[list[int], int]:
        statuses = []
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            for method, path, body in routes:
                asking["route"] = f"{method} {path}"
                floor.accounts.sessions.clear()  # every session forgotten
                replies = await asyncio.gather(*(
                    c.request(method, path, json=body, headers={"authorization": f"Bearer {t}"})
                    for t in tokens.values()))
                statuses += [r.status_code for r in replies]
        return statuses, threading.get_ident()

    try:
        statuses, loop_thread = run_async(each_forgotten)
    finally:
        del floor.accounts.session
    assert all(s < 500 for s in statuses), statuses
    assert statuses.count(401) == 0, statuses
    for method, path, _ in routes:  # every route read its callers' sessions, off the loop
        route = f"{method} {path}"
        assert {who for asked, who, _ in read_on if asked == route} == set(tokens), route
        assert all(thread != loop_thread for asked, _, thread in read_on if asked == route), \
            route


@pytest.mark.parametrize("path", ["/api/me", f"{T}/money", f"{T}/money/buy-in",
                                  f"{T}/bets"])
def test_issue_28_a_session_that_is_not_one_is_refused_as_before(floor: Floor,
                                                                 path: str) -> None:
    app = create_app(floor, electronic_loop=False)

    async def ask() -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            headers = {"authorization": "Bearer nonsense.alice"}
            reply = await (c.get(path, headers=headers) if path.endswith(("me", "money"))
                           else c.post(path, json={"wager": "pass", "amount": 100},
                                       headers=headers))
            return reply.status_code

    assert run_async(ask) == 401
