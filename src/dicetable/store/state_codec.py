"""A table's whole state as plain JSON data, and back: what a snapshot stores.

The one codec (``dicetable.core.events``) over ``TableState``'s declared fields, so a field
added later is carried along. The
rule pack is not copied into every snapshot: it is named by its digest and taken from the
table's first event. The live procedure's part of the state (``extra["procedure"]``) is
decoded to its own type. A state that does not come back exactly is reported by
``roundtrips`` and is then simply not snapshotted.

>>> from dicetable.table import Table
>>> t = Table.open("pa-craps", "t1")
>>> _ = t.join("alice"), t.buy_in("alice", 100_00), t.bet("alice", "pass", 10_00)
>>> data = encode_state(t.state)
>>> data["pack_digest"] == t.pack.digest, data["players"]["alice"]["balance"]
(True, 9000)
>>> decode_state(data, t.pack) == t.state
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from dicetable.core import events
from dicetable.core.errors import InvalidInput
from dicetable.core.events import type_hints
from dicetable.games.events import Event, TableOpened
from dicetable.games.fold import apply_log
from dicetable.games.packs import pack_from_dict
from dicetable.games.state import TableState
from dicetable.rules.model import RulePack
from dicetable.store.pack_cache import PackCache
from dicetable.table.procedure import KEY as PROCEDURE_KEY
from dicetable.table.procedure import Procedure

_SKIP = {"pack"}

_PACKS: PackCache[RulePack] = PackCache(pack_from_dict, "table")


def pack_for(opened: TableOpened) -> RulePack:
    """The rule pack a table was opened under: one object per digest, so that the compiled
    wager tables are built once per process, not once per replay."""
    return _PACKS.get(opened.pack_digest, opened.pack, opened.table)


def share_pack(state: TableState) -> None:
    """Point ``state`` at the one pack object of its digest (``apply`` builds a new one from
    the opening event, whose wagers would then be compiled again for every table)."""
    if state.pack is not None:
        state.pack = _PACKS.share(state.pack)


def fold(events: Iterable[Event], state: TableState | None = None) -> TableState:
    """``apply`` every event in order (the state is the fold of the log; ``apply_log``)."""
    state = state if state is not None else TableState()
    apply_log(state, events, _share_opened_pack)
    return state


def _share_opened_pack(state: TableState, opened: TableOpened) -> None:
    state.pack = pack_for(opened)


EXTRA_TYPES: dict[str, type[Any]] = {PROCEDURE_KEY: Procedure}
"""What the layers above the game keep in ``TableState.extra``, by key."""


def encode_state(state: TableState) -> dict[str, Any]:
    """Every field of ``state`` as JSON data; the pack by its digest."""
    hints = type_hints(TableState)
    try:
        out: dict[str, Any] = {f.name: events.encode_value(hints[f.name], getattr(state, f.name))
                               for f in dataclasses.fields(state) if f.name not in _SKIP}
    except TypeError as e:
        raise InvalidInput(f"cannot snapshot the state: {e}", rule="store.snapshot") from None
    out["pack_digest"] = state.pack.digest if state.pack is not None else None
    return out


def decode_state(data: dict[str, Any], pack: RulePack | None) -> TableState:
    """The state ``encode_state`` wrote, under ``pack`` (which must match its digest)."""
    digest = data.get("pack_digest")
    if (pack.digest if pack is not None else None) != digest:
        raise InvalidInput("the snapshot was taken under other rules than the table's pack",
                           rule="store.snapshot")
    hints = type_hints(TableState)
    fields = {f.name: events.decode_value(hints[f.name], data[f.name])
              for f in dataclasses.fields(TableState)
              if f.name not in _SKIP and f.init and f.name in data}
    state = TableState(**fields)
    state.pack = pack
    state.extra = {key: events.decode_value(EXTRA_TYPES[key], value) if key in EXTRA_TYPES
                   else value for key, value in state.extra.items()}
    return state


def roundtrips(state: TableState, encoded: dict[str, Any] | None = None) -> bool:
    """True when a snapshot of ``state`` (``encoded``, when already made) restores it
    exactly."""
    try:
        data = encode_state(state) if encoded is None else encoded
        return decode_state(data, state.pack) == state
    except (InvalidInput, TypeError, ValueError, KeyError):
        return False
