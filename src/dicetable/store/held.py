"""One aggregate held on its store stream: every step is durable before the aggregate applies
it (the aggregate's ``sink`` appends at its head), steps other processes appended are folded in
first, and a writer that lost a race (``StaleVersion``) folds in what won and decides again,
once. The table bank (``bank_stream.DurableBank``) and the custody ledger
(``custody.DurableCustody``) are held this way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar

from dicetable.core.errors import StaleVersion
from dicetable.core.events import Event
from dicetable.store.base import EventStore

T = TypeVar("T")


class _Seq(Protocol):
    @property
    def seq(self) -> int: ...


class Folds(Protocol):
    """What a held aggregate offers: its state's head, and a fold of later events."""

    @property
    def state(self) -> _Seq: ...
    def catch_up(self, events: Iterable[Event]) -> Any: ...


A = TypeVar("A", bound=Folds)


class Held(Generic[A]):
    """``held`` on ``store``'s ``stream``. Thread-safe: one step at a time."""

    def __init__(self, store: EventStore, held: A, stream: str) -> None:
        self.store = store
        self.held = held
        self.stream = stream
        self.lock = threading.RLock()

    def refresh(self) -> int:
        """Fold in steps another process appended; returns how many."""
        with self.lock:
            before = self.held.state.seq
            if self.store.head(self.stream).seq > before:
                self.held.catch_up(self.store.events(self.stream, after=before))
            return self.held.state.seq - before

    def run(self, step: Callable[[A], T]) -> T:
        """One step, after folding in what other processes appended; retried once on a
        lost race."""
        with self.lock:
            self.refresh()
            try:
                return step(self.held)
            except StaleVersion:
                self.refresh()
                return step(self.held)
