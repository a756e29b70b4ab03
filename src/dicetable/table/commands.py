"""Commands of the table procedure (the game commands live in ``dicetable.games.commands``)."""

from __future__ import annotations

from dicetable.games.commands import Command, PlayerCommand
from dicetable.table.events import DiceLoad, Staffing


class AssignStaff(Staffing, Command):
    """``person`` takes up ``staff_role`` at the table."""


class RelieveStaff(Staffing, Command):
    """``person`` is relieved of ``staff_role`` at the table."""


class BringDice(DiceLoad, Command):
    """Bring dice to the table (Craps) or load the shaker (Props & Hops, with ``witness``)."""


class RemoveDice(Command):
    serials: tuple[str, ...]
    reason: str = "replaced"


class OfferDice(Command):
    patron: str
    serials: tuple[str, ...] = ()
    """The dice offered (none named: the whole bowl)."""


class DeclineDice(Command):
    pass


class SelectDice(Command):
    serials: tuple[str, ...]


class RelinquishDice(Command):
    pass


class RemoveShooter(Command):
    ground: str


class OverturnNoRoll(Command):
    reason: str = ""


class ShakeShaker(Command):
    """The dealer shakes the covered shaker."""


class OfferShaker(PlayerCommand):
    """The dealer offers the covered shaker to ``player``."""


class PlayerShake(Command):
    times: int = 1


class RemoveLid(Command):
    pass


class RecoverShaker(Command):
    """The player who took the lid off puts it back: the shaker is covered again and must be
    shaken again before it is returned (58 Pa. Code 585.3(e))."""


class ReturnShaker(Command):
    pass


class UncoverShaker(Command):
    pass


class PassShaker(Command):
    """After a round ending on ``shaker.passes_on``: the shaker goes to the next player."""


class Tick(Command):
    """The table's clock ticks: raise any alert that time has made due (dice past 24 hours)."""
