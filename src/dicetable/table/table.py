"""``Table``: a table as the fold of its events, with verify / can / do for every command.

A table runs in one of three modes:

- ``live``: staff assigned to roles, physical dice with serials, the shooter or the shaker,
  every command authorised by the pack's permission matrix;
- ``electronic``: the same rules, with the roll drawn by a CSPRNG and the table's own
  automation (role ``system``) closing bets, rolling and settling;
- ``bare``: the game engine alone (players act for themselves, staff for the table), for
  mathematicians, simulations and tests of the game rules.

>>> t = Table.open("pa-craps", "demo", mode="bare")
>>> t.join("alice"); t.buy_in("alice", 200_00)
>>> b = t.bet("alice", "pass", 10_00)
>>> _ = t.roll("2-2"); _ = t.settle()
>>> t.point, t.balance("alice")
(4, 19000)
>>> t.can_place_bet("alice", "pass", 5_00)
False
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Protocol

from dicetable.core import events as envelope
from dicetable.core.clock import Clock, SystemClock
from dicetable.core.dice import Roll
from dicetable.core.dice_sources import CsprngDice, DiceSource
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.engine import Authorizer, Engine, default_authorizer
from dicetable.games.state import Phase, TableState, apply
from dicetable.games.variant import variant_of
from dicetable.rules.loader import load_pack
from dicetable.rules.model import RulePack
from dicetable.table import commands as tcmd
from dicetable.table.authority import ACTION_RULE, AUTOMATABLE
from dicetable.table.automation import (
    BETTING_SECONDS,
    Automation,
    automations_for,
    chores_left,
    parse_automations,
)
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.procedure import DiceRegistry, ProcedureEngine
from dicetable.table.procedure_state import Procedure, procedure

Sink = Callable[[Sequence[ev.Event]], None]
"""Receives each batch of events before the table applies them (the durable store)."""

MODES = ("live", "electronic", "bare")


class Decider(Protocol):
    def decide(self, state: TableState, command: cmd.Command, now: str) -> list[ev.Event]: ...

    def can(self, state: TableState, command: cmd.Command) -> bool: ...


def engine_for(game: str, mode: str = "bare", authorizer: Authorizer = default_authorizer,
               dice_registry: DiceRegistry | None = None) -> Decider:
    """The engine for a game in a mode."""
    engine = variant_of(game).engine(authorizer)
    if mode == "bare":
        return engine
    if mode not in MODES:
        raise InvalidInput(f"no table mode {mode!r} (live, electronic or bare)",
                           rule="table.mode")
    return ProcedureEngine(engine, dice_registry)


def _table_events(events: Iterable[envelope.Event]) -> Iterable[ev.Event]:
    for event in events:
        if not isinstance(event, ev.Event):
            raise InvalidInput(f"{event.kind} is not a table event", rule="events.log")
        yield event


class Table:
    """One table: its engine, its state and its log."""

    def __init__(self, engine: Decider, *, clock: Clock | None = None,
                 sink: Sink | None = None,
                 automations: Iterable[Automation] | None = None,
                 betting_seconds: int = BETTING_SECONDS) -> None:
        self.engine = engine
        self.state = TableState()
        self.clock: Clock = clock or SystemClock()
        self.sink = sink
        self.log: list[ev.Event] = []
        self._automations = None if automations is None else frozenset(automations)
        self._logged_automations: tuple[tuple[str, ...], frozenset[Automation]] | None = None
        self.betting_seconds = betting_seconds
        self.betting_opened_at: str | None = None
        """When betting last opened (the electronic table's timer counts from here)."""

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def open(cls, pack: RulePack | str, table_id: str = "t1", *, mode: str = "bare",
             clock: Clock | None = None, actor: str = "floor",
             role: Role = Role.FLOORPERSON, staff: Mapping[str, Role] | None = None,
             authorizer: Authorizer = default_authorizer, sink: Sink | None = None,
             dice_registry: DiceRegistry | None = None,
             automations: Iterable[Automation] | None = None,
             betting_seconds: int = BETTING_SECONDS) -> Table:
        """Open a table; ``staff`` (person -> role) are assigned by the opener.

        ``dice_registry`` (the site's custody ledger) makes the table refuse dice that were
        not issued to it. ``automations`` replaces the mode's own (``automations_for``).
        """
        rules = pack if isinstance(pack, RulePack) else load_pack(pack)
        table = cls(engine_for(rules.game, mode, authorizer, dice_registry), clock=clock,
                    sink=sink, betting_seconds=betting_seconds)
        table.start(rules, table_id, mode=mode, actor=actor, role=role, staff=staff,
                    automations=automations)
        return table

    def start(self, pack: RulePack, table_id: str, *, mode: str = "bare",
              actor: str = "floor", role: Role = Role.FLOORPERSON,
              staff: Mapping[str, Role] | None = None,
              automations: Iterable[Automation] | None = None) -> None:
        """Open this (new) table and assign its staff: the first events of its log. The
        table's automations (its mode's own unless given) are written in its log."""
        chosen = automations_for(mode, pack) if automations is None \
            else parse_automations(automations)
        self.execute(cmd.OpenTable(actor=actor, role=role, table=table_id, pack=pack,
                                   mode=mode, automations=tuple(sorted(chosen))))
        for person, staff_role in (staff or {}).items():
            self.execute(tcmd.AssignStaff(actor=actor, role=role, person=person,
                                          staff_role=staff_role))

    @classmethod
    def replay(cls, events: Iterable[envelope.Event], *, clock: Clock | None = None,
               authorizer: Authorizer = default_authorizer, sink: Sink | None = None,
               dice_registry: DiceRegistry | None = None,
               automations: Iterable[Automation] | None = None,
               betting_seconds: int = BETTING_SECONDS) -> Table:
        """Rebuild a table from its log (nothing is automated while it is read)."""
        it = iter(_table_events(events))
        first = next(it, None)
        if not isinstance(first, ev.TableOpened):
            raise InvalidInput("a table's log starts with TableOpened", rule="events.log")
        table = cls(engine_for(first.game, first.mode, authorizer, dice_registry), clock=clock,
                    sink=sink, automations=automations, betting_seconds=betting_seconds)
        table._apply([first])
        table._apply(it)
        return table

    # -- verify / can / do --------------------------------------------------------------------
    def now(self) -> str:
        return self.clock.now().isoformat()

    def decide(self, command: cmd.Command) -> list[ev.Event]:
        """The events ``command`` would produce; raises if refused. Changes nothing."""
        return self.engine.decide(self.state, command, self.now())

    def verify(self, command: cmd.Command) -> None:
        """Raise the typed error that refuses ``command``, if any."""
        self.decide(command)

    def can(self, command: cmd.Command) -> bool:
        """True exactly when ``verify`` would not raise (for greying out controls)."""
        try:
            self.decide(command)
        except ValueError:
            return False
        return True

    def execute(self, command: cmd.Command) -> list[ev.Event]:
        """Decide and apply ``command``, then whatever the table's automations make due."""
        events = self._execute(command)
        return events + self.automate()

    def _execute(self, command: cmd.Command) -> list[ev.Event]:
        events = self.decide(command)
        if self.sink is not None:
            self.sink(events)  # durable before applied: an acknowledged command is never lost
        self._apply(events)
        return events

    def _apply(self, events: Iterable[ev.Event]) -> None:
        for event in events:
            before = self.state.phase
            apply(self.state, event)
            self.log.append(event)
            if self.state.phase is Phase.BETTING and before is not Phase.BETTING:
                self.betting_opened_at = event.at

    def do(self, name: str, *, actor: str | None = None, role: Role | None = None,
           **fields: object) -> list[ev.Event]:
        """Give any catalogued command by its name (``do("no-more-bets")``); who gives it
        defaults to someone at this table allowed to."""
        entry = CATALOGUE.named(name)
        a, r = self._by(entry.command, actor, role)
        return self.execute(entry.command(actor=a, role=r, **fields))

    # -- automation -------------------------------------------------------------------------------
    @property
    def automations(self) -> frozenset[Automation]:
        if self._automations is not None:
            return self._automations
        logged = self.state.automations
        if logged is not None:
            cached = self._logged_automations
            if cached is None or cached[0] is not logged:  # parse once per opening
                cached = self._logged_automations = (logged, parse_automations(logged))
            return cached[1]
        return automations_for(self.mode, self.state.pack)

    @automations.setter
    def automations(self, value: Iterable[Automation] | None) -> None:
        """Replace the table's automations (None: the mode's own again)."""
        self._automations = None if value is None else frozenset(value)

    def _automaton(self, command_type: type[cmd.Command]) -> tuple[str, Role]:
        """Who performs an automated chore: the table itself, or a live table's dealer."""
        if self.mode == "live":
            return self.who(command_type)
        return "table", Role.SYSTEM

    def automate(self) -> list[ev.Event]:
        """Perform every chore now due that the table automates (the one code path a dealer's
        ``settle`` also takes)."""
        out: list[ev.Event] = []
        while True:
            due = chores_left(self.state)
            if not due or due[0][0] not in self.automations:
                return out
            actor, role = self._automaton(due[0][1])
            out += self._execute(due[0][1](actor=actor, role=role))

    @property
    def bets_close_at(self) -> str | None:
        """When an electronic table's betting time runs out (None: no timer running)."""
        if Automation.BETTING_TIMER not in self.automations or self.phase is not Phase.BETTING \
                or self.betting_opened_at is None:
            return None
        opened = datetime.fromisoformat(self.betting_opened_at)
        return (opened + timedelta(seconds=self.betting_seconds)).isoformat()

    def advance(self) -> list[ev.Event]:
        """Let the clock act: close betting when the timer is up, roll by CSPRNG, settle.

        The server calls this as time passes; everything it does is the table's own
        automation, through the same commands a live crew gives.
        """
        out: list[ev.Event] = []
        if self.betting_opened_at is None and self.phase is Phase.BETTING:
            self.betting_opened_at = self.now()  # resumed from a snapshot: start the timer now
        close_at = self.bets_close_at
        if close_at is not None and self.clock.now() >= datetime.fromisoformat(close_at):
            out += self.execute(cmd.CloseBetting(actor="table", role=Role.SYSTEM))
        if Automation.CSPRNG_ROLL in self.automations and self.phase is Phase.CLOSED \
                and (close_at is not None or out):
            out += self.execute(self.roll_command(CsprngDice(), actor="table",
                                                  role=Role.SYSTEM))
        out += self.automate()
        return out

    # -- reading the table ----------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.state.table_id

    @property
    def pack(self) -> RulePack:
        return self.state.rules()

    @property
    def mode(self) -> str:
        return self.state.mode

    @property
    def phase(self) -> Phase:
        return self.state.phase

    @property
    def point(self) -> int | None:
        return self.state.point

    @property
    def procedure(self) -> Procedure:
        return procedure(self.state)

    @property
    def shooter(self) -> str | None:
        return self.procedure.shooter

    @property
    def shaker_holder(self) -> str | None:
        return self.procedure.shaker_holder

    def blocked(self) -> bool:
        """Play is blocked: an alert stands, or the dice are past their time now."""
        from dicetable.table.clockwork import dice_expired

        return bool(self.procedure.blocked) or (self.mode == "live"
                                                and dice_expired(self.state, self.now()))

    def balance(self, player: str) -> int:
        return self.state.balance(player)

    @property
    def balances(self) -> dict[str, int]:
        return {p: info.balance for p, info in sorted(self.state.players.items())}

    # -- who gives a command ----------------------------------------------------------------------
    def who(self, command_type: type[cmd.Command]) -> tuple[str, Role]:
        """A person (and role) at this table allowed to give ``command_type``."""
        rule = ACTION_RULE.get(command_type)
        if self.mode == "bare" or rule is None:
            if command_type is cmd.RecordRoll:
                return "stick", Role.STICKPERSON
            return "dealer", Role.DEALER
        if self.mode == "electronic" and rule in AUTOMATABLE:
            return "table", Role.SYSTEM
        for role in self.pack.get(rule, []):
            people = self.procedure.people_in(Role(role))
            if people:
                return people[0], Role(role)
        raise InvalidInput(f"nobody at this table may {command_type.__name__} ({rule})",
                           rule=rule)

    def _by(self, command_type: type[cmd.Command], actor: str | None,
            role: Role | None) -> tuple[str, Role]:
        if actor is not None and role is not None:
            return actor, role
        found_actor, found_role = self.who(command_type)
        return actor or found_actor, role or found_role

    # -- conveniences for people and scripts -------------------------------------------------
    def join(self, player: str, seat: int | None = None, *, actor: str | None = None,
             role: Role = Role.PLAYER) -> None:
        self.execute(cmd.JoinTable(actor=actor or player, role=role, player=player, seat=seat))

    def buy_in(self, player: str, amount: int, *, actor: str | None = None,
               role: Role | None = None) -> None:
        a, r = self._by(cmd.BuyChips, actor, role)
        self.execute(cmd.BuyChips(actor=a, role=r, player=player, amount=amount))

    def place_bet_command(self, player: str, wager: str, amount: int, *,
                          base: str | None = None, working: bool | None = None,
                          actor: str | None = None, role: Role = Role.PLAYER) -> cmd.PlaceBet:
        return cmd.PlaceBet(actor=actor or player, role=role, player=player, wager=wager,
                            amount=amount, base=base, working=working)

    def bet(self, player: str, wager: str, amount: int, *, base: str | None = None,
            working: bool | None = None, actor: str | None = None,
            role: Role = Role.PLAYER) -> str:
        """Place a wager; returns its bet id."""
        events = self.execute(self.place_bet_command(player, wager, amount, base=base,
                                                     working=working, actor=actor, role=role))
        placed = [e for e in events if isinstance(e, ev.BetPlaced)][-1]
        return placed.bet

    def verify_place_bet(self, player: str, wager: str, amount: int, **kw: object) -> None:
        self.verify(self.place_bet_command(player, wager, amount, **kw))  # type: ignore[arg-type]

    def can_place_bet(self, player: str, wager: str, amount: int, **kw: object) -> bool:
        return self.can(self.place_bet_command(player, wager, amount, **kw))  # type: ignore[arg-type]

    def placeable(self, player: str, wager: str, base: str | None = None) -> bool:
        """May ``player`` make ``wager`` now, whatever the amount (a layout spot lit or not)?"""
        return bool(self.placeable_codes(player, [wager], base))

    def placeable_codes(self, player: str, codes: Iterable[str],
                        base: str | None = None) -> list[str]:
        """Which of ``codes`` ``player`` may make now, whatever the amount."""
        engine = self.engine
        if isinstance(engine, ProcedureEngine):
            return engine.placeable_codes(self.state, player, codes, self.now(), base)
        if isinstance(engine, Engine):
            return engine.placeable_codes(self.state, player, codes, base)
        return []

    def odds(self, player: str, base: str, amount: int) -> str:
        return self.bet(player, "odds", amount, base=base)

    def remove(self, bet: str, *, actor: str | None = None, role: Role = Role.PLAYER) -> None:
        owner = self.state.bets[bet].player if bet in self.state.bets else ""
        self.execute(cmd.RemoveBet(actor=actor or owner, role=role, bet=bet))

    def no_more_bets(self, *, actor: str | None = None, role: Role | None = None) -> None:
        a, r = self._by(cmd.CloseBetting, actor, role)
        self.execute(cmd.CloseBetting(actor=a, role=r))

    def roll_command(self, roll: str | Roll | DiceSource | None = None, *,
                     facts: Sequence[str] = (), actor: str | None = None,
                     role: Role | None = None, source: str | None = None,
                     distance: Fraction | None = None,
                     thrower: str | None = None) -> cmd.RecordRoll:
        a, r = self._by(cmd.RecordRoll, actor, role)
        kind = source or "manual"
        if roll is None and self.mode == "electronic" and not facts:
            roll = CsprngDice()
        if isinstance(roll, str):
            faces: Roll | None = Roll.parse(roll)
        elif isinstance(roll, Roll) or roll is None:
            faces = roll
        else:
            faces = roll.next_roll()
            kind = source or roll.kind.value
        return cmd.RecordRoll(actor=a, role=r, roll=faces, source=kind, facts=tuple(facts),
                              distance=distance, thrower=thrower)

    def roll(self, roll: str | Roll | DiceSource | None = None, *,
             facts: Sequence[str] = (), actor: str | None = None, role: Role | None = None,
             source: str | None = None, distance: Fraction | None = None,
             thrower: str | None = None) -> list[ev.Event]:
        """Record a throw: faces given as ``3-4``, or drawn from a dice source.

        On a table whose pack settles automatically, the settlement follows at once.
        """
        return self.execute(self.roll_command(roll, facts=facts, actor=actor, role=role,
                                              source=source, distance=distance,
                                              thrower=thrower))

    def settle(self, *, actor: str | None = None, role: Role | None = None) -> list[ev.Event]:
        """The dealer's chores left, in order: collect losers, pay winners, complete the roll.

        (Where the table automates them, they are done already and this does nothing.)
        """
        a, r = self._by(cmd.CollectLosers, actor, role)
        events: list[ev.Event] = []
        if not chores_left(self.state) and Automation.COMPLETE_ROLL not in self.automations:
            raise ProcedureViolation("there is no roll to settle", rule="settlement.order")
        while due := chores_left(self.state):
            events += self.execute(due[0][1](actor=a, role=r))
        return events

    def call_no_roll(self, *grounds: str, actor: str | None = None,
                     role: Role | None = None, observed: Sequence[str] = ()) -> list[ev.Event]:
        """Call a no roll; ``observed``: facts the caller saw that the throw's record lacks."""
        a, r = self._by(cmd.CallNoRoll, actor, role)
        return self.execute(cmd.CallNoRoll(actor=a, role=r, grounds=tuple(grounds),
                                           observed=tuple(observed)))

    # -- live procedure conveniences ------------------------------------------------------------
    def assign(self, person: str, staff_role: Role, *, actor: str | None = None,
               role: Role | None = None) -> None:
        a, r = self._by(tcmd.AssignStaff, actor, role)
        self.execute(tcmd.AssignStaff(actor=a, role=r, person=person, staff_role=staff_role))

    def bring_dice(self, *serials: str, witness: str | None = None, actor: str | None = None,
                   role: Role | None = None) -> None:
        a, r = self._by(tcmd.BringDice, actor, role)
        if witness is None and self.state.variant.has_shaker:
            dealers = self.procedure.people_in(Role.DEALER)
            witness = dealers[0] if dealers else None
        self.execute(tcmd.BringDice(actor=a, role=r, serials=serials, witness=witness))

    def offer_dice(self, patron: str, serials: Sequence[str] | None = None, *,
                   actor: str | None = None, role: Role | None = None) -> None:
        a, r = self._by(tcmd.OfferDice, actor, role)
        chosen = tuple(serials) if serials is not None else tuple(self.procedure.bowl)
        self.execute(tcmd.OfferDice(actor=a, role=r, patron=patron, serials=chosen))

    def select_dice(self, patron: str, first: str | None = None,
                    second: str | None = None) -> None:
        offered = self.procedure.offered
        pair = (first, second) if first and second else tuple(offered[:2])
        self.execute(tcmd.SelectDice(actor=patron, role=Role.PLAYER, serials=tuple(pair)))

    def new_shooter(self, patron: str, first: str | None = None,
                    second: str | None = None) -> None:
        """Offer the bowl to ``patron`` and have them select two dice."""
        self.offer_dice(patron)
        self.select_dice(patron, first, second)

    def shaker_round(self, roll: str | Roll | None, *, shakes: int = 3,
                     facts: Sequence[str] = ()) -> list[ev.Event]:
        """Props & Hops, live: no more bets, offer, shake, return, uncover, read, settle."""
        dealer, role = self.who(tcmd.OfferShaker)
        from dicetable.table.seating import next_shaker_holder

        events = self.execute(cmd.CloseBetting(actor=dealer, role=role))
        p = self.procedure
        holder = p.shaker_holder if p.shaker_holder else next_shaker_holder(
            self.state, None, first=True)
        assert holder is not None
        events += self.execute(tcmd.OfferShaker(actor=dealer, role=role, player=holder))
        events += self.execute(tcmd.PlayerShake(actor=holder, role=Role.PLAYER, times=shakes))
        events += self.execute(tcmd.ReturnShaker(actor=holder, role=Role.PLAYER))
        events += self.execute(tcmd.UncoverShaker(actor=dealer, role=role))
        events += self.roll(roll, facts=facts)
        if chores_left(self.state):
            events += self.settle()
        events += self.execute(tcmd.ShakeShaker(actor=dealer, role=role))
        return events
