"""Which process owns which table, kept in PostgreSQL (``server.owners``' split, started only
when ``DICETABLE_WORKERS`` > 1 on a PostgreSQL store): a module of its own so that a server on
SQLite, and every CLI command and test that imports the server, never imports psycopg (0.12 s)."""

from __future__ import annotations

import logging
import math
import os
import threading
import time
import zlib

import psycopg
from psycopg import sql

from dicetable.store.postgres import lock_schema_ddl

log = logging.getLogger(__name__)

REBALANCE_SECONDS = 2.0


def _key(schema: str, table: str) -> int:
    """A 64-bit advisory-lock key for (schema, table)."""
    return (zlib.crc32(schema.encode()) << 31) ^ zlib.crc32(table.encode())


class TableOwners:
    """This process's share of the tables, and who owns the others."""

    def __init__(self, conninfo: str, schema: str, tables: list[str], *, workers: int,
                 url: str) -> None:
        self.schema = schema
        self.url = url
        self.workers = max(1, workers)
        self.pid = os.getpid()
        self._tables = sorted(tables)
        self._owned: set[str] = set()
        self._lock = threading.Lock()
        self._conn = psycopg.connect(conninfo, autocommit=True)
        self._reader = psycopg.connect(conninfo, autocommit=True)
        self._registry = sql.Identifier(schema, "table_owners")
        with self._conn.transaction():  # processes starting together create it once
            lock_schema_ddl(self._conn, schema)
            self._conn.execute(sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (table_id TEXT PRIMARY KEY, url TEXT NOT NULL, "
                "pid INTEGER NOT NULL)").format(self._registry))
        self._cache: dict[str, tuple[float, str | None]] = {}
        self._stop = threading.Event()
        self.place = self._take_place()
        self.claim()
        self._thread = threading.Thread(target=self._rebalance, daemon=True,
                                        name="dicetable-owners")
        self._thread.start()

    @property
    def share(self) -> int:
        return math.ceil(len(self._tables) / self.workers)

    def owned(self) -> list[str]:
        with self._lock:
            return sorted(self._owned)

    def owns(self, table: str) -> bool:
        with self._lock:
            return table in self._owned

    def _take_place(self) -> int:
        """This process's place among the floor's processes (0 to ``workers`` - 1): the first
        whose advisory lock is free, held while the process lives (one started again takes the
        place its predecessor left; more processes than places share by pid)."""
        for place in range(self.workers):
            got = self._conn.execute("SELECT pg_try_advisory_lock(%s)",
                                     (_key(self.schema, f"\0place {place}"),)).fetchone()
            if got and got[0]:
                return place
        return self.pid % self.workers

    def claim(self) -> None:
        """Take unowned tables up to the fair share: first every ``workers``-th of the sorted
        names from this process's place, then any left. Tables named alike (a bank of craps
        tables, sorted together) are so spread between the processes, not run of them to
        one, and processes starting together try different tables first."""
        with self._lock:
            mine = self._tables[self.place::self.workers]
            taken = set(mine)
            for table in mine + [t for t in self._tables if t not in taken]:
                if len(self._owned) >= self.share:
                    break
                if table in self._owned:
                    continue
                got = self._conn.execute("SELECT pg_try_advisory_lock(%s)",
                                         (_key(self.schema, table),)).fetchone()
                if got and got[0]:
                    self._owned.add(table)
                    self._conn.execute(sql.SQL(
                        "INSERT INTO {} (table_id, url, pid) VALUES (%s, %s, %s) "
                        "ON CONFLICT (table_id) DO UPDATE SET url = EXCLUDED.url, "
                        "pid = EXCLUDED.pid").format(self._registry),
                        (table, self.url, self.pid))

    def owner_url(self, table: str) -> str | None:
        """Where the owner of ``table`` listens (cached for a second), or None."""
        now = time.monotonic()
        hit = self._cache.get(table)
        if hit is not None and now - hit[0] < 1.0:
            return hit[1]
        with self._lock:
            row = self._reader.execute(sql.SQL("SELECT url FROM {} WHERE table_id = %s").format(
                self._registry), (table,)).fetchone()
        url = str(row[0]) if row else None
        self._cache[table] = (now, url)
        return url

    def forget(self, table: str) -> None:
        self._cache.pop(table, None)

    def _rebalance(self) -> None:
        while not self._stop.wait(REBALANCE_SECONDS):
            try:
                self.claim()
            except Exception:  # the database went away for a moment: try again later
                log.exception("claiming tables failed")

    def close(self) -> None:
        self._stop.set()
        for conn in (self._conn, self._reader):
            try:
                conn.close()  # the advisory locks go with the session
            except Exception:
                log.exception("closing the owners' connection failed")
