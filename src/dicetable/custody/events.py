"""Custody events: frozen, past tense, one stream per site. The log of them is the truth.

They share the envelope and the JSON codec of every dicetable event
(``dicetable.core.events``), so one store holds tables and custody alike. The envelope adds
the site and the people who took part beside the actor (``witnesses``): most custody steps
need two people. What an event keeps of the command that recorded it is declared once, in
``dicetable.custody.steps``, for both.

>>> from dicetable.core.roles import Role
>>> from dicetable.custody.model import Key
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
from dicetable.custody import steps
from dicetable.custody.model import Finding, Person


class CustodyEvent(envelope.Event, steps.Participants, abstract=True):
    """The custody envelope: the shared one, plus the site and everyone else present."""

    site: str

    @property
    def stream(self) -> str:
        """The site's custody stream: ``custody:SITE`` (one store holds every aggregate)."""
        return f"custody:{self.site}"

    @property
    def serials(self) -> tuple[str, ...]:
        """The dice this event is about (empty for events about no particular die)."""
        return ()


class _DiceEvent(steps.NamedDice, CustodyEvent, abstract=True):
    """An event about dice named by serial."""


# -- the site -------------------------------------------------------------------------------
class CustodyOpened(CustodyEvent):
    """The site's custody record begins, under these rules."""

    jurisdiction: str
    pack: dict[str, Any] = field(hash=False)
    pack_digest: str


class KeyDrawn(steps.KeyUse, CustodyEvent):
    """One of the two storage keys was drawn by the actor (PA 603a.13(c))."""


class KeyReturned(steps.KeyUse, CustodyEvent):
    holder: str


# -- receipt and storage -----------------------------------------------------------------------
class ShipmentReceived(steps.Shipment, CustodyEvent):
    """A shipment unloaded under two people, its seals checked (PA 603a.13(a))."""

    quantity: int


class BoxOpenedAndInspected(_DiceEvent):
    """A box whose seal failed, opened at once and its dice inspected (PA 603a.13(a))."""

    shipment: str
    box: str
    findings: tuple[Finding, ...] = ()


class DiceStored(steps.Stored, _DiceEvent):
    """Received dice locked in the storage area (both key holders present)."""


class DiceIssuedForGamingDay(steps.GamingDay, _DiceEvent):
    """The gaming day's dice taken out of storage, security present (PA 603a.13(d))."""

    area: str
    """The storage areas they came from, comma-separated."""


class DiceReturnedToStorage(steps.Stored, _DiceEvent):
    """Issued dice that never reached a table, put back in storage."""


# -- inspection and play ---------------------------------------------------------------------
@dataclass(frozen=True)
class InspectionResult:
    serial: str
    passed: bool
    measurements: tuple[Decimal, ...]
    problems: tuple[str, ...] = ()


class DiceInspected(steps.Inspection, _DiceEvent):
    """The pre-play inspection (68 IAC 14-3-7): one result per die, failures included."""

    results: tuple[InspectionResult, ...]


class DiceIssuedToTable(steps.IntoPlay, _DiceEvent):
    to_table: str
    expires_at: str
    """When the dice must be out of play (the 24-hour limit)."""


# -- removal, envelopes, cancellation ----------------------------------------------------------
class DiceRemoved(steps.Removal, _DiceEvent):
    """Dice taken out of play or out of stock (68 IAC 14-3-4(a))."""

    from_location: str


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


class EnvelopeDelivered(steps.EnvelopeHandover, _DiceEvent):
    """The envelope's dice out of the licensee's custody, with the enforcement agent."""


class DiceTransferredToCancellation(steps.CancellationRoom, _DiceEvent):
    """Removed dice carried to the cancellation room: a pit-log and a room-log entry."""

    pit_manager: Person


class DiceCancelled(steps.Cancellation, _DiceEvent):
    """Dice destroyed under surveillance (68 IAC 14-3-4(c))."""

    destroyed_by: Person
    surveillance: Person


# -- inventory and alerts -----------------------------------------------------------------------
class PhysicalInventoryTaken(steps.Count, CustodyEvent):
    """The physical count, reconciled with the record (68 IAC 14-3-5(d))."""

    on_record: int
    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()

    @property
    def serials(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.counted) | set(self.missing)))


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


class DiceOverdue(_DiceEvent):
    """Alert: dice still in play past their time limit."""

    alert = True
    table_id: str
    issued_at: str
    expires_at: str
    limit_hours: int


class InventoryOverdue(CustodyEvent):
    """Alert: no physical inventory within the required interval."""

    alert = True
    last: str
    """When the last physical inventory was taken (or the record opened)."""
    due: str
    """The last calendar day (YYYY-MM-DD, site time) the next inventory was due by."""
    time_zone: str = ""
    """The site's time zone the calendar is counted in."""


class FairnessAlertRaised(steps.FairnessFinding, _DiceEvent):
    """Alert to the pit: a die's faces drift from uniform (dicetable.fairness)."""

    alert = True
