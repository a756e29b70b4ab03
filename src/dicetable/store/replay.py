"""Rebuild a table's state from its log, starting from the latest sound snapshot.

A snapshot is used only when it is intact, bound to the event it claims to follow (same hash
as the stored event) and taken under the table's rule pack; otherwise the log is replayed from
the start. Either way the state is the fold of the log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from dicetable.core.errors import InvalidInput
from dicetable.games.events import Event, TableOpened
from dicetable.games.state import TableState
from dicetable.rules.model import RulePack
from dicetable.store.base import EventStore
from dicetable.store.chain import Snapshot, decode_body
from dicetable.store.state_codec import decode_state, fold, pack_for

log = logging.getLogger(__name__)

def opening(store: EventStore, table: str) -> TableOpened:
    """The table's first event."""
    for row in store.records(table, after=0, until=1):
        event = decode_body(row.body)
        if isinstance(event, TableOpened):
            return event
        break
    raise InvalidInput(f"no table {table!r} in {store.location}", rule="store.table")


def usable(store: EventStore, snap: Snapshot, pack: RulePack) -> TableState | None:
    """The state a snapshot holds, or None when it cannot be trusted."""
    if not snap.trusted(store.key):
        log.warning("snapshot %s@%d is damaged or unsigned; replaying instead", snap.table,
                    snap.seq)
        return None
    rows = list(store.records(snap.table, after=snap.seq - 1, until=snap.seq))
    if not rows or rows[0].hash != snap.event_hash:
        log.warning("snapshot %s@%d does not match the log; replaying instead", snap.table,
                    snap.seq)
        return None
    try:
        state = decode_state(snap.data(), pack)
    except (InvalidInput, KeyError, TypeError, ValueError):
        log.warning("snapshot %s@%d cannot be read; replaying instead", snap.table, snap.seq)
        return None
    return state if state.seq == snap.seq else None


def load_state(store: EventStore, table: str, *, use_snapshot: bool = True,
               until: int | None = None) -> TableState:
    """The table's state after its last event (or after event ``until``)."""
    pack = pack_for(opening(store, table))
    state: TableState | None = None
    if use_snapshot:
        snap = store.latest_snapshot(table, at_or_before=until)
        if snap is not None:
            state = usable(store, snap, pack)
    after = state.seq if state is not None else 0
    return fold(_events(store, table, after, until), state)


def _events(store: EventStore, table: str, after: int, until: int | None) -> Iterator[Event]:
    bodies = store.bodies(table, after, until)
    decode = decode_body
    for body in bodies:
        event = decode(body)
        if not isinstance(event, Event):
            raise InvalidInput(f"{table!r} holds a {event.kind}, not a table event",
                               rule="store.stream")
        yield event
