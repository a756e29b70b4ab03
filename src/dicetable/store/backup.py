"""Backups of a running floor: the store, its key, its checkpoint file and its archive files,
with a signed manifest of every file's digest.

``backup(db, directory)`` never stops the floor. A SQLite file is copied with SQLite's online
backup API (one read transaction: a consistent copy, the writer never blocked for long); a
PostgreSQL schema with ``pg_dump`` when it is installed, else with ``COPY ... TO STDOUT`` of
each table inside one ``REPEATABLE READ`` transaction (``copy_export``: the same consistent
snapshot ``pg_dump`` takes). The checkpoint file is copied *before* the store, so every
checkpoint in the backup is covered by the store copied after it.

The manifest (``manifest.json``) lists each file with its SHA-256, the heads of every stream in
the copied store, the newest checkpoint it holds and the key's id, and is signed with the chain
key (HMAC-SHA256): ``read_backup`` refuses a backup whose files or manifest were altered.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store.chain import Head, canonical, key_id
from dicetable.store.checkpoints import heads_of
from dicetable.store.open import is_postgres, open_store

MANIFEST = "manifest.json"
FORMAT = 1
"""The backup layout's version (a newer dicetable reads every older one)."""
STORE_FILE = "store.db"
DUMP_FILE = "store.pgdump"
COPY_DIR = "copy"
KEY_FILE = "chain.key"
CHECKPOINT_FILE = "checkpoints.jsonl"
ARCHIVE_DIR = "archives"
PG_TABLES = ("event_log", "table_heads", "request_keys", "chain_meta", "snapshots", "archives")


@dataclass(frozen=True)
class Backup:
    """A backup read back and verified (``read_backup``)."""

    directory: Path
    manifest: dict[str, Any]
    digest: str
    """SHA-256 of the manifest's bytes (names the backup in a restore's record)."""

    @property
    def heads(self) -> dict[str, Head]:
        return {s: Head(int(seq), str(h)) for s, (seq, h) in self.manifest["heads"].items()}

    @property
    def checkpoint(self) -> int:
        return int(self.manifest.get("checkpoint", 0))

    def path(self, name: str) -> Path:
        return self.directory / name


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _mac(key: bytes, manifest: dict[str, Any]) -> str:
    body = {k: v for k, v in manifest.items() if k != "mac"}
    return hmac.new(key, canonical(body).encode(), hashlib.sha256).hexdigest()


def backup(db: str, directory: str | Path, *, key: bytes, key_file: Path | None,
           checkpoints: Path | None, schema: str = "dicetable", method: str = "auto",
           now: str | None = None) -> Backup:
    """Back up the floor at ``db`` into ``directory`` (new or empty) while it runs."""
    out = Path(directory)
    if out.exists() and any(out.iterdir()):
        raise InvalidInput(f"{out} is not empty; a backup goes into a new directory",
                           rule="backup.directory")
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    checkpoint = 0
    if checkpoints is not None and checkpoints.exists():  # first: the store copy covers it
        checkpoint = _copy_whole_lines(checkpoints, out / CHECKPOINT_FILE)
        files[CHECKPOINT_FILE] = sha256_file(out / CHECKPOINT_FILE)
    if is_postgres(db):
        method = _pg_method(method)
        if method == "pg_dump":
            _pg_dump(db, schema, out / DUMP_FILE)
            files[DUMP_FILE] = sha256_file(out / DUMP_FILE)
        else:
            for name in copy_export(db, schema, out / COPY_DIR):
                files[f"{COPY_DIR}/{name}"] = sha256_file(out / COPY_DIR / name)
        copied = open_store(db, schema=schema, create=False, key=key)  # heads read after
    else:
        if method not in ("auto", "sqlite"):
            raise InvalidInput(f"a SQLite store is backed up with its online backup API, "
                               f"not {method!r}", rule="backup.method")
        method = "sqlite"
        _sqlite_backup(Path(db), out / STORE_FILE)
        files[STORE_FILE] = sha256_file(out / STORE_FILE)
        copied = open_store(out / STORE_FILE, create=False, key=key)
    try:
        heads = {s: [h.seq, h.hash] for s, h in sorted(heads_of([copied]).items())}
        archived = _archive_files(copied)
    finally:
        copied.close()
    if is_postgres(db):  # the copy was read from the live schema: heads may be newer there
        heads = _dumped_heads(out, method)
    for source in archived:
        name = f"{ARCHIVE_DIR}/{hashlib.sha256(source.encode()).hexdigest()[:16]}-" \
               f"{Path(source).name}"
        (out / ARCHIVE_DIR).mkdir(exist_ok=True)
        shutil.copy2(source, out / name)
        files[name] = sha256_file(out / name)
    if key_file is not None and key_file.exists():
        shutil.copy2(key_file, out / KEY_FILE)
    else:  # the key came from the environment: the backup keeps it as a file
        fd = os.open(out / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.hex() + "\n")
    os.chmod(out / KEY_FILE, 0o600)
    files[KEY_FILE] = sha256_file(out / KEY_FILE)
    from dicetable.store.schema_version import CURRENT

    manifest: dict[str, Any] = {
        "format": FORMAT, "at": now or datetime.now(UTC).isoformat(), "source": _shown(db),
        "backend": "postgresql" if is_postgres(db) else "sqlite", "method": method,
        "schema": schema if is_postgres(db) else None, "key_id": key_id(key),
        "store_version": CURRENT, "checkpoint": checkpoint, "heads": heads, "files": files,
        "archives": {f"{ARCHIVE_DIR}/{hashlib.sha256(s.encode()).hexdigest()[:16]}-"
                     f"{Path(s).name}": s for s in archived}}
    manifest["mac"] = _mac(key, manifest)
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return read_backup(out, key)


def read_backup(directory: str | Path, key: bytes) -> Backup:
    """The backup at ``directory``, its manifest's signature and every file's digest
    checked (refused, naming what differs)."""
    where = Path(directory)
    try:
        raw = (where / MANIFEST).read_bytes()
        manifest = json.loads(raw)
    except (OSError, ValueError) as e:
        raise InvalidInput(f"{where} holds no readable backup manifest ({e})",
                           rule="backup.manifest") from None
    if not isinstance(manifest, dict) or not hmac.compare_digest(
            str(manifest.get("mac", "")), _mac(key, manifest)):
        raise InvalidInput(f"the manifest of {where} is not signed with this key (altered, or "
                           "another floor's backup)", rule="backup.manifest")
    if int(manifest.get("format", 0)) > FORMAT:
        raise InvalidInput(f"{where} is a backup of format {manifest['format']}; this "
                           f"dicetable reads up to {FORMAT}", rule="backup.manifest")
    for name, digest in sorted(manifest["files"].items()):
        path = where / name
        if not path.exists():
            raise InvalidInput(f"the backup lacks {name}", rule="backup.files")
        if sha256_file(path) != digest:
            raise InvalidInput(f"{name} in the backup is not the file backed up (its digest "
                               "differs)", rule="backup.files")
    return Backup(where, manifest, hashlib.sha256(raw).hexdigest())


def _shown(db: str) -> str:
    """``db`` without a password."""
    if is_postgres(db):
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(db)
        return f"postgresql://{parts.get('host', '')}:{parts.get('port', '')}/" \
               f"{parts.get('dbname', '')}"
    return str(db)


def _copy_whole_lines(source: Path, target: Path) -> int:
    """Copy ``source`` up to its last whole line (it may be being appended to); returns the
    number of the last checkpoint copied."""
    data = source.read_bytes()
    data = data[:data.rfind(b"\n") + 1]
    target.write_bytes(data)
    os.chmod(target, 0o600)
    last = 0
    for line in data.splitlines():
        try:
            n = json.loads(line).get("n")
        except (ValueError, AttributeError):
            continue
        last = n if isinstance(n, int) else last
    return last


def _sqlite_backup(source: Path, target: Path) -> None:
    if not source.exists():
        raise InvalidInput(f"no store at {source}", rule="store.location")
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.execute("PRAGMA busy_timeout=30000")
        src.backup(dst)  # one step: one read transaction, a consistent copy
    finally:
        dst.close()
        src.close()


def _archive_files(store: Any) -> list[str]:
    files: set[str] = set()
    for stream in store.stream_ids():
        files.update(span.file for span in store.archive_spans(stream))
    return sorted(files)


def _pg_method(method: str) -> str:
    if method == "auto":
        return "pg_dump" if shutil.which("pg_dump") else "copy"
    if method not in ("pg_dump", "copy"):
        raise InvalidInput(f"a PostgreSQL store is backed up with pg_dump or copy, not "
                           f"{method!r}", rule="backup.method")
    if method == "pg_dump" and not shutil.which("pg_dump"):
        raise InvalidInput("pg_dump is not installed (--method copy exports without it)",
                           rule="backup.method")
    return method


def _pg_dump(db: str, schema: str, target: Path) -> None:
    done = subprocess.run(["pg_dump", "--format=custom", f"--schema={schema}",
                           f"--file={target}", "--dbname", db],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InvalidInput(f"pg_dump failed: {done.stderr.strip()}", rule="backup.pg_dump")


def copy_export(db: str, schema: str, target: Path) -> list[str]:
    """Each of the store's tables as PostgreSQL's COPY text, read in one REPEATABLE READ
    transaction (one snapshot of the whole store), ordered by primary key. Returns the file
    names (``TABLE.copy``)."""
    import psycopg
    from psycopg import sql

    target.mkdir(parents=True, exist_ok=True)
    names = []
    with psycopg.connect(db) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        for table in PG_TABLES:
            out = target / f"{table}.copy"
            query = sql.SQL("COPY (SELECT * FROM {} ORDER BY 1, 2) TO STDOUT").format(
                sql.Identifier(schema, table))
            with out.open("wb") as f, conn.cursor().copy(query) as copy:
                for chunk in copy:
                    f.write(chunk)
            names.append(out.name)
    return names


def _dumped_heads(out: Path, method: str) -> dict[str, list[Any]]:
    """The heads in the dump itself (the live schema moved on while it was read)."""
    if method == "copy":
        rows = (out / COPY_DIR / "table_heads.copy").read_text().splitlines()
        heads: dict[str, list[Any]] = {}
        for row in rows:
            stream, seq, digest = row.split("\t")
            heads[stream] = [int(seq), digest]
        return {s: heads[s] for s in sorted(heads) if heads[s][0] > 0}
    done = subprocess.run(["pg_restore", "--data-only", "--table=table_heads", "--file=-",
                           str(out / DUMP_FILE)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InvalidInput(f"pg_restore could not read the dump: {done.stderr.strip()}",
                           rule="backup.pg_dump")
    heads = {}
    inside = False
    for line in done.stdout.splitlines():
        if line.startswith("COPY ") and ".table_heads " in line:
            inside = True
            continue
        if inside:
            if line == "\\.":
                break
            stream, seq, digest = line.split("\t")
            heads[stream] = [int(seq), digest]
    return {s: heads[s] for s in sorted(heads) if heads[s][0] > 0}
