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
from dataclasses import dataclass
from typing import Any, ClassVar

from dicetable.core import codec
from dicetable.core.codec import type_hints
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
        _READERS.pop(cls.__name__, None)

    @property
    def stream(self) -> str:
        """The aggregate this event belongs to (a table id, a custody site)."""
        raise NotImplementedError


class _EventWriter:
    """One event class's fields and their converters, worked out once."""

    def __init__(self, cls: type[Event]) -> None:
        hints = type_hints(cls)
        self.kind = cls.kind
        self.parts = [(f.name, codec.encoder(hints[f.name])) for f in dataclasses.fields(cls)]

    def __call__(self, event: Event) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind}
        for name, conv in self.parts:
            v = getattr(event, name)
            out[name] = v if conv is None else conv(v)
        return out


_WRITERS: dict[type[Event], _EventWriter] = {}
_READERS: dict[str, codec.RecordDecoder] = {}


def event_to_dict(event: Event) -> dict[str, Any]:
    """Plain JSON types, with the event's class name under ``type``."""
    cls = type(event)
    writer = _WRITERS.get(cls)
    if writer is None:
        writer = _WRITERS[cls] = _EventWriter(cls)
    return writer(event)


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild any registered event; malformed input is ``InvalidInput``, never a crash."""
    if not isinstance(data, dict):
        raise InvalidInput("an event is a JSON object", rule="events.codec")
    kind = data.get("type")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        cls = EVENT_TYPES.get(str(kind))
        if cls is None:
            raise InvalidInput(f"unknown event type {kind!r}", rule="events.codec")
        reader = _READERS[cls.__name__] = codec.RecordDecoder(cls)
    return _build(reader, kind, {k: v for k, v in data.items() if k != "type"})


def event_from_owned_dict(data: dict[str, Any]) -> Event:
    """``event_from_dict`` for a dict that is the caller's to give away (freshly parsed
    JSON): it becomes the event's own fields, nothing copied. The dict is consumed."""
    kind = data.pop("type", None)
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        data["type"] = kind
        return event_from_dict(data)
    try:  # as _build does, in line: this runs once for every event a replay reads
        event: Event = reader.adopt(data)
    except (TypeError, KeyError, ValueError, ArithmeticError, AttributeError) as e:
        raise InvalidInput(f"malformed {kind} event: {e}", rule="events.codec") from None
    return event


def _build(reader: codec.RecordDecoder, kind: object, body: dict[str, Any]) -> Event:
    try:
        event: Event = reader.adopt(body)
    except (TypeError, KeyError, ValueError, ArithmeticError, AttributeError) as e:
        raise InvalidInput(f"malformed {kind} event: {e}", rule="events.codec") from None
    return event
