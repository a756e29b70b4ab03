"""Sessions remembered in memory, so that a request does not read the database to learn who
sent it: otherwise every request, every bet among them, would pay two queries for it.

What is kept is what ``Accounts.session`` would read - the account and the session's expiry,
only ever from an account stream verified link by link - keyed by the token's digest, for at
most ``SESSION_CACHE_SECONDS``. This process forgets an entry the moment it changes the
session or the account itself (logout, a login attempt, lock, unlock) and whenever the store
tells it the account's stream moved, so here a logout or a lock takes effect at once. A
change made by *another* process (a second server on PostgreSQL or on the same SQLite file,
``dicetable accounts unlock``) reaches this one within ``SESSION_CACHE_SECONDS`` at the
latest: that is the revocation delay, and it is bounded (on PostgreSQL the store's notice
usually ends it sooner). Expiry is checked on every use, cached or not.

An entry read from the database while an invalidation was under way is not kept (a
generation count says so), so a logout can never be undone by a lookup that raced it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

SESSION_CACHE_SECONDS = 5.0
"""How long a session read from the database is trusted without reading it again
(industry-default): the longest a logout or lock made by another process goes unseen here."""
SESSION_CACHE_SIZE = 100_000
"""Sessions kept at most (industry-default; a full cache starts afresh)."""

A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class Entry(Generic[A]):
    account: A
    username: str
    expires: datetime
    until: float
    """Monotonic time after which the database is asked again."""


class SessionCache(Generic[A]):
    def __init__(self, *, seconds: float = SESSION_CACHE_SECONDS,
                 size: int = SESSION_CACHE_SIZE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.size = size
        self.clock = clock
        self._entries: dict[str, Entry[A]] = {}
        self._of: dict[str, set[str]] = {}
        """Each username's cached digests (forgetting an account never scans the cache)."""
        self._lock = threading.Lock()
        self._generation = 0
        self.hits = 0
        self.misses = 0
        """Lookups answered from memory, and from the database (tests count them)."""

    def get(self, digest: str) -> Entry[A] | None:
        entry = self._entries.get(digest)
        if entry is None or entry.until <= self.clock():
            self.misses += 1
            return None
        self.hits += 1
        return entry

    def generation(self) -> int:
        """Taken before reading the database; ``put`` keeps nothing if it has moved since."""
        return self._generation

    def put(self, digest: str, account: A, username: str, expires: datetime,
            generation: int) -> None:
        if self.seconds <= 0:
            return
        with self._lock:
            if generation != self._generation:
                return  # something was invalidated meanwhile: what was read may be stale
            if len(self._entries) >= self.size:
                self._entries.clear()
                self._of.clear()
            self._drop(digest)  # a digest re-read may now belong to another account
            self._entries[digest] = Entry(account, username, expires,
                                          self.clock() + self.seconds)
            self._of.setdefault(username, set()).add(digest)

    def forget_session(self, digest: str) -> None:
        with self._lock:
            self._generation += 1
            self._drop(digest)

    def forget_account(self, username: str) -> None:
        """Every session of ``username`` (its account changed: locked, unlocked, a login)."""
        with self._lock:
            self._generation += 1
            for digest in self._of.pop(username, ()):
                self._entries.pop(digest, None)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries.clear()
            self._of.clear()

    def _drop(self, digest: str) -> None:
        """Forget one entry, and its place in its account's set (the lock held)."""
        entry = self._entries.pop(digest, None)
        if entry is not None:
            digests = self._of.get(entry.username)
            if digests is not None:
                digests.discard(digest)
                if not digests:
                    del self._of[entry.username]
