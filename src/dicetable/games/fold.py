"""``apply``: the table state is the fold of the events (DESIGN.md lesson 1).

``apply`` trusts its event: every check happens when a command is decided. Replaying a log
through ``apply`` rebuilds exactly the state the live table had.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from dicetable.core.events import carried
from dicetable.games import events as ev
from dicetable.games.packs import pack_from_dict
from dicetable.games.settlement import pending_for
from dicetable.games.state import Bet, Phase, Player, TableState


def _remove_bet(state: TableState, bet_id: str) -> None:
    state.bets.pop(bet_id, None)


def apply(state: TableState, event: ev.Event) -> None:
    """Fold one event into the state."""
    state.seq = event.seq
    steps = _STEPS.get(type(event))
    for step in steps if steps is not None else _steps_of(type(event)):
        step(state, event)


def _steps_of(kind: type[ev.Event]) -> tuple[Any, ...]:
    """What folding a ``kind`` runs: its handler, then the hooks after it."""
    handler = _HANDLERS.get(kind)
    steps = _STEPS[kind] = ((handler,) if handler is not None else ()) \
        + tuple(_AFTER.get(kind, ()))
    return steps


def apply_log(state: TableState, events: Iterable[ev.Event],
              opened: Callable[[TableState, ev.TableOpened], None] | None = None) -> None:
    """Fold a run of logged events: the same state as ``apply`` on each, for less work.

    A valid roll's settlement (``pending_for``) is what its collection, payments and puck
    move then carry out - and a log already holds those events. So the events from a roll to
    the end of its settlement are held back and folded together, the roll without working
    its settlement out; only when the run ends (or runs long) before the roll is settled is
    the roll folded as ``apply`` does, so that the state holds the settlement still due.
    ``opened`` is called after a ``TableOpened`` is folded.
    """
    held: list[ev.Event] = []
    all_steps = _STEPS
    for event in events:
        kind = type(event)
        if held:
            held.append(event)
            if kind in _ROLL_ENDS:
                _fold_settled_roll(state, held)
                held = []
            elif len(held) > _HOLD_AT_MOST:
                _fold_each(state, held, opened)
                held = []
            continue
        if isinstance(event, ev.DiceRolled) and event.roll is not None \
                and _HANDLERS.get(kind) is _rolled:
            held.append(event)
            continue
        state.seq = event.seq
        steps = all_steps.get(kind)
        for step in steps if steps is not None else _steps_of(kind):
            step(state, event)
        if opened is not None and kind is ev.TableOpened:
            opened(state, event)  # type: ignore[arg-type]
    _fold_each(state, held, opened)


_ROLL_ENDS = frozenset({ev.PuckMoved, ev.RoundCompleted, ev.NoRollCalled})
"""Events after which no settlement is pending (each sets ``pending`` to None)."""
_HOLD_AT_MOST = 64
"""A roll whose settlement has not ended this many events later is folded as it comes."""


def _fold_settled_roll(state: TableState, held: list[ev.Event]) -> None:
    """A valid roll and its settlement, which ends within ``held``."""
    roll = held[0]
    assert isinstance(roll, ev.DiceRolled)
    state.seq = roll.seq
    _record_roll(state, roll)  # its settlement: the events that follow it
    for hook in _AFTER.get(ev.DiceRolled, ()):
        hook(state, roll)
    for event in held[1:]:
        apply(state, event)


def _fold_each(state: TableState, events: list[ev.Event],
               opened: Callable[[TableState, ev.TableOpened], None] | None) -> None:
    for event in events:
        apply(state, event)
        if opened is not None and isinstance(event, ev.TableOpened):
            opened(state, event)


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
    state.bets[e.bet] = Bet(id=e.bet, placed_seq=e.seq, **carried(e, ev.BetTerms))
    state.bet_counter += 1
    state.players[e.player].balance -= e.amount + e.commission
    state.house += e.commission


def _changed(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.BetChanged)
    bet = state.bets[e.bet]
    delta = e.amount - bet.amount
    state.players[bet.player].balance -= delta + e.commission
    state.house += e.commission
    state.bets[e.bet] = replace(bet, amount=e.amount, commission=bet.commission + e.commission)


def _removed(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.BetRemoved)
    bet = state.bets.pop(e.bet)
    state.players[bet.player].balance += e.returned + e.commission_returned
    state.house -= e.commission_returned


def _working(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.BetWorkingSet)
    state.bets[e.bet] = replace(state.bets[e.bet], working=e.working)


def _closed(state: TableState, e: ev.Event) -> None:
    state.phase = Phase.CLOSED


def _rolled(state: TableState, e: ev.Event) -> None:
    assert isinstance(e, ev.DiceRolled)
    _record_roll(state, e)
    if e.roll is not None:  # None: unreadable, a no roll follows in the same batch
        state.pending = pending_for(state, e.roll)


def _record_roll(state: TableState, e: ev.DiceRolled) -> None:
    """A roll, before its settlement is worked out."""
    state.last_roll = e.roll
    state.phase = Phase.SETTLING
    state.last_roll_valid = e.roll is not None
    state.pending = None


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
            if bet.amount <= item.stake_returned:
                state.bets.pop(item.bet)
            else:
                state.bets[item.bet] = replace(bet, amount=bet.amount - item.stake_returned)
        elif bet.commission:
            # An up-front commission covered the decision just made; the commission for the
            # next decision was taken from this win (item.commission).
            state.bets[item.bet] = replace(bet, commission=item.commission)
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
            state.bets[move.bet] = replace(bet, state=move.state)
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


_STEPS: dict[type[ev.Event], tuple[Any, ...]] = {}
"""Each event type's handler and hooks, worked out on first use (``_steps_of``)."""


def register(event_type: type[ev.Event], handler: Any) -> None:
    """Let a procedure layer fold its own events into ``TableState.extra``."""
    _HANDLERS[event_type] = handler
    _STEPS.clear()


def register_after(event_type: type[ev.Event], handler: Any) -> None:
    """Let a procedure layer also react to a game event, after the game has folded it."""
    hooks = _AFTER.setdefault(event_type, [])
    if handler not in hooks:
        hooks.append(handler)
    _STEPS.clear()
