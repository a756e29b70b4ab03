"""Session lookups for code on the event loop: remembered ones at once, the rest off the loop.

A request names its caller by a session token. ``Accounts.remembered`` answers from memory
(``accounts.SessionCache``), which is what almost every request finds; a session not
remembered (a server just started, an entry past its few seconds of trust) must be read from
the store, and that read never runs on the event loop: on SQLite it is tens of microseconds,
on PostgreSQL a round trip, and every request of the floor would wait behind it. So it is
handed to a worker thread, and the request answered as that read decides: the account, or
the refusal (``NotAuthenticated``) it raised.

Each read goes to a worker thread of its own, at once: under load a worker waits for the
interpreter after each read's query, so reads queued on one thread would each wait out the
others' waits (measured, and not kept: see the commit that brought this module). Requests
that carry the same forgotten token while it is being read wait for that one read: a client
sending on several connections after a restart reads its session once, not once a request.

>>> import asyncio
>>> class Accounts:
...     read = []
...     def remembered(self, token): return "alice" if token == "t-alice" else None
...     def session(self, token):
...         self.read.append(token)
...         return token.removeprefix("t-")
>>> reads = SessionReads(Accounts())
>>> async def two():
...     return await asyncio.gather(reads("t-alice"), reads("t-bob"))
>>> from concurrent.futures import ThreadPoolExecutor
>>> with ThreadPoolExecutor(1) as own:  # a loop of its own thread
...     own.submit(asyncio.run, two()).result(), reads.accounts.read, reads.reads
(['alice', 'bob'], ['t-bob'], 1)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from starlette.requests import Request

from dicetable.application.accounts import Account

A = TypeVar("A")
A_co = TypeVar("A_co", covariant=True)


class SessionSource(Protocol[A_co]):
    """What the lookups ask of the accounts (``application.accounts.Accounts``)."""

    def remembered(self, token: str) -> A_co | None: ...
    def session(self, token: str | None) -> A_co: ...


class SessionReads(Generic[A]):
    """The account behind a session token, awaited on the event loop (see the module's text).
    Raises what ``Accounts.session`` raises for that token."""

    def __init__(self, accounts: SessionSource[A]) -> None:
        self.accounts = accounts
        self.reads = 0
        """Sessions read from the store, each on a worker thread (tests count them)."""
        self._reading: dict[str, asyncio.Future[A]] = {}

    async def __call__(self, token: str | None) -> A:
        if not token:
            self.reads += 1
            return await asyncio.to_thread(self.accounts.session, token)
        found = self.accounts.remembered(token)
        if found is not None:
            return found
        reading = self._reading.get(token)
        if reading is None:
            self.reads += 1
            reading = asyncio.ensure_future(asyncio.to_thread(self.accounts.session, token))
            self._reading[token] = reading
            reading.add_done_callback(lambda _: self._reading.pop(token, None))
        # shielded: one waiter cancelled (its client gone) leaves the read to the others
        return await asyncio.shield(reading)


class Identify(Protocol):
    """Who sent a request: the account behind its session (``NotAuthenticated`` when it has
    none). Called as it is where blocking is harmless (a plain endpoint, which the framework
    runs on a worker thread); awaited (``awaited``) on the event loop, where a session not
    remembered is read by ``SessionReads``."""

    def __call__(self, request: Request) -> Account: ...
    async def awaited(self, request: Request) -> Account: ...


class RequestSessions:
    """``Identify`` for a server: the request's token (``token_of``) looked up in the
    accounts, or through ``reads``."""

    def __init__(self, reads: SessionReads[Account],
                 token_of: Callable[[Request], str | None]) -> None:
        self.reads = reads
        self.token_of = token_of

    def __call__(self, request: Request) -> Account:
        return self.reads.accounts.session(self.token_of(request))

    async def awaited(self, request: Request) -> Account:
        return await self.reads(self.token_of(request))


class Fixed:
    """``Identify`` from a plain function (a test's fixed account, say), awaited as called."""

    def __init__(self, who: Callable[[Request], Account]) -> None:
        self.who = who

    def __call__(self, request: Request) -> Account:
        return self.who(request)

    async def awaited(self, request: Request) -> Account:
        return self.who(request)
