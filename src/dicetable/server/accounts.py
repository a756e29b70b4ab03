"""Staff and player accounts: hashed passwords, session tokens, lockout after failed logins.

Passwords are hashed with Argon2id (argon2-cffi). An account locks after
``LOCK_AFTER`` consecutive failed logins (N.J.A.C. 13:69E-1.37A(b): lock an account after three
failed attempts, spec/standards.md SEC-4, other-jurisdiction) for ``LOCK_MINUTES`` minutes
(industry-default), or until a pit boss unlocks it. A session token is 32 random bytes
(``secrets``) and expires after ``SESSION_HOURS``.

The accounts live beside the table log: in the same SQLite file (their own tables) or the
same PostgreSQL schema. Every change is also a record of the account's own chained stream
(``account:<name>``, ``store.streams``): created, each failed login, locked, unlocked (by
whom), each session opened or closed - so the accounts are covered by the keyed chain and
the checkpoints like the tables. Session tokens are stored as SHA-256 digests, never as
themselves. Which role a staff member holds at a table is not stored here: it is the table's
own log (``StaffAssigned``) that says so.

Against guessing (spec/standards.md SEC-4): a login's failure is counted in one atomic
``UPDATE ... RETURNING`` *before* the password is checked, so concurrent attempts cannot all
see the same count; attempts on one account are serialised in this process; at most
``HASH_SLOTS`` password checks run at once (more are refused with 429, so guesses at unknown
users cannot starve the tables). A locked-out floor is unlocked with ``dicetable accounts
unlock`` (break-glass: needs the store's chain key, recorded in the stream).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from dicetable.core.clock import Clock, SystemClock
from dicetable.core.errors import DicetableError, InvalidInput, RoleNotPermitted
from dicetable.server.session_cache import SESSION_CACHE_SECONDS, SessionCache
from dicetable.store.streamlog import StreamLog

LOCK_AFTER = 3
"""Failed logins that lock an account (N.J.A.C. 13:69E-1.37A(b), other-jurisdiction)."""
LOCK_MINUTES = 30
"""How long a lock lasts unless a pit boss lifts it first (industry-default)."""
SESSION_HOURS = 12
"""A session token's life: one shift (industry-default)."""
HASH_SLOTS = 2
"""Password checks (Argon2, deliberately slow) that may run at once (industry-default)."""


class TooManyAttempts(DicetableError):
    """Too many logins at once, or from one client: try again shortly."""


def token_digest(token: str) -> str:
    """What is stored for a session token: its SHA-256 (a stolen database holds no tokens)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class NotAuthenticated(DicetableError):
    """No valid session, or wrong credentials."""


class AccountLocked(DicetableError):
    """Too many failed logins."""


class Kind(StrEnum):
    STAFF = "staff"
    PLAYER = "player"


@dataclass(frozen=True)
class Account:
    username: str
    kind: Kind
    display: str
    failed: int = 0
    locked_until: str | None = None


_DUMMY_HASH = PasswordHasher().hash("dicetable: no such account")
"""Checked against for unknown users, so they cost what a real check costs."""


class _Db(Protocol):
    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS accounts (
        username TEXT PRIMARY KEY, kind TEXT NOT NULL, display TEXT NOT NULL,
        password_hash TEXT NOT NULL, failed INTEGER NOT NULL DEFAULT 0,
        locked_until TEXT, created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sessions (
        token TEXT PRIMARY KEY, username TEXT NOT NULL, expires_at TEXT NOT NULL)""",
)


class _Sqlite:
    def __init__(self, path: str | Path) -> None:
        self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30,
                                     isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._lock = threading.Lock()

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        self._conn.close()


class _Postgres:
    def __init__(self, url: str, schema: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)
        self._conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        self._conn.execute(f'SET search_path TO "{schema}"')
        self._lock = threading.Lock()

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            cur = self._conn.execute(sql.replace("?", "%s"), params)
            return list(cur.fetchall()) if cur.description else []

    def close(self) -> None:
        self._conn.close()


class Accounts:
    """Accounts and sessions. ``location`` is ``memory``, a SQLite path or a PostgreSQL URL."""

    def __init__(self, location: str | Path = "memory", *, schema: str = "dicetable",
                 clock: Clock | None = None, key: bytes | None = None,
                 hash_slots: int = HASH_SLOTS,
                 session_cache_seconds: float = SESSION_CACHE_SECONDS) -> None:
        text = str(location)
        self.sessions: SessionCache[Account] = SessionCache(seconds=session_cache_seconds)
        """Sessions remembered for a few seconds (``server.session_cache``: forgotten at once
        on this process's own logout, login attempt, lock and unlock)."""
        self.log = StreamLog(text, schema=schema, key=key)
        self._slots = threading.BoundedSemaphore(hash_slots)
        self._account_locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self.password_checks = 0
        """How many password hashes were computed (tests count what happened)."""
        self.most_at_once = 0
        self._running = 0
        if text.startswith(("postgresql://", "postgres://")):
            self._db: _Sqlite | _Postgres = _Postgres(text, schema)
        else:
            self._db = _Sqlite(":memory:" if text == "memory" else text)
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._hasher = PasswordHasher()
        self.clock: Clock = clock or SystemClock()

    @property
    def db(self) -> _Sqlite | _Postgres:
        """The accounts' database (for the server's kept answers)."""
        return self._db

    def close(self) -> None:
        self._db.close()
        self.log.close()

    def _record(self, username: str, record: str, **data: Any) -> None:
        self.log.append(f"account:{username}", record, {"at": self._now().isoformat(), **data})

    def _lock_for(self, username: str) -> threading.Lock:
        with self._locks_lock:
            return self._account_locks.setdefault(username, threading.Lock())

    def _check_password(self, stored: str, password: str) -> bool:
        """One bounded Argon2 check (refused with 429 when every slot is busy)."""
        if not self._slots.acquire(blocking=False):
            raise TooManyAttempts("too many logins are being checked at once; try again in "
                                  "a moment", rule="accounts.concurrency")
        try:
            with self._locks_lock:
                self._running += 1
                self.password_checks += 1
                self.most_at_once = max(self.most_at_once, self._running)
            try:
                return bool(self._hasher.verify(stored, password))
            except (VerificationError, InvalidHashError):
                return False
        finally:
            with self._locks_lock:
                self._running -= 1
            self._slots.release()

    def _now(self) -> datetime:
        return self.clock.now().astimezone(UTC)

    # -- accounts ----------------------------------------------------------------------------
    def create(self, username: str, password: str, kind: Kind, display: str = "") -> Account:
        if not username or not username.replace("-", "").replace("_", "").isalnum():
            raise InvalidInput("a username is letters, digits, '-' and '_'",
                               rule="accounts.username")
        if len(password) < 8:
            raise InvalidInput("a password has at least 8 characters", rule="accounts.password")
        if self.get(username) is not None:
            raise InvalidInput(f"the username {username!r} is taken", rule="accounts.username")
        self._db.execute(
            "INSERT INTO accounts (username, kind, display, password_hash, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (username, kind.value, display or username, self._hasher.hash(password),
             self._now().isoformat()))
        self._record(username, "AccountCreated", kind=kind.value, display=display or username)
        account = self.get(username)
        assert account is not None
        return account

    def get(self, username: str) -> Account | None:
        rows = self._db.execute("SELECT username, kind, display, failed, locked_until "
                                "FROM accounts WHERE username = ?", (username,))
        if not rows:
            return None
        u, kind, display, failed, locked = rows[0]
        return Account(u, Kind(kind), display, int(failed), locked)

    def all(self) -> list[Account]:
        rows = self._db.execute("SELECT username FROM accounts ORDER BY username")
        return [a for (u,) in rows if (a := self.get(u)) is not None]

    def empty(self) -> bool:
        return not self._db.execute("SELECT 1 FROM accounts LIMIT 1")

    # -- login and sessions -------------------------------------------------------------------
    def login(self, username: str, password: str) -> str:
        """A new session token; wrong credentials count towards the lock."""
        with self._lock_for(username):  # one attempt per account at a time, in this process
            return self._login(username, password)

    def _login(self, username: str, password: str) -> str:
        self.sessions.forget_account(username)  # its failure count changes now
        try:
            return self._attempt(username, password)
        finally:
            self.sessions.forget_account(username)

    def _attempt(self, username: str, password: str) -> str:
        now = self._now()
        stamp = now.isoformat()
        # Count the attempt first, atomically: concurrent attempts (here or in another
        # process) each get their own number, and a lock that has expired starts afresh.
        rows = self._db.execute(
            "UPDATE accounts SET "
            "failed = CASE WHEN locked_until IS NOT NULL AND locked_until <= ? THEN 1 "
            "ELSE failed + 1 END, "
            "locked_until = CASE WHEN locked_until IS NOT NULL AND locked_until <= ? THEN NULL "
            "ELSE locked_until END WHERE username = ? "
            "RETURNING failed, locked_until, password_hash", (stamp, stamp, username))
        if not rows:
            self._check_password(_DUMMY_HASH, password)  # spend the time a real check takes
            raise NotAuthenticated("wrong username or password", rule="accounts.login")
        attempt, locked_until, stored = int(rows[0][0]), rows[0][1], str(rows[0][2])
        citation = "N.J.A.C. 13:69E-1.37A(b) [other-jurisdiction]"
        if locked_until:
            raise AccountLocked(f"{username} is locked after {LOCK_AFTER} failed logins "
                                f"until {locked_until}", rule="accounts.lockout",
                                citation=citation)
        if attempt > LOCK_AFTER:  # others' failures got here first: lock, check nothing
            self._lock_account(username, now)
            raise AccountLocked(f"{username} is now locked after {LOCK_AFTER} failed logins",
                                rule="accounts.lockout", citation=citation)
        if not self._check_password(stored, password):
            self._record(username, "LoginFailed", attempt=attempt)
            if attempt >= LOCK_AFTER:
                self._lock_account(username, now)
                raise AccountLocked(f"{username} is now locked after {LOCK_AFTER} failed "
                                    "logins", rule="accounts.lockout", citation=citation)
            raise NotAuthenticated("wrong username or password", rule="accounts.login")
        self._db.execute("UPDATE accounts SET failed = 0, locked_until = NULL "
                         "WHERE username = ?", (username,))
        token = secrets.token_urlsafe(32)
        expires = (now + timedelta(hours=SESSION_HOURS)).isoformat()
        digest = token_digest(token)
        self._db.execute("INSERT INTO sessions (token, username, expires_at) VALUES (?, ?, ?)",
                         (digest, username, expires))
        self._record(username, "SessionOpened", session=digest, expires=expires)
        return token

    def _lock_account(self, username: str, now: datetime) -> None:
        self.sessions.forget_account(username)
        until = (now + timedelta(minutes=LOCK_MINUTES)).isoformat()
        self._db.execute("UPDATE accounts SET locked_until = ? WHERE username = ? AND "
                         "locked_until IS NULL", (until, username))
        self._record(username, "AccountLocked", until=until, after=LOCK_AFTER)

    def session(self, token: str | None) -> Account:
        """The account behind a session token, or ``NotAuthenticated`` (remembered for a few
        seconds: ``server.session_cache``)."""
        if not token:
            raise NotAuthenticated("log in first", rule="accounts.session")
        digest = token_digest(token)
        entry = self.sessions.get(digest)
        if entry is None:
            generation = self.sessions.generation()
            account, expires = self._session_from_db(digest)
            self.sessions.put(digest, account, account.username, expires, generation)
        else:
            account, expires = entry.account, entry.expires
        if expires <= self._now():
            self.sessions.forget_session(digest)
            raise NotAuthenticated("the session has expired; log in again",
                                   rule="accounts.session")
        return account

    def remembered(self, token: str) -> Account | None:
        """The account behind ``token`` if its session is remembered and unexpired, without
        reading the database (None: ask ``session``)."""
        entry = self.sessions.get(token_digest(token))
        if entry is None or entry.expires <= self._now():
            return None
        return entry.account

    def _session_from_db(self, digest: str) -> tuple[Account, datetime]:
        rows = self._db.execute("SELECT username, expires_at FROM sessions WHERE token = ?",
                                (digest,))
        if not rows:
            raise NotAuthenticated("the session has expired; log in again",
                                   rule="accounts.session")
        account = self.get(rows[0][0])
        if account is None:
            raise NotAuthenticated("no such account", rule="accounts.session")
        return account, datetime.fromisoformat(rows[0][1])

    def logout(self, token: str) -> None:
        digest = token_digest(token)
        self.sessions.forget_session(digest)
        rows = self._db.execute("DELETE FROM sessions WHERE token = ? RETURNING username",
                                (digest,))
        self.sessions.forget_session(digest)  # a lookup that raced the delete keeps nothing
        for (username,) in rows:
            self._record(str(username), "SessionClosed", session=digest)

    def unlock(self, username: str, *, by: str, role: str, via: str = "api") -> None:
        """Lift a lock: an authorised, recorded command (``by`` in ``role``), never one's own
        (spec/standards.md SEC-5: two people)."""
        if self.get(username) is None:
            raise InvalidInput(f"no account {username!r}", rule="accounts.username")
        if by == username:
            raise RoleNotPermitted(f"{by} may not unlock their own account",
                                   rule="duties.no_self",
                                   citation="spec/standards.md SEC-5 [industry-default]")
        # Recorded first: a process without the store's key is refused here, changing nothing.
        self._record(username, "AccountUnlocked", by=by, role=role, via=via)
        self.sessions.forget_account(username)
        self._db.execute("UPDATE accounts SET failed = 0, locked_until = NULL "
                         "WHERE username = ?", (username,))
        self.sessions.forget_account(username)

    @contextmanager
    def opened(self) -> Iterator[Accounts]:
        try:
            yield self
        finally:
            self.close()
