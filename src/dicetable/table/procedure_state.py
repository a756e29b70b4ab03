"""The procedure's part of the table state, folded from its events like the game's.

It lives in ``TableState.extra["procedure"]`` so the game layer need not know about it.

Time at the table: dice that have been out longer than the rules allow.

Positions at the table, and whose turn it is to shoot or to shake.

Craps positions are numbered clockwise from the position immediately to the boxperson's left
(68 IAC 10-4-3(b) counts from there); the position immediately to the stickperson's left is the
first one past half way round. Props & Hops seats are numbered from the seat farthest to the
dealer's left (58 Pa. Code 585.3(e)); a player's left, facing the dealer, is the next seat up,
so 'the next player to the left' (585.3(j)) is the next occupied seat with a higher number.

Separation of duties (spec/standards.md SEC-5): who may assign whom, and who may not play.

The permission matrix (``authority``) says which roles may give a command; this module adds
what the matrix cannot express, read from the pack's ``duties.*`` rules:

- ``duties.no_self``: nobody assigns or relieves themselves;
- ``duties.rank`` with ``duties.assign_below_own``: a supervisor assigns or relieves only roles
  ranked below the role they act in (a floorperson cannot make anyone, herself least of all,
  a pit boss);
- ``duties.staff_no_wager``: a person working the table may not join it, buy chips or wager
  there, and a player at the table is not assigned to work it;
- ``duties.two_person``: dice brought to the table are witnessed by a second, distinct person
  working it (a house rule at Craps; at Props & Hops the regulation itself names the witness,
  the dealer, and the procedure checks it).

The opening roster (the staff named when the table is opened, before anything else happens)
comes from the shift's schedule and is not ranked against the opener; ``no_self`` and
``staff_no_wager`` still hold for it. A pack without these rules gets the safe defaults.
A refusal raises ``RoleNotPermitted`` naming the rule and its citation, and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dicetable.core.clock import over_limit
from dicetable.core.errors import RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.games.fold import register, register_after
from dicetable.games.state import TableState
from dicetable.rules.model import RulePack
from dicetable.table import commands as tcmd
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


DEFAULT_RANK = (Role.DEALER, Role.STICKPERSON, Role.BOXPERSON, Role.FLOORPERSON,
                Role.PIT_BOSS, Role.SHIFT_MANAGER)
"""``duties.rank`` when a pack does not say (lowest first)."""

_PLAYS = (gcmd.JoinTable, gcmd.BuyChips, gcmd.PlaceBet)


def rank(pack: RulePack | None) -> tuple[Role, ...]:
    if pack is None or "duties.rank" not in pack:
        return DEFAULT_RANK
    return tuple(Role(r) for r in pack.value("duties.rank"))


def may_assign(pack: RulePack | None, actor_role: Role, target_role: Role) -> bool:
    """Whether someone acting as ``actor_role`` may assign or relieve a ``target_role``
    (the ranking half of the rule; the matrix and ``no_self`` are checked besides)."""
    if pack is not None and not pack.flag("duties.assign_below_own", True):
        return True
    order = rank(pack)
    if actor_role not in order or target_role not in order:
        return False
    return order.index(target_role) < order.index(actor_role)


def _flag(pack: RulePack | None, rule: str) -> bool:
    return True if pack is None else pack.flag(rule, True)


def _cite(pack: RulePack | None, rule: str) -> str:
    return pack.cite(rule) if pack is not None else ""


def _opening_roster(state: TableState, c: gcmd.Command) -> bool:
    """The opener naming the roster: only the opening and its staff assignments so far."""
    p = procedure(state)
    return c.actor == p.opener and not state.players \
        and state.seq == 1 + sum(len(roles) for roles in p.staff.values())


def check(state: TableState, command: gcmd.Command) -> None:
    """Raise ``RoleNotPermitted`` when ``command`` breaks a separation of duties."""
    pack = state.pack
    if isinstance(command, tcmd.AssignStaff | tcmd.RelieveStaff):
        _staff_change(state, pack, command)
    elif isinstance(command, _PLAYS):
        _plays(state, pack, command.player, command)
    elif isinstance(command, tcmd.BringDice):
        _witness(state, pack, command)


def _staff_change(state: TableState, pack: RulePack | None,
                  c: tcmd.AssignStaff | tcmd.RelieveStaff) -> None:
    verb = "assign" if isinstance(c, tcmd.AssignStaff) else "relieve"
    if c.person == c.actor and _flag(pack, "duties.no_self"):
        raise RoleNotPermitted(f"{c.actor} may not {verb} themselves ({c.staff_role})",
                               rule="duties.no_self", citation=_cite(pack, "duties.no_self"))
    if isinstance(c, tcmd.AssignStaff) and c.person in state.players \
            and _flag(pack, "duties.staff_no_wager"):
        raise RoleNotPermitted(f"{c.person} plays at this table and may not work it",
                               rule="duties.staff_no_wager",
                               citation=_cite(pack, "duties.staff_no_wager"))
    if c.role is Role.SYSTEM or (isinstance(c, tcmd.AssignStaff) and _opening_roster(state, c)):
        return
    if not may_assign(pack, c.role, c.staff_role):
        raise RoleNotPermitted(f"a {c.role} may not {verb} a {c.staff_role}: only a role "
                               "ranked above it may", rule="duties.rank",
                               citation=_cite(pack, "duties.rank"))


def _plays(state: TableState, pack: RulePack | None, player: str,
           c: gcmd.Command) -> None:
    if not _flag(pack, "duties.staff_no_wager"):
        return
    working = procedure(state).staff.get(player)
    if working:
        roles = ", ".join(sorted(r.value for r in working))
        raise RoleNotPermitted(f"{player} works this table ({roles}) and may not "
                               f"{type(c).__name__} here", rule="duties.staff_no_wager",
                               citation=_cite(pack, "duties.staff_no_wager"))


def _witness(state: TableState, pack: RulePack | None, c: tcmd.BringDice) -> None:
    if state.variant.has_shaker:
        # 58 Pa. Code 585.3(d) / 668a.3(d) name the witness themselves: the floorperson loads
        # the shaker in the presence of the dealer. The procedure holds that regulation
        # (``authority.dice``), and a house rule must not answer in its place.
        return
    # A pack stored before the rule existed (an old table's log) ran without it: replaying
    # that log must not refuse what it then allowed (tests/fixtures/v1_tables.db).
    needs = "dice" in (pack.get("duties.two_person", []) if pack is not None else ["dice"])
    if not needs:
        return
    if c.witness is not None and c.witness == c.actor:
        raise RoleNotPermitted(f"{c.actor} may not witness their own dice",
                               rule="duties.two_person",
                               citation=_cite(pack, "duties.two_person"))
    if c.witness is None or not procedure(state).staff.get(c.witness):
        raise RoleNotPermitted("dice come to the table before a second person working it: "
                               "name the witness", rule="duties.two_person",
                               citation=_cite(pack, "duties.two_person"))
