"""A log read from its start, checked as it is read: every event of the aggregate's kind, its
opening event first and only first, numbered 1, 2, 3 ... (the bank and the custody ledger
replay through it)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event

E = TypeVar("E", bound=Event)


def in_order(events: Iterable[Event], kind: str, base: type[E],
             first: type[Event]) -> Iterator[E]:
    """``events`` one by one, each refused (``events.log``) unless it is a ``base`` event,
    ``first`` exactly when it is the first, and numbered after the one before it."""
    for i, e in enumerate(events):
        if not isinstance(e, base):
            raise InvalidInput(f"event {i + 1} is not a {kind} event", rule="events.log")
        if (i == 0) != isinstance(e, first):
            raise InvalidInput(f"a {kind} log starts with {first.__name__}, once",
                               rule="events.log")
        if e.seq != i + 1:
            raise InvalidInput(f"event {e.seq} is out of sequence (expected {i + 1})",
                               rule="events.log")
        yield e
