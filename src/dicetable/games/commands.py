"""Commands: what someone at the table asks for. Each carries its actor and role.

An engine decides a command into events (or refuses it with a typed error naming the rule);
nothing changes until the events are applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from dicetable.core.dice import Roll
from dicetable.core.roles import Role
from dicetable.rules.model import RulePack


@dataclass(frozen=True, kw_only=True)
class Command:
    actor: str
    role: Role


@dataclass(frozen=True, kw_only=True)
class OpenTable(Command):
    table: str
    pack: RulePack
    mode: str = "bare"
    automations: tuple[str, ...] | None = None
    """What the table does by itself (the table layer fills in its mode's own)."""


@dataclass(frozen=True, kw_only=True)
class PlayerCommand(Command):
    """A command about one player, named by ``player``."""

    player: str


@dataclass(frozen=True, kw_only=True)
class BetCommand(Command):
    """A command about one bet on the layout (its player is the bet's owner)."""

    bet: str


@dataclass(frozen=True, kw_only=True)
class JoinTable(PlayerCommand):
    seat: int | None = None


@dataclass(frozen=True, kw_only=True)
class LeaveTable(PlayerCommand):
    """The player leaves the table."""


@dataclass(frozen=True, kw_only=True)
class BuyChips(PlayerCommand):
    amount: int
    chip_set: str = ""
    """The chip set the dealer issues from, when named (a retired set is refused where the
    floor keeps the table's bank: 603a.10(b))."""


@dataclass(frozen=True, kw_only=True)
class CashOut(PlayerCommand):
    amount: int


@dataclass(frozen=True, kw_only=True)
class PlaceBet(PlayerCommand):
    wager: str
    amount: int
    base: str | None = None
    """For odds: the id of the line or put bet they stand behind."""
    working: bool | None = None
    """The player's call: on or off. None follows the table's policy."""
    medium: str = "chips"
    chip_set: str = ""
    """The chip set the wager's chips are from, when named (a retired set is refused where
    the floor keeps the table's bank: 603a.10(b))."""


@dataclass(frozen=True, kw_only=True)
class ChangeBet(BetCommand):
    amount: int


@dataclass(frozen=True, kw_only=True)
class RemoveBet(BetCommand):
    """The bet comes down (where it may)."""


@dataclass(frozen=True, kw_only=True)
class SetWorking(BetCommand):
    working: bool


@dataclass(frozen=True, kw_only=True)
class CloseBetting(Command):
    """'No more bets'."""


@dataclass(frozen=True, kw_only=True)
class RecordRoll(Command):
    roll: Roll | None
    source: str = "manual"
    facts: tuple[str, ...] = ()
    serials: tuple[str, ...] = ()
    distance: Fraction | None = None
    thrower: str | None = None


@dataclass(frozen=True, kw_only=True)
class CallNoRoll(Command):
    grounds: tuple[str, ...]
    observed: tuple[str, ...] = ()
    """Throw facts the caller saw that the recorded throw does not carry: the call records
    them, and the log shows who saw them (the caller)."""


@dataclass(frozen=True, kw_only=True)
class CollectLosers(Command):
    pass


@dataclass(frozen=True, kw_only=True)
class PayWinners(Command):
    pass


@dataclass(frozen=True, kw_only=True)
class MovePuck(Command):
    """Craps: the last settlement chore; come bets travel and the puck moves."""


@dataclass(frozen=True, kw_only=True)
class CompleteRound(Command):
    """Props & Hops: the last settlement chore of a round."""


@dataclass(frozen=True, kw_only=True)
class ReturnWagers(Command):
    """After a no roll under ``noroll.effect: wagers-returned``: every wager goes back."""


FIELD_GROUPS: frozenset[type[Command]] = frozenset((PlayerCommand, BetCommand))
"""Bases that declare a field several commands share: not commands themselves (nothing
gives one; the catalogue lists what derives from them)."""
