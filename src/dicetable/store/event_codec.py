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

# -- schema versions -----------------------------------------------------------------------------
# Every stored event carries its schema version ("v"; a body without one is version 1). On
# read, an upcaster turns each older version into the next, up to the current one, so code
# only ever sees current events; the committed fixture log (tests/fixtures) keeps it so.
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

VERSIONS: dict[str, int] = {"TableOpened": 2}
"""The current schema version of each event kind that has changed (all others: 1)."""


def _table_opened_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 writes the table's automations in its opening. Before, a table settled by itself
    only under a pack with ``settlement.automatic``, and an electronic table's server ran its
    betting timer and CSPRNG roll: that is what a v1 table keeps doing."""
    from dicetable.table.automation import CHORES, Automation

    if data.get("automations") is None:
        rules = data.get("pack", {}).get("rules", {})
        own: set[Automation] = set()
        if rules.get("settlement.automatic", {}).get("value") is True:
            own |= set(CHORES)
        if data.get("mode") == "electronic":
            own |= {Automation.BETTING_TIMER, Automation.CSPRNG_ROLL}
        data = {**data, "automations": sorted(a.value for a in own)}
    return data


UPCASTERS: dict[tuple[str, int], Upcaster] = {("TableOpened", 1): _table_opened_v1_to_v2}
"""(kind, version) -> the function that turns that version into the next."""


def upcast(data: dict[str, Any]) -> dict[str, Any]:
    """A stored event's dict at its kind's current schema version, without the "v" key."""
    version = data.get("v", 1)
    if "v" in data:
        data = {k: v for k, v in data.items() if k != "v"}
    kind = str(data.get("type"))
    current = VERSIONS.get(kind, 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= current:
        raise InvalidInput(f"{kind} schema version {version!r} is not one this code reads "
                           f"(1 to {current})", rule="events.codec")
    while version < current:
        data = UPCASTERS[(kind, version)](data)
        version += 1
    return data

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
        self.fields = frozenset(f.name for f in dataclasses.fields(cls))
        self.convs = [(name, c) for name in sorted(self.fields)
                      if (c := _converter(hints[name])) is not None]
        # Events are frozen dataclasses with no __post_init__: filling __dict__ directly builds
        # the same object as __init__ would, several times faster. Only a dict that names
        # every field exactly (as ``event_to_dict`` writes them) takes this path.
        self.direct = not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")

    def __call__(self, data: dict[str, Any]) -> Event:
        values = dict(data)
        del values["type"]
        if not self.direct or values.keys() != self.fields:
            return _slow(data)
        for name, conv in self.convs:
            values[name] = conv(values[name])
        obj = object.__new__(self.cls)
        obj.__dict__.update(values)
        return obj


def _slow(data: dict[str, Any]) -> Event:
    event = event_from_dict(data)
    if not isinstance(event, Event):
        raise InvalidInput(f"{event.kind} is not a table event", rule="events.codec")
    return event


_DECODERS: dict[str, _EventDecoder] = {}


def decode(data: dict[str, Any]) -> Event:
    """The event a stored dict describes (``event_from_dict``, faster)."""
    if not isinstance(data, dict):
        raise InvalidInput("an event is a JSON object", rule="events.codec")
    if "v" in data or data.get("type") in VERSIONS:
        try:
            data = upcast(data)
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, InvalidInput):
                raise
            raise InvalidInput(f"cannot upcast {data.get('type')}: {e}",
                               rule="events.codec") from None
    kind = data.get("type")
    dec = _DECODERS.get(kind) if isinstance(kind, str) else None
    if dec is None:
        cls = EVENT_TYPES.get(str(kind))
        if cls is None:
            raise InvalidInput(f"unknown event type {kind!r}", rule="events.codec")
        if not issubclass(cls, Event):
            raise InvalidInput(f"{kind} is not a table event", rule="events.codec")
        dec = _DECODERS[cls.__name__] = _EventDecoder(cls)
    try:
        return dec(data)
    except (TypeError, ValueError, AttributeError) as e:
        raise InvalidInput(f"malformed {kind} event: {e}", rule="events.codec") from None


_JSON = json.JSONDecoder()


def decode_body(body: str) -> Event:
    data, end = _JSON.raw_decode(body)  # stored bodies are canonical: no outer whitespace
    if end != len(body) or not isinstance(data, dict):
        data = json.loads(body)  # raises on trailing garbage, as a tampered body may have
    return decode(data)


# -- encoding ------------------------------------------------------------------------------------
def _generic(value: Any) -> Any:
    """JSON data for a value of no declared shape (the pack inside ``TableOpened``)."""
    if isinstance(value, Roll):
        return str(value)
    if isinstance(value, Role):
        return value.value
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _generic(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_generic(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _generic(v) for k, v in value.items()}
    return value


def _str(value: Any) -> Any:
    return None if value is None else str(value)


def _role_value(value: Any) -> Any:
    return value.value if isinstance(value, Role) else value


def _fraction(value: Any) -> Any:
    return None if value is None else f"{value.numerator}/{value.denominator}"


def _list_of(conv: Converter | None) -> Converter:
    if conv is None:
        return list
    def convert(value: Any) -> Any:
        return [conv(v) for v in value]
    return convert


def _to_json(tp: Any) -> Converter | None:
    """How to turn a ``tp`` into its JSON form; None when it already is one."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _to_json(inner[0]) if len(inner) == 1 else _generic
    if tp in (str, int, bool):
        return None
    if tp is Roll:
        return _str
    if tp is Role:
        return _role_value
    if tp is Fraction:
        return _fraction
    if origin is tuple:
        return _list_of(_to_json(typing.get_args(tp)[0]))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        parts = [(f.name, _to_json(hints[f.name])) for f in dataclasses.fields(tp)]
        def convert(value: Any) -> Any:
            return {name: getattr(value, name) if c is None else c(getattr(value, name))
                    for name, c in parts}
        return convert
    return _generic


class _EventEncoder:
    def __init__(self, cls: type[Event]) -> None:
        hints = typing.get_type_hints(cls)
        self.kind = cls.kind
        self.parts = [(f.name, _to_json(hints[f.name])) for f in dataclasses.fields(cls)]

    def __call__(self, event: Event) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind}
        values = event.__dict__
        for name, conv in self.parts:
            v = values[name]
            out[name] = v if conv is None else conv(v)
        return out


_ENCODERS: dict[type[Event], _EventEncoder] = {}


def to_dict(event: Event) -> dict[str, Any]:
    """``event_to_dict(event)``, with each class's field converters worked out once."""
    cls = type(event)
    enc = _ENCODERS.get(cls)
    if enc is None:
        if EVENT_TYPES.get(cls.__name__) is not cls or hasattr(cls, "__slots__"):
            return event_to_dict(event)
        enc = _ENCODERS[cls] = _EventEncoder(cls)
    return enc(event)


def encode(event: Event) -> tuple[str, str]:
    """The event's kind and the canonical JSON that is stored and hashed, with its schema
    version."""
    data = to_dict(event)
    data["v"] = VERSIONS.get(event.kind, 1)
    return event.kind, canonical(data)
