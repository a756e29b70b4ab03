"""Rotating the chain key: every stream re-linked under a new key, recorded.

``rotate(db, old, new)`` (the server stopped: it holds the store's serving lock alone,
``store/serving.py``, so it is refused while a server serves the store) verifies the whole
log under the old key, then in one transaction re-makes every link from the stored bodies
under the new key, re-signs the snapshots and records the new key's id; the rotation is
recorded in ``operations:floor`` (``MigrationApplied`` named ``key-rotation``, with the old
heads and the old key's id). The checkpoint file is signed by the old key: it is kept beside
the new one (renamed) and the new file starts with a checkpoint of the re-linked heads.

Archived days are re-signed: the chain runs through them, so their links are re-made too.
Each archive file is read and verified under the old key, written again beside it with the
re-made links and signed by the new key (``DAY.KEYID.jsonl.gz``), and the index names the new
files in the same transaction as the re-linked log - a rotation cut short before it commits
leaves the store, its index and its old files as they were (the new files unnamed). The old
files are kept, unchanged and signed by the old key, until the operator removes them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store import operations_stream
from dicetable.store.archive_file import ArchiveError, Span, read_manifest_and_rows, write_archive
from dicetable.store.chain import StoredEvent, key_id
from dicetable.store.checkpoints import heads_of, write_checkpoint
from dicetable.store.open import open_store
from dicetable.store.schema_version import StoreSql, relink, verify_whole, version_in
from dicetable.store.serving import exclusive
from dicetable.store.versioned import folded

ROTATION = "key-rotation"


def rotate(db: str, old: bytes, new: bytes, *, schema: str = "dicetable",
           checkpoints: Path | None = None, now: str | None = None) -> dict[str, object]:
    if key_id(old) == key_id(new):
        raise InvalidInput("the new key is the old key", rule="store.key")
    at = now or datetime.now(UTC).isoformat()
    store = open_store(db, schema=schema, create=False, key=old, group_commit=False)
    try:
        recorded = store.recorded_key_id()
    finally:
        store.close()
    if recorded != key_id(old):
        raise InvalidInput(f"the store is chained with {recorded or 'no key'}, not with the "
                           "old key given", rule="store.key")
    # a serving process would go on appending under the old key to a log re-linked under the new
    with exclusive(db, "key rotation", schema):
        return _rotate(db, old, new, schema=schema, checkpoints=checkpoints, at=at)


def _rotate(db: str, old: bytes, new: bytes, *, schema: str, checkpoints: Path | None,
            at: str) -> dict[str, object]:
    verify_whole(db, schema, old, "log under the old key")
    archived, files = _archives(db, schema, old)
    conn = StoreSql(db, schema)
    try:
        version = version_in(conn)
        conn.begin()
        renamed: dict[str, str] = {}
        step = relink(conn, new, version, version, ROTATION, "old_heads",
                      archived=archived if files else None, renamed=renamed)
        spans = [s for path, held in files for s in _resign(path, held, new, renamed)]
        if files:
            conn.run(f"DELETE FROM {conn.q('archives')}")
            conn.many(f"INSERT INTO {conn.q('archives')} VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                      [(s.stream, s.first, s.first_prev, s.last, s.last_hash, s.day, s.file,
                        s.mac) for s in spans])
        conn.commit()
    finally:
        conn.close()
    detail = json.loads(step.detail) | {"old_key_id": key_id(old),
                                        "archive_files": len(files)}
    store = open_store(db, schema=schema, create=False, key=new)
    try:
        state = folded(store, operations_stream.STREAM, operations_stream.OperationsState,
                       operations_stream.apply)
        store.append(operations_stream.STREAM, [operations_stream.MigrationApplied(
            seq=state.seq + 1, at=at, version_from=version, version_to=version, name=ROTATION,
            detail=json.dumps(detail, sort_keys=True))], expected=state.seq, request="")
        kept = None
        if checkpoints is not None:
            if checkpoints.exists():
                kept = Path(f"{checkpoints}.before-rotation-{at[:19].replace(':', '')}")
                os.replace(checkpoints, kept)
            write_checkpoint(checkpoints, new, heads_of([store]), at=at)
    finally:
        store.close()
    return {"key_id": key_id(new), "old_key_id": key_id(old), "events": detail["events"],
            "streams": detail["streams"], "checkpoints_kept": str(kept) if kept else None,
            "archive_files": [s.file for s in spans]}


Archive = tuple[dict[str, Any], dict[str, list[StoredEvent]]]


def _archives(db: str, schema: str, old: bytes
              ) -> tuple[dict[str, list[StoredEvent]], list[tuple[Path, Archive]]]:
    """Every stream's archived rows in order, and each archive file with its manifest and
    rows, all verified under the old key (the index's spans checked against each file)."""
    store = open_store(db, schema=schema, create=False, key=old, group_commit=False)
    try:
        by_mac: dict[str, tuple[Path, Archive]] = {}
        archived: dict[str, list[StoredEvent]] = {}
        for stream in store.stream_ids():
            for span in store.archive_spans(stream):
                if span.mac not in by_mac:
                    path = Path(span.file)
                    manifest, rows = read_manifest_and_rows(path, old)
                    if manifest["mac"] != span.mac:
                        raise ArchiveError(f"archive {path} is not the file the store's index "
                                           "names", rule="archive.index")
                    by_mac[span.mac] = (path, (manifest, rows))
                held = by_mac[span.mac][1][1].get(stream, [])
                if not held or (held[0].seq, held[-1].seq) != (span.first, span.last):
                    raise ArchiveError(f"archive {span.file} does not hold {stream} seqs "
                                       f"{span.first}-{span.last}", rule="archive.index")
                archived.setdefault(stream, []).extend(held)
    finally:
        store.close()
    return archived, list(by_mac.values())


def _resign(path: Path, archive: Archive, new: bytes, renamed: dict[str, str]) -> list[Span]:
    """The archive at ``path`` written again beside it, its links re-made, signed by
    ``new``; returns its spans for the index."""
    manifest, rows = archive
    streams = {stream: [dataclasses.replace(r, prev_hash=renamed.get(r.prev_hash, r.prev_hash),
                                            hash=renamed[r.hash]) for r in held]
               for stream, held in rows.items()}
    stem = path.name.removesuffix(".jsonl.gz")
    target, n = path.with_name(f"{stem}.{key_id(new)}.jsonl.gz"), 1
    while target.exists():  # left by a rotation cut short (never named by the index)
        n += 1
        target = path.with_name(f"{stem}.{key_id(new)}.{n}.jsonl.gz")
    return write_archive(target, new, str(manifest["day"]), streams, manifest["retention"])
