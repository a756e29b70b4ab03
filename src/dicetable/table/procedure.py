"""The procedure of a regulated table, wrapped around a game engine.

Every command is authorised against the pack's permission matrix (``authority``), checked
against the table's procedure (the shooter, the shaker, the dice, the clock), and then either
handled here or passed to the game engine. Follow-up events the procedure requires (a new
shooter after a seven-out, the shaker passing after a 7) are appended in the same batch.

Who may do what: the permission matrix is rule-pack data with citations (spec §6).

Each command maps to an action; the pack's ``authority.<action>`` rule (or, for the no roll,
``noroll.callers``) lists the roles that may give it. The actor must also hold that role at
this table: staff are assigned, players have joined, and ``system`` acts only at an electronic
table. A refusal raises ``RoleNotPermitted`` naming the rule, and changes nothing.

The procedure's part of the table state, folded from its events like the game's.

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

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from dicetable.core.clock import over_limit
from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.events import carried
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.games.catalogue import decides, handlers, needs_of, require_handlers
from dicetable.games.engine import Emitter, Engine, owner_of
from dicetable.games.fold import register, register_after
from dicetable.games.state import Phase, TableState
from dicetable.rules.model import NO_ROLL_GROUNDS, THROW_FACTS, RulePack
from dicetable.table import commands as tcmd
from dicetable.table import events as ev
from dicetable.table import events as tev
from dicetable.table.catalogue import CATALOGUE, PROCEDURE_ENTRIES
from dicetable.table.grounds import held_against_throw

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


STAFF_ROLES = frozenset(Role) - {Role.PLAYER, Role.SYSTEM}

BEFORE_GAME = (gcmd.RecordRoll, gcmd.CloseBetting, gcmd.CallNoRoll, gcmd.PlaceBet)
"""The game commands the procedure checks before the game decides them (``_before_game``)."""
AFTER_GAME = (gcmd.MovePuck,)
"""The game commands the procedure adds events to once decided (``_after_game``)."""
PLAY = (gcmd.PlaceBet, gcmd.CloseBetting, gcmd.RecordRoll, tcmd.OfferDice, tcmd.SelectDice,
        tcmd.ShakeShaker, tcmd.OfferShaker, tcmd.PlayerShake, tcmd.ReturnShaker,
        tcmd.UncoverShaker)
"""Commands that put the dice in play; refused while play is blocked."""

def by_matrix(state: TableState, command: gcmd.Command) -> None:
    """The authorizer of a game engine under the procedure: none of its own, the procedure
    checks every command against the permission matrix first (``authority.authorize``)."""


class DiceRegistry(Protocol):
    """Where the table asks whether dice were issued to it (the custody ledger), and in time
    by the table's ``dice.max_hours`` (hours, citation): one rule for the table and custody."""

    def check_dice_in_play(self, table: str, serials: Iterable[str],
                           limit: tuple[int, str] | None = None) -> None: ...


class ProcedureEngine:
    """A live or electronic table: the game engine plus the regulated procedure.

    With a ``dice_registry`` (a ``dicetable.custody.CustodyLedger``), dice brought to the table
    and dice thrown must have been issued to this table, within their time limit.
    """

    def __init__(self, game: Engine, dice_registry: DiceRegistry | None = None) -> None:
        self.game = game
        self.dice_registry = dice_registry
        if game.authorize is not by_matrix:
            raise TypeError("a game engine under the procedure is made with "
                            "authorizer=by_matrix (the permission matrix decides roles)")
        self._handlers: dict[type[gcmd.Command], Callable[[TableState, Any, Emitter], None]] = \
            handlers(self, PROCEDURE_ENTRIES)
        self._needs = needs_of(type(self))

    # -- entry point ---------------------------------------------------------------------------
    def decide(self, state: TableState, command: gcmd.Command, now: str) -> list[gev.Event]:
        if isinstance(command, gcmd.OpenTable):
            if command.mode == "bare":
                raise InvalidInput("a table with procedure runs 'live' or 'electronic'",
                                   rule="table.mode")
            authorize(state, command)
            events = self.game.decide(state, command, now)
            out = Emitter(state, command, now, table=command.table, events=events)
            out.emit(tev.StaffAssigned, rule=command.pack.cite("authority.open_table"),
                     person=command.actor, staff_role=command.role)
            return out.events
        if state.phase is Phase.NEW:
            raise ProcedureViolation("the table is not open", rule="table.open")
        authorize(state, command)
        if isinstance(command, PLAY):
            self._play_allowed(state, now)
        handler = self._handlers.get(type(command))
        out = Emitter(state, command, now)
        if handler is not None:
            handler(state, command, out)
            return out.events
        if isinstance(command, BEFORE_GAME):
            self._before_game(state, command)
        if isinstance(command, gcmd.RecordRoll):
            command = self._thrown(state, command)
        out.events.extend(self.game.decide(state, command, now))
        if isinstance(command, AFTER_GAME):
            self._after_game(state, command, out)
        return out.events

    def _thrown(self, state: TableState, command: gcmd.RecordRoll) -> gcmd.RecordRoll:
        """A throw as the procedure completes it (the dice thrown, who threw them), its dice
        checked against custody."""
        command = self._complete_command(state, command)
        if command.serials and self.dice_registry is not None:
            self.dice_registry.check_dice_in_play(state.table_id, command.serials,
                                                  dice_limit(state))
        return command

    def can(self, state: TableState, command: gcmd.Command, now: str = "") -> bool:
        """True exactly when ``decide`` would accept ``command`` at ``now``: every check it
        makes, none of the events only a decided command gets from the procedure afterwards.
        A command whose handler's need (``decides(needs=...)``, here or in the game) the
        state does not meet is answered no at once, without building its refusal."""
        try:
            if not isinstance(command, gcmd.OpenTable) and state.phase is not Phase.NEW \
                    and command.role not in allowed_roles(state, command):
                return False  # what ``authorize`` refuses first, asked without raising
            need = self._needs.get(type(command))
            if need is not None and not need(state):
                return False
            if type(command) not in self._handlers and not self.game.may(state, command):
                return False
            if isinstance(command, gcmd.OpenTable) or state.phase is Phase.NEW \
                    or type(command) in self._handlers:
                self.decide(state, command, now)
                return True
            authorize(state, command)
            if isinstance(command, PLAY):
                self._play_allowed(state, now)
            if isinstance(command, BEFORE_GAME):
                self._before_game(state, command)
            if isinstance(command, gcmd.RecordRoll):
                command = self._thrown(state, command)
            self.game.decide(state, command, now)
        except ValueError:
            return False
        return True

    def placeable_codes(self, state: TableState, player: str, codes: Iterable[str], now: str,
                        base: str | None = None) -> list[str]:
        """The wagers of ``codes`` that ``player`` may make now, whatever the amount."""
        if not self._may_play(state, player, now):
            return []
        return self.game.placeable_codes(state, player, codes, base)

    def odds_bases(self, state: TableState, player: str, bets: Iterable[str], now: str
                   ) -> list[str]:
        """The bets of ``bets`` that ``player`` may put odds behind now, whatever the amount."""
        if not self._may_play(state, player, now):
            return []
        return self.game.odds_bases(state, player, bets)

    def _may_play(self, state: TableState, player: str, now: str) -> bool:
        """The procedure's gates of a player's wager, whichever it is: the matrix, the dice,
        the dealer's opening shake."""
        probe = gcmd.PlaceBet(actor=player, role=Role.PLAYER, player=player, wager="",
                              amount=0)
        try:
            authorize(state, probe)
            self._play_allowed(state, now)
            self._wagers_open(state)
        except ValueError:
            return False
        return True

    @property
    def live(self) -> bool:
        return True

    # -- gates ------------------------------------------------------------------------------------
    def _play_allowed(self, state: TableState, now: str) -> None:
        p = procedure(state)
        pack = state.rules()
        if p.blocked:
            alert, citation = next(iter(p.blocked.items()))
            raise ProcedureViolation(f"play is blocked: {alert}", rule="dice.max_hours",
                                     citation=citation)
        if now and dice_expired(state, now):
            raise ProcedureViolation(
                f"the dice have been at the table more than {pack.value('dice.max_hours')} "
                "hours; replace them", rule="dice.max_hours", citation=pack.cite("dice.max_hours"))

    def _before_game(self, state: TableState, c: gcmd.Command) -> None:
        if state.mode != "live":
            return
        p = procedure(state)
        pack = state.rules()
        if isinstance(c, gcmd.RecordRoll):
            bad = [f for f in c.facts if f not in THROW_FACTS]
            if bad:
                raise InvalidInput(f"unknown throw facts: {', '.join(bad)}", rule="throw.facts")
            state.variant.before_throw(p, pack)
            when = self._line_bet_when(pack)
            if p.shooter is not None and when is not None \
                    and not self._has_line_bet(state, p.shooter):
                # Every throw: PA 623a.8(a) before throwing; IN 10-4-3(c) for as long as the
                # patron serves as shooter (a bet paid and returned leaves none on the table).
                raise ProcedureViolation(
                    f"the shooter {p.shooter} makes a Pass or Don't Pass bet before throwing"
                    if when == "before-throw" else f"the shooter {p.shooter} serves only with "
                    "a pass or don't pass bet on the table, at every throw",
                    rule="shooter.line_bet", citation=pack.cite("shooter.line_bet"))
        elif isinstance(c, gcmd.CloseBetting):
            state.variant.before_close(p, pack)
        elif isinstance(c, gcmd.CallNoRoll):
            Engine.no_roll_window_open(state, raising=True)  # the time before the grounds
            self._check_grounds(state, c)
        elif isinstance(c, gcmd.PlaceBet):
            self._wagers_open(state)

    @staticmethod
    def _wagers_open(state: TableState) -> None:
        """585.3(d): the dealer shakes the covered shaker before play and after each round;
        where wagering is part of that play (``wagering.after_dealer_shake``), no wager is
        taken before the dealer's shake. After 'no more bets' 668a.2(a) answers instead."""
        pack = state.rules()
        if state.mode == "live" and state.variant.has_shaker and state.phase is Phase.BETTING \
                and pack.flag("wagering.after_dealer_shake") and not procedure(state).dealer_shook:
            raise ProcedureViolation(
                "the dealer shakes the covered shaker before play and after each round; "
                "wagers are taken after that shake", rule="wagering.after_dealer_shake",
                citation=pack.cite("wagering.after_dealer_shake"))

    def _complete_command(self, state: TableState, c: gcmd.RecordRoll) -> gcmd.RecordRoll:
        """Fill in what the procedure knows: the dice thrown, and who threw them."""
        if state.mode != "live":
            return c
        serials, facts = state.variant.thrown(procedure(state), c.serials, c.thrower,
                                              tuple(c.facts))
        return replace(c, facts=facts, serials=serials)

    @staticmethod
    def _line_bet_when(pack: RulePack) -> str | None:
        """When the shooter must have a line bet (None: the pack requires none at all)."""
        if not pack.flag("throw.line_bet_required"):
            return None
        return str(pack.value("shooter.line_bet"))

    @staticmethod
    def _has_line_bet(state: TableState, player: str) -> bool:
        return any(b.wager in ("pass", "dontpass") for b in state.bets_of(player))

    def _check_grounds(self, state: TableState, c: gcmd.CallNoRoll) -> None:
        pack = state.rules()
        listed = set(pack.get("noroll.grounds", [])) | set(pack.get("noroll.automatic", []))
        excluded = set(pack.get("noroll.excluded_grounds", []))
        for ground in c.grounds:
            if ground not in NO_ROLL_GROUNDS:
                raise InvalidInput(f"{ground!r} is not a ground for a no roll",
                                   rule="noroll.grounds")
            if ground in excluded:
                raise ProcedureViolation(f"{ground} is not a cause for a call of 'no roll'",
                                         rule="noroll.excluded_grounds",
                                         citation=pack.cite("noroll.excluded_grounds"))
            if ground not in listed:
                raise ProcedureViolation(f"{ground} is not a listed ground for a no roll here",
                                         rule="noroll.grounds",
                                         citation=pack.cite("noroll.grounds"))
            if ground == "improper-throw" and c.role not in pack.roles(
                    "noroll.improper_callers"):
                raise ProcedureViolation(f"a {c.role} may not void a throw as improper",
                                         rule="noroll.improper_callers",
                                         citation=pack.cite("noroll.improper_callers"))
            if ground == "no-good-faith-and-short":
                self._check_short_throw(state, c)
        held_against_throw(state, c, _last_throw(state), procedure(state).shooter)

    @staticmethod
    def _check_short_throw(state: TableState, c: gcmd.CallNoRoll) -> None:
        """IN 10-4-4(c)(10): both no good-faith attempt and less than half the table."""
        pack = state.rules()
        thrown = _last_throw(state)
        if thrown is None:
            return
        if "no-good-faith-attempt" not in thrown.facts or thrown.distance is None \
                or thrown.distance >= 1 / 2:
            raise ProcedureViolation(
                "(c)(10) needs both: no good-faith attempt recorded, and the dice short of half "
                "the table's length", rule="noroll.grounds", citation=pack.cite("noroll.grounds"))

    def _after_game(self, state: TableState, c: gcmd.Command, out: Emitter) -> None:
        if state.mode != "live":
            return
        p = procedure(state)
        pack = state.rules()
        if isinstance(c, gcmd.MovePuck) and state.pending is not None \
                and state.pending.seven_out and p.shooter is not None:
            out.emit(tev.ShooterEnded, rule=pack.cite("shooter.keeps_dice"),
                     shooter=p.shooter, reason="seven-out")

    # -- staff -------------------------------------------------------------------------------------
    @decides(tcmd.AssignStaff)
    def _assign(self, state: TableState, c: tcmd.AssignStaff, out: Emitter) -> None:
        if c.staff_role not in STAFF_ROLES:
            raise InvalidInput(f"{c.staff_role} is not a staff role", rule="authority.staff")
        if procedure(state).holds(c.person, c.staff_role):
            raise InvalidInput(f"{c.person} is already {c.staff_role} here",
                               rule="authority.staff")
        out.emit(tev.StaffAssigned, rule=state.rules().cite("authority.staff"),
                 **carried(c, tev.Staffing))

    @decides(tcmd.RelieveStaff)
    def _relieve(self, state: TableState, c: tcmd.RelieveStaff, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        if not p.holds(c.person, c.staff_role):
            raise InvalidInput(f"{c.person} is not {c.staff_role} here", rule="authority.staff")
        if p.dice and pack.flag("dice.never_unattended"):
            # Someone who answers for the dice stays (the variant says who).
            keepers, who = state.variant.dice_keepers(pack)
            kept = [person for person, roles in p.staff.items()
                    if (roles - ({c.staff_role} if person == c.person else set())) & keepers]
            if not kept:
                raise ProcedureViolation(
                    f"the dice may not be left unattended at the table: {who}",
                    rule="dice.never_unattended", citation=pack.cite("dice.never_unattended"))
        out.emit(tev.StaffRelieved, rule=pack.cite("authority.staff"),
                 **carried(c, tev.Staffing))

    # -- dice at the table ----------------------------------------------------------------------
    @decides(tcmd.BringDice)
    def _bring(self, state: TableState, c: tcmd.BringDice, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        serials = tuple(c.serials)
        if not serials or len(set(serials)) != len(serials) or any(not s for s in serials):
            raise InvalidInput("each die is named by its own serial", rule="dice.serials")
        already = [s for s in serials if s in p.dice]
        if already:
            raise InvalidInput(f"already at the table: {', '.join(already)}",
                               rule="dice.serials")
        state.variant.check_brought(p, pack, serials, c.witness, c.actor)
        if self.dice_registry is not None:
            self.dice_registry.check_dice_in_play(state.table_id, serials, dice_limit(state))
        out.emit(tev.DiceBrought, rule=pack.cite("authority.dice"),
                 **carried(c, tev.DiceLoad))
        held = {**p.dice, **dict.fromkeys(serials, out.now)}
        if "dice-expired" in p.blocked and not dice_expired(state, out.now, held):
            # the expired dice were replaced: play resumes with the new ones
            out.emit(tev.PlayUnblocked, rule=pack.cite("dice.max_hours"), name="dice-expired")

    @decides(tcmd.RemoveDice)
    def _remove_dice(self, state: TableState, c: tcmd.RemoveDice, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        missing = [s for s in c.serials if s not in p.dice]
        if not c.serials or missing:
            raise InvalidInput(f"not at this table: {', '.join(missing) or '(none named)'}",
                               rule="dice.serials")
        if state.variant.dice_change_closed(state.phase):
            raise ProcedureViolation("dice are changed between rounds", rule="authority.dice",
                                     citation=pack.cite("authority.dice"))
        out.emit(tev.DiceTakenFromTable, rule=pack.cite("authority.dice"), serials=tuple(c.serials),
                 reason=c.reason)
        remaining = {s: t for s, t in p.dice.items() if s not in c.serials}
        if "dice-expired" in p.blocked and remaining \
                and not dice_expired(state, out.now, remaining):
            out.emit(tev.PlayUnblocked, rule=pack.cite("dice.max_hours"), name="dice-expired")

    @decides(tcmd.Tick)
    def _tick(self, state: TableState, c: tcmd.Tick, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        if "dice-expired" not in p.blocked and dice_expired(state, out.now):
            out.emit(tev.AlertRaised, rule=pack.cite("dice.max_hours"), name="dice-expired",
                     message=f"dice at table {state.table_id} have been in use more than "
                             f"{pack.value('dice.max_hours')} hours; play is blocked until "
                             "they are replaced", blocks_play=True)

    # -- the shooter (Craps) --------------------------------------------------------------------
    def _craps_live(self, state: TableState) -> None:
        if not state.variant.has_shooter or state.mode != "live":
            raise ProcedureViolation("there is no shooter at this table", rule="table.mode")

    @decides(tcmd.OfferDice)
    def _offer(self, state: TableState, c: tcmd.OfferDice, out: Emitter) -> None:
        self._craps_live(state)
        p = procedure(state)
        pack = state.rules()
        if p.shooter is not None:
            raise ProcedureViolation(f"{p.shooter} is the shooter", rule="shooter.keeps_dice",
                                     citation=pack.cite("shooter.keeps_dice"))
        if state.phase is not Phase.BETTING:
            raise ProcedureViolation("settle the roll first", rule="settlement.order")
        order = offer_order(state)
        if not order:
            raise ProcedureViolation("no patron at a position to offer the dice to",
                                     rule="shooter.first_offer",
                                     citation=pack.cite("shooter.first_offer"))
        if c.patron != order[0]:
            # Clockwise from the last shooter, the next-offer rule decides; restarting, the
            # first offer's order applies again (IN 10-4-3(e): 'per subsection (b)').
            after = bool(p.last_shooter)
            rule = "shooter.next_offer" if after and pack.get("shooter.next_offer") \
                == "clockwise-from-last" else "shooter.first_offer"
            raise ProcedureViolation(f"the dice go to {order[0]} next, not {c.patron}",
                                     rule=rule, citation=pack.cite(
                                         "shooter.next_offer" if after
                                         else "shooter.first_offer"))
        serials = tuple(c.serials) or tuple(p.bowl)  # none named: the whole bowl
        need = int(pack.value("shooter.dice_offered"))
        if len(set(serials)) < need:
            raise ProcedureViolation(f"at least {need} dice are offered to the shooter",
                                     rule="shooter.dice_offered",
                                     citation=pack.cite("shooter.dice_offered"))
        stray = [s for s in serials if s not in p.bowl]
        if stray:
            raise InvalidInput(f"not in the bowl at this table: {', '.join(stray)}",
                               rule="dice.serials")
        out.emit(tev.DiceOffered, rule=pack.cite("authority.offer_dice"), patron=c.patron,
                 serials=serials)

    def _offered_to_actor(self, state: TableState, c: gcmd.Command) -> Procedure:
        self._craps_live(state)
        p = procedure(state)
        if p.offer_to != c.actor:
            raise ProcedureViolation(f"the dice are not offered to {c.actor}",
                                     rule="authority.offer_dice",
                                     citation=state.rules().cite("authority.offer_dice"))
        return p

    @decides(tcmd.DeclineDice)
    def _decline(self, state: TableState, c: tcmd.DeclineDice, out: Emitter) -> None:
        self._offered_to_actor(state, c)
        out.emit(tev.DiceDeclined, rule=state.rules().cite("shooter.first_offer"),
                 patron=c.actor)

    @decides(tcmd.SelectDice)
    def _select(self, state: TableState, c: tcmd.SelectDice, out: Emitter) -> None:
        p = self._offered_to_actor(state, c)
        pack = state.rules()
        chosen = tuple(c.serials)
        if len(chosen) != 2 or len(set(chosen)) != 2 or not set(chosen) <= set(p.offered):
            raise ProcedureViolation("the shooter selects two of the dice offered",
                                     rule="authority.select_dice",
                                     citation=pack.cite("authority.select_dice"))
        if self._line_bet_when(pack) == "to-serve" and not self._has_line_bet(state, c.actor):
            raise ProcedureViolation(
                f"{c.actor} needs a pass or don't pass bet to serve as shooter",
                rule="shooter.line_bet", citation=pack.cite("shooter.line_bet"))
        rest = tuple(s for s in p.offered if s not in chosen)
        out.emit(tev.ShooterSelected, rule=pack.cite("authority.select_dice"), shooter=c.actor,
                 dice=chosen, returned_to_bowl=rest)

    def _shooter_between_rolls(self, state: TableState) -> Procedure:
        self._craps_live(state)
        p = procedure(state)
        if p.shooter is None:
            raise ProcedureViolation("there is no shooter", rule="shooter.keeps_dice",
                                     citation=state.rules().cite("shooter.keeps_dice"))
        if state.phase is Phase.SETTLING:
            raise ProcedureViolation("settle the roll first", rule="settlement.order")
        return p

    @decides(tcmd.RelinquishDice)
    def _relinquish(self, state: TableState, c: tcmd.RelinquishDice, out: Emitter) -> None:
        p = self._shooter_between_rolls(state)
        pack = state.rules()
        if c.actor != p.shooter:
            raise ProcedureViolation(f"{c.actor} is not the shooter", rule="shooter.may_relinquish")
        if not pack.flag("shooter.may_relinquish"):
            raise ProcedureViolation("the shooter may not give up the dice here",
                                     rule="shooter.may_relinquish",
                                     citation=pack.cite("shooter.may_relinquish"))
        out.emit(tev.ShooterEnded, rule=pack.cite("shooter.may_relinquish"), shooter=p.shooter,
                 reason="relinquished")

    @decides(tcmd.RemoveShooter)
    def _remove_shooter(self, state: TableState, c: tcmd.RemoveShooter, out: Emitter) -> None:
        p = self._shooter_between_rolls(state)
        pack = state.rules()
        if c.ground not in pack.get("shooter.removal_grounds", []):
            raise InvalidInput(f"{c.ground!r} is not a ground for removing a shooter "
                               f"({', '.join(pack.value('shooter.removal_grounds'))})",
                               rule="shooter.removal_grounds")
        assert p.shooter is not None
        out.emit(tev.ShooterEnded, rule=pack.cite("shooter.removal_grounds"),
                 shooter=p.shooter, reason=c.ground)

    @decides(tcmd.OverturnNoRoll)
    def _overturn(self, state: TableState, c: tcmd.OverturnNoRoll, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        if p.overturnable_seq is None or state.last_roll is None:
            raise ProcedureViolation(
                "only the last roll's declaration may be overturned, before anything else "
                "happens at the table", rule="authority.overturn_no_roll",
                citation=pack.cite("authority.overturn_no_roll"))
        out.emit(tev.NoRollOverturned, rule=pack.cite("authority.overturn_no_roll"),
                 overturned_seq=p.overturnable_seq, reason=c.reason)

    # -- the shaker (Props & Hops) ---------------------------------------------------------------
    def _shaker_live(self, state: TableState) -> Procedure:
        if not state.variant.has_shaker or state.mode != "live":
            raise ProcedureViolation("there is no shaker at this table", rule="table.mode")
        return procedure(state)

    @decides(tcmd.ShakeShaker, needs=lambda state: state.phase is Phase.BETTING
             and procedure(state).shaker in ("covered", "uncovered"))
    def _dealer_shake(self, state: TableState, c: tcmd.ShakeShaker, out: Emitter) -> None:
        p = self._shaker_live(state)
        self.game.returns_first(state)  # a no roll's wagers go back before the next round
        pack = state.rules()
        if p.shaker == "empty":
            raise ProcedureViolation("the shaker has no dice", rule="authority.dice",
                                     citation=pack.cite("authority.dice"))
        if state.phase is not Phase.BETTING or p.shaker not in ("covered", "uncovered"):
            raise ProcedureViolation("the dealer shakes before play and after each round",
                                     rule="authority.shaker",
                                     citation=pack.cite("authority.shaker"))
        out.emit(tev.ShakerShaken, rule=pack.cite("authority.shaker"))

    @decides(tcmd.OfferShaker)
    def _offer_shaker(self, state: TableState, c: tcmd.OfferShaker, out: Emitter) -> None:
        p = self._shaker_live(state)
        pack = state.rules()
        if state.phase is not Phase.CLOSED or p.shaker != "covered":
            raise ProcedureViolation("the covered shaker is offered after 'no more bets'",
                                     rule="authority.shaker",
                                     citation=pack.cite("authority.shaker"))
        if p.pass_due:
            raise ProcedureViolation("the shaker passes to the next player first "
                                     "(pass-shaker)", rule="shaker.passes_on",
                                     citation=pack.cite("shaker.passes_on"))
        due = p.shaker_holder if p.shaker_holder in _seated(state) else next_shaker_holder(
            state, after=p.shaker_holder if p.shaker_holder else None, first=True)
        if c.player != due:
            rule = "shaker.first_to" if p.shaker_holder is None else "shaker.passes_on"
            raise ProcedureViolation(f"the shaker goes to {due}, not {c.player}", rule=rule,
                                     citation=pack.cite(rule))
        out.emit(tev.ShakerOffered, rule=pack.cite("shaker.first_to"), player=c.player)

    @decides(tcmd.PassShaker)
    def _pass_shaker(self, state: TableState, c: tcmd.PassShaker, out: Emitter) -> None:
        """585.3(j): after a round ending on the passing total, the next player to the left."""
        p = self._shaker_live(state)
        pack = state.rules()
        if not p.pass_due:
            raise ProcedureViolation(f"the shaker passes after a round totalling "
                                     f"{pack.get('shaker.passes_on')}", rule="shaker.passes_on",
                                     citation=pack.cite("shaker.passes_on"))
        out.emit(tev.ShakerPassed, rule=pack.cite("shaker.passes_on"),
                 from_player=p.shaker_holder,
                 to_player=next_shaker_holder(state, after=p.shaker_holder))

    def _holder(self, state: TableState, c: gcmd.Command, stage: str) -> Procedure:
        p = self._shaker_live(state)
        if p.shaker != stage or c.actor != p.shaker_holder:
            raise ProcedureViolation(f"{c.actor} does not hold the covered shaker",
                                     rule="authority.shake",
                                     citation=state.rules().cite("authority.shake"))
        return p

    @staticmethod
    def _lid_on(state: TableState, p: Procedure) -> None:
        if p.lid_off:
            raise ProcedureViolation("the lid is off: re-cover the shaker, then shake it again",
                                     rule="shaker.min_shakes",
                                     citation=state.rules().cite("shaker.min_shakes"))

    @decides(tcmd.PlayerShake)
    def _player_shake(self, state: TableState, c: tcmd.PlayerShake, out: Emitter) -> None:
        self._lid_on(state, self._holder(state, c, "offered"))
        if not 1 <= c.times <= 100:
            raise InvalidInput("shakes are counted one to a hundred at a time",
                               rule="shaker.min_shakes")
        out.emit(tev.ShakerShakenByPlayer, rule=state.rules().cite("shaker.min_shakes"),
                 player=c.actor, times=c.times)

    @decides(tcmd.RemoveLid)
    def _remove_lid(self, state: TableState, c: tcmd.RemoveLid, out: Emitter) -> None:
        self._lid_on(state, self._holder(state, c, "offered"))
        out.emit(tev.ShakerLidRemoved, rule=state.rules().cite("shaker.min_shakes"),
                 player=c.actor)

    @decides(tcmd.RecoverShaker)
    def _recover_shaker(self, state: TableState, c: tcmd.RecoverShaker, out: Emitter) -> None:
        p = self._holder(state, c, "offered")
        if not p.lid_off:
            raise ProcedureViolation("the shaker is covered", rule="shaker.min_shakes",
                                     citation=state.rules().cite("shaker.min_shakes"))
        out.emit(tev.ShakerRecovered, rule=state.rules().cite("shaker.min_shakes"),
                 player=c.actor)

    @decides(tcmd.ReturnShaker)
    def _return_shaker(self, state: TableState, c: tcmd.ReturnShaker, out: Emitter) -> None:
        p = self._holder(state, c, "offered")
        self._lid_on(state, p)
        pack = state.rules()
        need = int(pack.value("shaker.min_shakes"))
        if p.shakes < need:
            raise ProcedureViolation(
                f"the covered shaker is shaken at least {need} times ({p.shakes} so far)",
                rule="shaker.min_shakes", citation=pack.cite("shaker.min_shakes"))
        out.emit(tev.ShakerReturned, rule=pack.cite("shaker.min_shakes"), player=c.actor)

    @decides(tcmd.UncoverShaker, needs=lambda state: procedure(state).shaker == "returned")
    def _uncover(self, state: TableState, c: tcmd.UncoverShaker, out: Emitter) -> None:
        p = self._shaker_live(state)
        pack = state.rules()
        if p.shaker != "returned":
            raise ProcedureViolation("the player returns the covered shaker first",
                                     rule="authority.shaker",
                                     citation=pack.cite("authority.shaker"))
        out.emit(tev.ShakerUncovered, rule=pack.cite("authority.shaker"))


def _seated(state: TableState) -> set[str]:
    return {p for p, info in state.players.items() if info.seat is not None}


def _last_throw(state: TableState) -> gev.DiceRolled | None:
    return procedure(state).last_throw


require_handlers(ProcedureEngine, PROCEDURE_ENTRIES)


ACTION_RULE: dict[type[gcmd.Command], str] = {
    e.command: e.authority for e in CATALOGUE if e.authority is not None}
"""Every command of the live table and the rule that says who may give it (the catalogue's)."""

AUTOMATABLE = frozenset(e.authority for e in CATALOGUE if e.automatable and e.authority)
"""What an electronic table's own automation (role ``system``) does in place of staff."""

_PLAYER_SUBJECT = (gcmd.JoinTable, gcmd.LeaveTable, gcmd.PlaceBet, gcmd.ChangeBet,
                   gcmd.RemoveBet, gcmd.SetWorking)


def rule_for(command: gcmd.Command) -> str | None:
    """The rule id that lists who may give ``command`` (None: the system's own tick)."""
    return CATALOGUE.of(command).authority


def allowed_roles(state: TableState, command: gcmd.Command) -> frozenset[Role]:
    rule = rule_for(command)
    if rule is None:
        return frozenset({Role.SYSTEM})
    roles = state.rules().roles(rule)
    if state.mode == "electronic" and rule in AUTOMATABLE:
        return roles | {Role.SYSTEM}
    return roles


def authorize(state: TableState, command: gcmd.Command) -> None:
    """Raise ``RoleNotPermitted`` unless ``command.role`` may give ``command`` here."""
    rule = rule_for(command)
    role = command.role
    pack = state.pack
    if isinstance(command, gcmd.OpenTable):
        if role not in command.pack.roles("authority.open_table"):
            raise RoleNotPermitted(f"a {role} may not open the table",
                                   rule="authority.open_table",
                                   citation=command.pack.cite("authority.open_table"))
        return
    def citation() -> str:  # found only for a refusal: most commands are allowed
        return pack.cite(rule) if pack is not None and rule else ""

    if role not in allowed_roles(state, command):
        what = type(command).__name__
        where = f"{state.game} ({pack.id})" if pack is not None else state.game
        raise RoleNotPermitted(f"a {role} may not {what} at {where}",
                               rule=rule or "authority.system", citation=citation())
    _holds_role(state, command, rule or "authority.system", citation)
    check(state, command)


def _holds_role(state: TableState, command: gcmd.Command, rule: str,
                citation: Callable[[], str]) -> None:
    role, actor = command.role, command.actor
    if role is Role.SYSTEM:
        if state.mode != "electronic" and not isinstance(command, tcmd.Tick):
            raise RoleNotPermitted("only an electronic table acts on its own",
                                   rule=rule, citation=citation())
        return
    if role is Role.PLAYER:
        subject = owner_of(state, command)
        if isinstance(command, gcmd.JoinTable):
            if actor != command.player:
                raise RoleNotPermitted(f"{actor} may not seat {command.player}",
                                       rule=rule, citation=citation())
            return
        if actor not in state.players:
            raise RoleNotPermitted(f"{actor} is not a player at this table", rule=rule,
                                   citation=citation())
        if isinstance(command, _PLAYER_SUBJECT) and subject is not None and subject != actor:
            raise RoleNotPermitted(f"{actor} may not act for {subject}", rule=rule,
                                   citation=citation())
        return
    if not procedure(state).holds(actor, role):
        raise RoleNotPermitted(f"{actor} is not assigned as {role} at this table",
                               rule="authority.staff", citation=state.rules().cite(
                                   "authority.staff"))
