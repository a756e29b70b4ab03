"""The floor's integrity faults as a stream of the one store: ``faults:floor``.

A stream whose log fails verification is faulted (``FaultRaised``) and stays so until an
authorised clear (``FaultCleared``); the open faults are the fold of this stream.

>>> AT = "2026-01-01T00:00:00+00:00"
>>> s = FaultState()
>>> apply(s, FaultRaised(seq=1, at=AT, subject="t1", what="altered", detail="seq 3"))
>>> sorted(s.open)
['t1']
>>> apply(s, FaultCleared(seq=2, at=AT, actor="pat", subject="t1", by_role="pit-boss",
...                       reason="restored"))
>>> s.open, invariants(s), roundtrips(s)
({}, [], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dicetable.core import events as envelope
from dicetable.store.record_codec import roundtrips as roundtrips
from dicetable.store.record_stream import FLOOR, FloorEvent

KIND = "faults"
STREAM = f"{KIND}:{FLOOR}"


class FaultEvent(FloorEvent, abstract=True):
    stream_kind = KIND
    subject: str
    """The faulted stream (a table id, ``account:NAME``, ``checkpoints``)."""


class FaultRaised(FaultEvent):
    what: str
    detail: str


class FaultCleared(FaultEvent):
    by_role: str
    reason: str


@dataclass
class FaultState:
    seq: int = 0
    open: dict[str, dict[str, str]] = field(default_factory=dict)
    """Faulted stream -> its record (``table``, ``what``, ``detail``, ``at``)."""


def apply(state: FaultState, event: envelope.Event) -> None:
    if isinstance(event, FaultRaised):
        state.open[event.subject] = {"table": event.subject, "what": event.what,
                                     "detail": event.detail, "at": event.at}
    elif isinstance(event, FaultCleared):
        state.open.pop(event.subject, None)
    else:
        raise ValueError(f"a {event.kind} is not a fault event")
    state.seq = event.seq


def invariants(state: Any) -> list[str]:
    return [f"fault {name!r} is recorded under {f.get('table')!r}"
            for name, f in state.open.items() if f.get("table") != name]
