"""Commands of the table procedure (the game commands live in ``dicetable.games.commands``)."""

from __future__ import annotations

from dataclasses import dataclass

from dicetable.core.roles import Role
from dicetable.games.commands import Command, PlayerCommand


@dataclass(frozen=True, kw_only=True)
class AssignStaff(Command):
    person: str
    staff_role: Role


@dataclass(frozen=True, kw_only=True)
class RelieveStaff(Command):
    person: str
    staff_role: Role


@dataclass(frozen=True, kw_only=True)
class BringDice(Command):
    """Bring dice to the table (Craps) or load the shaker (Props & Hops, with ``witness``)."""

    serials: tuple[str, ...]
    witness: str | None = None


@dataclass(frozen=True, kw_only=True)
class RemoveDice(Command):
    serials: tuple[str, ...]
    reason: str = "replaced"


@dataclass(frozen=True, kw_only=True)
class OfferDice(Command):
    patron: str
    serials: tuple[str, ...] = ()
    """The dice offered (none named: the whole bowl)."""


@dataclass(frozen=True, kw_only=True)
class DeclineDice(Command):
    pass


@dataclass(frozen=True, kw_only=True)
class SelectDice(Command):
    serials: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class RelinquishDice(Command):
    pass


@dataclass(frozen=True, kw_only=True)
class RemoveShooter(Command):
    ground: str


@dataclass(frozen=True, kw_only=True)
class OverturnNoRoll(Command):
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class ShakeShaker(Command):
    """The dealer shakes the covered shaker."""


@dataclass(frozen=True, kw_only=True)
class OfferShaker(PlayerCommand):
    """The dealer offers the covered shaker to ``player``."""


@dataclass(frozen=True, kw_only=True)
class PlayerShake(Command):
    times: int = 1


@dataclass(frozen=True, kw_only=True)
class RemoveLid(Command):
    pass


@dataclass(frozen=True, kw_only=True)
class RecoverShaker(Command):
    """The player who took the lid off puts it back: the shaker is covered again and must be
    shaken again before it is returned (58 Pa. Code 585.3(e))."""


@dataclass(frozen=True, kw_only=True)
class ReturnShaker(Command):
    pass


@dataclass(frozen=True, kw_only=True)
class UncoverShaker(Command):
    pass


@dataclass(frozen=True, kw_only=True)
class PassShaker(Command):
    """After a round ending on ``shaker.passes_on``: the shaker goes to the next player."""


@dataclass(frozen=True, kw_only=True)
class Tick(Command):
    """The table's clock ticks: raise any alert that time has made due (dice past 24 hours)."""
