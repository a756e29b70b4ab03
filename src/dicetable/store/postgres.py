"""PostgreSQL: one log shared by every server process on a casino floor (psycopg 3).

Several processes may append to the same tables. Each batch transaction locks the heads of
the tables it touches (in table order, so two writers never deadlock), checks each writer's
expected sequence number, writes the events and moves the heads. A writer that lost a race
gets ``StaleVersion``. Commits go through the same group committer as SQLite, so one process's
concurrent tables share a transaction. Every commit sends a NOTIFY that any process can
LISTEN for (``subscribe``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from dicetable.core.errors import InvalidInput
from dicetable.store.archive_file import Span
from dicetable.store.base import (
    LEGACY_TABLES,
    AppendRequest,
    EventStore,
    Listener,
    Notice,
    RequestRecord,
    Subscription,
    key_mismatch,
)
from dicetable.store.chain import EMPTY, GENESIS, Head, Snapshot, StoredEvent, canonical
from dicetable.store.sqlite import GroupCommitter, GroupWriter, Job, Readers, plan_batch
from dicetable.store.tables import postgres_tables

log = logging.getLogger(__name__)

_PAGE = 5000


def _ddl(schema: str) -> list[sql.Composed]:
    s = sql.Identifier(schema)
    return [sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(s),
            *(sql.SQL(stmt).format(s) for stmt in postgres_tables())]


def channel_for(schema: str) -> str:
    """The NOTIFY channel of a schema (an identifier of at most 63 bytes)."""
    name = f"dicetable_{schema}"
    if len(name.encode()) > 63:
        name = "dicetable_" + hashlib.sha256(schema.encode()).hexdigest()[:40]
    return name


def columns(rows: Sequence[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """The rows as ``width`` columns: one array parameter each, for one ``unnest`` insert
    (a statement for the batch, not one for each row).

    >>> columns([("a", 1), ("b", 2)], 2)
    [['a', 'b'], [1, 2]]
    >>> columns([], 2)
    [[], []]
    """
    return [[row[i] for row in rows] for i in range(width)]


def once_each(requests: list[tuple[str, str, int, int]]) -> list[tuple[str, str, int, int]]:
    """Request keys as one statement may write them: a key twice in a batch is written once,
    with its first sequence and its last (as two inserts in turn would leave it; one
    statement may not touch a row twice).

    >>> once_each([("r", "t", 1, 1), ("s", "t", 2, 2), ("r", "t", 3, 4)])
    [('r', 't', 1, 4), ('s', 't', 2, 2)]
    """
    merged: dict[str, tuple[str, str, int, int]] = {}
    for request, table, first, last in requests:
        seen = merged.get(request)
        merged[request] = (request, table, first, last) if seen is None \
            else (request, seen[1], seen[2], last)
    return list(merged.values())


def lock_schema_ddl(conn: psycopg.Connection[Any], schema: str) -> None:
    """Hold, until the transaction ends, the lock under which ``schema``'s tables are
    created: two processes creating them at once would collide in the catalog (``CREATE
    TABLE IF NOT EXISTS`` is not safe against a concurrent twin)."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)",
                 (int.from_bytes(hashlib.sha256(schema.encode()).digest()[:7], "big"),))


class PostgresStore(GroupWriter, EventStore):
    """A table log in a PostgreSQL schema (body kept as text: the hashed bytes, unchanged)."""

    def __init__(self, conninfo: str, *, schema: str = "dicetable", group_commit: bool = True,
                 create: bool = True, connect_timeout: int = 5,
                 key: bytes | None = None) -> None:
        super().__init__()
        self.key = key
        if not schema:
            raise InvalidInput("a schema name is required", rule="store.postgres")
        self._conninfo = make_conninfo(conninfo, connect_timeout=connect_timeout)
        self.schema = schema
        self.channel = channel_for(schema)
        self._t = {name: sql.Identifier(schema, name)
                   for name in ("event_log", "table_heads", "snapshots", "request_keys",
                                "chain_meta", "archives")}
        if create:
            self._create()
        elif not self._exists():
            raise InvalidInput(f"no dicetable log in schema {schema!r} at {self.location}",
                               rule="store.location")
        self._writer = psycopg.connect(self._conninfo, autocommit=True)
        self._write_lock = threading.Lock()
        self._readers: Readers[psycopg.Connection[Any]] = Readers(
            lambda: psycopg.connect(self._conninfo, autocommit=True), lambda: self._closed,
            usable=lambda conn: not conn.closed)
        self._committer: GroupCommitter | None = None
        self._group = group_commit
        self._closed = False
        self._listen_thread: threading.Thread | None = None
        self._listen_stop = threading.Event()
        self._listen_ready = threading.Event()
        self._span = 0
        self._heard_span = 0

    @property
    def conninfo(self) -> str:
        """How this store connects (for another connection to the same database)."""
        return self._conninfo

    @property
    def location(self) -> str:
        parts = {k: v for k, v in conninfo_to_dict(self._conninfo).items()
                 if k in ("host", "port", "dbname", "user")}
        return "postgresql://{user}@{host}:{port}/{dbname}".format(
            **{k: parts.get(k, "") for k in ("user", "host", "port", "dbname")}) \
            + f" schema {self.schema}"

    def _create(self) -> None:
        with psycopg.connect(self._conninfo, autocommit=True) as conn, conn.transaction():
            lock_schema_ddl(conn, self.schema)
            for stmt in _ddl(self.schema):
                conn.execute(stmt)

    def _exists(self) -> bool:
        with psycopg.connect(self._conninfo, autocommit=True) as conn:
            row = conn.execute("SELECT to_regclass(%s)",
                               (f'"{self.schema}".event_log',)).fetchone()
        return row is not None and row[0] is not None

    def _reader(self) -> psycopg.Connection[Any]:
        return self._readers.get()

    # -- writing ------------------------------------------------------------------------------
    @property
    def _writer_name(self) -> str:
        return self.schema

    def _write(self, jobs: list[Job]) -> None:
        # Two round trips to the server whatever the batch (pipeline mode): one to lock the
        # heads and read the recorded key, one to write, announce and commit. Each statement
        # awaited in turn cost nine, and a process's writer thread waited on them while its
        # answers queued behind it.
        t = self._t
        conn = self._writer
        if conn.closed or conn.broken:
            conn = self._writer = psycopg.connect(self._conninfo, autocommit=True)
        heads: dict[str, Head] = {}
        try:
            with conn.pipeline(), conn.transaction(), conn.cursor() as cur:
                tables = sorted({j.payload.table for j in jobs
                                 if isinstance(j.payload, AppendRequest)})
                if tables:
                    cur.execute(sql.SQL(
                        "INSERT INTO {} (table_id, seq, hash) "
                        "SELECT t, 0, %s FROM unnest(%s::text[]) AS t ORDER BY t "
                        "ON CONFLICT (table_id) DO NOTHING").format(t["table_heads"]),
                        (GENESIS, tables))
                    cur.execute(sql.SQL(
                        "SELECT table_id, seq, hash, (SELECT value FROM {} WHERE name = "
                        "'key_id') FROM {} WHERE table_id = ANY(%s) ORDER BY table_id "
                        "FOR UPDATE OF {}").format(t["chain_meta"], t["table_heads"],
                                                  sql.Identifier("table_heads")), (tables,))
                    recorded: str | None = None
                    for table_id, seq, h, key in cur.fetchall():
                        heads[table_id] = Head(int(seq), str(h))
                        recorded = None if key is None else str(key)
                    self._claim_key(cur, recorded)
                plan = plan_batch(jobs, heads, self.key)
                if plan.requests:
                    cur.execute(sql.SQL(
                        "INSERT INTO {} SELECT * FROM unnest(%s::text[], %s::text[], "
                        "%s::bigint[], %s::bigint[]) ON CONFLICT (request) DO "
                        "UPDATE SET last_seq = excluded.last_seq").format(t["request_keys"]),
                        columns(once_each(plan.requests), 4))
                for p in plan.snapshots:
                    cur.execute(sql.SQL(
                        "INSERT INTO {} VALUES (%s, %s, %s, %s, %s) "
                        "ON CONFLICT (table_id, seq) DO UPDATE SET event_hash = "
                        "excluded.event_hash, body = excluded.body, digest = excluded.digest"
                    ).format(t["snapshots"]), (p.table, p.seq, p.event_hash, p.body,
                                               p.digest))
                if plan.rows:
                    cur.execute(sql.SQL(
                        "INSERT INTO {} (table_id, seq, kind, body, prev_hash, hash) "
                        "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], "
                        "%s::text[], %s::text[], %s::text[])").format(t["event_log"]),
                        columns(plan.rows, 6))
                changed = sorted(plan.changed)
                if changed:
                    cur.execute(sql.SQL(
                        "UPDATE {} AS h SET seq = v.seq, hash = v.hash FROM unnest("
                        "%s::text[], %s::bigint[], %s::text[]) AS v(table_id, seq, hash) "
                        "WHERE h.table_id = v.table_id").format(t["table_heads"]),
                        (changed, [heads[c].seq for c in changed],
                         [heads[c].hash for c in changed]))
                    cur.execute("SELECT pg_notify(%s, n) FROM unnest(%s::text[]) "
                                "WITH ORDINALITY AS u(n, i) ORDER BY i",
                                (self.channel, [canonical({"table": c, "seq": heads[c].seq})
                                                for c in changed]))
        except BaseException:
            if conn.broken:
                self._writer = psycopg.connect(self._conninfo, autocommit=True)
            raise
        plan.settle()

    def _claim_key(self, cur: psycopg.Cursor[Any], recorded: str | None) -> None:
        """Inside the write transaction (heads locked): the log is chained with this
        process's key, or nothing is written. ``recorded``: the key the locking read saw
        (None: none yet; the row is written once, by the first write, and never changed)."""
        t = self._t
        if recorded is None:
            # None seen: read again now that the heads are locked (a first write may have
            # committed while the lock was awaited), then record ours if still none.
            cur.execute(sql.SQL("SELECT value FROM {} WHERE name = 'key_id'").format(
                t["chain_meta"]))
            row = cur.fetchone()
            if row is None:
                cur.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(t["event_log"]))
                recorded = "" if cur.fetchone() is not None else self.key_id
                cur.execute(sql.SQL(
                    "INSERT INTO {} VALUES ('key_id', %s) ON CONFLICT DO NOTHING")
                    .format(t["chain_meta"]), (recorded,))
            else:
                recorded = str(row[0])
        if recorded != self.key_id:
            raise key_mismatch(recorded, self.key_id, self.location)

    def recorded_key_id(self) -> str | None:
        row = self._reader().execute(sql.SQL("SELECT value FROM {} WHERE name = 'key_id'")
                                     .format(self._t["chain_meta"])).fetchone()
        return None if row is None else str(row[0])

    def legacy_tables(self) -> list[str]:
        conn = self._reader()
        out = []
        for t in LEGACY_TABLES:
            found = conn.execute("SELECT to_regclass(%s)", (f'"{self.schema}"."{t}"',)
                                 ).fetchone()
            if found and found[0] is not None and conn.execute(
                    sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.Identifier(self.schema, t))
            ).fetchone() is not None:
                out.append(t)
        return out

    def request_record(self, request: str) -> RequestRecord | None:
        row = self._reader().execute(sql.SQL(
            "SELECT request, table_id, first_seq, last_seq FROM {} WHERE request = %s")
            .format(self._t["request_keys"]), (request,)).fetchone()
        return None if row is None else RequestRecord(str(row[0]), str(row[1]), int(row[2]),
                                                      int(row[3]))

    # -- reading ------------------------------------------------------------------------------
    def stream_ids(self) -> list[str]:
        t = self._t
        # The rows' streams by one index seek each: a DISTINCT would read the whole log.
        rows = self._reader().execute(sql.SQL(
            "WITH RECURSIVE ids(id) AS (SELECT (SELECT min(table_id) FROM {log}) UNION ALL "
            "SELECT (SELECT min(table_id) FROM {log} WHERE table_id > ids.id) FROM ids "
            "WHERE ids.id IS NOT NULL) SELECT id FROM ids WHERE id IS NOT NULL "
            "UNION SELECT table_id FROM {heads} WHERE seq > 0 ORDER BY 1").format(
                log=t["event_log"], heads=t["table_heads"])).fetchall()
        return [str(r[0]) for r in rows]

    def head(self, table: str) -> Head:
        row = self._reader().execute(sql.SQL("SELECT seq, hash FROM {} WHERE table_id = %s")
                                     .format(self._t["table_heads"]), (table,)).fetchone()
        return EMPTY if row is None else Head(int(row[0]), str(row[1]))

    def heads_for(self, tables: Iterable[str]) -> dict[str, Head]:
        wanted = list(dict.fromkeys(tables))
        found = dict.fromkeys(wanted, EMPTY)
        if wanted:
            rows = self._reader().execute(
                sql.SQL("SELECT table_id, seq, hash FROM {} WHERE table_id = ANY(%s)")
                .format(self._t["table_heads"]), (wanted,)).fetchall()
            found.update((str(t), Head(int(seq), str(h))) for t, seq, h in rows)
        return found

    def _records(self, table: str, after: int = 0,
                 until: int | None = None) -> Iterator[StoredEvent]:
        last = after
        end = until if until is not None else 2**62
        query = sql.SQL("SELECT table_id, seq, kind, body, prev_hash, hash FROM {} "
                        "WHERE table_id = %s AND seq > %s AND seq <= %s ORDER BY seq LIMIT %s"
                        ).format(self._t["event_log"])
        while True:  # keyset pages: constant memory over a million events
            rows = self._reader().execute(query, (table, last, end, _PAGE)).fetchall()
            for r in rows:
                yield StoredEvent(str(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]),
                                  str(r[5]))
            if len(rows) < _PAGE:
                return
            last = int(rows[-1][1])

    def _bodies(self, table: str, after: int = 0) -> Iterator[str]:
        last = after
        query = sql.SQL("SELECT seq, body FROM {} WHERE table_id = %s AND seq > %s "
                        "ORDER BY seq LIMIT %s").format(self._t["event_log"])
        while True:
            rows = self._reader().execute(query, (table, last, _PAGE)).fetchall()
            for _, body in rows:
                yield str(body)
            if len(rows) < _PAGE:
                return
            last = int(rows[-1][0])

    def _seqs_of(self, table: str, kinds: set[str]) -> list[int]:
        rows = self._reader().execute(sql.SQL(
            "SELECT seq FROM {} WHERE table_id = %s AND kind = ANY(%s) ORDER BY seq")
            .format(self._t["event_log"]), (table, sorted(kinds))).fetchall()
        return [int(r[0]) for r in rows]

    def archive_spans(self, table: str) -> list[Span]:
        try:
            rows = self._reader().execute(sql.SQL(
                "SELECT table_id, first_seq, first_prev, last_seq, last_hash, day, file, mac "
                "FROM {} WHERE table_id = %s ORDER BY first_seq").format(self._t["archives"]),
                (table,)).fetchall()
        except psycopg.errors.UndefinedTable:  # a store from before archives: none
            return []
        return [Span(str(r[0]), int(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]),
                     str(r[6]), str(r[7])) for r in rows]

    def move_to_archive(self, spans: list[Span]) -> None:
        t = self._t
        with psycopg.connect(self._conninfo, autocommit=True) as conn, conn.transaction(), \
                conn.cursor() as cur:
            for span in spans:
                cur.execute(sql.SQL("SELECT seq FROM {} WHERE table_id = %s FOR UPDATE")
                            .format(t["table_heads"]), (span.stream,))
                cur.execute(sql.SQL(
                    "SELECT count(*), max(seq) FROM {} WHERE table_id = %s AND seq BETWEEN %s "
                    "AND %s").format(t["event_log"]), (span.stream, span.first, span.last))
                count, last = cur.fetchone() or (0, None)
                cur.execute(sql.SQL("SELECT hash FROM {} WHERE table_id = %s AND seq = %s")
                            .format(t["event_log"]), (span.stream, span.last))
                end = cur.fetchone()
                if count != span.last - span.first + 1 or last != span.last or end is None \
                        or end[0] != span.last_hash:
                    raise InvalidInput(f"{span.stream} seqs {span.first}-{span.last} are not "
                                       "the events archived", rule="archive.move")
                cur.execute(sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s, %s, %s, %s, %s)")
                            .format(t["archives"]),
                            (span.stream, span.first, span.first_prev, span.last,
                             span.last_hash, span.day, span.file, span.mac))
                cur.execute(sql.SQL("DELETE FROM {} WHERE table_id = %s AND seq BETWEEN %s "
                                    "AND %s").format(t["event_log"]),
                            (span.stream, span.first, span.last))

    def snapshots(self, table: str) -> list[Snapshot]:
        rows = self._reader().execute(sql.SQL(
            "SELECT table_id, seq, event_hash, body, digest FROM {} WHERE table_id = %s "
            "ORDER BY seq").format(self._t["snapshots"]), (table,)).fetchall()
        return [Snapshot(str(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def latest_snapshot(self, table: str, at_or_before: int | None = None) -> Snapshot | None:
        r = self._reader().execute(sql.SQL(
            "SELECT table_id, seq, event_hash, body, digest FROM {} WHERE table_id = %s "
            "AND seq <= %s ORDER BY seq DESC LIMIT 1").format(self._t["snapshots"]),
            (table, at_or_before if at_or_before is not None else 2**62)).fetchone()
        return None if r is None else Snapshot(str(r[0]), int(r[1]), str(r[2]), str(r[3]),
                                               str(r[4]))

    # -- LISTEN / NOTIFY ------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Subscription:
        """Notices of every commit to this schema, from any process (LISTEN/NOTIFY)."""
        sub = super().subscribe(listener)
        with self._write_lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            if self._listen_thread is None:
                self._listen_thread = threading.Thread(
                    target=self._listen, name=f"dicetable-listen-{self.schema}", daemon=True)
                self._listen_thread.start()
        self._listen_ready.wait(10)
        return sub

    def _listen(self) -> None:
        # Listens until closed: a connection lost (the server restarted, the backend ended)
        # is made again, each time a new span of hearing (``hearing``), and every stream's
        # head is announced then, for what was appended while nobody listened.
        lost = False
        while not self._listen_stop.is_set():
            try:
                conn = psycopg.connect(self._conninfo, autocommit=True)
            except psycopg.Error:
                if not lost:
                    log.exception("cannot LISTEN on %s; trying again each second",
                                  self.location)
                lost = True
                self._listen_ready.set()
                self._listen_stop.wait(1)
                continue
            try:
                with conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    self._span += 1
                    self._listen_ready.set()
                    if lost:
                        log.warning("listening on %s again", self.location)
                        self._notify(self._heads_now(conn))
                        lost = False
                    self._heard_span = self._span
                    while not self._listen_stop.is_set():
                        for n in conn.notifies(timeout=0.2):
                            self._notify(self._notices_of(n.payload))
            except psycopg.Error:
                if not self._listen_stop.is_set():
                    log.warning("LISTEN on %s lost; listening again", self.location)
                    lost = True
            finally:
                self._heard_span = 0
            self._listen_stop.wait(1 if lost else 0)

    def _heads_now(self, conn: psycopg.Connection[Any]) -> list[Notice]:
        rows = conn.execute(sql.SQL("SELECT table_id, seq FROM {} WHERE seq > 0").format(
            self._t["table_heads"])).fetchall()
        return [Notice(str(table), int(seq)) for table, seq in rows]

    @staticmethod
    def _notices_of(payload: str) -> list[Notice]:
        try:
            data = json.loads(payload)
            return [Notice(str(data["table"]), int(data["seq"]))]
        except (ValueError, KeyError, TypeError):
            log.warning("ignoring malformed notice %r", payload)
            return []

    @property
    def hearing(self) -> int:
        # Every append notifies in its transaction (``_write``): while this LISTEN holds,
        # no other process's append goes unheard.
        return self._heard_span

    # -- lifetime -----------------------------------------------------------------------------
    def close(self) -> None:
        if not self._stop_writing():
            return
        self._listen_stop.set()
        if self._listen_thread is not None:
            self._listen_thread.join()
        self._writer.close()
        self._readers.close(lambda conn: conn.close())

    def drop(self) -> None:
        """Remove the schema and everything in it (tests and teardown only)."""
        drop_schema(self._conninfo, self.schema)


def drop_schema(conninfo: str, schema: str) -> None:
    """Remove a log's schema and everything in it (tests and teardown only)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
