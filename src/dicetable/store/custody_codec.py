"""A site's custody state as plain JSON data, and back: what a custody snapshot stores.

The one codec (``dicetable.core.events``) over ``CustodyState``'s declared fields; the custody
pack is named by its digest and taken from the stream's first event (``CustodyOpened``).

>>> from dicetable.core.clock import FixedClock
>>> from dicetable.custody.ledger import CustodyLedger
>>> led = CustodyLedger.open("pa", "river", clock=FixedClock())
>>> data = encode_state(led.state)
>>> data["pack_digest"] == led.pack.digest, roundtrips(led.state)
(True, True)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dicetable.core import events
from dicetable.core.errors import InvalidInput
from dicetable.core.events import type_hints
from dicetable.custody.events import CustodyOpened
from dicetable.custody.model import DieState
from dicetable.custody.rules import CustodyPack, pack_from_dict
from dicetable.custody.state import CustodyState
from dicetable.store.pack_cache import PackCache

_PACKS: PackCache[CustodyPack] = PackCache(pack_from_dict, "custody")


def pack_for(opened: CustodyOpened) -> CustodyPack:
    """The custody pack a ledger was opened under, checked against its recorded digest."""
    return _PACKS.get(opened.pack_digest, opened.pack, opened.site)


def encode_state(state: CustodyState) -> dict[str, Any]:
    hints = type_hints(CustodyState)
    out: dict[str, Any] = {f.name: events.encode_value(hints[f.name], getattr(state, f.name))
                           for f in dataclasses.fields(state) if f.name != "pack"}
    out["pack_digest"] = state.pack.digest if state.pack is not None else None
    return out


def decode_state(data: dict[str, Any], pack: CustodyPack | None) -> CustodyState:
    if (pack.digest if pack is not None else None) != data.get("pack_digest"):
        raise InvalidInput("the snapshot was taken under other custody rules than the "
                           "ledger's", rule="store.snapshot")
    hints = type_hints(CustodyState)
    state = CustodyState(**{f.name: events.decode_value(hints[f.name], data[f.name])
                            for f in dataclasses.fields(CustodyState)
                            if f.name != "pack" and f.name in data})
    state.pack = pack
    return state


def roundtrips(state: CustodyState) -> bool:
    try:
        return decode_state(encode_state(state), state.pack) == state
    except (InvalidInput, TypeError, ValueError, KeyError):
        return False


def invariants(state: CustodyState) -> list[str]:
    """Every die's record agrees with itself: an envelope for each sealed die, a table for
    each die in play."""
    problems = []
    for d in state.dice.values():
        if d.state is DieState.AT_TABLE and not d.table:
            problems.append(f"die {d.serial} is in play at no table")
        if d.state in (DieState.SEALED, DieState.WITH_AGENT) and d.envelope is not None \
                and d.envelope not in state.envelopes:
            problems.append(f"die {d.serial} is in envelope {d.envelope}, which is not on "
                            "record")
    return problems
