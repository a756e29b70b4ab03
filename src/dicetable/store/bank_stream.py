"""A table's bank on a store: its own stream ``bank:TABLE``, chained, snapshotted and
checkpointed like every other stream.

Every step is durable before the bank applies it (the bank's ``sink``). A writer that lost a
race with another process (``StaleVersion``) folds in what that process appended and decides
again, once.

>>> from dicetable.core.clock import FixedClock
>>> from dicetable.store.memory import MemoryStore
>>> store = MemoryStore()
>>> db = DurableBank.open(store, "pa", "t1", site="river", game="craps", clock=FixedClock())
>>> store.streams("bank"), store.head("bank:t1").seq
(['bank:t1'], 1)
>>> DurableBank.resume(store, "t1").bank.state.site
'river'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from dicetable.bank import events as bev
from dicetable.bank import state as bank_state
from dicetable.bank.ledger import TableBank
from dicetable.bank.rules import BankPack
from dicetable.core.clock import Clock
from dicetable.core.errors import InvalidInput, ProcedureViolation, StaleVersion
from dicetable.core.events import Event
from dicetable.store.base import EventStore, stream_id

KIND = bev.KIND
T = TypeVar("T")


def bank_stream(table: str) -> str:
    return stream_id(KIND, table)


def decode_state(data: dict[str, Any], first: Event) -> bank_state.BankState:
    if not isinstance(first, bev.BankOpened):
        raise ValueError("a bank stream starts with BankOpened")
    return bank_state.decode_state(data, first)


class DurableBank:
    """A ``TableBank`` whose sink is a store. Thread-safe: one step at a time."""

    def __init__(self, store: EventStore, bank: TableBank) -> None:
        self.store = store
        self.bank = bank
        self.lock = threading.RLock()
        self.stream = bank_stream(bank.state.table) if bank.state.table else ""
        bank.sink = self._sink

    @classmethod
    def open(cls, store: EventStore, pack: BankPack | str | Path, table: str, *, site: str,
             game: str, electronic: bool = False, clock: Clock | None = None,
             ) -> DurableBank:
        stream = bank_stream(table)
        if store.head(stream).seq:
            raise ProcedureViolation(f"table {table!r} already has a bank; resume it",
                                     rule="bank.open")
        holder: list[Sequence[bev.BankEvent]] = []
        bank = TableBank.open(pack, table, site=site, game=game, electronic=electronic,
                              clock=clock, sink=holder.append)
        store.append(stream, holder[0], expected=0)
        return cls(store, bank)

    @classmethod
    def resume(cls, store: EventStore, table: str, *, clock: Clock | None = None,
               ) -> DurableBank:
        stream = bank_stream(table)
        if not store.head(stream).seq:
            raise InvalidInput(f"no bank for table {table!r} in {store.location}",
                               rule="store.stream")
        return cls(store, TableBank.replay(store.events(stream), clock=clock))

    @classmethod
    def exists(cls, store: EventStore, table: str) -> bool:
        return bool(store.head(bank_stream(table)).seq)

    def _sink(self, events: Sequence[bev.BankEvent]) -> None:
        if events:
            self.store.append(self.stream, events, expected=self.bank.state.seq)

    def refresh(self) -> int:
        with self.lock:
            before = self.bank.state.seq
            if self.store.head(self.stream).seq > before:
                self.bank.catch_up(self.store.events(self.stream, after=before))
            return self.bank.state.seq - before

    def run(self, step: Callable[[TableBank], T]) -> T:
        """One step, after folding in what other processes appended; retried once on a
        lost race."""
        with self.lock:
            self.refresh()
            try:
                return step(self.bank)
            except StaleVersion:
                self.refresh()
                return step(self.bank)
