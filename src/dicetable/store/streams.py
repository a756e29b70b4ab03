"""Streams of every aggregate in one store: which kind of aggregate a stream id names.

A stream id is ``KIND:NAME`` for every aggregate but a table (``custody:river`` is the dice
custody ledger of the site ``river``); a table's stream id is its table id, as it always was,
so the logs of existing floors read unchanged. Each kind registers an ``Aggregate``: how to
fold its events into a state, how a snapshot of that state is written and read, and what must
hold after a replay (a table conserves money). The hash chain, snapshots, audit, recall and
export work on every registered kind; a new kind (accounts, staff assignments) registers
itself the same way.

>>> kind_of("craps-pa-1"), kind_of("custody:river"), stream_id("custody", "river")
('table', 'custody', 'custody:river')
>>> name_of("custody:river"), kind_of("odd:name")
('river', 'table')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event

TABLE = "table"
SEPARATOR = ":"


@dataclass(frozen=True)
class Aggregate:
    """What the store needs to know of one kind of aggregate."""

    kind: str
    event_type: type[Event]
    """The base class of its events: an event of another aggregate is never appended."""
    owner_field: str
    """The event field naming the aggregate (``table``, ``site``)."""
    new_state: Callable[[], Any]
    fold: Callable[[Any, Event], None]
    """Apply one event to the state (the state is the fold of the stream)."""
    encode_state: Callable[[Any], dict[str, Any]]
    """The state as the JSON data a snapshot keeps."""
    decode_state: Callable[[dict[str, Any], Event], Any]
    """The state a snapshot holds, given the stream's first event (its rules)."""
    invariants: Callable[[Any], list[str]] = field(default=lambda state: [])
    """What is wrong with a replayed state (empty when nothing is)."""
    roundtrips: Callable[[Any], bool] | None = None


_KINDS: dict[str, Aggregate] = {}
"""Filled by the modules that declare aggregates (``dicetable.store.aggregates``, which the
package imports), so this registry imports none of them."""


def register(aggregate: Aggregate) -> None:
    _KINDS[aggregate.kind] = aggregate


def kind_of(stream: str) -> str:
    """The aggregate kind a stream id names (``table`` for a bare id)."""
    prefix, sep, _ = stream.partition(SEPARATOR)
    if sep and prefix != TABLE and prefix in _KINDS:
        return prefix
    return TABLE


def name_of(stream: str) -> str:
    """The aggregate's own name: a table id, a site."""
    kind = kind_of(stream)
    return stream if kind == TABLE else stream[len(kind) + 1:]


def stream_id(kind: str, name: str) -> str:
    if not name:
        raise InvalidInput(f"a {kind} stream needs a name", rule="store.stream")
    return name if kind == TABLE else f"{kind}{SEPARATOR}{name}"


def aggregate(stream_or_kind: str) -> Aggregate:
    """The registered aggregate of a stream id or a kind name."""
    kind = stream_or_kind if stream_or_kind in _KINDS else kind_of(stream_or_kind)
    return _KINDS[kind]


def claimed_stream(kind: str, data: dict[str, Any]) -> str | None:
    """The stream an event's own data says it belongs to."""
    owner = data.get(aggregate(kind).owner_field)
    if not isinstance(owner, str) or not owner:
        return None
    return stream_id(kind, owner)


def kinds() -> list[str]:
    return sorted(_KINDS)


def check_table_id(table_id: str) -> None:
    """A table id may not look like another aggregate's stream."""
    if kind_of(table_id) != TABLE:
        raise InvalidInput(f"{table_id!r} names a {kind_of(table_id)} stream, not a table",
                           rule="store.stream")
