"""Events to and from the canonical JSON the store keeps and hashes, for every aggregate.

The conversion itself is the one codec (``dicetable.core.codec``, through
``dicetable.core.events``); this module adds what storage needs: the canonical text that is
hashed, a fast path for parsing it, and the one place where a stored event of an older shape
is brought up to date before it is rebuilt (``upgrade``: a per-event schema version and its
upcasters belong there).

>>> from dicetable.core.dice import Roll
>>> from dicetable.core.roles import Role
>>> from dicetable.games.events import DiceRolled, event_to_dict
>>> e = DiceRolled(table="t1", seq=3, actor="stick", role=Role.STICKPERSON,
...                at="2026-01-01T00:00:00+00:00", roll=Roll(3, 4), source="manual")
>>> decode(event_to_dict(e)) == e
True
>>> kind, body = encode(e)
>>> kind, decode_body(body) == e
('DiceRolled', True)
"""

from __future__ import annotations

import json
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event, event_from_dict, event_to_dict
from dicetable.store.chain import canonical


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A stored event's data in the shape its class has today (every shape is current)."""
    return data


def decode(data: dict[str, Any]) -> Event:
    """The event (of any aggregate) a stored dict describes."""
    if not isinstance(data, dict):
        raise InvalidInput("an event is a JSON object", rule="events.codec")
    return event_from_dict(upgrade(data))


_JSON = json.JSONDecoder()


def decode_body(body: str) -> Event:
    data, end = _JSON.raw_decode(body)  # stored bodies are canonical: no outer whitespace
    if end != len(body) or not isinstance(data, dict):
        data = json.loads(body)  # raises on trailing garbage, as a tampered body may have
    return decode(data)


def to_dict(event: Event) -> dict[str, Any]:
    """The event as JSON data (``event_to_dict``)."""
    return event_to_dict(event)


def encode(event: Event) -> tuple[str, str]:
    """The event's kind and the canonical JSON that is stored and hashed."""
    return event.kind, canonical(event_to_dict(event))
