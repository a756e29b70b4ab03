"""Events of the table procedure: staff, dice at the table, the shooter, the shaker, alerts.

They share the game events' envelope and codec (``dicetable.games.events``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dicetable.core.roles import Role
from dicetable.games.events import Event


@dataclass(frozen=True, kw_only=True)
class StaffChange(Event, abstract=True):
    """A change of who works the table: ``person`` in ``staff_role``."""

    person: str
    staff_role: Role


@dataclass(frozen=True, kw_only=True)
class StaffAssigned(StaffChange):
    """``person`` takes up ``staff_role`` at the table."""


@dataclass(frozen=True, kw_only=True)
class StaffRelieved(StaffChange):
    """``person`` is relieved of ``staff_role`` at the table."""


@dataclass(frozen=True, kw_only=True)
class DiceBrought(Event):
    """Dice arrive at the table (into the bowl at Craps; into the shaker at Props & Hops)."""

    serials: tuple[str, ...]
    witness: str | None = None
    """Props & Hops: the dealer in whose presence the floorperson loads the shaker."""


@dataclass(frozen=True, kw_only=True)
class DiceTakenFromTable(Event):
    """Dice leave the table (replaced, lost, removed from play); custody takes them from here."""

    serials: tuple[str, ...]
    reason: str


@dataclass(frozen=True, kw_only=True)
class DiceOffered(Event):
    patron: str
    serials: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class DiceDeclined(Event):
    patron: str


@dataclass(frozen=True, kw_only=True)
class ShooterSelected(Event):
    shooter: str
    dice: tuple[str, ...]
    returned_to_bowl: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ShooterEnded(Event):
    """The shooter gives up the dice: seven-out, removal, or relinquished."""

    shooter: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class NoRollOverturned(Event):
    """A declaration that a roll was invalid is overturned: the roll counts after all."""

    overturned_seq: int
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class ShakerShaken(Event):
    """The dealer shakes the covered shaker: before play and after each round (585.3(d),(i))."""


@dataclass(frozen=True, kw_only=True)
class PlayerShakerEvent(Event, abstract=True):
    """A step of a player's turn with the shaker: offered, shaken, lid off, re-covered,
    returned."""

    player: str


@dataclass(frozen=True, kw_only=True)
class ShakerOffered(PlayerShakerEvent):
    """The dealer offers the covered shaker to ``player``."""


@dataclass(frozen=True, kw_only=True)
class ShakerShakenByPlayer(PlayerShakerEvent):
    times: int


@dataclass(frozen=True, kw_only=True)
class ShakerLidRemoved(PlayerShakerEvent):
    """The player took the lid off: the shaker is re-covered and must be shaken again."""


@dataclass(frozen=True, kw_only=True)
class ShakerRecovered(PlayerShakerEvent):
    """The lid is back on the shaker; it is shaken again from zero (585.3(e))."""


@dataclass(frozen=True, kw_only=True)
class ShakerReturned(PlayerShakerEvent):
    """The player hands the shaker back to the dealer."""


@dataclass(frozen=True, kw_only=True)
class ShakerUncovered(Event):
    """The dealer removes the lid and places the shaker in the designated circle."""


@dataclass(frozen=True, kw_only=True)
class ShakerPassed(Event):
    """After a 7 the shaker goes to the next player to the left (585.3(j))."""

    from_player: str | None
    to_player: str | None


@dataclass(frozen=True, kw_only=True)
class AlertRaised(Event):
    name: str
    message: str
    blocks_play: bool = False

    alert: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class PlayUnblocked(Event):
    name: str
