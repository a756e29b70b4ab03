"""Staff and player accounts: hashed passwords, session tokens, lockout after failed logins.

Passwords are hashed with Argon2id (argon2-cffi). An account locks after
``LOCK_AFTER`` consecutive failed logins (N.J.A.C. 13:69E-1.37A(b): lock an account after three
failed attempts, spec/standards.md SEC-4, other-jurisdiction) for ``LOCK_MINUTES`` minutes
(industry-default), or until a pit boss unlocks it. A session token is 32 random bytes
(``secrets``) and expires after ``SESSION_HOURS``.

The accounts live beside the table log: in the same SQLite file (their own tables) or the
same PostgreSQL schema. Which role a staff member holds at a table is not stored here: it is
the table's own log (``StaffAssigned``) that says so.
"""

from __future__ import annotations

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
from dicetable.core.errors import DicetableError, InvalidInput

LOCK_AFTER = 3
"""Failed logins that lock an account (N.J.A.C. 13:69E-1.37A(b), other-jurisdiction)."""
LOCK_MINUTES = 30
"""How long a lock lasts unless a pit boss lifts it first (industry-default)."""
SESSION_HOURS = 12
"""A session token's life: one shift (industry-default)."""


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
                 clock: Clock | None = None) -> None:
        text = str(location)
        if text.startswith(("postgresql://", "postgres://")):
            self._db: _Sqlite | _Postgres = _Postgres(text, schema)
        else:
            self._db = _Sqlite(":memory:" if text == "memory" else text)
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._hasher = PasswordHasher()
        self.clock: Clock = clock or SystemClock()

    def close(self) -> None:
        self._db.close()

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
        rows = self._db.execute("SELECT password_hash, failed, locked_until FROM accounts "
                                "WHERE username = ?", (username,))
        if not rows:
            self._hasher.hash(password)  # spend the same time as a real check
            raise NotAuthenticated("wrong username or password", rule="accounts.login")
        stored, failed, locked_until = rows[0]
        now = self._now()
        if locked_until and datetime.fromisoformat(locked_until) > now:
            raise AccountLocked(f"{username} is locked after {LOCK_AFTER} failed logins "
                                f"until {locked_until}", rule="accounts.lockout",
                                citation="N.J.A.C. 13:69E-1.37A(b) [other-jurisdiction]")
        try:
            self._hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            failed = int(failed) + 1
            lock = (now + timedelta(minutes=LOCK_MINUTES)).isoformat() \
                if failed >= LOCK_AFTER else None
            self._db.execute("UPDATE accounts SET failed = ?, locked_until = ? "
                             "WHERE username = ?", (0 if lock else failed, lock, username))
            if lock:
                raise AccountLocked(f"{username} is now locked after {LOCK_AFTER} failed "
                                    "logins", rule="accounts.lockout",
                                    citation="N.J.A.C. 13:69E-1.37A(b) [other-jurisdiction]") \
                    from None
            raise NotAuthenticated("wrong username or password", rule="accounts.login") \
                from None
        self._db.execute("UPDATE accounts SET failed = 0, locked_until = NULL "
                         "WHERE username = ?", (username,))
        token = secrets.token_urlsafe(32)
        expires = (now + timedelta(hours=SESSION_HOURS)).isoformat()
        self._db.execute("INSERT INTO sessions (token, username, expires_at) VALUES (?, ?, ?)",
                         (token, username, expires))
        return token

    def session(self, token: str | None) -> Account:
        """The account behind a session token, or ``NotAuthenticated``."""
        if not token:
            raise NotAuthenticated("log in first", rule="accounts.session")
        rows = self._db.execute("SELECT username, expires_at FROM sessions WHERE token = ?",
                                (token,))
        if not rows or datetime.fromisoformat(rows[0][1]) <= self._now():
            raise NotAuthenticated("the session has expired; log in again",
                                   rule="accounts.session")
        account = self.get(rows[0][0])
        if account is None:
            raise NotAuthenticated("no such account", rule="accounts.session")
        return account

    def logout(self, token: str) -> None:
        self._db.execute("DELETE FROM sessions WHERE token = ?", (token,))

    def unlock(self, username: str) -> None:
        if self.get(username) is None:
            raise InvalidInput(f"no account {username!r}", rule="accounts.username")
        self._db.execute("UPDATE accounts SET failed = 0, locked_until = NULL "
                         "WHERE username = ?", (username,))

    @contextmanager
    def opened(self) -> Iterator[Accounts]:
        try:
            yield self
        finally:
            self.close()
