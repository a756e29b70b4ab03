"""Fixtures: one store per backend (memory, SQLite file, PostgreSQL schema), cleaned up after.

PostgreSQL is the real server on 127.0.0.1:5432, database ``test`` (or ``DICETABLE_PG_URL``).
Each test gets its own schema, dropped afterwards. Where no server answers the PostgreSQL tests
skip, except in CI (``DICETABLE_CI=1``), where they fail: they never skip silently there.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dicetable.store.base import EventStore
from dicetable.store.memory import MemoryStore
from dicetable.store.sqlite import SqliteStore

BACKENDS = ["memory", "sqlite", "postgres"]

_CANDIDATES = [
    "postgresql://postgres@127.0.0.1:5432/test",
    "postgresql://root@127.0.0.1:5432/test",
]
_pg_found: list[str | None] = []


def _find_pg() -> str | None:
    if _pg_found:
        return _pg_found[0]
    import psycopg

    urls = [os.environ["DICETABLE_PG_URL"]] if os.environ.get("DICETABLE_PG_URL") \
        else _CANDIDATES
    found = None
    reasons = []
    for url in urls:
        try:
            with psycopg.connect(url, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            found = url
            break
        except psycopg.Error as e:
            reasons.append(f"{url}: {str(e).strip().splitlines()[0] if str(e) else e!r}")
    _pg_found.append(found)
    if found is None:
        _pg_reasons.extend(reasons)
    return found


_pg_reasons: list[str] = []


@pytest.fixture
def pg_url() -> str:
    return pg_url_or_skip()


def pg_url_or_skip() -> str:
    """A PostgreSQL URL that answers; otherwise skip, or fail under ``DICETABLE_CI=1``."""
    url = _find_pg()
    if url is None:
        why = "no PostgreSQL server answers: " + "; ".join(_pg_reasons)
        if os.environ.get("DICETABLE_CI") == "1":
            pytest.fail(f"DICETABLE_CI=1 and {why}")
        pytest.skip(why)
    return url


StoreFactory = Callable[[], EventStore]
"""Opens another handle on the same log (as a second process would)."""


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_factory(backend: str, tmp_path: Path,
                  request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    opened: list[EventStore] = []
    if backend == "memory":
        shared = MemoryStore()

        def make() -> EventStore:
            return shared
        opened.append(shared)
    elif backend == "sqlite":
        path = tmp_path / "log.db"

        def make() -> EventStore:
            s = SqliteStore(path)
            opened.append(s)
            return s
    else:
        url = request.getfixturevalue("pg_url")
        from dicetable.store.postgres import PostgresStore

        schema = f"dt_test_{uuid.uuid4().hex[:12]}"

        def make() -> EventStore:
            s = PostgresStore(url, schema=schema)
            opened.append(s)
            return s
    yield make
    for s in opened:
        s.close()
    if backend == "postgres":
        from dicetable.store.postgres import drop_schema

        drop_schema(request.getfixturevalue("pg_url"), schema)


@pytest.fixture
def store(store_factory: StoreFactory) -> EventStore:
    return store_factory()
