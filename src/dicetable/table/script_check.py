"""Does a table script reproduce a stored log? The replayed events are compared with the
stored ones kind by kind and field by field; only where and when each was written (its
sequence number, time stamp and table id) may differ, since a script may be replayed under
another id and at another time."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from dicetable.core.events import Event

PLACE_AND_TIME = ("seq", "at", "table")
"""The fields a replay need not reproduce."""


def _fields(e: Event) -> dict[str, Any]:
    return {f.name: getattr(e, f.name) for f in dataclasses.fields(e)
            if f.name not in PLACE_AND_TIME}


def first_difference(stored: Sequence[Event], replayed: Sequence[Event]) -> str | None:
    """None when ``replayed`` reproduces ``stored``; else the first difference, in words."""
    for n, (a, b) in enumerate(zip(stored, replayed, strict=False), start=1):
        if a.kind != b.kind:
            return f"event {n}: stored {a.kind}, replayed {b.kind}"
        fa, fb = _fields(a), _fields(b)
        if fa != fb:
            names = sorted(k for k in fa.keys() | fb.keys() if fa.get(k) != fb.get(k))
            detail = "; ".join(f"{k}: stored {fa.get(k)!r}, replayed {fb.get(k)!r}"
                               for k in names)
            return f"event {n} ({a.kind}): {detail}"
    if len(stored) != len(replayed):
        return (f"the stored log has {len(stored)} events, the replay {len(replayed)}; the "
                f"first {min(len(stored), len(replayed))} agree")
    return None
