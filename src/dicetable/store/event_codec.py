"""Events to and from their stored JSON, fast enough to replay a million of them.

``decode`` gives exactly what ``dicetable.games.events.event_from_dict`` gives (the tests check
it on every event type), but works out each event class's field converters once instead of
reading type hints on every call.

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

import dataclasses
import json
import types
import typing
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from dicetable.core.dice import ALL_ROLLS, Roll
from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role
from dicetable.games.events import EVENT_TYPES, Event, event_from_dict, event_to_dict
from dicetable.store.chain import canonical

Converter = Callable[[Any], Any]

_ROLLS = {str(r): r for r in ALL_ROLLS}
_ROLES = {r.value: r for r in Role}


def _roll(value: Any) -> Roll:
    r = _ROLLS.get(value)
    return r if r is not None else Roll.parse(value)


def _role(value: Any) -> Role:
    r = _ROLES.get(value)
    return r if r is not None else Role(value)


def _optional(conv: Converter) -> Converter:
    def convert(value: Any) -> Any:
        return None if value is None else conv(value)
    return convert


def _tuple_of(conv: Converter) -> Converter:
    def convert(value: Any) -> Any:
        return tuple(conv(v) for v in value)
    return convert


def _converter(tp: Any) -> Converter | None:
    """How to turn the JSON form of a ``tp`` back into one; None when it is already one."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        conv = _converter(inner[0])
        if conv is None:
            return None
        return _optional(conv)
    if tp is Roll:
        return _roll
    if tp is Role:
        return _role
    if tp is Fraction:
        return Fraction
    if origin is tuple:
        item = _converter(typing.get_args(tp)[0])
        if item is None:
            return tuple
        return _tuple_of(item)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_converter(tp)
    return None


def _dataclass_converter(cls: type[Any]) -> Converter:
    hints = typing.get_type_hints(cls)
    convs = {f.name: _converter(hints[f.name]) for f in dataclasses.fields(cls)}
    active = {name: c for name, c in convs.items() if c is not None}

    def convert(value: Any) -> Any:
        if active:
            value = dict(value)
            for name, c in active.items():
                if name in value:
                    value[name] = c(value[name])
        return cls(**value)

    return convert


class _EventDecoder:
    """Builds one event class from its dict, bypassing the generic per-call type lookups."""

    def __init__(self, cls: type[Event]) -> None:
        hints = typing.get_type_hints(cls)
        self.cls = cls
        self.fields = {f.name for f in dataclasses.fields(cls)}
        self.convs = [(name, c) for name in sorted(self.fields)
                      if (c := _converter(hints[name])) is not None]
        self.defaults: dict[str, Any] = {}
        self.required: set[str] = set()
        self.simple = True
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                self.defaults[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                self.simple = False  # a fresh default per event: go through __init__
            else:
                self.required.add(f.name)
        # Events are frozen dataclasses with no __post_init__: filling __dict__ directly builds
        # the same object as __init__ would, several times faster.
        if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
            self.simple = False

    def __call__(self, data: dict[str, Any]) -> Event:
        values = {k: v for k, v in data.items() if k != "type"}
        for name, conv in self.convs:
            if name in values:
                values[name] = conv(values[name])
        if not self.simple or not self.required <= values.keys() \
                or not values.keys() <= self.fields:
            return _slow(data)
        obj = object.__new__(self.cls)
        obj.__dict__.update(self.defaults)
        obj.__dict__.update(values)
        return obj


def _slow(data: dict[str, Any]) -> Event:
    return event_from_dict(data)


_DECODERS: dict[str, _EventDecoder] = {}


def decode(data: dict[str, Any]) -> Event:
    """The event a stored dict describes (``event_from_dict``, faster)."""
    kind = data.get("type")
    dec = _DECODERS.get(kind) if isinstance(kind, str) else None
    if dec is None:
        cls = EVENT_TYPES.get(str(kind))
        if cls is None:
            raise InvalidInput(f"unknown event type {kind!r}", rule="events.codec")
        dec = _DECODERS[cls.__name__] = _EventDecoder(cls)
    try:
        return dec(data)
    except (TypeError, ValueError, AttributeError) as e:
        raise InvalidInput(f"malformed {kind} event: {e}", rule="events.codec") from None


def decode_body(body: str) -> Event:
    return decode(json.loads(body))


def encode(event: Event) -> tuple[str, str]:
    """The event's kind and the canonical JSON that is stored and hashed."""
    return event.kind, canonical(event_to_dict(event))
