"""Custody state, and ``apply``: the state is the fold of the events.

``apply`` trusts its event: every check happens when a command is decided. Replaying a log
through ``apply`` rebuilds exactly the state the live record had.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dicetable.custody import events as ev
from dicetable.custody import transport
from dicetable.custody.model import DieState, Key, Manufacturer, Person, PlayMode, RemovalReason
from dicetable.custody.rules import CustodyPack, pack_from_dict


@dataclass
class DieRecord:
    """Everything the record says about one die."""

    serial: str
    shipment: str
    box: str
    state: DieState
    location: str
    received_at: str
    table: str | None = None
    game: str = ""
    mode: PlayMode | None = None
    at_table_since: str | None = None
    expires_at: str | None = None
    overdue_alerted: bool = False
    gaming_day: str = ""
    inspected_at: str | None = None
    removal_reason: RemovalReason | None = None
    removed_from: str = ""
    removed_at: str | None = None
    envelope: str | None = None
    cancelled_at: str | None = None
    fairness_alerts: int = 0
    history: list[int] = field(default_factory=list)
    """Sequence numbers of the events about this die, in order."""


@dataclass
class Shipment:
    shipment: str
    manufacturer: Manufacturer
    received_at: str
    quantity: int


@dataclass
class Envelope:
    envelope: str
    dice: tuple[str, ...]
    sealed_at: str
    location: str
    agent: str | None = None


@dataclass
class CustodyState:
    site: str = ""
    pack: CustodyPack | None = None
    seq: int = 0
    opened_at: str = ""
    dice: dict[str, DieRecord] = field(default_factory=dict)
    shipments: dict[str, Shipment] = field(default_factory=dict)
    keys: dict[Key, Person] = field(default_factory=dict)
    """Who holds each storage key now."""
    envelopes: dict[str, Envelope] = field(default_factory=dict)
    last_inventory_at: str | None = None
    inventory_alerted_due: str | None = None
    """The due date an overdue-inventory alert was already raised for."""
    notices: dict[str, transport.TransportNoticeFiled] = field(default_factory=dict)
    """Transport notices given to the executive director (68 IAC 14-3-10(a)), by id."""
    receipt_proofs: list[int] = field(default_factory=list)
    """Sequence numbers of the proofs of receipt given (14-3-10(b))."""

    def rules(self) -> CustodyPack:
        if self.pack is None:
            raise KeyError("custody record not opened")
        return self.pack

    def in_state(self, *states: DieState) -> list[DieRecord]:
        return [d for d in self.dice.values() if d.state in states]

    def on_record(self) -> set[str]:
        """The serials the record says are in the building."""
        return {s for s, d in self.dice.items() if d.state.in_building}

    def at_table(self, table: str) -> list[DieRecord]:
        return [d for d in self.dice.values()
                if d.state is DieState.AT_TABLE and d.table == table]


def _touch(state: CustodyState, serials: tuple[str, ...], seq: int) -> list[DieRecord]:
    out = []
    for s in serials:
        record = state.dice[s]
        if not record.history or record.history[-1] != seq:
            record.history.append(seq)
        out.append(record)
    return out


def _move(state: CustodyState, e: ev.CustodyEvent, new: DieState, location: str) -> None:
    for d in _touch(state, e.serials, e.seq):
        d.state = new
        d.location = location


def _opened(state: CustodyState, e: Any) -> None:
    state.site = e.site
    state.pack = pack_from_dict(e.pack)
    state.opened_at = e.at


def _key_drawn(state: CustodyState, e: Any) -> None:
    state.keys[e.key] = Person(e.actor, e.role, e.licence)


def _key_returned(state: CustodyState, e: Any) -> None:
    state.keys.pop(e.key, None)


def _received(state: CustodyState, e: Any) -> None:
    state.shipments[e.shipment] = Shipment(e.shipment, e.manufacturer, e.at, e.quantity)
    for box in e.boxes:
        for s in box.serials:
            state.dice[s] = DieRecord(s, e.shipment, box.box, DieState.RECEIVED, "receiving",
                                      e.at, history=[e.seq])


def _box_inspected(state: CustodyState, e: Any) -> None:
    _touch(state, e.serials, e.seq)
    for f in e.findings:
        state.dice[f.serial].state = DieState.QUARANTINED
        state.dice[f.serial].location = "receiving (quarantine)"


def _stored(state: CustodyState, e: Any) -> None:
    _move(state, e, DieState.IN_STORAGE, f"storage:{e.area}")


def _issued_day(state: CustodyState, e: Any) -> None:
    _move(state, e, DieState.ISSUED, "pit")
    for s in e.serials:
        state.dice[s].gaming_day = e.gaming_day


def _returned(state: CustodyState, e: Any) -> None:
    _move(state, e, DieState.IN_STORAGE, f"storage:{e.area}")
    for s in e.serials:
        state.dice[s].gaming_day = ""


def _inspected(state: CustodyState, e: Any) -> None:
    _touch(state, e.serials, e.seq)
    for r in e.results:
        d = state.dice[r.serial]
        d.inspected_at = e.at
        d.state = DieState.INSPECTED if r.passed else DieState.QUARANTINED
        d.location = "pit" if r.passed else "pit (quarantine)"


def _to_table(state: CustodyState, e: Any) -> None:
    _move(state, e, DieState.AT_TABLE, f"table:{e.to_table}")
    for s in e.serials:
        d = state.dice[s]
        d.table, d.game, d.mode = e.to_table, e.game, e.mode
        d.at_table_since, d.expires_at, d.overdue_alerted = e.at, e.expires_at, False


def _removed(state: CustodyState, e: Any) -> None:
    new = DieState.SEALED if e.reason is RemovalReason.TAMPERED else DieState.REMOVED
    _move(state, e, new, "pit (removed)")
    for s in e.serials:
        d = state.dice[s]
        d.removal_reason, d.removed_from, d.removed_at = e.reason, e.from_location, e.at
        d.table = None


def _sealed(state: CustodyState, e: Any) -> None:
    state.envelopes[e.envelope] = Envelope(e.envelope, e.serials, e.at, e.location)
    _move(state, e, DieState.SEALED, f"envelope:{e.envelope}")
    for s in e.serials:
        state.dice[s].envelope = e.envelope


def _delivered(state: CustodyState, e: Any) -> None:
    state.envelopes[e.envelope].agent = e.agent
    _move(state, e, DieState.WITH_AGENT, f"enforcement agent ({e.agent})")


def _transferred(state: CustodyState, e: Any) -> None:
    _move(state, e, DieState.IN_CANCELLATION_ROOM, "cancellation room")


def _cancelled(state: CustodyState, e: Any) -> None:
    _move(state, e, DieState.CANCELLED, "cancelled")
    for s in e.serials:
        state.dice[s].cancelled_at = e.at


def _counted(state: CustodyState, e: Any) -> None:
    state.last_inventory_at = e.at
    _touch(state, tuple(s for s in e.serials if s in state.dice), e.seq)


def _discrepancy(state: CustodyState, e: Any) -> None:
    _touch(state, tuple(s for s in e.serials if s in state.dice), e.seq)


def _overdue(state: CustodyState, e: Any) -> None:
    for d in _touch(state, e.serials, e.seq):
        d.overdue_alerted = True


def _inventory_overdue(state: CustodyState, e: Any) -> None:
    state.inventory_alerted_due = e.due


def _fairness(state: CustodyState, e: Any) -> None:
    for d in _touch(state, e.serials, e.seq):
        d.fairness_alerts += 1


_APPLY: dict[type[ev.CustodyEvent], Callable[[CustodyState, Any], None]] = {
    ev.CustodyOpened: _opened,
    ev.KeyDrawn: _key_drawn,
    ev.KeyReturned: _key_returned,
    ev.ShipmentReceived: _received,
    ev.BoxOpenedAndInspected: _box_inspected,
    ev.DiceStored: _stored,
    ev.DiceIssuedForGamingDay: _issued_day,
    ev.DiceReturnedToStorage: _returned,
    ev.DiceInspected: _inspected,
    ev.DiceIssuedToTable: _to_table,
    ev.DiceRemoved: _removed,
    ev.TamperEnvelopeSealed: _sealed,
    ev.EnvelopeDelivered: _delivered,
    ev.DiceTransferredToCancellation: _transferred,
    ev.DiceCancelled: _cancelled,
    ev.PhysicalInventoryTaken: _counted,
    ev.InventoryDiscrepancyReported: _discrepancy,
    ev.DiceOverdue: _overdue,
    ev.InventoryOverdue: _inventory_overdue,
    ev.FairnessAlertRaised: _fairness,
    transport.TransportNoticeFiled: transport.apply_notice,
    transport.ReceiptProved: transport.apply_proof,
}


def apply(state: CustodyState, event: ev.CustodyEvent) -> None:
    """Fold one event into the state."""
    _APPLY[type(event)](state, event)
    state.seq = event.seq
