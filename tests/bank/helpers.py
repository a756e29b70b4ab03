"""A table bank beside a real table: the table's log drives the movements it records."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from dicetable.bank.ledger import TableBank
from dicetable.core.clock import FixedClock
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.table import Table

D, S, B, F = Role.DEALER, Role.STICKPERSON, Role.BOXPERSON, Role.FLOORPERSON
CREW = (("dee", D), ("dan", D), ("sam", S), ("bo", B))
NOON_EST = datetime(2026, 3, 2, 17, 0, tzinfo=UTC)  # 12:00 EST, the 06:00 shift... of 03-02


@dataclass
class Pit:
    bank: TableBank
    table: Table
    log: list[Event] = field(default_factory=list)

    @property
    def seq(self) -> int:
        return self.table.state.seq

    def count(self, purpose: str, chips: tuple[tuple[int, int], ...]) -> list[Event]:
        return list(self.bank.count(purpose, chips, counter="bo", counter_role=B,
                                    observer="fran", observer_role=F, table_log=self.log,
                                    table_seq=self.seq))


def pit(jurisdiction: str = "pa", *, opener: tuple[tuple[int, int], ...] = ((2500, 800),),
        open_table: bool = True, clock: FixedClock | None = None) -> Pit:
    clock = clock or FixedClock(NOON_EST)
    log: list[Event] = []
    preset = "pa-craps" if jurisdiction == "pa" else "in-craps"
    table = Table.open(preset, "t1", sink=log.extend)
    bank = TableBank.open(jurisdiction, "t1", site="river", game="craps", clock=clock)
    p = Pit(bank, table, log)
    if open_table:
        bank.open_table(opener, counter="bo", counter_role=B, observer="fran",
                        observer_role=F, crew=CREW, container="C-1", table_log=log,
                        table_seq=table.state.seq)
    return p
