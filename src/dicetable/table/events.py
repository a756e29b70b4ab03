"""Events of the table procedure: staff, dice at the table, the shooter, the shaker, alerts.

They share the game events' envelope and codec (``dicetable.games.events``).
"""

from __future__ import annotations

from typing import ClassVar

from dicetable.core.frozen import Frozen
from dicetable.core.roles import Role
from dicetable.games.events import Event


# -- fields a command and the event it records both carry (``dicetable.games.events.carried``)
class Staffing(Frozen):
    """Who works the table: ``person`` in ``staff_role``."""

    person: str
    staff_role: Role


class DiceLoad(Frozen):
    """Dice brought to the table, by serial."""

    serials: tuple[str, ...]
    witness: str | None = None
    """Props & Hops: the dealer in whose presence the floorperson loads the shaker."""


class StaffChange(Staffing, Event, abstract=True):
    """A change of who works the table: ``person`` in ``staff_role``."""


class StaffAssigned(StaffChange):
    """``person`` takes up ``staff_role`` at the table."""


class StaffRelieved(StaffChange):
    """``person`` is relieved of ``staff_role`` at the table."""


class DiceBrought(DiceLoad, Event):
    """Dice arrive at the table (into the bowl at Craps; into the shaker at Props & Hops)."""


class DiceTakenFromTable(Event):
    """Dice leave the table (replaced, lost, removed from play); custody takes them from here."""

    serials: tuple[str, ...]
    reason: str


class DiceOffered(Event):
    patron: str
    serials: tuple[str, ...]


class DiceDeclined(Event):
    patron: str


class ShooterSelected(Event):
    shooter: str
    dice: tuple[str, ...]
    returned_to_bowl: tuple[str, ...]


class ShooterEnded(Event):
    """The shooter gives up the dice: seven-out, removal, or relinquished."""

    shooter: str
    reason: str


class NoRollOverturned(Event):
    """A declaration that a roll was invalid is overturned: the roll counts after all."""

    overturned_seq: int
    reason: str = ""


class ShakerShaken(Event):
    """The dealer shakes the covered shaker: before play and after each round (585.3(d),(i))."""


class PlayerShakerEvent(Event, abstract=True):
    """A step of a player's turn with the shaker: offered, shaken, lid off, re-covered,
    returned."""

    player: str


class ShakerOffered(PlayerShakerEvent):
    """The dealer offers the covered shaker to ``player``."""


class ShakerShakenByPlayer(PlayerShakerEvent):
    times: int


class ShakerLidRemoved(PlayerShakerEvent):
    """The player took the lid off: the shaker is re-covered and must be shaken again."""


class ShakerRecovered(PlayerShakerEvent):
    """The lid is back on the shaker; it is shaken again from zero (585.3(e))."""


class ShakerReturned(PlayerShakerEvent):
    """The player hands the shaker back to the dealer."""


class ShakerUncovered(Event):
    """The dealer removes the lid and places the shaker in the designated circle."""


class ShakerPassed(Event):
    """After a 7 the shaker goes to the next player to the left (585.3(j))."""

    from_player: str | None
    to_player: str | None


class AlertRaised(Event):
    name: str
    message: str
    blocks_play: bool = False

    alert: ClassVar[bool] = True


class PlayUnblocked(Event):
    name: str
