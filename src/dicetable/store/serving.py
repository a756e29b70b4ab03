"""Who holds a store: a serving floor shares it, a restore takes it alone.

``dicetable serve`` holds the store's serving lock, shared, for as long as it runs (workers
and several machines on one PostgreSQL store share it together); ``dicetable restore`` takes
it exclusively for the whole restore, so it is refused while any server serves the store, and
no server starts on a store being restored. ``dicetable upgrade``, ``dicetable keys rotate``
and ``dicetable archive`` rewrite the store too and take it the same way. The lock is the
operating system's or the database's, never a file's contents: a process killed lets it go at
once, so a crash leaves nothing stale to clear by hand.

- SQLite: ``flock`` on the file ``DB.serving`` beside the store (created, never removed);
- PostgreSQL: an advisory lock on the store's schema (``pg_advisory_lock_shared`` on a
  connection the server keeps open; ``pg_try_advisory_lock`` for the restore).

>>> import tempfile, pathlib
>>> db = str(pathlib.Path(tempfile.mkdtemp()) / "floor.db")
>>> serving = hold_serving(db)
>>> try:
...     with exclusive(db, "restore"):
...         pass
... except InvalidInput as e:
...     e.rule
'store.serving'
>>> serving.release()
>>> with exclusive(db, "restore"):
...     pass
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store.open import is_postgres

LOCK_CLASS = 0x44_54  # "DT": the first key of the advisory lock (the schema's hash is the second)
RULE = "store.serving"
"""The rule a refusal names: one store, served or restored, never both at once
(industry-default: a restore replaces the store under a running server otherwise)."""


def lock_path(db: str) -> Path:
    return Path(f"{db}.serving")


class Held:
    """A serving lock held by this process; ``release`` lets it go (exit does too)."""

    def __init__(self, release: Any) -> None:
        self._release = release

    def release(self) -> None:
        if self._release is not None:
            self._release()
            self._release = None


def _flock(db: str, mode: int, why: str) -> Held:
    fd = os.open(lock_path(db), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise InvalidInput(why, rule=RULE) from None

    def release() -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    return Held(release)


def _advisory(db: str, schema: str, shared: bool, why: str) -> Held:
    import psycopg

    conn = psycopg.connect(db, autocommit=True)
    verb = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
    row = conn.execute(f"SELECT {verb}(%s, hashtext(%s))", (LOCK_CLASS, schema)).fetchone()
    if not row or not row[0]:
        conn.close()
        raise InvalidInput(why, rule=RULE)
    unlock = "pg_advisory_unlock_shared" if shared else "pg_advisory_unlock"

    def release() -> None:
        # Unlocked in the session, not left to the backend's exit after the close: that is
        # asynchronous, and a restore asked for at once was refused while it lingered.
        try:
            conn.execute(f"SELECT {unlock}(%s, hashtext(%s))", (LOCK_CLASS, schema))
        except psycopg.Error:
            pass  # a broken session holds nothing: its end let the lock go
        finally:
            conn.close()

    return Held(release)


def hold_serving(db: str, schema: str = "dicetable") -> Held:
    """The serving lock, shared; refused while a restore holds the store."""
    why = (f"{db} is being restored (dicetable restore holds it); serve it once the restore "
           "has finished")
    if is_postgres(db):
        return _advisory(db, schema, True, why)
    if db == "memory":
        return Held(None)
    return _flock(db, fcntl.LOCK_SH, why)


@contextmanager
def exclusive(db: str, what: str, schema: str = "dicetable") -> Iterator[None]:
    """The store alone for ``what`` (a restore, an upgrade, a key rotation, an archive run):
    refused while a server serves it."""
    why = (f"a server is serving {db}" + (f" (schema {schema})" if is_postgres(db) else "")
           + f"; stop every server on it before the {what}")
    if is_postgres(db):
        held = _advisory(db, schema, False, why)
    elif db == "memory":
        held = Held(None)
    else:
        held = _flock(db, fcntl.LOCK_EX, why)
    try:
        yield
    finally:
        held.release()
