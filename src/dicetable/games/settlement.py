"""Work out what a roll does to every wager on the layout, from the compiled tables.

The result is a ``Pending`` settlement the dealer then carries out in the prescribed order:
collect the losers, pay the winners, then complete the roll (58 Pa. Code 585.3(h); industry
practice at Craps).
"""

from __future__ import annotations

from collections.abc import Collection

from dicetable.core.dice import POINTS, Roll
from dicetable.games import events as ev
from dicetable.games.engine import commission_for, commission_up_front, is_working, payout_amount
from dicetable.games.state import Pending, TableState
from dicetable.wagers.compile import LEAVES, Outcome


def next_point(point: int | None, roll: Roll,
               points: Collection[int] = POINTS) -> tuple[int | None, bool]:
    """The puck after ``roll``, and whether the roll was a seven-out.

    >>> next_point(None, Roll(2, 2)), next_point(4, Roll(3, 4)), next_point(None, Roll(3, 4))
    ((4, False), (None, True), (None, False))
    """
    return next_point_on(point, roll.total, points)


def next_point_on(point: int | None, total: int,
                  points: Collection[int] = POINTS) -> tuple[int | None, bool]:
    """``next_point`` from the total alone (the simulator rolls totals in bulk), where the
    game's point numbers are ``points``."""
    if point is None:
        return (total if total in points else None), False
    if total == point:
        return None, False
    if total == 7:
        return None, True
    return point, False


def pending_for(state: TableState, roll: Roll) -> Pending:
    pack = state.rules()
    compiled = state.compiled
    losers: list[ev.Collection] = []
    payments: list[ev.Payment] = []
    moves: list[ev.Move] = []
    leaving: set[str] = set()

    # Base bets first, so that odds behind them can follow their fate.
    order = sorted(state.bets.values(), key=lambda b: (b.base is not None, b.placed_seq, b.id))
    for bet in order:
        wager = compiled[bet.wager]
        if not is_working(state, bet):
            # An idle odds bet whose base is decided comes back with it (industry practice).
            if bet.base is not None and bet.base in leaving:
                payments.append(ev.Payment(bet.id, bet.player, bet.layout_code, 0, 0,
                                           bet.amount))
                leaving.add(bet.id)
            continue
        step = wager.step(bet.state, roll)
        if step.outcome is Outcome.LOSE:
            lost = int(-(bet.amount * step.payout))
            losers.append(ev.Collection(bet.id, bet.player, bet.layout_code, lost,
                                        bet.amount - lost))
            leaving.add(bet.id)
        elif step.outcome is Outcome.PUSH:
            payments.append(ev.Payment(bet.id, bet.player, bet.layout_code, 0, 0, bet.amount))
            leaving.add(bet.id)
        elif step.outcome is Outcome.WIN:
            win, rounding = payout_amount(pack, bet.amount, step.payout)
            stays = step.next_state != LEAVES
            fee = 0
            if commission_up_front(pack, bet.wager):
                # The advance commission covered this decision; a bet that stays up pays the
                # next one's from its win (spec/standards.md §5.2).
                fee = commission_for(pack, wager, bet.amount) if stays else 0
            elif bet.wager.startswith(("buy", "lay")):
                fee = commission_for(pack, wager, bet.amount)
            payments.append(ev.Payment(bet.id, bet.player, bet.layout_code, win, fee,
                                       0 if stays else bet.amount, rounding))
            if not stays:
                leaving.add(bet.id)
        elif step.next_state != bet.state:
            moves.append(ev.Move(bet.id, step.next_state, wager.states[step.next_state]))
    point_after, seven_out = state.variant.next_point(state.point, roll)
    return Pending(roll, tuple(losers), tuple(payments), tuple(moves), point_after, seven_out)
