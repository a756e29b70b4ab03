"""What a custody step asks for and what its record keeps of it, declared once.

A custody command (``dicetable.custody.commands``) and the event it records
(``dicetable.custody.events``) carry the same facts under the same names: the people present,
the dice named, the key drawn, the shipment received, the cancellation method. Each group of
such fields is a frozen, keyword-only dataclass here that both the command and the event
derive from; what only one side knows (the command's choices, the event's computed outcome)
stays on that side. The events' field names are their JSON keys, so a group's names are the
persisted names.

>>> from dicetable.core.events import carried
>>> from dicetable.core.roles import Role
>>> from dicetable.custody import commands, events
>>> asked = commands.StoreDice(actor="Ann", role=Role.SECURITY, dice=("D1",), area="vault")
>>> kept = events.DiceStored(site="river", seq=3, actor="Ann", role=Role.SECURITY,
...                         at="2026-01-01T08:00:00+00:00", dice=("D1",), area="vault")
>>> carried(asked, Stored) == carried(kept, Stored)
True
"""

from __future__ import annotations

from decimal import Decimal

from dicetable.core.frozen import Frozen
from dicetable.core.roles import Role
from dicetable.custody.model import (
    Box,
    CancelMethod,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
)


class Participants(Frozen):
    """Who takes a custody step: the actor, in a role, and everyone else the rule needs."""

    actor: str
    role: Role
    licence: str = ""
    """The actor's occupational licence number (68 IAC 14-3-8 logs record it)."""
    witnesses: tuple[Person, ...] = ()
    """The other people the step needs (security at receipt, surveillance at cancellation)."""

    @property
    def people(self) -> tuple[Person, ...]:
        """Everyone who took part: the actor first."""
        return (Person(self.actor, self.role, self.licence), *self.witnesses)


class NamedDice(Frozen):
    """A step on dice named by serial."""

    dice: tuple[str, ...]

    @property
    def serials(self) -> tuple[str, ...]:
        return self.dice


class KeyUse(Frozen):
    """One of the two storage keys, drawn or returned (PA 603a.13(c))."""

    key: Key


class Shipment(Frozen):
    """A shipment as it arrives: its boxes with their seals (PA 603a.13(a))."""

    shipment: str
    manufacturer: Manufacturer
    boxes: tuple[Box, ...]
    delivery_witness: str = ""
    """The gaming agent or Commission staff member present at the delivery (``receipt.
    delivery_witness``)."""

    @property
    def serials(self) -> tuple[str, ...]:
        return tuple(s for b in self.boxes for s in b.serials)


class Stored(Frozen):
    """Dice put in (or back in) the locked storage area."""

    area: str


class GamingDay(Frozen):
    gaming_day: str
    """The gaming day as YYYY-MM-DD."""


class Inspection(Frozen):
    """How the pre-play inspection was done (68 IAC 14-3-7)."""

    tools: tuple[str, ...]
    under_surveillance: bool


class IntoPlay(Frozen):
    """Dice put into play: the game, how they are thrown, and who at the table took them."""

    game: str = "craps"
    mode: PlayMode = PlayMode.TABLE
    received_by: Person


class Removal(Frozen):
    """Why dice leave play or stock (68 IAC 14-3-4(a))."""

    reason: RemovalReason
    detail: str = ""


class EnvelopeHandover(Frozen):
    """A sealed tamper envelope handed to the enforcement agent."""

    envelope: str
    agent: str


class CancellationRoom(Frozen):
    """Who in the cancellation room accepted the removed dice."""

    accepted_by: Person


class Cancellation(Frozen):
    """How dice were destroyed (68 IAC 14-3-4(c))."""

    method: CancelMethod
    hole_in: Decimal | None = None
    approval: str = ""


class Count(Frozen):
    counted: tuple[str, ...]
    """The serial of every die physically found in the building."""


class FairnessFinding(Frozen):
    """What the fairness monitor found of a die's faces (dicetable.fairness)."""

    test: str
    detail: str
    statistic: str
    threshold: str
    rolls: int
