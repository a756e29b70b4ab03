"""Custody commands: what someone asks to do with dice. Each carries its actor, role and the
other people present. ``decide`` turns a command into events or refuses it, naming the rule.

What a command shares with the event it records (the dice, the key, the shipment, ...) is
declared once, in ``dicetable.custody.steps``; a command adds only what it alone knows.
"""

from __future__ import annotations

from dicetable.custody import steps
from dicetable.custody.model import BoxInspection, DieCheck, Person
from dicetable.custody.rules import CustodyPack


class CustodyCommand(steps.Participants):
    """A custody step someone asks for: the actor, role, licence and the others present."""


class DiceCommand(steps.NamedDice, CustodyCommand):
    """A step on dice named by serial."""


class OpenCustody(CustodyCommand):
    site: str
    pack: CustodyPack


class DrawKey(steps.KeyUse, CustodyCommand):
    """The actor draws one storage key for their own use."""


class ReturnKey(steps.KeyUse, CustodyCommand):
    """The holder (or security) gives a storage key back."""


class ReceiveShipment(steps.Shipment, CustodyCommand):
    opened: tuple[BoxInspection, ...] = ()
    """The inspection of every box whose seal failed, done there and then."""


class StoreDice(steps.Stored, DiceCommand):
    """Received dice put in the locked storage area."""


class IssueForGamingDay(steps.GamingDay, DiceCommand):
    """The gaming day's dice taken out of storage."""


class ReturnToStorage(steps.Stored, DiceCommand):
    """Issued dice that never reached a table put back in storage."""


class InspectDice(steps.Inspection, CustodyCommand):
    checks: tuple[DieCheck, ...]


class IssueToTable(steps.IntoPlay, DiceCommand):
    table: str


class RemoveDice(steps.Removal, DiceCommand):
    signs: str = ""
    """For tampering: what suggests it (68 IAC 14-3-4(b)(3))."""
    table_staff: tuple[Person, ...] = ()
    """For tampering at a table: every occupational licensee there (14-3-4(b)(4)(A))."""
    assigned_at_table: tuple[str, ...] | None = None
    """The staff the table's own log has assigned at that table now (None: not known). The
    envelope's list is held against it; whoever joins the table to the ledger supplies it."""
    envelope: str = ""
    """For tampering: the envelope's number (one is made up when left empty)."""


class DeliverEnvelope(steps.EnvelopeHandover, CustodyCommand):
    """A sealed tamper envelope handed to the enforcement agent."""


class TransferToCancellation(steps.CancellationRoom, DiceCommand):
    """The responsible pit manager (the actor) sends removed dice to the cancellation room."""


class CancelDice(steps.Cancellation, DiceCommand):
    """The actor destroys dice; a surveillance employee is among the witnesses."""


class TakePhysicalInventory(steps.Count, CustodyCommand):
    """Every die physically found in the building, counted."""


class CheckDeadlines(CustodyCommand):
    """The sweep that raises alerts for dice past their time limit and an overdue inventory."""

    limits: tuple[tuple[str, int, str], ...] = ()
    """(table, hours, citation): a table's own ``dice.max_hours``, from the pack it runs
    (``rules.dice_limit``); dice at a table not named keep the limit they were issued under."""


class RecordFairnessAlert(steps.FairnessFinding, CustodyCommand):
    serial: str


FIELD_GROUPS: frozenset[type[CustodyCommand]] = frozenset({DiceCommand})
"""Bases that declare a field several custody commands share: not commands themselves."""
