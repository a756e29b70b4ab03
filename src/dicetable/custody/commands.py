"""Custody commands: what someone asks to do with dice. Each carries its actor, role and the
other people present. ``decide`` turns a command into events or refuses it, naming the rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from dicetable.core.roles import Role
from dicetable.custody.model import (
    Box,
    BoxInspection,
    CancelMethod,
    DieCheck,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
)
from dicetable.custody.rules import CustodyPack


@dataclass(frozen=True, kw_only=True)
class CustodyCommand:
    actor: str
    role: Role
    licence: str = ""
    witnesses: tuple[Person, ...] = ()
    """The other people the step needs (a security officer, a surveillance observer)."""

    @property
    def people(self) -> tuple[Person, ...]:
        return (Person(self.actor, self.role, self.licence), *self.witnesses)


@dataclass(frozen=True, kw_only=True)
class DiceCommand(CustodyCommand):
    """A step on dice named by serial."""

    dice: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class OpenCustody(CustodyCommand):
    site: str
    pack: CustodyPack


@dataclass(frozen=True, kw_only=True)
class DrawKey(CustodyCommand):
    """The actor draws one storage key for their own use."""

    key: Key


@dataclass(frozen=True, kw_only=True)
class ReturnKey(CustodyCommand):
    key: Key


@dataclass(frozen=True, kw_only=True)
class ReceiveShipment(CustodyCommand):
    shipment: str
    manufacturer: Manufacturer
    boxes: tuple[Box, ...]
    opened: tuple[BoxInspection, ...] = ()
    """The inspection of every box whose seal failed, done there and then."""
    delivery_witness: str = ""
    """The gaming agent or Commission staff member present at the delivery (``receipt.
    delivery_witness``)."""


@dataclass(frozen=True, kw_only=True)
class StoreDice(DiceCommand):
    area: str


@dataclass(frozen=True, kw_only=True)
class IssueForGamingDay(DiceCommand):
    gaming_day: str
    """The gaming day as YYYY-MM-DD."""


@dataclass(frozen=True, kw_only=True)
class ReturnToStorage(DiceCommand):
    area: str


@dataclass(frozen=True, kw_only=True)
class InspectDice(CustodyCommand):
    checks: tuple[DieCheck, ...]
    tools: tuple[str, ...]
    under_surveillance: bool


@dataclass(frozen=True, kw_only=True)
class IssueToTable(DiceCommand):
    table: str
    game: str = "craps"
    mode: PlayMode = PlayMode.TABLE
    received_by: Person


@dataclass(frozen=True, kw_only=True)
class RemoveDice(DiceCommand):
    reason: RemovalReason
    signs: str = ""
    """For tampering: what suggests it (68 IAC 14-3-4(b)(3))."""
    table_staff: tuple[Person, ...] = ()
    """For tampering at a table: every occupational licensee there (14-3-4(b)(4)(A))."""
    assigned_at_table: tuple[str, ...] | None = None
    """The staff the table's own log has assigned at that table now (None: not known). The
    envelope's list is held against it; whoever joins the table to the ledger supplies it."""
    envelope: str = ""
    """For tampering: the envelope's number (one is made up when left empty)."""
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class DeliverEnvelope(CustodyCommand):
    envelope: str
    agent: str


@dataclass(frozen=True, kw_only=True)
class TransferToCancellation(DiceCommand):
    """The responsible pit manager (the actor) sends removed dice to the cancellation room."""

    accepted_by: Person


@dataclass(frozen=True, kw_only=True)
class CancelDice(DiceCommand):
    """The actor destroys dice; a surveillance employee is among the witnesses."""

    method: CancelMethod
    hole_in: Decimal | None = None
    approval: str = ""


@dataclass(frozen=True, kw_only=True)
class TakePhysicalInventory(CustodyCommand):
    counted: tuple[str, ...]
    """The serial of every die physically found in the building."""


@dataclass(frozen=True, kw_only=True)
class CheckDeadlines(CustodyCommand):
    """The sweep that raises alerts for dice past their time limit and an overdue inventory."""

    limits: tuple[tuple[str, int, str], ...] = ()
    """(table, hours, citation): a table's own ``dice.max_hours``, from the pack it runs
    (``rules.dice_limit``); dice at a table not named keep the limit they were issued under."""


@dataclass(frozen=True, kw_only=True)
class RecordFairnessAlert(CustodyCommand):
    serial: str
    test: str
    detail: str
    statistic: str
    threshold: str
    rolls: int


FIELD_GROUPS: frozenset[type[CustodyCommand]] = frozenset({DiceCommand})
"""Bases that declare a field several custody commands share: not commands themselves."""
