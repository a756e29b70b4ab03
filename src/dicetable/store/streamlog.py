"""Chained streams for what is not a table: accounts, sessions, staff changes, faults.

Each stream (``account:alice``, ``staff:craps-pa-1``, ``faults``) is a log of JSON records
with the same chain as a table's log (``chain.link_hash``, keyed when the store is) and its
own head, in the same database as the table log (SQLite file or PostgreSQL schema, tables
``stream_log`` and ``stream_heads``), so ``audit verify`` and the checkpoints cover it too.

>>> log = StreamLog("memory")
>>> row = log.append("account:alice", "AccountCreated", {"kind": "player"})
>>> row.seq, [p for p in verify_stream(log, "account:alice")]
(1, [])
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store.base import key_mismatch
from dicetable.store.chain import EMPTY, GENESIS, Head, StoredEvent, canonical, key_id, link_hash

_DDL = (
    """CREATE TABLE IF NOT EXISTS stream_log (
        stream TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
        prev_hash TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (stream, seq))""",
    """CREATE TABLE IF NOT EXISTS stream_heads (
        stream TEXT PRIMARY KEY, seq BIGINT NOT NULL, hash TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS chain_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)""",
)


@dataclass(frozen=True)
class StreamProblem:
    stream: str
    seq: int
    what: str
    detail: str

    def __str__(self) -> str:
        return f"{self.stream} seq {self.seq}: {self.what} - {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.stream, "seq": self.seq, "what": self.what,
                "detail": self.detail}


class StreamLog:
    """Chained streams in ``location`` (``memory``, a SQLite path, a PostgreSQL URL)."""

    def __init__(self, location: str | Path = "memory", *, schema: str = "dicetable",
                 key: bytes | None = None) -> None:
        self.key = key
        self._lock = threading.Lock()
        text = str(location)
        self._pg = text.startswith(("postgresql://", "postgres://"))
        self._mem: dict[str, list[StoredEvent]] | None = None
        if text == "memory":
            self._mem = {}
            return
        if self._pg:
            import psycopg

            self._conn: Any = psycopg.connect(text, autocommit=True)
            self._conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            self._conn.execute(f'SET search_path TO "{schema}"')
        else:
            self._conn = sqlite3.connect(text, check_same_thread=False, timeout=30,
                                         isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
        for statement in _DDL:
            self._exec(statement)

    def _exec(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self._pg:
            cur = self._conn.execute(sql.replace("?", "%s"), params)
            return list(cur.fetchall()) if cur.description else []
        return list(self._conn.execute(sql, params).fetchall())

    def close(self) -> None:
        if self._mem is None:
            self._conn.close()

    @property
    def location(self) -> str:
        return "memory" if self._mem is not None else "database"

    # -- writing ------------------------------------------------------------------------------
    def append(self, stream: str, kind: str, data: dict[str, Any]) -> StoredEvent:
        """Append one record; atomic with the head's move (one writer per stream at once)."""
        if not stream:
            raise InvalidInput("a stream name is required", rule="store.stream")
        with self._lock:
            if self._mem is not None:
                rows = self._mem.setdefault(stream, [])
                head = Head(rows[-1].seq, rows[-1].hash) if rows else EMPTY
                row = self._row(stream, head, kind, data)
                rows.append(row)
                return row
            begin = "BEGIN" if self._pg else "BEGIN IMMEDIATE"
            self._exec(begin)
            try:
                self._claim_key()
                found = self._exec("SELECT seq, hash FROM stream_heads WHERE stream = ?"
                                   + (" FOR UPDATE" if self._pg else ""), (stream,))
                head = Head(int(found[0][0]), str(found[0][1])) if found else EMPTY
                row = self._row(stream, head, kind, data)
                self._exec("INSERT INTO stream_log VALUES (?, ?, ?, ?, ?, ?)",
                           (row.table, row.seq, row.kind, row.body, row.prev_hash, row.hash))
                self._exec("INSERT INTO stream_heads VALUES (?, ?, ?) ON CONFLICT (stream) "
                           "DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
                           (stream, row.seq, row.hash))
                self._exec("COMMIT")
            except BaseException:
                self._exec("ROLLBACK")
                raise
            return row

    def _row(self, stream: str, head: Head, kind: str, data: dict[str, Any]) -> StoredEvent:
        seq = head.seq + 1
        body = canonical({"type": kind, "stream": stream, "seq": seq, **data})
        return StoredEvent(stream, seq, kind, body, head.hash,
                           link_hash(head.hash, body, self.key))

    def _claim_key(self) -> None:
        found = self._exec("SELECT value FROM chain_meta WHERE name = 'key_id'")
        if not found:
            used = bool(self._exec("SELECT 1 FROM stream_log LIMIT 1"))
            recorded = "" if used else key_id(self.key)
            self._exec("INSERT INTO chain_meta VALUES ('key_id', ?) ON CONFLICT DO NOTHING",
                       (recorded,))
        else:
            recorded = str(found[0][0])
        if recorded != key_id(self.key):
            raise key_mismatch(recorded, key_id(self.key), self.location)

    # -- reading (the same names as a table store's, so audits and checkpoints take both) ---
    def tables(self) -> list[str]:
        """Every stream with at least one record, sorted."""
        if self._mem is not None:
            with self._lock:
                return sorted(s for s, rows in self._mem.items() if rows)
        with self._lock:
            return [str(r[0]) for r in self._exec(
                "SELECT stream FROM stream_heads UNION SELECT DISTINCT stream FROM stream_log "
                "ORDER BY 1")]

    def head(self, stream: str) -> Head:
        if self._mem is not None:
            with self._lock:
                rows = self._mem.get(stream, [])
                return Head(rows[-1].seq, rows[-1].hash) if rows else EMPTY
        with self._lock:
            found = self._exec("SELECT seq, hash FROM stream_heads WHERE stream = ?", (stream,))
        return Head(int(found[0][0]), str(found[0][1])) if found else EMPTY

    def records(self, stream: str, after: int = 0,
                until: int | None = None) -> Iterator[StoredEvent]:
        end = until if until is not None else 2**62
        if self._mem is not None:
            with self._lock:
                rows = list(self._mem.get(stream, []))
            yield from (r for r in rows if after < r.seq <= end)
            return
        with self._lock:
            found = self._exec("SELECT stream, seq, kind, body, prev_hash, hash FROM stream_log "
                               "WHERE stream = ? AND seq > ? AND seq <= ? ORDER BY seq",
                               (stream, after, end))
        for r in found:
            yield StoredEvent(str(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]))

    def recorded_key_id(self) -> str | None:
        if self._mem is not None:
            return key_id(self.key)
        with self._lock:
            found = self._exec("SELECT value FROM chain_meta WHERE name = 'key_id'")
        return str(found[0][0]) if found else None

    # -- for tests that play the insider -------------------------------------------------------
    def tamper(self, stream: str, seq: int, body: str) -> None:
        if self._mem is not None:
            rows = self._mem[stream]
            i = next(i for i, r in enumerate(rows) if r.seq == seq)
            old = rows[i]
            rows[i] = StoredEvent(old.table, old.seq, old.kind, body, old.prev_hash, old.hash)
            return
        with self._lock:
            self._exec("UPDATE stream_log SET body = ? WHERE stream = ? AND seq = ?",
                       (body, stream, seq))


def verify_stream(log: StreamLog, stream: str) -> list[StreamProblem]:
    """The stream's first broken link, if any: content, order, gaps, and its recorded head."""
    recorded = log.recorded_key_id()
    if (recorded or "") != key_id(log.key) and log.head(stream).seq:
        return [StreamProblem(stream, 0, "key", "the stream's chain is not written with the "
                                                "key in hand")]
    expected, prev = 1, GENESIS
    last: StoredEvent | None = None
    for row in log.records(stream):
        if row.seq != expected:
            return [StreamProblem(stream, expected, "deleted",
                                  f"the stream jumps from {expected - 1} to {row.seq}")]
        if row.prev_hash != prev:
            return [StreamProblem(stream, row.seq, "altered",
                                  f"not chained to record {row.seq - 1}")]
        if link_hash(row.prev_hash, row.body, log.key) != row.hash:
            return [StreamProblem(stream, row.seq, "altered",
                                  "its content does not match its hash")]
        expected, prev, last = row.seq + 1, row.hash, row
    head = log.head(stream)
    if (last.seq if last else 0) != head.seq or (last is not None and last.hash != head.hash):
        return [StreamProblem(stream, head.seq, "deleted",
                              "the stream does not end at the head recorded for it")]
    return []


def verify_streams(log: StreamLog) -> list[StreamProblem]:
    out: list[StreamProblem] = []
    for stream in log.tables():
        out += verify_stream(log, stream)
    return out
