"""Frozen events, named in the past tense. The log of them is the truth (DESIGN.md lesson 1).

Every event carries the table, its sequence number, who caused it and in which role, the time
from the injected clock, and the rule that allowed or forced it. ``to_dict``/``from_dict``
round-trip every event through plain JSON types.

>>> from dicetable.core.roles import Role
>>> e = DiceRolled(table="t1", seq=3, actor="stick", role=Role.STICKPERSON,
...                at="2026-01-01T00:00:00+00:00", roll=Roll(3, 4), source="manual")
>>> event_from_dict(event_to_dict(e)) == e
True
>>> event_to_dict(e)["roll"]
'3-4'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dicetable.core import events as envelope
from dicetable.core.dice import Roll
from dicetable.core.events import EVENT_TYPES as EVENT_TYPES  # re-exported: one codec for all
from dicetable.core.events import event_from_dict as event_from_dict
from dicetable.core.events import event_to_dict as event_to_dict
from dicetable.core.frozen import Frozen


class Event(envelope.Event, abstract=True):
    """The envelope every table event shares: ``dicetable.core.events.Event`` plus the table."""

    table: str

    @property
    def stream(self) -> str:
        return self.table


# -- fields a command and the event it records both carry (``core.frozen.carried``) ------
class Chips(Frozen):
    """Chips a player buys from or cashes out at the table (cents)."""

    player: str
    amount: int


class Throw(Frozen):
    """A throw of the dice as recorded (``RecordRoll``, ``DiceRolled``)."""

    roll: Roll | None
    """The faces read, or None when they could not be (a die off the table)."""
    source: str
    facts: tuple[str, ...] = ()
    """Physical facts of the throw as recorded (e.g. 'die-off-table')."""
    serials: tuple[str, ...] = ()
    """The serials of the dice thrown (first die, second die)."""
    distance: Fraction | None = None
    """How far the dice travelled, as a fraction of the table's length (IN 10-4-4(c)(10))."""
    thrower: str | None = None
    """Who threw the dice, when recorded (IN 10-4-4(c)(2): a patron other than the shooter)."""


# -- items carried by settlement events ---------------------------------------------------------
@dataclass(frozen=True)
class Collection:
    """A losing wager taken by the house (``returned`` > 0 when only part of it lost)."""

    bet: str
    player: str
    wager: str
    amount: int
    returned: int = 0


@dataclass(frozen=True)
class Payment:
    """A winning (or pushed) wager: the win paid, less any commission, and the stake if returned.

    ``rounding`` is the payout's rounding adjustment against the exact amount, in cents
    (negative when rounded down), recorded as its own ledger line.
    """

    bet: str
    player: str
    wager: str
    win: int
    commission: int = 0
    stake_returned: int = 0
    rounding: int = 0


@dataclass(frozen=True)
class Move:
    """A wager that changed state without being decided (a come bet travelling to its number)."""

    bet: str
    state: int
    state_name: str


@dataclass(frozen=True)
class Return:
    """A wager handed back in full (a no roll at Props & Hops, a bet taken down)."""

    bet: str
    player: str
    wager: str
    amount: int
    commission: int = 0


# -- table and players --------------------------------------------------------------------------
class TableOpened(Event):
    game: str
    pack: dict[str, Any] = field(hash=False)
    pack_digest: str
    mode: str = "bare"
    """'live' (staff and physical dice), 'electronic' (RNG, automated), 'bare' (engine only)."""
    automations: tuple[str, ...] | None = None
    """What the table does by itself (``dicetable.table.table``), in the log since
    schema version 2; None only in events built without the table layer."""


class PlayerJoined(Event):
    player: str
    seat: int | None = None


class PlayerLeft(Event):
    player: str


class ChipsBought(Chips, Event):
    """A player buys chips at the table."""


class ChipsCashedOut(Chips, Event):
    """A player cashes chips out at the table."""


# -- wagers --------------------------------------------------------------------------------------
class BetTerms(Frozen):
    """A wager on the layout: as placed (``BetPlaced``) and as it stands (the table state's
    ``Bet``, which the later events change)."""

    player: str
    wager: str
    """The compiled wager code (``odds:take``/``odds:lay`` for odds)."""
    amount: int
    state: int
    base: str | None = None
    working: bool | None = None
    commission: int = 0
    """Commission paid up front (buy and lay), kept by the house: for the next decision,
    refundable while the bet is taken down before it."""


class BetEvent(Event, abstract=True):
    """An event about one bet on the layout, named by ``bet``."""

    bet: str


class BetPlaced(BetTerms, BetEvent):
    medium: str = "chips"


class BetChanged(BetEvent):
    amount: int
    """The new amount on the layout."""
    commission: int = 0
    """Extra up-front commission paid (positive) or refunded (negative)."""


class BetRemoved(BetEvent):
    returned: int
    commission_returned: int = 0


class BetWorkingSet(BetEvent):
    working: bool


# -- the roll and its settlement -----------------------------------------------------------------
class BettingClosed(Event):
    """'No more bets' (Props & Hops 585.3(e); electronic tables at the end of the countdown)."""

    round: int = 0


class DiceRolled(Throw, Event):
    """The throw, as recorded; its settlement follows."""


class NoRollCalled(Event):
    """The roll does not count. ``automatic`` when the rules void it without anyone's call."""

    grounds: tuple[str, ...]
    automatic: bool = False
    observed: tuple[str, ...] = ()
    """Facts of the throw the caller (the event's actor) saw and recorded with the call."""


class WagersReturned(Event):
    items: tuple[Return, ...]


class LosersCollected(Event):
    items: tuple[Collection, ...]


class WinnersPaid(Event):
    items: tuple[Payment, ...]


class PuckMoved(Event):
    """Ends a Craps roll: come bets travel, the puck goes on or off."""

    point: int | None
    moves: tuple[Move, ...] = ()
    seven_out: bool = False


class RoundCompleted(Event):
    """Ends a Props & Hops round."""

    round: int
    total: int | None = None
    """The total rolled, or None when the round ended in a no roll."""
