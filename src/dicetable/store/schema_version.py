"""The store's layout version, and the migrations between versions: each runs once and is
recorded (``MigrationApplied`` in ``operations:floor``).

Versions (what each layout holds):

1. a log written before the keyed chain: SHA-256 links anyone can recompute, no key id;
2. the keyed chain: HMAC-SHA256 links under a key kept outside the database, its id recorded
   (``chain_meta.key_id``);
3. the layout's version recorded in the store itself (``chain_meta.store_version``), and its
   migrations in its own log.

Every build reads every version as it is (tests/fixtures/golden: stores written by older
commits). ``dicetable upgrade`` brings a store to ``CURRENT``: 1 -> 2 verifies the unkeyed
chain whole, then re-links every stream under the key in one transaction (snapshots re-signed,
request keys and archives untouched) and records the unkeyed heads it replaced; 2 -> 3 records
the version. Each step writes the new version, and a note that it is still to be recorded, in
the same transaction as its change; the record follows, and an upgrade that stopped before it
is recorded by the next one.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store import operations_stream
from dicetable.store.audit import verify_store
from dicetable.store.chain import StoredEvent, canonical, key_id, link_hash, snapshot_digest
from dicetable.store.open import is_postgres, open_store
from dicetable.store.versioned import folded

CURRENT = 3
NAMES = {2: "keyed-chain", 3: "record-store-version"}


@dataclass(frozen=True)
class Step:
    version_from: int
    version_to: int
    name: str
    detail: str


class StoreSql:
    """The few statements a migration needs, on SQLite or PostgreSQL (one transaction)."""

    def __init__(self, db: str, schema: str) -> None:
        self.pg = is_postgres(db)
        self.schema = schema
        if self.pg:
            import psycopg

            self.conn: Any = psycopg.connect(db)
            self.mark = "%s"
        else:
            self.conn = sqlite3.connect(db, isolation_level=None)
            self.conn.execute("PRAGMA busy_timeout=30000")
            self.mark = "?"

    def q(self, name: str) -> str:
        """A table's name as the statements write it (schema-qualified on PostgreSQL)."""
        return f'"{self.schema}".{name}' if self.pg else name

    def begin(self) -> None:
        """The migration's one transaction (SQLite: the write lock taken up front)."""
        if not self.pg:
            self.conn.execute("BEGIN IMMEDIATE")

    def run(self, text: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        cur = self.conn.execute(text.replace("?", self.mark), args)
        try:
            return list(cur.fetchall())
        except Exception:  # a statement with no rows to fetch
            return []

    def many(self, text: str, rows: list[tuple[Any, ...]]) -> None:
        if self.pg:
            with self.conn.cursor() as cur:
                cur.executemany(text.replace("?", self.mark), rows)
        else:
            self.conn.executemany(text, rows)

    def meta(self, name: str) -> str | None:
        rows = self.run(f"SELECT value FROM {self.q('chain_meta')} WHERE name = ?", (name,))
        return None if not rows else str(rows[0][0])

    def set_meta(self, name: str, value: str) -> None:
        self.run(f"DELETE FROM {self.q('chain_meta')} WHERE name = ?", (name,))
        self.run(f"INSERT INTO {self.q('chain_meta')} (name, value) VALUES (?, ?)",
                 (name, value))

    def commit(self) -> None:
        self.conn.execute("COMMIT") if not self.pg else self.conn.commit()

    def close(self) -> None:
        if not self.pg and self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.conn.close()


def _tables(db: str, schema: str) -> None:
    """Open the store once: its missing tables (an older layout's) are created empty."""
    open_store(db, schema=schema, create=is_postgres(db), group_commit=False).close()


def version_of(db: str | Path, schema: str = "dicetable") -> int:
    """The layout version of the store at ``db`` (see the module)."""
    _tables(str(db), schema)
    conn = StoreSql(str(db), schema)
    try:
        return version_in(conn)
    finally:
        conn.close()


def version_in(conn: StoreSql) -> int:
    recorded = conn.meta("store_version")
    if recorded is not None:
        return int(recorded)
    return 2 if conn.meta("key_id") else 1


def upgrade(db: str, key: bytes | None, *, schema: str = "dicetable",
            now: str | None = None) -> list[Step]:
    """Run every migration the store at ``db`` still needs, each once, and record it.
    Returns the steps taken (empty: the store was current)."""
    at = now or datetime.now(UTC).isoformat()
    _tables(db, schema)
    done: list[Step] = []
    while True:
        conn = StoreSql(db, schema)
        try:
            version = version_in(conn)
            if version >= CURRENT:
                break
            if version == 1:
                _verify_unkeyed(db, schema, key)
            conn.begin()
            step = STEPS[version](conn, key)
            if step.version_to >= 3:  # from here the store says its version itself
                conn.set_meta("store_version", str(step.version_to))
            # The step and the note that it is still to be recorded commit together: an
            # upgrade stopped before its record is recorded by the next one.
            conn.set_meta(UNRECORDED, json.dumps([*_unrecorded(conn), asdict(step)]))
            conn.commit()
        finally:
            conn.close()
        done.append(step)
    _record(db, schema, key, at)
    return done


UNRECORDED = "unrecorded_migrations"


def _unrecorded(conn: StoreSql) -> list[dict[str, Any]]:
    held = conn.meta(UNRECORDED)
    return [] if held is None else list(json.loads(held))


def _record(db: str, schema: str, key: bytes | None, at: str) -> None:
    """Record the steps committed and not yet recorded, then forget the note."""
    conn = StoreSql(db, schema)
    try:
        pending = [Step(**s) for s in _unrecorded(conn)]
    finally:
        conn.close()
    if not pending:
        return
    store = open_store(db, schema=schema, create=False, key=key)
    try:
        state = folded(store, operations_stream.STREAM, operations_stream.OperationsState,
                       operations_stream.apply)
        events = [operations_stream.MigrationApplied(
            seq=state.seq + 1 + i, at=at, version_from=step.version_from,
            version_to=step.version_to, name=step.name, detail=step.detail)
            for i, step in enumerate(s for s in pending if s.version_to > state.schema_version)]
        if events:
            store.append(operations_stream.STREAM, events, expected=state.seq, request="")
    finally:
        store.close()
    conn = StoreSql(db, schema)
    try:
        conn.begin()
        conn.run(f"DELETE FROM {conn.q('chain_meta')} WHERE name = ?", (UNRECORDED,))
        conn.commit()
    finally:
        conn.close()


def _verify_unkeyed(db: str, schema: str, key: bytes | None) -> None:
    """Before 1 -> 2: a key to link with, and the unkeyed chain verified whole."""
    if not key:
        raise InvalidInput("an unkeyed store is upgraded to the keyed chain with a key "
                           "(dicetable keys init; --key)", rule="store.key")
    verify_whole(db, schema, None, "unkeyed chain")


def verify_whole(db: str, schema: str, key: bytes | None, what: str) -> None:
    """Every stream's chain verified under ``key`` (refused, naming the first problems)."""
    store = open_store(db, schema=schema, create=False, key=key, group_commit=False)
    try:
        bad = [f"{r.table}: {p}" for r in verify_store(store, replay=False)
               for p in r.problems]
    finally:
        store.close()
    if bad:
        raise InvalidInput(f"the {what} does not verify, so it is not re-keyed: "
                           f"{'; '.join(bad[:5])}", rule="store.upgrade")


def _keyed_chain(conn: StoreSql, key: bytes | None) -> Step:
    """1 -> 2: every link re-made under the key (the unkeyed chain was verified first)."""
    return relink(conn, key, 1, 2, NAMES[2], "unkeyed_heads")


def relink(conn: StoreSql, key: bytes | None, version_from: int, version_to: int, name: str,
           replaced: str, *, archived: dict[str, list[StoredEvent]] | None = None,
           renamed: dict[str, str] | None = None) -> Step:
    """Every stream's links re-made under ``key`` from the stored bodies, its snapshots
    re-signed and its head moved, in ``conn``'s transaction; the heads replaced are kept in
    the step's detail (``replaced``). A store with archives is re-linked only given their
    rows (``archived``, each stream's, verified, in order): the chain runs through them, and
    ``renamed`` is given every old hash's new one, for the files to be written again."""
    assert key is not None
    if archived is None and conn.run(f"SELECT 1 FROM {conn.q('archives')} LIMIT 1"):
        raise InvalidInput("a store with archives cannot be re-keyed here (each archive file "
                           "is signed with the key it was written with)", rule="store.upgrade")
    old_heads: dict[str, list[Any]] = {}
    streams = [str(r[0]) for r in conn.run(f"SELECT table_id FROM {conn.q('table_heads')} "
                                           "ORDER BY table_id")]
    events = 0
    for stream in streams:
        rows = conn.run(f"SELECT seq, body, hash FROM {conn.q('event_log')} WHERE table_id = ? "
                        "ORDER BY seq", (stream,))
        prev = "0" * 64
        new: list[tuple[Any, ...]] = []
        by_old: dict[str, str] = {}
        for row in (archived or {}).get(stream, []):  # the archived links come first
            prev = by_old[row.hash] = link_hash(prev, row.body, key)
        for seq, body, old in rows:
            h = link_hash(prev, body, key)
            new.append((prev, h, stream, seq))
            by_old[str(old)] = h
            prev = h
        conn.many(f"UPDATE {conn.q('event_log')} SET prev_hash = ?, hash = ? "
                  "WHERE table_id = ? AND seq = ?", new)
        head = conn.run(f"SELECT seq, hash FROM {conn.q('table_heads')} WHERE table_id = ?",
                        (stream,))[0]
        old_heads[stream] = [int(head[0]), str(head[1])]
        conn.run(f"UPDATE {conn.q('table_heads')} SET hash = ? WHERE table_id = ?",
                 (by_old.get(str(head[1]), head[1]), stream))
        snaps = conn.run(f"SELECT seq, event_hash, body FROM {conn.q('snapshots')} "
                         "WHERE table_id = ?", (stream,))
        conn.many(f"UPDATE {conn.q('snapshots')} SET event_hash = ?, digest = ? "
                  "WHERE table_id = ? AND seq = ?",
                  [(by_old[str(eh)], snapshot_digest(stream, int(s), by_old[str(eh)], str(b),
                                                     key), stream, s)
                   for s, eh, b in snaps if str(eh) in by_old])
        events += len(rows) + len((archived or {}).get(stream, []))
        if renamed is not None:
            renamed.update(by_old)
    conn.set_meta("key_id", key_id(key))
    digest = hashlib.sha256(canonical(old_heads).encode()).hexdigest()
    return Step(version_from, version_to, name, json.dumps({
        "events": events, "streams": len(streams), "key_id": key_id(key),
        f"{replaced}_sha256": digest, replaced: old_heads}, sort_keys=True))


def _record_version(conn: StoreSql, key: bytes | None) -> Step:
    """2 -> 3: the version is written in the store (``upgrade`` writes it)."""
    return Step(2, 3, NAMES[3], "chain_meta.store_version recorded")


STEPS: dict[int, Callable[[StoreSql, bytes | None], Step]] = {
    1: _keyed_chain, 2: _record_version}

UPGRADE_MODES = ("auto", "refuse")
UPGRADE_ENV = "DICETABLE_UPGRADE"
"""``dicetable serve --upgrade``'s default: ``auto`` (industry-default: a release brings the
stores it serves to its layout, recorded) or ``refuse`` (an operator who upgrades by hand)."""


def upgrade_on_start(db: str, key: bytes | None, *, schema: str = "dicetable",
                     mode: str = "auto") -> list[Step]:
    """What ``dicetable serve`` does before it opens a store: one at an older layout is
    upgraded (``upgrade``: each step once, recorded) holding the store alone (refused while
    another server serves it), or, with ``mode`` ``refuse``, not served. A store with no
    log yet (a new one) is left as it is."""
    if mode not in UPGRADE_MODES:
        raise InvalidInput(f"--upgrade {mode!r}: one of {', '.join(UPGRADE_MODES)}",
                           rule="store.version")
    if db == "memory":
        return []
    try:
        store = open_store(db, schema=schema, create=False, group_commit=False)
    except InvalidInput:
        return []
    try:
        fresh = not store.stream_ids()
    finally:
        store.close()
    version = 0 if fresh else version_of(db, schema)
    if fresh or version >= CURRENT:
        return []
    if mode == "refuse":
        raise InvalidInput(f"{db} is at store version {version}; this dicetable serves version "
                           f"{CURRENT}: back it up and run dicetable upgrade, or serve with "
                           "--upgrade auto", rule="store.version")
    from dicetable.store.serving import exclusive

    with exclusive(db, "upgrade", schema):
        return upgrade(db, key, schema=schema)
