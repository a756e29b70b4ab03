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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dicetable.bank import events as bev
from dicetable.bank import state as bank_state
from dicetable.bank.ledger import TableBank
from dicetable.bank.rules import BankPack
from dicetable.core.clock import Clock
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.events import Event
from dicetable.store.base import EventStore, stream_id
from dicetable.store.held import Held

KIND = bev.KIND


def bank_stream(table: str) -> str:
    return stream_id(KIND, table)


def decode_state(data: dict[str, Any], first: Event) -> bank_state.BankState:
    if not isinstance(first, bev.BankOpened):
        raise ValueError("a bank stream starts with BankOpened")
    return bank_state.decode_state(data, first)


class DurableBank(Held[TableBank]):
    """A ``TableBank`` whose sink is a store. Thread-safe: one step at a time."""

    def __init__(self, store: EventStore, bank: TableBank) -> None:
        super().__init__(store, bank, bank_stream(bank.state.table) if bank.state.table else "")
        self.bank = bank
        bank.sink = self._sink

    @classmethod
    def open(cls, store: EventStore, pack: BankPack | str | Path, table: str, *, site: str,
             game: str, electronic: bool = False, clock: Clock | None = None,
             ) -> DurableBank:
        bank, first = cls.opening(store, pack, table, site=site, game=game,
                                  electronic=electronic, clock=clock)
        store.append(bank_stream(table), first, expected=0)
        return cls(store, bank)

    @staticmethod
    def opening(store: EventStore, pack: BankPack | str | Path, table: str, *, site: str,
                game: str, electronic: bool = False, clock: Clock | None = None,
                ) -> tuple[TableBank, Sequence[bev.BankEvent]]:
        """The bank of ``table`` opened and its first events, not written yet (the
        surfaces give them to ``Application.submit`` as an ``Open``, appended at version 0;
        ``DurableBank(store, bank)`` holds it after). Refused when the store holds it."""
        if store.head(bank_stream(table)).seq:
            raise ProcedureViolation(f"table {table!r} already has a bank; resume it",
                                     rule="bank.open")
        holder: list[Sequence[bev.BankEvent]] = []
        bank = TableBank.open(pack, table, site=site, game=game, electronic=electronic,
                              clock=clock, sink=holder.append)
        return bank, holder[0]

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
