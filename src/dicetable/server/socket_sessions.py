"""Open WebSockets by the session that opened them: a session that ends closes its sockets.

A lock ends every session of the account (spec/standards.md SEC-4), and an open WebSocket is a
session in use, so it is closed too, with ``SESSION_ENDED`` (4401); so is one whose session
was logged out, expired, or whose account's log is faulted. A reconnection with the same
token is refused (4401) like any request of an ended session.

In the process that locks the account, at once: the account's stream moving (the store's
notice, and the lock itself) makes this process check that account's sockets against its
log. A lock made by another process reaches this one by the store's notice (PostgreSQL), and
at the latest by the sweep every ``SESSION_CACHE_SECONDS`` (5 s, the session cache's stated
delay), which reads each open socket's session from its log, never from the cache.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from dicetable.application.accounts import SESSION_CACHE_SECONDS, Accounts
from dicetable.core.errors import DicetableError
from dicetable.server.floor import Groups

log = logging.getLogger(__name__)

SESSION_ENDED = 4401
"""The close code of a socket whose session ended (the account locked, logged out, expired,
or its log faulted): the same code a refused upgrade gets."""


@dataclass(eq=False)
class OpenSocket:
    username: str
    token: str
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set (on the event loop) when the session has ended: the connection closes itself."""
    why: str = ""


class OpenSockets:
    """Each open WebSocket's account and token, checked when the account changes and swept
    every ``every`` seconds."""

    def __init__(self, accounts: Accounts, *, every: float = SESSION_CACHE_SECONDS) -> None:
        self.accounts = accounts
        self.every = every
        self.loop: asyncio.AbstractEventLoop | None = None
        self._open: Groups[str, OpenSocket] = Groups()
        self.ended = 0
        """Sockets closed because their session ended (tests and the bench count them)."""
        self._unlisten: Callable[[], None] | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start listening for account changes (each lifespan of the app binds once)."""
        self.loop = loop
        if self._unlisten is None:
            self._unlisten = self.accounts.on_change(self.changed)

    def close(self) -> None:
        """Stop listening (a lifespan's end; the app may be started again)."""
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None

    def open(self, username: str, token: str) -> OpenSocket:
        sock = OpenSocket(username, token)
        self._open.add(username, sock)
        return sock

    def leave(self, sock: OpenSocket) -> None:
        self._open.discard(sock.username, sock)

    def changed(self, username: str) -> None:
        """From any thread: the account may have changed; check its sockets now."""
        loop = self.loop
        if not self._open.has(username):
            return
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(lambda: loop.create_task(self.check([username])))

    async def check(self, usernames: list[str] | None = None) -> int:
        """Close the sockets (of ``usernames``; None: every one) whose session has ended;
        how many were closed."""
        socks = self._open.members(usernames)
        if not socks:
            return 0
        ended = await asyncio.to_thread(self._ended, socks)
        for sock, why in ended:
            if not sock.ended.is_set():
                sock.why = why
                sock.ended.set()
                self.ended += 1
        return len(ended)

    def _ended(self, socks: list[OpenSocket]) -> list[tuple[OpenSocket, str]]:
        out = []
        for sock in socks:
            try:
                self.accounts.recheck(sock.token)
            except DicetableError as e:
                out.append((sock, e.message))
        return out

    async def sweep(self) -> None:
        """Every ``every`` seconds, every open socket's session read from its log: a change
        made by another process that sent no notice is seen within that delay."""
        while True:
            await asyncio.sleep(self.every)
            try:
                await self.check()
            except Exception:  # a store that cannot be read now: the next sweep asks again
                log.exception("checking the open sockets' sessions failed")
