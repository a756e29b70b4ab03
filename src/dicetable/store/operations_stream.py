"""What operators did to the store itself, as a stream of it: ``operations:floor``.

A restore from a backup (``StoreRestored``: who restored, who approved, from which backup, to
which checkpoint, what was lost after it) and each schema migration (``MigrationApplied``) are
recorded here, chained under the key like every other stream, so a store that was rolled back
or upgraded says so in its own log.

>>> AT = "2026-01-01T00:00:00+00:00"
>>> s = OperationsState()
>>> apply(s, MigrationApplied(seq=1, at=AT, version_from=1, version_to=2,
...                           name="record-schema-version", detail="unkeyed"))
>>> apply(s, StoreRestored(seq=2, at=AT, actor="pat", approved_by="ann", reason="disk",
...                        backup="b1", backup_digest="d", backup_at=AT, backup_checkpoint=3,
...                        lost_events=4, lost_requests=2, report_digest="r", previous="old"))
>>> s.schema_version, s.restores, invariants(s), roundtrips(s)
(2, 1, [], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dicetable.core import events as envelope
from dicetable.store.record_codec import roundtrips as roundtrips
from dicetable.store.record_stream import FLOOR, FloorEvent

KIND = "operations"
STREAM = f"{KIND}:{FLOOR}"


class OperationsEvent(FloorEvent, abstract=True):
    stream_kind = KIND


class StoreRestored(OperationsEvent):
    """The store was replaced by a backup. ``actor`` restored it, ``approved_by`` (another
    person) approved; both were authenticated against the backup's own accounts."""

    approved_by: str
    reason: str
    backup: str
    """The backup's directory, as given."""
    backup_digest: str
    """The SHA-256 of the backup's manifest (which holds every file's digest)."""
    backup_at: str
    backup_checkpoint: int
    """The number of the newest checkpoint the backup holds (0: none)."""
    lost_events: int
    """Events acknowledged after the backup, listed in the restore's report."""
    lost_requests: int
    report_digest: str
    """The SHA-256 of the restore's report (every lost event and command, listed)."""
    previous: str
    """Where the replaced store was kept (it is never deleted)."""


class MigrationApplied(OperationsEvent):
    """The store's layout went from ``version_from`` to ``version_to`` (run once)."""

    version_from: int
    version_to: int
    name: str
    detail: str


@dataclass
class OperationsState:
    seq: int = 0
    schema_version: int = 0
    """The newest layout a recorded migration reached (0: none recorded)."""
    restores: int = 0


def apply(state: OperationsState, event: envelope.Event) -> None:
    if isinstance(event, MigrationApplied):
        state.schema_version = event.version_to
    elif isinstance(event, StoreRestored):
        state.restores += 1
    else:
        raise ValueError(f"a {event.kind} is not an operations event")
    state.seq = event.seq


def invariants(state: Any) -> list[str]:
    return [] if state.schema_version >= 0 else ["a negative schema version"]
