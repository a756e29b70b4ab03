"""Open a store from where it lives: ``memory``, a SQLite path, or a ``postgresql://`` URL."""

from __future__ import annotations

from pathlib import Path

from dicetable.store.base import EventStore


def is_postgres(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(location: str | Path, *, schema: str = "dicetable", create: bool = True,
               group_commit: bool = True, key: bytes | None = None) -> EventStore:
    """The store at ``location``. With ``create=False`` a missing log is an error.

    >>> open_store("memory").location
    'memory'
    """
    if is_postgres(location):
        from dicetable.store.postgres import PostgresStore  # psycopg only when asked for

        return PostgresStore(str(location), schema=schema, create=create,
                             group_commit=group_commit, key=key)
    if str(location) == "memory":
        from dicetable.store.memory import MemoryStore

        return MemoryStore(key=key)
    from dicetable.store.sqlite import SqliteStore

    return SqliteStore(location, create=create, group_commit=group_commit, key=key)
