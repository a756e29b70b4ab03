"""The event envelope every aggregate shares, and the JSON codec for all of them.

Tables (``dicetable.games.events``) and dice custody (``dicetable.custody.events``) both
record frozen, past-tense events. They share this base so that one codec, and one store,
holds every stream: ``event_to_dict``/``event_from_dict`` round-trip any registered event
through plain JSON types. Each concrete event class registers itself under its class name;
a base that only adds envelope fields is declared with ``abstract=True``.

>>> @dataclass(frozen=True, kw_only=True)
... class Noted(Event):
...     text: str
...     @property
...     def stream(self) -> str:
...         return "notes"
>>> e = Noted(seq=1, actor="ann", role=Role.SECURITY, at="2026-01-01T00:00:00+00:00",
...           text="hello")
>>> event_to_dict(e)["type"], event_from_dict(event_to_dict(e)) == e
('Noted', True)
>>> del EVENT_TYPES["Noted"]
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from typing import Any, ClassVar

from dicetable.core.dice import Roll
from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role

EVENT_TYPES: dict[str, type[Event]] = {}
"""Every concrete event class by name: what ``event_from_dict`` can rebuild."""


@dataclass(frozen=True, kw_only=True)
class Event:
    """The envelope: sequence number, who and in which role, when, and under which rule."""

    seq: int
    actor: str
    role: Role
    at: str
    """ISO 8601 time from the injected clock."""
    rule: str = ""
    """The citation of the rule that allowed or forced this event."""

    kind: ClassVar[str] = "Event"
    alert: ClassVar[bool] = False
    """True for events that must reach a person at once (a discrepancy, an expired die)."""

    def __init_subclass__(cls, *, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if abstract:
            return
        cls.kind = cls.__name__
        known = EVENT_TYPES.get(cls.__name__)
        if known is not None and (known.__module__, known.__qualname__) != (
                cls.__module__, cls.__qualname__):
            raise TypeError(f"two event classes are named {cls.__name__}: "
                            f"{known.__module__} and {cls.__module__}")
        EVENT_TYPES[cls.__name__] = cls

    @property
    def stream(self) -> str:
        """The aggregate this event belongs to (a table id, a custody site)."""
        raise NotImplementedError


def _encode(value: Any) -> Any:
    if isinstance(value, Roll):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, Decimal):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    return value


def _decode(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _decode(inner[0], value)
    if tp is Roll:
        return Roll.parse(value)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(value)
    if tp is Fraction:
        return Fraction(value)
    if tp is Decimal:
        return Decimal(value)
    if origin is tuple:
        (inner, *_) = typing.get_args(tp)
        return tuple(_decode(inner, v) for v in value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return tp(**{k: _decode(hints[k], v) for k, v in value.items()})
    return value


def event_to_dict(event: Event) -> dict[str, Any]:
    """Plain JSON types, with the event's class name under ``type``."""
    out: dict[str, Any] = {"type": event.kind}
    out.update(_encode(event))
    return out


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild any registered event; malformed input is ``InvalidInput``, never a crash."""
    kind = data.get("type")
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise InvalidInput(f"unknown event type {kind!r}", rule="events.codec")
    try:
        hints = typing.get_type_hints(cls)
        fields = {k: _decode(hints[k], v) for k, v in data.items() if k != "type"}
        return cls(**fields)
    except (TypeError, KeyError, ValueError, ArithmeticError) as e:
        raise InvalidInput(f"malformed {kind} event: {e}", rule="events.codec") from None
