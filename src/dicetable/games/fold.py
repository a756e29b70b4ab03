"""``apply``: the table state is the fold of the events (DESIGN.md lesson 1).

``apply`` trusts its event: every check happens when a command is decided. Replaying a log
through ``apply`` rebuilds exactly the state the live table had.
"""

from __future__ import annotations

from typing import Any

from dicetable.games import events as ev
from dicetable.games.settlement import pending_for
from dicetable.games.state import Bet, Phase, Player, TableState
from dicetable.rules.loader import pack_from_dict


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
