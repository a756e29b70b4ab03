"""The procedure's part of the table state, folded from its events like the game's.

It lives in ``TableState.extra["procedure"]`` so the game layer need not know about it.

Time at the table: dice that have been out longer than the rules allow.

Positions at the table, and whose turn it is to shoot or to shake.

Craps positions are numbered clockwise from the position immediately to the boxperson's left
(68 IAC 10-4-3(b) counts from there); the position immediately to the stickperson's left is the
first one past half way round. Props & Hops seats are numbered from the seat farthest to the
dealer's left (58 Pa. Code 585.3(e)); a player's left, facing the dealer, is the next seat up,
so 'the next player to the left' (585.3(j)) is the next occupied seat with a higher number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dicetable.core.clock import over_limit
from dicetable.core.roles import Role
from dicetable.games import events as gev
from dicetable.games.fold import register, register_after
from dicetable.games.state import TableState
from dicetable.table import events as ev

KEY = "procedure"


@dataclass
class Procedure:
    staff: dict[str, set[Role]] = field(default_factory=dict)
    opener: str | None = None
    """Who opened the table (its first staff assignment): the opening roster is theirs."""
    dice: dict[str, str] = field(default_factory=dict)
    """Serial -> when it came to the table (ISO time)."""
    bowl: list[str] = field(default_factory=list)
    """Craps: serials in the bowl in front of the stickperson."""
    # Craps: the shooter
    shooter: str | None = None
    shooter_dice: tuple[str, ...] = ()
    offer_to: str | None = None
    offered: tuple[str, ...] = ()
    declined: list[str] = field(default_factory=list)
    last_shooter: str | None = None
    invalid_streak: int = 0
    overturnable_seq: int | None = None
    # Props & Hops: the shaker
    shaker_holder: str | None = None
    shaker: str = "empty"
    """empty, covered (at the dealer), offered, returned, uncovered."""
    dealer_shook: bool = False
    shakes: int = 0
    lid_off: bool = False
    """The player took the lid off; it is re-covered before any further shake (585.3(e))."""
    round_total: int | None = None
    pass_due: bool = False
    """The round ended on the passing total (``shaker.passes_on``); the shaker is not yet
    passed to the next player."""
    last_throw: gev.DiceRolled | None = None
    # Alerts that block play until cleared
    blocked: dict[str, str] = field(default_factory=dict)
    alerts: list[tuple[str, str]] = field(default_factory=list)

    def holds(self, person: str, role: Role) -> bool:
        return role in self.staff.get(person, set())

    def people_in(self, role: Role) -> list[str]:
        return sorted(p for p, roles in self.staff.items() if role in roles)


def procedure(state: TableState) -> Procedure:
    found = state.extra.get(KEY)
    if found is None:
        found = Procedure()
        state.extra[KEY] = found
    assert isinstance(found, Procedure)
    return found


def _handler(fn: Any) -> Any:
    def wrapped(state: TableState, event: gev.Event) -> None:
        found = state.extra.get(KEY)  # ``procedure`` in line: a replay runs this per event
        fn(found if found is not None else procedure(state), event, state)

    return wrapped


def _assigned(p: Procedure, e: ev.StaffAssigned, s: TableState) -> None:
    if p.opener is None:
        p.opener = e.person
    p.staff.setdefault(e.person, set()).add(e.staff_role)


def _relieved(p: Procedure, e: ev.StaffRelieved, s: TableState) -> None:
    roles = p.staff.get(e.person, set())
    roles.discard(e.staff_role)
    if not roles:
        p.staff.pop(e.person, None)


def _brought(p: Procedure, e: ev.DiceBrought, s: TableState) -> None:
    for serial in e.serials:
        p.dice[serial] = e.at
    if s.variant.has_shaker:
        p.shaker = "covered"
        p.dealer_shook = False
    else:
        p.bowl.extend(e.serials)


def _removed(p: Procedure, e: ev.DiceTakenFromTable, s: TableState) -> None:
    for serial in e.serials:
        p.dice.pop(serial, None)
        if serial in p.bowl:
            p.bowl.remove(serial)
    if set(p.shooter_dice) & set(e.serials):
        p.shooter_dice = tuple(d for d in p.shooter_dice if d not in e.serials)
    if s.variant.has_shaker and not p.dice:
        p.shaker = "empty"


def _offered(p: Procedure, e: ev.DiceOffered, s: TableState) -> None:
    p.offer_to = e.patron
    p.offered = e.serials


def _declined(p: Procedure, e: ev.DiceDeclined, s: TableState) -> None:
    p.declined.append(e.patron)
    p.offer_to = None


def _selected(p: Procedure, e: ev.ShooterSelected, s: TableState) -> None:
    p.shooter = e.shooter
    p.shooter_dice = e.dice
    p.bowl = [d for d in p.bowl if d not in e.dice]
    p.offer_to = None
    p.offered = ()
    p.declined = []
    p.invalid_streak = 0


def _ended(p: Procedure, e: ev.ShooterEnded, s: TableState) -> None:
    p.last_shooter = e.shooter
    p.shooter = None
    p.bowl.extend(d for d in p.shooter_dice if d not in p.bowl)
    p.shooter_dice = ()
    p.offer_to = None
    p.declined = []
    p.invalid_streak = 0


def _rolled(p: Procedure, e: gev.DiceRolled, s: TableState) -> None:
    p.overturnable_seq = None
    p.last_throw = e
    if e.roll is not None:
        p.round_total = e.roll.total


def _no_roll(p: Procedure, e: gev.NoRollCalled, s: TableState) -> None:
    p.invalid_streak += 1
    # An Indiana stickperson's declaration may be overturned (10-4-4); an automatic one not.
    p.overturnable_seq = None if e.automatic else e.seq
    p.round_total = None


def _overturned(p: Procedure, e: ev.NoRollOverturned, s: TableState) -> None:
    from dicetable.games.settlement import pending_for
    from dicetable.games.state import Phase

    p.overturnable_seq = None
    p.invalid_streak = max(0, p.invalid_streak - 1)
    assert s.last_roll is not None
    s.last_roll_valid = True
    s.pending = pending_for(s, s.last_roll)
    s.phase = Phase.SETTLING
    p.round_total = s.last_roll.total


def _valid_roll_done(p: Procedure, e: gev.Event, s: TableState) -> None:
    p.invalid_streak = 0


def _bet_changed(p: Procedure, e: gev.Event, s: TableState) -> None:
    p.overturnable_seq = None


def _dealer_shook(p: Procedure, e: ev.ShakerShaken, s: TableState) -> None:
    p.dealer_shook = True
    p.shaker = "covered"
    p.shakes = 0


def _closed(p: Procedure, e: gev.BettingClosed, s: TableState) -> None:
    p.dealer_shook = False


def _shaker_offered(p: Procedure, e: ev.ShakerOffered, s: TableState) -> None:
    p.shaker = "offered"
    p.lid_off = False
    p.shaker_holder = e.player
    p.shakes = 0


def _player_shook(p: Procedure, e: ev.ShakerShakenByPlayer, s: TableState) -> None:
    p.shakes += e.times


def _lid_removed(p: Procedure, e: ev.ShakerLidRemoved, s: TableState) -> None:
    p.shakes = 0  # the shakes so far do not count: it is re-covered and shaken again (585.3(e))
    p.lid_off = True


def _recovered(p: Procedure, e: ev.ShakerRecovered, s: TableState) -> None:
    p.lid_off = False
    p.shakes = 0


def _returned(p: Procedure, e: ev.ShakerReturned, s: TableState) -> None:
    p.shaker = "returned"


def _uncovered(p: Procedure, e: ev.ShakerUncovered, s: TableState) -> None:
    p.shaker = "uncovered"


def _round_done(p: Procedure, e: gev.RoundCompleted, s: TableState) -> None:
    if p.shaker != "empty":
        p.shaker = "uncovered"  # stays uncovered until the dealer covers and shakes (i)
    p.dealer_shook = False
    p.shakes = 0
    if s.mode == "live" and e.total is not None \
            and e.total == s.rules().get("shaker.passes_on"):
        p.pass_due = True


def _passed(p: Procedure, e: ev.ShakerPassed, s: TableState) -> None:
    p.shaker_holder = e.to_player
    p.pass_due = False


def _alert(p: Procedure, e: ev.AlertRaised, s: TableState) -> None:
    p.alerts.append((e.name, e.message))
    if e.blocks_play:
        p.blocked[e.name] = e.rule


def _unblocked(p: Procedure, e: ev.PlayUnblocked, s: TableState) -> None:
    p.blocked.pop(e.name, None)


for _type, _fn in {
    ev.StaffAssigned: _assigned, ev.StaffRelieved: _relieved, ev.DiceBrought: _brought,
    ev.DiceTakenFromTable: _removed, ev.DiceOffered: _offered, ev.DiceDeclined: _declined,
    ev.ShooterSelected: _selected, ev.ShooterEnded: _ended,
    ev.NoRollOverturned: _overturned, ev.ShakerShaken: _dealer_shook,
    ev.ShakerOffered: _shaker_offered, ev.ShakerShakenByPlayer: _player_shook,
    ev.ShakerLidRemoved: _lid_removed, ev.ShakerRecovered: _recovered,
    ev.ShakerReturned: _returned,
    ev.ShakerUncovered: _uncovered, ev.ShakerPassed: _passed, ev.AlertRaised: _alert,
    ev.PlayUnblocked: _unblocked,
}.items():
    register(_type, _handler(_fn))

for _gtype, _gfn in {
    gev.DiceRolled: _rolled, gev.NoRollCalled: _no_roll, gev.BettingClosed: _closed,
    gev.RoundCompleted: _round_done, gev.PuckMoved: _valid_roll_done,
    gev.BetPlaced: _bet_changed, gev.BetChanged: _bet_changed, gev.BetRemoved: _bet_changed,
}.items():
    register_after(_gtype, _handler(_gfn))


def expired(dice: Mapping[str, str], max_hours: int, now: str) -> bool:
    """True when the oldest of ``dice`` (serial -> ISO time it arrived) is past ``max_hours``.

    >>> expired({"D1": "2026-01-01T00:00:00+00:00"}, 24, "2026-01-02T00:00:01+00:00")
    True
    >>> expired({"D1": "2026-01-01T00:00:00+00:00"}, 24, "2026-01-02T00:00:00+00:00")
    False
    """
    if not dice or not now:
        return False
    oldest = min(datetime.fromisoformat(t) for t in dice.values())
    return over_limit(oldest, datetime.fromisoformat(now), max_hours)


def dice_limit(state: TableState) -> tuple[int, str]:
    """The table's ``dice.max_hours`` and its citation: the one limit the table and custody
    both judge its dice by (58 Pa. Code 585.3(b)(1) / 668a.3(b)(1) for a Props & Hops
    shaker; cited stand-ins for Craps)."""
    pack = state.rules()
    return int(pack.get("dice.max_hours", 24)), pack.cite("dice.max_hours")


def dice_expired(state: TableState, now: str, dice: Mapping[str, str] | None = None) -> bool:
    """True when any die at the table has been there longer than ``dice.max_hours``.

    58 Pa. Code 585.3(b)(1) for a Props & Hops shaker; cited stand-ins for Craps.
    """

    if state.pack is None:
        return False
    held = procedure(state).dice if dice is None else dice
    return expired(held, int(state.pack.get("dice.max_hours", 24)), now)


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
