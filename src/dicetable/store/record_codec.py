"""A plain dataclass state as the JSON data a snapshot keeps, and back (the one codec).

The small aggregates (accounts, staff rolls, faults, kept answers) hold nothing but declared
fields, so their snapshots are those fields through ``dicetable.core.events``.

>>> from dataclasses import dataclass, field
>>> @dataclass
... class S:
...     seq: int = 0
...     names: dict[str, str] = field(default_factory=dict)
>>> encode_fields(S(2, {"a": "b"})), decode_fields(S, {"seq": 2, "names": {"a": "b"}})
({'seq': 2, 'names': {'a': 'b'}}, S(seq=2, names={'a': 'b'}))
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from dicetable.core import events
from dicetable.core.errors import InvalidInput
from dicetable.core.events import type_hints

S = TypeVar("S")


def encode_fields(state: Any) -> dict[str, Any]:
    hints = type_hints(type(state))
    return {f.name: events.encode_value(hints[f.name], getattr(state, f.name))
            for f in dataclasses.fields(state)}


def decode_fields(cls: type[S], data: dict[str, Any]) -> S:
    if not isinstance(data, dict):
        raise InvalidInput("a snapshot is a JSON object", rule="store.snapshot")
    hints = type_hints(cls)
    try:
        values = {f.name: events.decode_value(hints[f.name], data[f.name])
                  for f in dataclasses.fields(cls)  # type: ignore[arg-type]
                  if f.name in data}
        return cls(**values)
    except (TypeError, ValueError, KeyError) as e:
        raise InvalidInput(f"malformed {cls.__name__} snapshot: {e}",
                           rule="store.snapshot") from None


def roundtrips(state: Any) -> bool:
    try:
        return bool(decode_fields(type(state), encode_fields(state)) == state)
    except (InvalidInput, TypeError, ValueError, KeyError):
        return False
