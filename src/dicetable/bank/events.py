"""The table bank's events: the stream ``bank:TABLE`` of the one store.

Only what the table's own log does not already record is written here: counts and their
slips, fills and credits, colour changes and counter checks, the drop. Buy-ins, payouts,
collections and vigorish are the table's settlement events; the bank derives their movements
from the table's log (``dicetable.bank.follow``), so the bet path writes nothing twice.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from dicetable.bank.model import Chips
from dicetable.core import events as envelope

KIND = "bank"


class BankEvent(envelope.Event, abstract=True):
    table: str

    @property
    def stream(self) -> str:
        return f"{KIND}:{self.table}"


class ChipStep(BankEvent, abstract=True):
    """A step that moves chips: it records the chip set it named (the bank stamps it on every
    chip step of the batch)."""

    chip_set: str = ""
    """The chip set the step named (``set=``; a retired set is refused, 603a.10(b))."""


class BankOpened(BankEvent):
    """The table's bank is set up: its site, game and the bank rules it runs under."""

    site: str
    game: str
    pack: dict[str, Any] = field(hash=False)
    pack_digest: str
    electronic: bool = False
    """A fully automated table: outside the table inventory rules; win from its own log."""


class InventoryMoved(ChipStep):
    """A movement the table's log does not record: a colour change, a counter check."""

    reason: str
    source_kind: str
    source_ref: str
    chips: Chips
    value: int
    table_seq: int
    gaming_day: str


class InventoryCounted(ChipStep):
    """A Table Inventory Slip: counted by one person, observed and signed by another."""

    slip: int
    """The slip's number in this table's series."""
    purpose: str
    """opening, drop, closing, shift or closed-daily."""
    gaming_day: str
    shift: str
    chips: Chips
    total: int
    expected: int | None
    """The inventory the ledger expected (None for the first count of a new table)."""
    counter: str
    counter_role: str
    observer: str
    observer_role: str
    container: str = ""
    place: str = ""
    """Where the slip went: the drop box (465a.37(e)), the outgoing/incoming box (465a.41(d)),
    the locked container (465a.36(c))."""
    table_seq: int = 0
    """The table log's head when counted: the ledger's expected inventory is as of it."""
    table_change: int = 0
    """What the table's log had moved in and out of the inventory by then, since its first
    event (``Totals.inventory_change``): the next count's expected inventory starts here."""


class TotalsNoted(BankEvent):
    """A checkpoint of what the table's log had moved by ``table_seq`` (``Totals``): a bank
    read cold folds the table's log on from here instead of from its first event."""

    table_seq: int
    totals: tuple[tuple[str, int], ...]
    values: tuple[tuple[str, int, int], ...] = ()
    """(kind, value, how many) of the movements so far, for a variance's suspects."""


class DiscrepancyFound(BankEvent):
    """A count that disagrees with the ledger, who was told, and the movements that differ."""

    alert = True
    slip: int
    expected: int
    counted: int
    variance: int
    notified: tuple[str, ...]
    written_report: bool
    regulator_copy: bool
    suspects: tuple[str, ...]
    """The movements since the last count that would explain the variance."""


class TableStatusChanged(BankEvent):
    """The table opened for play or closed (its inventory locked in its container)."""

    status: str
    slip: int
    container: str = ""
    location: str = ""
    crew: tuple[tuple[str, str], ...] = ()
    """(person, role) of the crew that opened it (465a.35(b))."""
    carrier: str = ""
    """The security employee who brought the container from the cage (465a.37(a))."""


class NoticeAcknowledged(BankEvent):
    """A recipient read a notice (the bank event ``notice`` is its seq) on their console."""

    notice: int
    person: str
    person_role: str


class SupervisorAssigned(BankEvent):
    """The floorperson who supervises this open table from now on: the floor-wide register of
    who supervises which open tables (465a.35(c)) is every open bank's supervisor. At opening
    the observing floorperson is the supervisor."""

    person: str
    person_role: str


class SlipRequested(ChipStep):
    """A Fill Request Slip or a credit request, prepared at the table."""

    request: int
    slip_kind: str
    """fill or credit."""
    chips: Chips
    value: int
    gaming_day: str
    shift: str
    electronic: bool = False


class RequestSigned(BankEvent):
    request: int


class SurveillanceNotified(BankEvent):
    request: int
    officer: str = ""


class SlipIssued(ChipStep):
    """The chip bank's Fill Slip or Credit Slip: a serial number in sequence."""

    request: int
    serial: int
    slip_kind: str
    chips: Chips
    value: int


class SlipCarried(BankEvent):
    """The security employee who carries the chips (and the slip)."""

    serial: int
    officer: str


class SlipSignature(BankEvent):
    """A signature on a Credit Slip (68 IAC 15-12-4(5)) or a Fill Slip."""

    serial: int
    signer: str
    signer_role: str


class SlipCompleted(ChipStep):
    """The receiving count: the chips entered (fill) or left (credit) the table inventory."""

    serial: int
    slip_kind: str
    chips: Chips
    value: int
    counter: str
    officer: str
    gaming_day: str
    table_seq: int


class SlipVoided(BankEvent):
    """A request or slip voided; it stays in the record (never edited)."""

    request: int
    serial: int
    reason: str


class DropBoxCollected(BankEvent):
    """The drop box came off the table (and a replacement went on)."""

    box: str
    gaming_day: str
    shift: str
    team: tuple[str, ...]
    replacement: str
    team_roles: tuple[str, ...] = ()


class DropBoxCounted(BankEvent):
    """The count room's count of one box, typed (currency, counter checks, chips, coupons)."""

    box: str
    gaming_day: str
    items: tuple[tuple[str, int], ...]
    counters: tuple[str, ...]
    counter_roles: tuple[str, ...] = ()


class ChipSetRetired(BankEvent):
    chip_set: str


class HoldInvestigated(BankEvent):
    """A win-to-drop outside the band (COMAR 36.05.03.25B stand-in): the record, queued for
    the regulator."""

    alert = True
    gaming_day: str
    hold: str
    low: str
    high: str
    hold_exact: str = ""
    history: tuple[str, ...] = ()

