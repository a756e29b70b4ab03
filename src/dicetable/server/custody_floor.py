"""The site's dice custody on the floor: one ledger per jurisdiction's site, on the floor's store.

A live table asks the ledger of its jurisdiction whether the dice brought to it, or thrown,
were issued to it and are within their time limit (``registry_for``). Fairness alerts from
the tables' rolls go into the die's custody history at once (``record_fairness``). The
scheduler sweeps the ledgers for dice past their limit and an overdue quarterly inventory
(``sweep``). No custody rule lives here: every step is a custody command the ledger decides.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dicetable.application.service import Acting, Application
from dicetable.application.streams import open_custody
from dicetable.core.clock import Clock
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as cev
from dicetable.custody.model import DieState, Person
from dicetable.custody.rules import dice_limit
from dicetable.fairness.monitor import FairnessAlert
from dicetable.rules.model import RulePack
from dicetable.store.base import EventStore, name_of
from dicetable.store.custody import DurableCustody

log = logging.getLogger(__name__)

SWEEPER = "floor-clock"
"""The actor of the scheduler's deadline sweeps (role ``system``)."""
MONITOR = "fairness-monitor"


@dataclass(frozen=True)
class TableDice:
    """What a table asks custody (``dicetable.table.procedure.DiceRegistry``)."""

    custody: FloorCustody

    def check_dice_in_play(self, table: str, serials: Iterable[str],
                           limit: tuple[int, str] | None = None) -> None:
        jurisdiction = self.custody.table_jurisdiction.get(table, "")
        if self.custody.site_for(jurisdiction) is None:
            return  # no custody ledger on this floor for the table's jurisdiction (yet)
        self.custody.ledger_for_table(table).check_dice_in_play(table, tuple(serials), limit)


class FloorCustody:
    """Every custody ledger on the floor's store, by site; one site per jurisdiction."""

    def __init__(self, store: EventStore, clock: Clock,
                 roster: dict[str, Person] | None = None) -> None:
        self.store = store
        self.clock = clock
        self.roster: dict[str, Person] = dict(roster or {})
        """Each staff account's custody role and licence (the site's staff list)."""
        self.sites: dict[str, DurableCustody] = {}
        self.table_jurisdiction: dict[str, str] = {}
        self.table_packs: dict[str, RulePack] = {}
        """Each table's own rule pack: its ``dice.max_hours`` is the limit the sweep keeps."""
        self._lock = threading.RLock()
        for stream in store.streams("custody"):
            site = name_of(stream)
            self.sites[site] = DurableCustody.resume(store, site, clock=clock)

    # -- ledgers ----------------------------------------------------------------------------
    def open_site(self, pack: str, site: str, *, actor: str = "compliance",
                  application: Application[Any] | None = None) -> DurableCustody:
        """The site's ledger opened by ``actor`` (a shift manager): its ``OpenCustody``
        given to ``application.submit`` (the floor's; by default a plain one)."""
        with self._lock:
            if site in self.sites:
                raise InvalidInput(f"site {site!r} already has a custody ledger",
                                   rule="custody.open")
            taker = application if application is not None else Application[Any]()
            durable = open_custody(taker, self.store, pack, site,
                                   Acting(actor, Role.SHIFT_MANAGER), clock=self.clock)
            self.sites[site] = durable
            return durable

    def site(self, site: str) -> DurableCustody:
        found = self.sites.get(site)
        if found is None:
            raise InvalidInput(f"no custody ledger for site {site!r} (sites: "
                               f"{', '.join(sorted(self.sites)) or 'none'})",
                               rule="custody.open")
        return found

    def site_for(self, jurisdiction: str) -> DurableCustody | None:
        for durable in self.sites.values():
            if durable.ledger.pack.jurisdiction.upper() == jurisdiction.upper():
                return durable
        return None

    def attach(self, table: str, pack: RulePack) -> TableDice:
        """The dice registry of a table of ``pack``'s jurisdiction. Until that jurisdiction's
        site opens a ledger (a floor that keeps no custody here), any dice are taken."""
        self.table_jurisdiction[table] = str(pack.get("jurisdiction", "") or "")
        self.table_packs[table] = pack
        return TableDice(self)

    def ledger_for_table(self, table: str) -> DurableCustody:
        jurisdiction = self.table_jurisdiction.get(table, "")
        durable = self.site_for(jurisdiction)
        if durable is None:
            raise InvalidInput(f"no custody ledger for {jurisdiction or 'this'} table {table}",
                               rule="storage.source_only")
        return durable

    # -- what the floor feeds in ------------------------------------------------------------
    def record_fairness(self, table: str, alert: FairnessAlert) -> None:
        """A die's faces drift from uniform: the alert goes into its custody history."""
        try:
            durable = self.ledger_for_table(table)
            if alert.serial not in durable.ledger.state.dice:
                return  # a die custody never held: the table already refused it
            durable.execute(alert.to_command(actor=MONITOR, role=Role.SYSTEM))
        except DicetableError as e:
            log.warning("fairness alert for %s not recorded: %s", alert.serial, e)

    def sweep(self) -> list[cev.CustodyEvent]:
        """The scheduler's deadline sweep over every ledger: overdue dice, overdue inventory."""
        out: list[cev.CustodyEvent] = []
        for durable in list(self.sites.values()):
            out += durable.execute(cmd.CheckDeadlines(actor=SWEEPER, role=Role.SYSTEM,
                                                      limits=self.table_limits(durable)))
        return out

    def table_limits(self, durable: DurableCustody) -> tuple[tuple[str, int, str], ...]:
        """Each table with dice of this ledger at it, and its own pack's ``dice.max_hours``:
        a house pack that sets another limit moves when the sweep reports its dice overdue."""
        jurisdiction = durable.ledger.pack.jurisdiction
        held = {d.table for d in durable.ledger.state.in_state(DieState.AT_TABLE)}
        return tuple((table, *dice_limit(jurisdiction, pack.game, (pack,)))
                     for table, pack in sorted(self.table_packs.items()) if table in held)

    # -- what the pit sees ------------------------------------------------------------------
    def open_alerts(self, site: str | None = None) -> list[dict[str, Any]]:
        """Alerts not yet resolved: dice still overdue, an inventory still due, fairness
        alerts on dice still in play."""
        out: list[dict[str, Any]] = []
        for name, durable in sorted(self.sites.items()):
            if site is not None and name != site:
                continue
            state = durable.ledger.state
            for e in durable.ledger.alerts:
                live = _still_open(state, e)
                if live:
                    out.append({"site": name, "seq": e.seq, "type": e.kind, "at": e.at,
                                "dice": list(e.serials), "rule": e.rule, "message": live})
        return out

    def awaiting_removal(self, tables: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
        """Dice custody has at a table that the table no longer holds: they left the table
        and wait for the pit to record their removal (then cancellation or the envelope)."""
        out = []
        for name, durable in sorted(self.sites.items()):
            for d in durable.ledger.state.in_state(DieState.AT_TABLE):
                if d.table is not None and d.table in tables \
                        and d.serial not in tables[d.table]:
                    out.append({"site": name, "serial": d.serial, "table": d.table})
        return out


def _still_open(state: Any, e: cev.CustodyEvent) -> str:
    if isinstance(e, cev.DiceOverdue):
        late = [s for s in e.serials if state.dice[s].state is DieState.AT_TABLE
                and state.dice[s].table == e.table_id]
        return f"dice {', '.join(late)} at {e.table_id} past {e.limit_hours} hours" \
            if late else ""
    if isinstance(e, cev.InventoryOverdue):
        taken_since = (state.last_inventory_at or "") >= e.at
        return "" if taken_since else f"the quarterly physical dice inventory was due {e.due}"
    if isinstance(e, cev.FairnessAlertRaised):
        d = state.dice[e.serials[0]]
        return f"die {d.serial}: {e.detail}" if d.state is DieState.AT_TABLE else ""
    if isinstance(e, cev.InventoryDiscrepancyReported):
        return e.detail if (state.last_inventory_at or "") <= e.at else ""
    return ""
