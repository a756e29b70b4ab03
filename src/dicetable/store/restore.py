"""Restoring a floor from a backup: a recorded, two-person, signed event, with its loss listed.

``restore`` (every server on the store stopped: it holds the store alone,
``store/serving.py``, and is refused while a server serves it) does, in order:

1. reads the backup (``backup.read_backup``: the manifest's signature, every file's digest) and
   verifies the backed-up store's every stream and its own checkpoints;
2. authenticates the two people - distinct staff accounts of the backed-up floor, each by
   their password (``RESTORE_APPROVERS``);
3. lists what the restore loses (``Gap``): for every stream, each event after the backup's
   head up to the newest head the signed checkpoint file vouches for, and - when the replaced
   store can still be read - every event after the backup in it, with the request key
   (``Idempotency-Key``) of each acknowledged command, checked against the checkpoints;
4. keeps the replaced store (renamed, never deleted), puts the backup in its place, copies back
   any archive file that is missing;
5. records ``StoreRestored`` in the ``operations:floor`` stream (chained under the key: who
   restored, who approved, the backup's digest, its checkpoint, how much was lost, the report's
   digest) and appends a signed restore line to the checkpoint file naming that event.

The restore line tells the verification that the lines before it checkpoint the replaced store
(they are not held against the restored one) and claims no heads: the next start-up verifies
every stream whole before anything is served.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store import account_stream, operations_stream
from dicetable.store.audit import verify_store
from dicetable.store.backup import (
    CHECKPOINT_FILE,
    COPY_DIR,
    DUMP_FILE,
    KEY_FILE,
    PG_TABLES,
    STORE_FILE,
    Backup,
    read_backup,
)
from dicetable.store.base import EventStore
from dicetable.store.chain import Head
from dicetable.store.checkpoints import signed_heads, verify_checkpoints, write_restore
from dicetable.store.open import is_postgres, open_store
from dicetable.store.serving import exclusive
from dicetable.store.versioned import folded

RESTORE_APPROVERS = 2
"""People who must authenticate for a restore: the one who restores and another who approves
(industry-default: the two-person rule casinos apply to changes of gaming records; a
stand-in, not a PA or IN text)."""


@dataclass
class Gap:
    """What a restore loses: every event acknowledged after the backup that is known."""

    streams: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def lost_events(self) -> int:
        return sum(int(s["lost"]) for s in self.streams.values())

    def to_dict(self) -> dict[str, Any]:
        return {"lost_events": self.lost_events, "lost_requests": len(self.requests),
                "streams": self.streams, "requests": self.requests, "events": self.events,
                "notes": self.notes}


def check_backup(directory: str | Path, key: bytes) -> Backup:
    """The backup, verified whole: files, manifest, and (SQLite) every stream's chain and its
    own checkpoints - a PostgreSQL backup's store is verified once loaded (``restore``)."""
    found = read_backup(directory, key)
    if found.manifest["backend"] == "sqlite":
        with _backup_copy(found, key) as store:
            _verify_loaded(store, found, key, str(directory))
    return found


def _verify_loaded(store: EventStore, found: Backup, key: bytes, where: str) -> None:
    bad = [str(p) for r in verify_store(store, replay=False) for p in r.problems]
    if found.path(CHECKPOINT_FILE).exists():
        bad += [str(p) for p in verify_checkpoints(found.path(CHECKPOINT_FILE), key, [store])]
    if bad:
        raise InvalidInput(f"the backup at {where} does not verify: {'; '.join(bad[:5])}",
                           rule="backup.verify")


@contextmanager
def _backup_copy(found: Backup, key: bytes) -> Iterator[EventStore]:
    """A SQLite backup's store, opened on a temporary copy (the backup stays as it was)."""
    tmp = Path(tempfile.mkdtemp(prefix="dicetable-restore-"))
    try:
        shutil.copyfile(found.path(STORE_FILE), tmp / STORE_FILE)
        store = open_store(tmp / STORE_FILE, create=False, key=key)
        try:
            yield store
        finally:
            store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_people(store: EventStore, people: list[tuple[str, str]]) -> None:
    """Each (name, password) a distinct staff account of ``store``'s floor with that
    password; refused naming the rule otherwise."""
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError

    names = [name for name, _ in people]
    if len(people) < RESTORE_APPROVERS or len(set(names)) < RESTORE_APPROVERS:
        raise InvalidInput(f"a restore needs {RESTORE_APPROVERS} different people (--by and "
                           "--approved-by)", rule="restore.two_person")
    hasher = PasswordHasher()
    for name, password in people:
        state = folded(store, f"{account_stream.KIND}:{name}", account_stream.AccountState,
                       account_stream.apply)
        try:
            right = state.kind == "staff" and bool(hasher.verify(state.password_hash,
                                                                 password))
        except (VerificationError, InvalidHashError):
            right = False
        if not right:
            raise InvalidInput(f"{name!r} is not a staff account of the backed-up floor "
                               "with that password", rule="restore.two_person")


def gap(found: Backup, key: bytes, *, checkpoints: Path | None,
        old: EventStore | None, old_requests: Callable[[str, int], list[dict[str, Any]]]
        ) -> Gap:
    """Every event known to have been acknowledged after the backup (see the module)."""
    out = Gap()
    backed = found.heads
    signed: dict[str, tuple[int, Head]] = {}
    if checkpoints is not None and checkpoints.exists():
        signed, problems = signed_heads(checkpoints, key, after=0)
        out.notes += [f"checkpoint file: {p}" for p in problems]
    elif checkpoints is not None:
        out.notes.append(f"no checkpoint file at {checkpoints}: only the replaced store "
                         "says what was lost")
    old_heads: dict[str, Head] = {}
    if old is not None:
        old_heads = {s: old.head(s) for s in old.stream_ids()}
    for stream in sorted(set(backed) | set(signed) | set(old_heads)):
        b = backed.get(stream, Head(0, ""))
        line, c = signed.get(stream, (0, Head(0, "")))
        o = old_heads.get(stream)
        end = max(c.seq, o.seq if o is not None else 0)
        if end <= b.seq:
            continue
        entry: dict[str, Any] = {"backup_seq": b.seq, "checkpointed_seq": c.seq,
                                 "checkpoint": line, "lost": end - b.seq,
                                 "replaced_store_seq": None if o is None else o.seq}
        if old is not None and o is not None:
            entry.update(_listed(old, stream, b, c, out))
            out.requests += old_requests(stream, b.seq)
        out.streams[stream] = entry
    out.requests.sort(key=lambda r: (r["table"], r["first_seq"]))
    return out


def _listed(old: EventStore, stream: str, b: Head, c: Head, out: Gap) -> dict[str, Any]:
    """The replaced store's events of ``stream`` after the backup, checked: it continues the
    backed-up history, and holds the checkpointed event at the checkpointed seq."""
    notes: dict[str, Any] = {}
    if b.seq:
        at_backup = next(old.records(stream, after=b.seq - 1, until=b.seq), None)
        if at_backup is None or at_backup.hash != b.hash:
            notes["diverged"] = True
            out.notes.append(f"{stream}: the replaced store does not continue the backed-up "
                             f"history at seq {b.seq}")
    for row in old.records(stream, after=b.seq):
        data = json.loads(row.body)
        out.events.append({"stream": stream, "seq": row.seq, "kind": row.kind,
                           "at": data.get("at"), "actor": data.get("actor"),
                           "checkpointed": row.seq <= c.seq})
        if row.seq == c.seq and row.hash != c.hash:
            notes["checkpoint_mismatch"] = True
            out.notes.append(f"{stream}: the replaced store's seq {c.seq} is not the "
                             "checkpointed event")
    return notes


def sqlite_requests(path: Path) -> Callable[[str, int], list[dict[str, Any]]]:
    def read(stream: str, after: int) -> list[dict[str, Any]]:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT request, table_id, first_seq, last_seq FROM "
                                "request_keys WHERE table_id = ? AND last_seq > ?",
                                (stream, after)).fetchall()
        finally:
            conn.close()
        return [{"request": r[0], "table": r[1], "first_seq": r[2], "last_seq": r[3]}
                for r in rows]

    return read


def pg_requests(db: str, schema: str) -> Callable[[str, int], list[dict[str, Any]]]:
    def read(stream: str, after: int) -> list[dict[str, Any]]:
        import psycopg
        from psycopg import sql

        with psycopg.connect(db) as conn:
            rows = conn.execute(sql.SQL(
                "SELECT request, table_id, first_seq, last_seq FROM {} WHERE table_id = %s "
                "AND last_seq > %s").format(sql.Identifier(schema, "request_keys")),
                (stream, after)).fetchall()
        return [{"request": r[0], "table": r[1], "first_seq": r[2], "last_seq": r[3]}
                for r in rows]

    return read


def restore(db: str, directory: str | Path, key: bytes, *, by: tuple[str, str],
            approved_by: tuple[str, str], reason: str, checkpoints: Path | None,
            schema: str = "dicetable", report: Path | None = None,
            now: str | None = None) -> dict[str, Any]:
    """Restore the floor at ``db`` from the backup at ``directory`` (see the module).
    Returns the report (also written to ``report``, default beside the store). Refused while
    a server serves the store (``store.serving``): the restore holds it alone throughout."""
    if not reason.strip():
        raise InvalidInput("a restore says why (--reason)", rule="restore.reason")
    with exclusive(db, "restore", schema):
        return _restore(db, directory, key, by=by, approved_by=approved_by, reason=reason,
                        checkpoints=checkpoints, schema=schema, report=report, now=now)


def _restore(db: str, directory: str | Path, key: bytes, *, by: tuple[str, str],
             approved_by: tuple[str, str], reason: str, checkpoints: Path | None,
             schema: str, report: Path | None, now: str | None) -> dict[str, Any]:
    at = now or datetime.now(UTC).isoformat()
    stamp = at.replace(":", "").replace("-", "")[:15]
    if is_postgres(db):
        found = read_backup(directory, key)
        if found.manifest["backend"] != "postgresql":
            raise InvalidInput("a SQLite backup restores into a SQLite file",
                               rule="restore.backend")
    else:
        found = check_backup(directory, key)
        if found.manifest["backend"] != "sqlite":
            raise InvalidInput("a PostgreSQL backup restores into PostgreSQL",
                               rule="restore.backend")
    if found.manifest["key_id"] != _key_id(key):
        raise InvalidInput("the backup was made under another chain key", rule="store.key")
    if not is_postgres(db):
        with _backup_copy(found, key) as copy:
            check_people(copy, [by, approved_by])
    elif len({by[0], approved_by[0]}) < RESTORE_APPROVERS:
        raise InvalidInput(f"a restore needs {RESTORE_APPROVERS} different people (--by and "
                           "--approved-by)", rule="restore.two_person")
    old, requests = _old_store(db, schema, key)
    try:
        lost = gap(found, key, checkpoints=checkpoints, old=old, old_requests=requests)
    finally:
        if old is not None:
            old.close()
    previous = _replace(db, schema, found, stamp)
    for name, source in found.manifest.get("archives", {}).items():
        if not Path(source).exists():
            Path(source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(found.path(name), source)
    body = {"restored_at": at, "by": by[0], "approved_by": approved_by[0], "reason": reason,
            "backup": str(directory), "backup_digest": found.digest,
            "backup_at": found.manifest["at"], "backup_checkpoint": found.checkpoint,
            "previous": previous, **lost.to_dict()}
    text = json.dumps(body, indent=1, sort_keys=True) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    store = open_store(db, schema=schema, create=False, key=key)
    try:
        if is_postgres(db):  # loaded now: verified and its people checked, or undone
            try:
                _verify_loaded(store, found, key, str(directory))
                check_people(store, [by, approved_by])
            except InvalidInput:
                store.close()
                _undo_pg(db, schema, previous)
                raise
        state = folded(store, operations_stream.STREAM, operations_stream.OperationsState,
                       operations_stream.apply)
        event = operations_stream.StoreRestored(
            seq=state.seq + 1, at=at, actor=by[0], approved_by=approved_by[0], reason=reason,
            backup=str(directory), backup_digest=found.digest, backup_at=found.manifest["at"],
            backup_checkpoint=found.checkpoint, lost_events=lost.lost_events,
            lost_requests=len(lost.requests), report_digest=digest, previous=previous)
        row = store.append(operations_stream.STREAM, [event], expected=state.seq,
                           request="")[0]
    finally:
        store.close()
    if checkpoints is not None:
        if not checkpoints.exists() and found.path(CHECKPOINT_FILE).exists():
            shutil.copy2(found.path(CHECKPOINT_FILE), checkpoints)
        write_restore(checkpoints, key, {"stream": row.table, "seq": row.seq, "hash": row.hash,
                                         "backup": found.digest}, at=at)
    target = report or Path(f"{previous}.restore-report.json")
    target.write_text(text)
    return {**body, "report": str(target), "report_digest": digest,
            "event": {"stream": row.table, "seq": row.seq}}


def _key_id(key: bytes) -> str:
    from dicetable.store.chain import key_id

    return key_id(key)


def _old_store(db: str, schema: str, key: bytes
               ) -> tuple[EventStore | None, Callable[[str, int], list[dict[str, Any]]]]:
    """The store being replaced, if it can still be read (its events name the loss)."""
    try:
        old = open_store(db, schema=schema, create=False, key=key, group_commit=False)
        old.stream_ids()
    except Exception:  # a lost or unreadable store: the checkpoints alone say what was lost
        return None, lambda stream, after: []
    if is_postgres(db):
        return old, pg_requests(db, schema)
    return old, sqlite_requests(Path(db))


def _replace(db: str, schema: str, found: Backup, stamp: str) -> str:
    """Keep the store being replaced (renamed) and put the backup in its place; returns
    where the replaced one is kept."""
    if is_postgres(db):
        return _replace_pg(db, schema, found, stamp)
    target = Path(db)
    previous = Path(f"{db}.before-restore-{stamp}")
    if target.exists():
        conn = sqlite3.connect(target)
        try:  # the WAL's pages into the file, so the kept copy is whole by itself
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError:
            pass
        finally:
            conn.close()
        os.replace(target, previous)
        for suffix in ("-wal", "-shm"):
            side = Path(f"{db}{suffix}")
            if side.exists():
                os.replace(side, Path(f"{previous}{suffix}"))
    shutil.copyfile(found.path(STORE_FILE), target)
    key_path = Path(f"{db}.key")
    if not key_path.exists():
        shutil.copy2(found.path(KEY_FILE), key_path)
    return str(previous) if previous.exists() else ""


def _replace_pg(db: str, schema: str, found: Backup, stamp: str) -> str:
    import psycopg
    from psycopg import sql

    previous = f"{schema}_before_restore_{stamp}"[:63]
    with psycopg.connect(db, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name "
                              "= %s", (schema,)).fetchone()
        if exists:
            conn.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                sql.Identifier(schema), sql.Identifier(previous)))
    try:
        _load_pg(db, schema, found)
    except Exception:
        _undo_pg(db, schema, previous if exists else "")
        raise
    return previous if exists else ""


def _load_pg(db: str, schema: str, found: Backup) -> None:
    import psycopg
    from psycopg import sql

    if found.manifest["method"] == "pg_dump":
        import subprocess

        if found.manifest.get("schema") != schema:
            raise InvalidInput("a pg_dump backup restores into the schema it was taken from "
                               f"({found.manifest.get('schema')})", rule="restore.schema")
        done = subprocess.run(["pg_restore", "--no-owner", "--dbname", db,
                               str(found.path(DUMP_FILE))], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise InvalidInput(f"pg_restore failed: {done.stderr.strip()}",
                               rule="restore.pg_restore")
    else:
        open_store(db, schema=schema, create=True).close()  # the tables, empty
        with psycopg.connect(db) as conn:
            for table in PG_TABLES:
                query = sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(schema, table))
                with conn.cursor().copy(query) as copy:
                    copy.write(found.path(f"{COPY_DIR}/{table}.copy").read_bytes())


def _undo_pg(db: str, schema: str, previous: str) -> None:
    """Put the replaced schema back (the backup did not verify, or its people were refused)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        if previous:
            conn.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                sql.Identifier(previous), sql.Identifier(schema)))
