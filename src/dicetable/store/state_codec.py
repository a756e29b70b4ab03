"""A table's whole state as plain JSON data, and back: what a snapshot stores.

Generic over ``TableState``'s dataclass fields, so a field added later is carried along. The
rule pack is not copied into every snapshot: it is named by its digest and taken from the
table's first event. The live procedure's part of the state (``extra["procedure"]``) is
decoded to its own type. A state that does not come back exactly is reported by
``roundtrips`` and is then simply not snapshotted.

>>> from dicetable.table import Table
>>> t = Table.open("pa-craps", "t1")
>>> t.join("alice"); t.buy_in("alice", 100_00); _ = t.bet("alice", "pass", 10_00)
>>> data = encode_state(t.state)
>>> data["pack_digest"] == t.pack.digest, data["players"]["alice"]["balance"]
(True, 9000)
>>> decode_state(data, t.pack) == t.state
True
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from fractions import Fraction
from typing import Any

from dicetable.core.dice import Roll
from dicetable.core.errors import InvalidInput
from dicetable.games.state import TableState
from dicetable.rules.model import RulePack
from dicetable.table.procedure_state import KEY as PROCEDURE_KEY
from dicetable.table.procedure_state import Procedure

_SKIP = {"pack"}

EXTRA_TYPES: dict[str, type[Any]] = {PROCEDURE_KEY: Procedure}
"""What the layers above the game keep in ``TableState.extra``, by key."""


def _enc(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str | float):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Roll):
        return str(value)
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _enc(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_enc(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(_enc(v) for v in value)
    if isinstance(value, dict):
        return {str(k): _enc(v) for k, v in value.items()}
    raise InvalidInput(f"cannot snapshot a {type(value).__name__}", rule="store.snapshot")


def _dec(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any or tp is object:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _dec(inner[0], value)
    if tp is Roll:
        return Roll.parse(value)
    if tp is Fraction:
        return Fraction(value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_dec(args[0], v) for v in value)
        return tuple(_dec(a, v) for a, v in zip(args, value, strict=True))
    if origin is list:
        (inner,) = typing.get_args(tp)
        return [_dec(inner, v) for v in value]
    if origin in (set, frozenset):
        (inner,) = typing.get_args(tp)
        return origin(_dec(inner, v) for v in value)
    if origin is dict:
        _, inner = typing.get_args(tp)
        return {k: _dec(inner, v) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return tp(**{f.name: _dec(hints[f.name], value[f.name])
                     for f in dataclasses.fields(tp) if f.init and f.name in value})
    return value


def encode_state(state: TableState) -> dict[str, Any]:
    """Every field of ``state`` as JSON data; the pack by its digest."""
    out: dict[str, Any] = {f.name: _enc(getattr(state, f.name))
                           for f in dataclasses.fields(state) if f.name not in _SKIP}
    out["pack_digest"] = state.pack.digest if state.pack is not None else None
    return out


def decode_state(data: dict[str, Any], pack: RulePack | None) -> TableState:
    """The state ``encode_state`` wrote, under ``pack`` (which must match its digest)."""
    digest = data.get("pack_digest")
    if (pack.digest if pack is not None else None) != digest:
        raise InvalidInput("the snapshot was taken under other rules than the table's pack",
                           rule="store.snapshot")
    hints = typing.get_type_hints(TableState)
    fields = {f.name: _dec(hints[f.name], data[f.name]) for f in dataclasses.fields(TableState)
              if f.name not in _SKIP and f.name in data}
    state = TableState(**fields)
    state.pack = pack
    state.extra = {key: _dec(EXTRA_TYPES[key], value) if key in EXTRA_TYPES else value
                   for key, value in state.extra.items()}
    return state


def roundtrips(state: TableState) -> bool:
    """True when a snapshot of ``state`` restores it exactly."""
    try:
        return decode_state(encode_state(state), state.pack) == state
    except (InvalidInput, TypeError, ValueError, KeyError):
        return False
