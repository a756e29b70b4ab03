"""Positions at the table, and whose turn it is to shoot or to shake.

Craps positions are numbered clockwise from the position immediately to the boxperson's left
(68 IAC 10-4-3(b) counts from there); the position immediately to the stickperson's left is the
first one past half way round. Props & Hops seats are numbered from the seat farthest to the
dealer's left (58 Pa. Code 585.3(e)); a player's left, facing the dealer, is the next seat up,
so 'the next player to the left' (585.3(j)) is the next occupied seat with a higher number.
"""

from __future__ import annotations

from dicetable.games.state import TableState


def occupied(state: TableState) -> list[tuple[int, str]]:
    return sorted((info.seat, name) for name, info in state.players.items()
                  if info.seat is not None)


def _start_position(state: TableState) -> int:
    pack = state.rules()
    positions = int(pack.value("table.positions"))
    first = pack.get("shooter.first_offer", "left-of-boxperson")
    return positions // 2 + 1 if first == "left-of-stickperson" else 1


def offer_order(state: TableState) -> list[str]:
    """Patrons in the order the dice are to be offered, those who declined left out.

    >>> from dicetable.table import Table
    >>> t = Table.open("in-craps", "x", mode="live")
    >>> for seat, name in ((3, "c"), (1, "a"), (9, "z")):
    ...     _ = t.join(name, seat)
    >>> offer_order(t.state)
    ['a', 'c', 'z']
    """
    from dicetable.table.procedure_state import procedure

    p = procedure(state)
    seats = occupied(state)
    if not seats:
        return []
    start = _start_position(state)
    if state.rules().get("shooter.next_offer") == "clockwise-from-last" and p.last_shooter:
        last = state.players.get(p.last_shooter)
        if last is not None and last.seat is not None:
            start = last.seat + 1
    ordered = [name for seat, name in seats if seat >= start] + \
              [name for seat, name in seats if seat < start]
    remaining = [name for name in ordered if name not in p.declined]
    return remaining or ordered


def next_shaker_holder(state: TableState, after: str | None, first: bool = False) -> str | None:
    """Who shakes next: the first player (585.3(e)) or the next one to the left (585.3(j))."""
    seats = occupied(state)
    if not seats:
        return None
    pack = state.rules()
    if after is None or after not in state.players or state.players[after].seat is None:
        if first and pack.flag("shaker.six_eight_shake"):
            return seats[-1][1]  # 668a.3(e): begins with the player to the dealer's right
        if after is None or first:
            return seats[0][1]
    position = state.players[after].seat if after in state.players else None
    if position is None:
        return seats[0][1]
    later = [name for seat, name in seats if seat > position]
    return later[0] if later else seats[0][1]
