"""The event envelope every aggregate shares, and the JSON codec for all of them.

Tables (``dicetable.games.events``) and dice custody (``dicetable.custody.events``) both
record frozen, past-tense events. They share this base so that one codec, and one store,
holds every stream: ``event_to_dict``/``event_from_dict`` round-trip any registered event
through plain JSON types. Each concrete event class registers itself under its class name;
a base that only adds envelope fields is declared with ``abstract=True``.

>>> class Noted(Event):
...     text: str
...     @property
...     def stream(self) -> str:
...         return "notes"
>>> e = Noted(seq=1, actor="ann", role=Role.SECURITY, at="2026-01-01T00:00:00+00:00",
...           text="hello")
>>> event_to_dict(e)["type"], event_from_dict(event_to_dict(e)) == e
('Noted', True)
>>> del EVENT_TYPES["Noted"]

The one JSON codec of dicetable: events of every aggregate, and snapshots of their states.

A value is written as plain JSON types according to its declared type (a dataclass field's
annotation): a ``Roll`` as ``"3-4"``, an enum by its value, a ``Fraction`` as ``"7/6"``, a
``Decimal`` as its exact text, a tuple, list or set as a list (a set sorted), a dataclass as an
object of its fields. Reading it back follows the same declared type. The converters for each
type are worked out once and cached, so encoding and decoding a million events stays fast.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Measured:
...     roll: Roll
...     sides: tuple[Decimal, ...]
...     edge: Fraction | None = None
>>> m = Measured(Roll(3, 4), (Decimal("0.750"), Decimal("0.7505")), Fraction(1, 4))
>>> data = encode_value(Measured, m)
>>> data
{'roll': '3-4', 'sides': ['0.750', '0.7505'], 'edge': '1/4'}
>>> decode_value(Measured, data) == m
True
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from dicetable.core.dice import ALL_ROLLS, Roll
from dicetable.core.errors import InvalidInput
from dicetable.core.frozen import Frozen
from dicetable.core.money import fraction_text
from dicetable.core.roles import Role

Converter = Callable[[Any], Any]

_ROLLS = {str(r): r for r in ALL_ROLLS}


# -- values of no declared shape ------------------------------------------------------------------
def generic(value: Any) -> Any:
    """JSON data for a value whose type is not declared (``Any``, ``dict[str, Any]``)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Roll):
        return str(value)
    if isinstance(value, Fraction):
        return fraction_text(value)
    if isinstance(value, Decimal):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: generic(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [generic(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(generic(v) for v in value)
    if isinstance(value, dict):
        return {_key(k): generic(v) for k, v in value.items()}
    raise TypeError(f"cannot encode a {type(value).__name__}")


def _key(k: Any) -> str:
    return str(k.value) if isinstance(k, enum.Enum) else str(k)


# -- encoding -------------------------------------------------------------------------------------
def _union_args(tp: Any) -> list[Any] | None:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(tp) if a is not type(None)]
    return None


_ENCODERS: dict[Any, Converter | None] = {}


def _once(cache: dict[Any, Converter | None], make: Callable[[Any], Converter | None],
          tp: Any) -> Converter | None:
    """``make(tp)``, worked out once per annotation."""
    try:
        return cache[tp]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation: work it out each time
        return make(tp)
    conv = cache[tp] = make(tp)
    return conv


def encoder(tp: Any) -> Converter | None:
    """How to write a ``tp`` as JSON data; None when it already is JSON data."""
    return _once(_ENCODERS, _make_encoder, tp)


def _optional(conv: Converter) -> Converter:
    def convert(value: Any) -> Any:
        return None if value is None else conv(value)
    return convert


def _each(conv: Converter | None, out: type[Any] = list) -> Converter:
    if conv is None:
        return out
    def convert(value: Any) -> Any:
        return out(conv(v) for v in value)
    return convert


def _make_encoder(tp: Any) -> Converter | None:
    union = _union_args(tp)
    if union is not None:
        if len(union) != 1:
            return _optional(generic)
        inner = encoder(union[0])
        return None if inner is None else _optional(inner)
    if tp in (str, int, bool, float):
        return None
    if tp is Roll:
        return str
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_value
    if tp is Fraction:
        return fraction_text
    if tp is Decimal:
        return str
    origin = typing.get_origin(tp)
    if origin is tuple or origin is list:
        args = typing.get_args(tp)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            convs = [encoder(a) for a in args]
            return lambda value: [v if c is None else c(v)
                                  for c, v in zip(convs, value, strict=True)]
        return _each(encoder(args[0]) if args else generic)
    if origin in (set, frozenset):
        item = encoder(typing.get_args(tp)[0]) or (lambda v: v)
        return lambda value: sorted(item(v) for v in value)
    if origin is dict:
        _, inner = typing.get_args(tp)
        conv = encoder(inner)
        if conv is None:
            return lambda value: {_key(k): v for k, v in value.items()}
        return lambda value: {_key(k): conv(v) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record_encoder(tp)
    return generic


def _enum_value(value: Any) -> Any:
    # ``_value_`` is what the ``value`` property reads, without the descriptor's two calls
    return value._value_ if isinstance(value, enum.Enum) else value


_HINTS: dict[type[Any], dict[str, Any]] = {}


def type_hints(cls: type[Any]) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, worked out once a class: resolving the annotations'
    strings costs more than building a command or snapshotting a table.
    Treat the result as read-only."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _fields(cls: type[Any]) -> list[tuple[str, Any]]:
    hints = type_hints(cls)
    return [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]


def _record_encoder(cls: type[Any]) -> Converter:
    parts: list[tuple[str, Converter | None]] = []

    def convert(value: Any) -> Any:
        if not parts:
            parts.extend((name, encoder(tp)) for name, tp in _fields(cls))
        return {name: getattr(value, name) if c is None else c(getattr(value, name))
                for name, c in parts}

    return convert


def encode_value(tp: Any, value: Any) -> Any:
    """``value`` (declared as a ``tp``) as JSON data."""
    conv = encoder(tp)
    return value if conv is None else conv(value)


# -- decoding -------------------------------------------------------------------------------------
_DECODERS: dict[Any, Converter | None] = {}


def decoder(tp: Any) -> Converter | None:
    """How to read a ``tp`` back from its JSON data; None when the data already is one."""
    return _once(_DECODERS, _make_decoder, tp)


class _Known(dict[Any, Any]):
    """The values of a type by their JSON data; a value it does not hold is made by ``make``
    (which raises for a bad one). Its bound ``__getitem__`` is the converter: a lookup with
    no Python frame for the values a log repeats a million times."""

    def __init__(self, known: dict[Any, Any], make: Converter) -> None:
        super().__init__(known)
        self.make = make

    def __missing__(self, value: Any) -> Any:
        return self.make(value)


_roll: Converter = _Known(_ROLLS, Roll.parse).__getitem__


def _enum(cls: type[enum.Enum]) -> Converter:
    return _Known({m.value: m for m in cls}, cls).__getitem__


def _make_decoder(tp: Any) -> Converter | None:
    union = _union_args(tp)
    if union is not None:
        if len(union) != 1:
            return None
        inner = decoder(union[0])
        return None if inner is None else _optional(inner)
    if tp is Any or tp is object or tp in (str, int, bool, float):
        return None
    if tp is Roll:
        return _roll
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    if tp is Fraction:
        return Fraction
    if tp is Decimal:
        return lambda v: Decimal(str(v))
    origin = typing.get_origin(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return _each(decoder(args[0]), tuple)
        convs = [decoder(a) for a in args]
        return lambda value: tuple(v if c is None else c(v)
                                   for c, v in zip(convs, value, strict=True))
    if origin is list:
        args = typing.get_args(tp)
        return _each(decoder(args[0]) if args else None)
    if origin in (set, frozenset):
        return _each(decoder(typing.get_args(tp)[0]), origin)
    if origin is dict:
        key_tp, inner = typing.get_args(tp)
        kc, vc = decoder(key_tp), decoder(inner)
        if kc is None and vc is None:
            return dict
        return lambda value: {(k if kc is None else kc(k)): (v if vc is None else vc(v))
                              for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return RecordDecoder(tp)
    return None


class RecordDecoder:
    """Builds a dataclass from its JSON object.

    A frozen dataclass with no ``__post_init__`` and no slots, given exactly its fields (as the
    encoder writes them), is built by filling ``__dict__``: the same object ``__init__`` makes,
    without the cost of calling it. Anything else goes through ``__init__`` (defaults, and a
    ``TypeError`` for an unknown or missing field).
    """

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        self._convs: dict[str, Converter] | None = None
        every = dataclasses.fields(cls)
        self.fields = frozenset(f.name for f in every if f.init)
        self.derived = frozenset(f.name for f in every if not f.init)
        self.direct = (not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")
                       and not self.derived)
        self.adopt: Callable[[dict[str, Any]], Any] = self._first_adopt
        """Build from a dict that is the caller's to give away (freshly parsed JSON): it is
        converted in place and, when it holds exactly the fields, becomes the object's own
        ``__dict__`` - nothing copied. Made for the class on first use (``_adopter``)."""

    @property
    def convs(self) -> dict[str, Converter]:
        if self._convs is None:  # lazily: a class may name types defined after it
            self._convs = {name: c for name, tp in _fields(self.cls)
                           if (c := decoder(tp)) is not None}
        return self._convs

    def __call__(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise TypeError(f"a {self.cls.__name__} is a JSON object")
        return self.adopt(dict(data))

    def _first_adopt(self, values: dict[str, Any]) -> Any:
        self.adopt = self._adopter()
        return self.adopt(values)

    def _adopter(self) -> Callable[[dict[str, Any]], Any]:
        # One closure per class, its fields and converters bound once: a replay adopts every
        # event it reads, and the attribute lookups were most of the cost (see bench/replay_bench).
        convs = tuple(self.convs.items())
        cls, fields, derived, direct = self.cls, self.fields, self.derived, self.direct
        new, put = object.__new__, object.__setattr__

        def adopt(values: dict[str, Any]) -> Any:
            for name, conv in convs:
                if name in values:
                    values[name] = conv(values[name])
            if direct and values.keys() == fields:
                obj = new(cls)
                put(obj, "__dict__", values)
                return obj
            for name in derived & values.keys():  # worked out by the class itself
                del values[name]
            return cls(**values)
        return adopt


def decode_value(tp: Any, data: Any) -> Any:
    """The ``tp`` that ``encode_value`` wrote as ``data``."""
    conv = decoder(tp)
    return data if conv is None else conv(data)


def carried(source: Any, *groups: type[Any]) -> dict[str, Any]:
    """The values of the field groups' fields on ``source`` (a command or an event that
    derives from them), by name, a list as a tuple: what the event recording a command takes
    over from it, or the command an event records recovers from it.

    >>> class Chips(Frozen):
    ...     player: str
    ...     amount: int
    >>> class BuyChips(Chips):
    ...     chip_set: str = ""
    >>> carried(BuyChips(player="ann", amount=500, chip_set="A"), Chips)
    {'player': 'ann', 'amount': 500}
    """
    names = _CARRIED.get(groups)
    if names is None:
        names = _CARRIED[groups] = tuple(f.name for g in groups for f in dataclasses.fields(g))
    return {name: tuple(v) if isinstance(v := getattr(source, name), list) else v
            for name in names}


_CARRIED: dict[tuple[type[Any], ...], tuple[str, ...]] = {}
"""The field names of each combination of field groups ``carried`` was asked for."""


EVENT_TYPES: dict[str, type[Event]] = {}
"""Every concrete event class by name: what ``event_from_dict`` can rebuild."""

class Event(Frozen):
    """The envelope: sequence number, who and in which role, when, and under which rule. Each
    event class is a frozen, keyword-only dataclass by deriving from it (``Frozen``)."""

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


class Sequenced(Protocol):
    """An aggregate's state: the seq of the last event folded into it."""

    seq: int


S = TypeVar("S", bound=Sequenced)
C = TypeVar("C")
Ev = TypeVar("Ev", bound=Event)
E = TypeVar("E", bound=Event)


@dataclass
class Emitter(Generic[S, C, Ev]):
    """Stamps the events one command decides with the envelope: the next sequence numbers
    after the state's, the decision's time, its rule, and what ``stamp`` takes from the
    command (who gave it, in which role) and the stream (its owner)."""

    state: S
    command: C
    now: str
    events: list[Ev] = field(default_factory=list)

    def stamp(self) -> dict[str, Any]:
        raise NotImplementedError

    def emit(self, cls: type[E], rule: str = "", **fields: Any) -> E:
        event = cls(seq=self.state.seq + len(self.events) + 1, at=self.now, rule=rule,
                    **self.stamp(), **fields)
        self.events.append(cast(Ev, event))  # cls is one of the aggregate's own events
        return event


class _EventWriter:
    """One event class's fields and their converters, worked out once."""

    def __init__(self, cls: type[Event]) -> None:
        hints = type_hints(cls)
        self.kind = cls.kind
        self.parts = [(f.name, encoder(hints[f.name])) for f in dataclasses.fields(cls)]
        self.converted = [(name, conv) for name, conv in self.parts if conv is not None]
        self.names = tuple(name for name, _ in self.parts) if not hasattr(
            cls, "__slots__") else None

    def __call__(self, event: Event) -> dict[str, Any]:
        if self.names is not None and tuple(values := event.__dict__) == self.names:
            # Its fields alone, in their order (as made by its class; one read back from
            # the log holds them sorted): copied at once, only those that need it converted.
            out: dict[str, Any] = {"type": self.kind, **values}
            for name, conv in self.converted:
                out[name] = conv(out[name])
            return out
        out = {"type": self.kind}
        for name, maybe in self.parts:
            v = getattr(event, name)
            out[name] = v if maybe is None else maybe(v)
        return out


_WRITERS: dict[type[Event], _EventWriter] = {}
_READERS: dict[str, RecordDecoder] = {}


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
        reader = _READERS[cls.__name__] = RecordDecoder(cls)
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


def _build(reader: RecordDecoder, kind: object, body: dict[str, Any]) -> Event:
    try:
        event: Event = reader.adopt(body)
    except (TypeError, KeyError, ValueError, ArithmeticError, AttributeError) as e:
        raise InvalidInput(f"malformed {kind} event: {e}", rule="events.codec") from None
    return event
