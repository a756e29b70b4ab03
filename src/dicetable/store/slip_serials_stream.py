"""The casino's pre-numbered slip series as streams of the one store: ``serials:fill`` and
``serials:credit`` (one series per slip kind, used in sequence: COMAR 36.05.03.04H, the
Maryland stand-in for the unread tail of PA 465a.38).

A serial is taken by appending ``SerialTaken`` at the version of the stream the taker read.
Two processes that read the same version cannot both append: the loser reads again and takes
the next serial, or, when the serial was named by hand, is refused. So two processes on one
store never issue one serial twice; they do not merely report it afterwards.

>>> from dicetable.store.memory import MemoryStore
>>> store = MemoryStore()
>>> a, b = SlipSerials(store), SlipSerials(store)
>>> a.take("fill", None, table="t1", request=1, at="2026-01-01T00:00:00+00:00")
1
>>> b.next("fill"), b.used("fill", 1)
(2, True)
>>> b.take("fill", 1, table="t2", request=1, at="2026-01-01T00:00:00+00:00")
Traceback (most recent call last):
...
dicetable.core.errors.ProcedureViolation: fill slip serial 1 was already taken ...
>>> a.take("fill", None, table="t1", request=1, at="2026-01-01T00:00:00+00:00")  # again
1
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dicetable.core import events as envelope
from dicetable.core.errors import ProcedureViolation
from dicetable.store.record_codec import roundtrips as roundtrips
from dicetable.store.record_stream import RecordEvent
from dicetable.store.versioned import retry_stale

if TYPE_CHECKING:
    from dicetable.store.base import EventStore

KIND = "serials"


class SerialsEvent(RecordEvent, abstract=True):
    stream_kind = KIND
    owner_field = "slip_kind"
    slip_kind: str


class SerialTaken(SerialsEvent):
    """``serial`` of the ``slip_kind`` series went to ``table``'s request ``request``."""

    serial: int
    table: str
    request: int


@dataclass
class SerialsState:
    seq: int = 0
    taken: list[tuple[int, str, int]] = field(default_factory=list)
    """(serial, table, request), in the order taken."""


def apply(state: SerialsState, event: envelope.Event) -> None:
    if not isinstance(event, SerialTaken):
        raise ValueError(f"a {event.kind} is not a serials event")
    state.taken.append((event.serial, event.table, event.request))
    state.seq = event.seq


def invariants(state: Any) -> list[str]:
    seen: set[int] = set()
    out = []
    for serial, table, request in state.taken:
        if serial in seen:
            out.append(f"serial {serial} taken twice (table {table}, request {request})")
        seen.add(serial)
    return out


class SlipSerials:
    """The floor's series (``bank.ledger.Series``) on the store. ``also``: serials of a kind
    issued before the series had its stream (the banks' own slips), so the series goes on
    after them."""

    def __init__(self, store: EventStore,
                 also: Callable[[str], Iterable[int]] | None = None) -> None:
        self.store = store
        self.also = also
        self._states: dict[str, SerialsState] = {}
        self._lock = threading.Lock()

    def _read(self, kind: str) -> SerialsState:
        """The series as the store has it now (only what is new is read)."""
        with self._lock:
            state = self._states.setdefault(kind, SerialsState())
            stream = f"{KIND}:{kind}"
            if self.store.head(stream).seq > state.seq:
                for e in self.store.events(stream, after=state.seq):
                    apply(state, e)
            return SerialsState(state.seq, list(state.taken))

    def _used(self, kind: str, state: SerialsState) -> set[int]:
        return {s for s, _, _ in state.taken} | set(self.also(kind) if self.also else ())

    def next(self, kind: str) -> int:
        return 1 + max(self._used(kind, self._read(kind)), default=0)

    def used(self, kind: str, serial: int) -> bool:
        return serial in self._used(kind, self._read(kind))

    def take(self, kind: str, serial: int | None, *, table: str, request: int, at: str,
             actor: str = "chip-bank", citation: str = "") -> int:
        """Take ``serial`` (None: the next) for ``table``'s ``request``, appended only at the
        version read; the serial this request already holds, if it took one (a step retried
        after losing a race on the bank's own stream takes nothing twice)."""
        stream = f"{KIND}:{kind}"

        def attempt() -> int:  # another process took one meanwhile: read again
            state = self._read(kind)
            held = next((s for s, t, r in state.taken if (t, r) == (table, request)), None)
            if held is not None and serial in (None, held):
                return held
            used = self._used(kind, state)
            number = 1 + max(used, default=0) if serial is None else serial
            if number in used:
                raise ProcedureViolation(
                    f"{kind} slip serial {number} was already taken in the casino's series "
                    "(by this or another process)", rule="slips.serial_sequence",
                    citation=citation)
            event = SerialTaken(seq=state.seq + 1, at=at, actor=actor, slip_kind=kind,
                                serial=number, table=table, request=request)
            self.store.append(stream, [event], expected=state.seq, request="")
            return number

        return retry_stale(stream, attempt)
