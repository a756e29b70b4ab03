"""The floor's clock: one scheduler advancing every table's clock and the custody ledgers'.

Each ``tick`` asks every table whether time has made an alert due (a ``Tick`` command: dice
past their 24 hours in a shaker or at a Craps table block play and raise the alert the pit
console shows until they are replaced) and sweeps every custody ledger (dice past their time
limit, the quarterly physical inventory falling due). Time comes from the floor's injected
clock, so tests move it by hand and call ``tick``; the server calls it every
``DICETABLE_CLOCK_SECONDS`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from dicetable.core.errors import DicetableError
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.server.floor import Chore, Floor
from dicetable.table import commands as tcmd

log = logging.getLogger(__name__)

ACTOR = "floor-clock"


@dataclass
class TickReport:
    at: str
    table_events: dict[str, list[str]] = field(default_factory=dict)
    custody_events: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "tables": self.table_events, "custody": self.custody_events,
                "errors": self.errors}


class FloorScheduler:
    """Advances the clock of every table and ledger on ``floor``."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor

    def tick(self) -> TickReport:
        report = TickReport(self.floor.clock.now().isoformat())
        for table_id, info in sorted(self.floor.tables.items()):
            if info.table.mode == "bare":
                continue
            tick = tcmd.Tick(actor=ACTOR, role=Role.SYSTEM)

            def due(tick: tcmd.Tick = tick, info: Any = info) -> list[gcmd.Command]:
                return [tick] if info.table.decide(tick) else []

            try:
                events = self.floor.submit(table_id, Chore(due)).result()
            except DicetableError as e:
                report.errors.append(f"{table_id}: {e}")
                continue
            if events:
                report.table_events[table_id] = [e.kind for e in events]
        try:
            report.custody_events = [e.kind for e in self.floor.custody.sweep()]
        except DicetableError as e:
            report.errors.append(f"custody: {e}")
        return report


async def run_clock(scheduler: FloorScheduler, every_seconds: float) -> None:
    """The server's loop: a tick every ``every_seconds``, off the event loop."""
    while True:
        await asyncio.sleep(every_seconds)
        try:
            await asyncio.to_thread(scheduler.tick)
        except Exception:  # the clock must keep running whatever one tick met
            log.exception("floor clock tick failed")
