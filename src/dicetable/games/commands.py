"""Commands: what someone at the table asks for. Each carries its actor and role.

An engine decides a command into events (or refuses it with a typed error naming the rule);
nothing changes until the events are applied.
"""

from __future__ import annotations

from dicetable.core.frozen import Frozen
from dicetable.core.roles import Role
from dicetable.games.events import Chips, Throw
from dicetable.rules.model import RulePack


class Command(Frozen):
    """Who gives the command, in which role. Each command class is a frozen, keyword-only
    dataclass by deriving from it (``Frozen``)."""

    actor: str
    role: Role


class OpenTable(Command):
    table: str
    pack: RulePack
    mode: str = "bare"
    automations: tuple[str, ...] | None = None
    """What the table does by itself (the table layer fills in its mode's own)."""


class PlayerCommand(Command):
    """A command about one player, named by ``player``."""

    player: str


class BetCommand(Command):
    """A command about one bet on the layout (its player is the bet's owner)."""

    bet: str


class JoinTable(PlayerCommand):
    seat: int | None = None


class LeaveTable(PlayerCommand):
    """The player leaves the table."""


class BuyChips(Chips, PlayerCommand):
    chip_set: str = ""
    """The chip set the dealer issues from, when named (a retired set is refused where the
    floor keeps the table's bank: 603a.10(b))."""


class CashOut(Chips, PlayerCommand):
    """The player cashes chips out (cents)."""


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


class ChangeBet(BetCommand):
    amount: int


class RemoveBet(BetCommand):
    """The bet comes down (where it may)."""


class SetWorking(BetCommand):
    working: bool


class CloseBetting(Command):
    """'No more bets'."""


class RecordRoll(Throw, Command):
    source: str = "manual"
    """Recorded by hand unless the dice source says otherwise."""


class CallNoRoll(Command):
    grounds: tuple[str, ...]
    observed: tuple[str, ...] = ()
    """Throw facts the caller saw that the recorded throw does not carry: the call records
    them, and the log shows who saw them (the caller)."""


class CollectLosers(Command):
    pass


class PayWinners(Command):
    pass


class MovePuck(Command):
    """Craps: the last settlement chore; come bets travel and the puck moves."""


class CompleteRound(Command):
    """Props & Hops: the last settlement chore of a round."""


class ReturnWagers(Command):
    """After a no roll under ``noroll.effect: wagers-returned``: every wager goes back."""


FIELD_GROUPS: frozenset[type[Command]] = frozenset((PlayerCommand, BetCommand))
"""Bases that declare a field several commands share: not commands themselves (nothing
gives one; the catalogue lists what derives from them)."""
