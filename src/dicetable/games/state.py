"""Table state, and ``apply``: the state is the fold of the events (DESIGN.md lesson 1).

``apply`` trusts its event: every check happens when a command is decided. Replaying a log
through ``apply`` rebuilds exactly the state the live table had.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from dicetable.core.dice import Roll
from dicetable.games import events as ev
from dicetable.games.bet_book import BetBook
from dicetable.rules.loader import pack_from_dict
from dicetable.rules.model import RulePack
from dicetable.wagers.compile import compile_pack

if TYPE_CHECKING:
    from dicetable.games.variant import Variant
from dicetable.wagers.compiled import CompiledWager

_VARIANTS: dict[str, Variant] = {}
"""game -> its variant, once looked up (the state is read on every command)."""


class Phase(StrEnum):
    """Where a table is in its round."""

    NEW = "new"
    """Not opened yet."""
    BETTING = "betting"
    """Wagers may be made and changed."""
    CLOSED = "closed"
    """'No more bets': the dice are being shaken or thrown."""
    SETTLING = "settling"
    """A valid roll is on the table; the dealer collects, pays, then moves on."""


@dataclass
class Player:
    balance: int = 0
    seat: int | None = None


@dataclass
class Bet:
    id: str
    player: str
    wager: str
    """The compiled wager code (``odds:take``/``odds:lay`` for odds)."""
    amount: int
    state: int
    base: str | None = None
    working: bool | None = None
    commission: int = 0
    """Commission paid in advance for the next decision (refundable on removal)."""
    placed_seq: int = 0

    @property
    def layout_code(self) -> str:
        """The code as the layout shows it (``odds`` for either kind of odds)."""
        return "odds" if self.wager.startswith("odds:") else self.wager


@dataclass
class Pending:
    """The settlement a valid roll calls for, worked out once when the roll is recorded."""

    roll: Roll
    losers: tuple[ev.Collection, ...]
    payments: tuple[ev.Payment, ...]
    moves: tuple[ev.Move, ...]
    point_after: int | None
    seven_out: bool
    step: int = 0
    """0: losers to collect; 1: winners to pay; 2: the roll to complete."""


@dataclass
class TableState:
    table_id: str = ""
    pack: RulePack | None = None
    game: str = ""
    mode: str = "bare"
    automations: tuple[str, ...] | None = None
    """The table's automations, as its log opened it (None: its mode's own)."""
    seq: int = 0
    phase: Phase = Phase.NEW
    players: dict[str, Player] = field(default_factory=dict)
    bets: dict[str, Bet] = field(default_factory=BetBook)
    """A ``BetBook``: a dict that also keeps each player's bets (``bets_of``)."""
    bet_counter: int = 0
    house: int = 0
    """The house's result so far: collected and commissions less wins paid (cents)."""
    chips_in: int = 0
    """Chips bought less chips cashed out (cents)."""
    point: int | None = None
    hand: int = 1
    hand_rolls: int = 0
    rolls_since_seven: int = 0
    round: int = 1
    rolls: int = 0
    pending: Pending | None = None
    last_roll: Roll | None = None
    last_roll_valid: bool | None = None
    returns_due: bool = False
    """A no roll returns the wagers on the layout, and they are not yet returned."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Room for procedure layers (shooter, shaker, dice) to keep their own folded state."""

    def __post_init__(self) -> None:
        if not isinstance(self.bets, BetBook):
            self.bets = BetBook(self.bets)

    @property
    def compiled(self) -> Mapping[str, CompiledWager]:
        assert self.pack is not None
        return compile_pack(self.pack)

    @property
    def variant(self) -> Variant:
        """The game's hooks (how this game differs from the others)."""
        found = _VARIANTS.get(self.game)
        if found is None:
            from dicetable.games.variant import variant_of  # the variants import the state

            found = _VARIANTS[self.game] = variant_of(self.game)
        return found

    def rules(self) -> RulePack:
        if self.pack is None:
            raise KeyError("table not opened")
        return self.pack

    def balance(self, player: str) -> int:
        p = self.players.get(player)
        return p.balance if p else 0

    def on_layout(self) -> int:
        return sum(b.amount for b in self.bets.values())

    def conserved(self) -> bool:
        """Chips in = players' balances + stakes on the layout + the house's result."""
        return self.chips_in == sum(p.balance for p in self.players.values()) \
            + self.on_layout() + self.house

    def bets_of(self, player: str) -> list[Bet]:
        """``player``'s bets, in the order placed (from the book's index, not a scan)."""
        bets = self.bets
        if isinstance(bets, BetBook):
            return bets.of(player)
        return [b for b in bets.values() if b.player == player]

    def odds_on(self, base: Bet) -> list[Bet]:
        """The odds standing behind ``base`` (odds are always its owner's: looked for among
        that player's bets, not the table's)."""
        return [b for b in self.bets_of(base.player) if b.base == base.id]

    def copy(self) -> TableState:
        return copy.deepcopy(self)

    def snapshot(self) -> dict[str, Any]:
        """Everything that defines the table, as plain data (for replay checks and recall)."""
        return {
            "table": self.table_id,
            "seq": self.seq,
            "phase": self.phase.value,
            "point": self.point,
            "hand": self.hand,
            "hand_rolls": self.hand_rolls,
            "round": self.round,
            "rolls": self.rolls,
            "house": self.house,
            "chips_in": self.chips_in,
            "balances": {k: v.balance for k, v in sorted(self.players.items())},
            "seats": {k: v.seat for k, v in sorted(self.players.items())},
            "bets": {k: (b.player, b.wager, b.amount, b.state, b.base, b.working, b.commission)
                     for k, b in sorted(self.bets.items())},
            "pending": None if self.pending is None else (str(self.pending.roll),
                                                          self.pending.step),
            "last_roll": None if self.last_roll is None else str(self.last_roll),
            "last_roll_valid": self.last_roll_valid,
            "extra": copy.deepcopy(self.extra),
        }


def _remove_bet(state: TableState, bet_id: str) -> None:
    state.bets.pop(bet_id, None)


def apply(state: TableState, event: ev.Event) -> None:
    """Fold one event into the state."""
    state.seq = event.seq
    handler = _HANDLERS.get(type(event))
    if handler is not None:
        handler(state, event)
    for after in _AFTER.get(type(event), ()):
        after(state, event)


def _opened(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.TableOpened)
    state.table_id = e.table
    state.pack = pack_from_dict(e.pack, e.pack_digest)
    state.game = e.game
    state.mode = e.mode
    state.automations = e.automations
    state.phase = Phase.BETTING


def _joined(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.PlayerJoined)
    player = state.players.setdefault(e.player, Player())
    player.seat = e.seat


def _left(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.PlayerLeft)
    state.players[e.player].seat = None


def _bought(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.ChipsBought)
    state.players.setdefault(e.player, Player()).balance += e.amount
    state.chips_in += e.amount


def _cashed(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.ChipsCashedOut)
    state.players[e.player].balance -= e.amount
    state.chips_in -= e.amount


def _placed(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.BetPlaced)
    state.bets[e.bet] = Bet(e.bet, e.player, e.wager, e.amount, e.state, e.base, e.working,
                            e.commission, e.seq)
    state.bet_counter += 1
    state.players[e.player].balance -= e.amount + e.commission
    state.house += e.commission


def _changed(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.BetChanged)
    bet = state.bets[e.bet]
    delta = e.amount - bet.amount
    state.players[bet.player].balance -= delta + e.commission
    state.house += e.commission
    bet.amount = e.amount
    bet.commission += e.commission


def _removed(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.BetRemoved)
    bet = state.bets.pop(e.bet)
    state.players[bet.player].balance += e.returned + e.commission_returned
    state.house -= e.commission_returned


def _working(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.BetWorkingSet)
    state.bets[e.bet].working = e.working


def _closed(state: TableState, e: ev.Event) -> None:
    state.phase = Phase.CLOSED


def _rolled(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.DiceRolled)
    from dicetable.games.settlement import pending_for  # settlement reads state helpers

    state.last_roll = e.roll
    state.phase = Phase.SETTLING
    if e.roll is None:  # unreadable: a no roll follows in the same batch
        state.last_roll_valid = False
        state.pending = None
        return
    state.last_roll_valid = True
    state.pending = pending_for(state, e.roll)


def returns_follow(state: TableState) -> bool:
    """Does a no roll now leave wagers to return (``noroll.effect``)?"""
    return bool(state.bets) and state.rules().get("noroll.effect") == "wagers-returned"


def _no_roll(state: TableState, e: ev.Event) -> None:
    state.returns_due = returns_follow(state)
    state.last_roll_valid = False
    state.pending = None
    state.phase = state.variant.after_no_roll


def _returned(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.WagersReturned)
    state.returns_due = False
    for item in e.items:
        bet = state.bets.pop(item.bet)
        state.players[bet.player].balance += item.amount + item.commission
        state.house -= item.commission


def _collected(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.LosersCollected)
    for item in e.items:
        _remove_bet(state, item.bet)
        state.house += item.amount
        state.players[item.player].balance += item.returned
    if state.pending is not None:
        state.pending.step = 1


def _paid(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.WinnersPaid)
    for item in e.items:
        player = state.players[item.player]
        player.balance += item.win - item.commission + item.stake_returned
        state.house += item.commission - item.win
        bet = state.bets.get(item.bet)
        if bet is None:
            continue
        if item.stake_returned:
            bet.amount -= item.stake_returned
            if bet.amount <= 0:
                state.bets.pop(item.bet)
        elif bet.commission:
            # An up-front commission covered the decision just made; the commission for the
            # next decision was taken from this win (item.commission).
            bet.commission = item.commission
    if state.pending is not None:
        state.pending.step = 2


def _roll_finished(state: TableState) -> None:
    state.rolls += 1
    state.pending = None
    state.phase = Phase.BETTING


def _puck(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.PuckMoved)
    for move in e.moves:
        bet = state.bets.get(move.bet)
        if bet is not None:
            bet.state = move.state
    roll = state.last_roll
    state.point = e.point
    state.hand_rolls += 1
    state.rolls_since_seven = 0 if roll is not None and roll.total == 7 \
        else state.rolls_since_seven + 1
    if e.seven_out:
        state.hand += 1
        state.hand_rolls = 0
    _roll_finished(state)


def _round(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.RoundCompleted)
    state.round = e.round + 1
    if e.total is not None:
        state.rolls += 1
    state.pending = None
    state.phase = Phase.BETTING


_HANDLERS: dict[type[ev.Event], Any] = {
    ev.TableOpened: _opened,
    ev.PlayerJoined: _joined,
    ev.PlayerLeft: _left,
    ev.ChipsBought: _bought,
    ev.ChipsCashedOut: _cashed,
    ev.BetPlaced: _placed,
    ev.BetChanged: _changed,
    ev.BetRemoved: _removed,
    ev.BetWorkingSet: _working,
    ev.BettingClosed: _closed,
    ev.DiceRolled: _rolled,
    ev.NoRollCalled: _no_roll,
    ev.WagersReturned: _returned,
    ev.LosersCollected: _collected,
    ev.WinnersPaid: _paid,
    ev.PuckMoved: _puck,
    ev.RoundCompleted: _round,
}


_AFTER: dict[type[ev.Event], list[Any]] = {}


def register(event_type: type[ev.Event], handler: Any) -> None:
    """Let a procedure layer fold its own events into ``TableState.extra``."""
    _HANDLERS[event_type] = handler


def register_after(event_type: type[ev.Event], handler: Any) -> None:
    """Let a procedure layer also react to a game event, after the game has folded it."""
    hooks = _AFTER.setdefault(event_type, [])
    if handler not in hooks:
        hooks.append(handler)
