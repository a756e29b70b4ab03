"""Rotating the chain key: every stream re-linked under a new key, recorded.

``rotate(db, old, new)`` (the server stopped) verifies the whole log under the old key, then in
one transaction re-makes every link from the stored bodies under the new key, re-signs the
snapshots and records the new key's id; the rotation is recorded in ``operations:floor``
(``MigrationApplied`` named ``key-rotation``, with the old heads and the old key's id). The
checkpoint file is signed by the old key: it is kept beside the new one (renamed) and the new
file starts with a checkpoint of the re-linked heads. A store with archive files keeps its key
(each file is signed by the key it was written with).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from dicetable.core.errors import InvalidInput
from dicetable.store import operations_stream
from dicetable.store.chain import key_id
from dicetable.store.checkpoints import heads_of, write_checkpoint
from dicetable.store.open import open_store
from dicetable.store.schema_version import StoreSql, relink, verify_whole, version_in

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
    verify_whole(db, schema, old, "log under the old key")
    conn = StoreSql(db, schema)
    try:
        version = version_in(conn)
        conn.begin()
        step = relink(conn, new, version, version, ROTATION, "old_heads")
        conn.commit()
    finally:
        conn.close()
    detail = json.loads(step.detail) | {"old_key_id": key_id(old)}
    store = open_store(db, schema=schema, create=False, key=new)
    try:
        state = operations_stream.OperationsState()
        for event in store.events(operations_stream.STREAM):
            operations_stream.apply(state, event)
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
            "streams": detail["streams"], "checkpoints_kept": str(kept) if kept else None}
