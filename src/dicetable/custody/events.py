"""Custody events: frozen, past tense, one stream per site. The log of them is the truth.

They share the envelope and the JSON codec of every dicetable event
(``dicetable.core.events``), so one store holds tables and custody alike. The envelope adds
the site and the people who took part beside the actor (``witnesses``): most custody steps
need two people.

>>> from dicetable.core.roles import Role
>>> e = KeyDrawn(site="river", seq=2, actor="Ann", role=Role.SHIFT_MANAGER,
...              at="2026-01-01T08:00:00+00:00", key=Key.TABLE_GAMES)
>>> d = event_to_dict(e)
>>> d["type"], d["key"], event_from_dict(d) == e
('KeyDrawn', 'table-games', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dicetable.core import events as envelope
from dicetable.core.events import event_from_dict as event_from_dict
from dicetable.core.events import event_to_dict as event_to_dict
from dicetable.custody.model import (
    Box,
    CancelMethod,
    Finding,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
)


@dataclass(frozen=True, kw_only=True)
class CustodyEvent(envelope.Event, abstract=True):
    """The custody envelope: the shared one, plus the site and everyone else present."""

    site: str
    licence: str = ""
    """The actor's occupational licence number (68 IAC 14-3-8 logs record it)."""
    witnesses: tuple[Person, ...] = ()
    """The other people the rule requires (security at receipt, surveillance at cancellation)."""

    @property
    def stream(self) -> str:
        """The site's custody stream: ``custody:SITE`` (one store holds every aggregate)."""
        return f"custody:{self.site}"

    @property
    def serials(self) -> tuple[str, ...]:
        """The dice this event is about (empty for events about no particular die)."""
        return ()

    @property
    def people(self) -> tuple[Person, ...]:
        """Everyone who took part: the actor first."""
        return (Person(self.actor, self.role, self.licence), *self.witnesses)


@dataclass(frozen=True, kw_only=True)
class _DiceEvent(CustodyEvent, abstract=True):
    dice: tuple[str, ...]

    @property
    def serials(self) -> tuple[str, ...]:
        return self.dice


# -- the site -------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class CustodyOpened(CustodyEvent):
    """The site's custody record begins, under these rules."""

    jurisdiction: str
    pack: dict[str, Any] = field(hash=False)
    pack_digest: str


@dataclass(frozen=True, kw_only=True)
class KeyDrawn(CustodyEvent):
    """One of the two storage keys was drawn by the actor (PA 603a.13(c))."""

    key: Key


@dataclass(frozen=True, kw_only=True)
class KeyReturned(CustodyEvent):
    key: Key
    holder: str


# -- receipt and storage -----------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class ShipmentReceived(CustodyEvent):
    """A shipment unloaded under two people, its seals checked (PA 603a.13(a))."""

    shipment: str
    manufacturer: Manufacturer
    boxes: tuple[Box, ...]
    quantity: int
    delivery_witness: str = ""
    """The gaming agent or Commission staff member present at the delivery."""

    @property
    def serials(self) -> tuple[str, ...]:
        return tuple(s for b in self.boxes for s in b.serials)


@dataclass(frozen=True, kw_only=True)
class BoxOpenedAndInspected(_DiceEvent):
    """A box whose seal failed, opened at once and its dice inspected (PA 603a.13(a))."""

    shipment: str
    box: str
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DiceStored(_DiceEvent):
    area: str


@dataclass(frozen=True, kw_only=True)
class DiceIssuedForGamingDay(_DiceEvent):
    """The gaming day's dice taken out of storage, security present (PA 603a.13(d))."""

    gaming_day: str
    area: str


@dataclass(frozen=True, kw_only=True)
class DiceReturnedToStorage(_DiceEvent):
    """Issued dice that never reached a table, put back in storage."""

    area: str


# -- inspection and play ---------------------------------------------------------------------
@dataclass(frozen=True)
class InspectionResult:
    serial: str
    passed: bool
    measurements: tuple[Decimal, ...]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DiceInspected(_DiceEvent):
    """The pre-play inspection (68 IAC 14-3-7): one result per die, failures included."""

    results: tuple[InspectionResult, ...]
    tools: tuple[str, ...]
    under_surveillance: bool


@dataclass(frozen=True, kw_only=True)
class DiceIssuedToTable(_DiceEvent):
    to_table: str
    game: str
    mode: PlayMode
    received_by: Person
    expires_at: str
    """When the dice must be out of play (the 24-hour limit)."""


# -- removal, envelopes, cancellation ----------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class DiceRemoved(_DiceEvent):
    """Dice taken out of play or out of stock (68 IAC 14-3-4(a))."""

    reason: RemovalReason
    from_location: str
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class TamperEnvelopeSealed(_DiceEvent):
    """Suspected tampering: dice sealed in an envelope marked as 68 IAC 14-3-4(b) requires."""

    envelope: str
    removed_at: str
    location: str
    """The live gaming device (table) they came from, or where they were found."""
    signs: str
    """The characteristics that suggest tampering."""
    table_staff: tuple[Person, ...]
    """Every occupational licensee at the table."""
    removed_by: Person
    """The pit boss who removed them."""
    recipient: str


@dataclass(frozen=True, kw_only=True)
class EnvelopeDelivered(_DiceEvent):
    envelope: str
    agent: str


@dataclass(frozen=True, kw_only=True)
class DiceTransferredToCancellation(_DiceEvent):
    """Removed dice carried to the cancellation room: a pit-log and a room-log entry."""

    pit_manager: Person
    accepted_by: Person


@dataclass(frozen=True, kw_only=True)
class DiceCancelled(_DiceEvent):
    """Dice destroyed under surveillance (68 IAC 14-3-4(c))."""

    method: CancelMethod
    hole_in: Decimal | None = None
    approval: str = ""
    destroyed_by: Person
    surveillance: Person


# -- inventory and alerts -----------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class PhysicalInventoryTaken(CustodyEvent):
    """The physical count, reconciled with the record (68 IAC 14-3-5(d))."""

    counted: tuple[str, ...]
    on_record: int
    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()

    @property
    def serials(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.counted) | set(self.missing)))


@dataclass(frozen=True, kw_only=True)
class InventoryDiscrepancyReported(CustodyEvent):
    """Alert: the count differs from the record; reported at once (68 IAC 14-3-5(d))."""

    alert = True
    report_to: str
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]
    detail: str

    @property
    def serials(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.missing) | set(self.unexpected)))


@dataclass(frozen=True, kw_only=True)
class DiceOverdue(_DiceEvent):
    """Alert: dice still in play past their time limit."""

    alert = True
    table_id: str
    issued_at: str
    expires_at: str
    limit_hours: int


@dataclass(frozen=True, kw_only=True)
class InventoryOverdue(CustodyEvent):
    """Alert: no physical inventory within the required interval."""

    alert = True
    last: str
    """When the last physical inventory was taken (or the record opened)."""
    due: str
    """The last calendar day (YYYY-MM-DD, site time) the next inventory was due by."""
    time_zone: str = ""
    """The site's time zone the calendar is counted in."""


@dataclass(frozen=True, kw_only=True)
class FairnessAlertRaised(_DiceEvent):
    """Alert to the pit: a die's faces drift from uniform (dicetable.fairness)."""

    alert = True
    test: str
    detail: str
    statistic: str
    threshold: str
    rolls: int
