"""``Table``: a table as the fold of its events, with verify / can / do for every command.

A table runs in one of three modes:

- ``live``: staff assigned to roles, physical dice with serials, the shooter or the shaker,
  every command authorised by the pack's permission matrix;
- ``electronic``: the same rules, with the roll drawn by a CSPRNG and the table's own
  automation (role ``system``) closing bets, rolling and settling;
- ``bare``: the game engine alone (players act for themselves, staff for the table), for
  mathematicians, simulations and tests of the game rules.

>>> t = Table.open("pa-craps", "demo", mode="bare")
>>> _ = t.join("alice"), t.buy_in("alice", 200_00)
>>> b = t.bet("alice", "pass", 10_00)
>>> _ = t.roll("2-2"); _ = t.settle()
>>> t.point, t.balance("alice")
(4, 19000)
>>> t.can(t.command("place-bet", player="alice", wager="pass", amount=5_00))
False

Dealer automation as configuration (DESIGN.md lesson 3; pokerkit's automations).

A table has a set of automations. A live table automates none: the dealer collects, pays and
moves the puck, returns the wagers a no roll gives back and passes the shaker on, the
stickperson calls 'no more bets' and records the throw. The rules say *what* each chore
does (``settlement.order``, ``noroll.effect``, ``shaker.passes_on``); the automations say
*who* does it, and when. A bare table (the
engine for mathematicians and tests) automates the chores. An electronic table automates them
all, with a betting timer and a CSPRNG roll. Whoever performs a chore, a dealer asking or an
automation, the same command goes through the same engine: ``chores_left`` is the one place
that says which chore comes next.

>>> sorted(a.value for a in automations_for("bare"))
['collect-losers', 'complete-roll', 'pass-shaker', 'pay-winners', 'return-wagers']
>>> automations_for("live")
frozenset()
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol

from dicetable.core import events as envelope
from dicetable.core.clock import Clock, SystemClock
from dicetable.core.dice import Roll
from dicetable.core.dice_sources import CsprngDice, DiceSource
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.events import type_hints
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.catalogue import Entry
from dicetable.games.engine import Authorizer, Engine, default_authorizer, engine_of
from dicetable.games.fold import apply
from dicetable.games.packs import load_pack
from dicetable.games.state import Phase, TableState
from dicetable.rules.model import RulePack
from dicetable.table import commands as tcmd
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.command_methods import CommandMethods
from dicetable.table.procedure import (
    ACTION_RULE,
    AUTOMATABLE,
    KEY,
    DiceRegistry,
    Procedure,
    ProcedureEngine,
    by_matrix,
    procedure,
)


class Automation(StrEnum):
    """What a table may do by itself."""

    COLLECT_LOSERS = "collect-losers"
    """Collect the losing wagers after a roll."""
    PAY_WINNERS = "pay-winners"
    """Pay the winning wagers."""
    COMPLETE_ROLL = "complete-roll"
    """The last chore: move the puck (Craps) or complete the round (Props & Hops)."""
    RETURN_WAGERS = "return-wagers"
    """Return the wagers after a no roll that gives them back (``noroll.effect``)."""
    PASS_SHAKER = "pass-shaker"
    """Pass the shaker to the next player after a round on ``shaker.passes_on``."""
    BETTING_TIMER = "betting-timer"
    """Close betting when the betting time is up (electronic tables)."""
    CSPRNG_ROLL = "csprng-roll"
    """Roll the dice by CSPRNG once betting is closed (electronic tables)."""

CHORES = (Automation.COLLECT_LOSERS, Automation.PAY_WINNERS, Automation.COMPLETE_ROLL)
"""The settlement chores, in the order ``settlement.order`` gives them."""
AROUND_THE_ROLL = (Automation.RETURN_WAGERS, Automation.PASS_SHAKER)
"""The chores a no roll or a round's total leaves (before table-script format 3 and event
schema ``TableOpened`` v3, every table did them at once)."""

_BY_MODE = {
    "live": frozenset[Automation](),
    "bare": frozenset(CHORES + AROUND_THE_ROLL),
    "electronic": frozenset(Automation),
}

BETTING_SECONDS = 20
"""An electronic table's default betting time (the floor may set another)."""


def automations_for(mode: str, pack: RulePack | None = None) -> frozenset[Automation]:
    """The automations a table in ``mode`` runs with; a pack that settles by itself
    (``settlement.automatic``) adds the chores at any table."""
    found = _BY_MODE.get(mode)
    if found is None:
        raise InvalidInput(f"no table mode {mode!r} (live, electronic or bare)",
                           rule="table.mode")
    if pack is not None and pack.flag("settlement.automatic"):
        found = found | frozenset(CHORES + AROUND_THE_ROLL)
    return found


def parse_automations(names: Iterable[str]) -> frozenset[Automation]:
    out = set()
    for name in names:
        try:
            out.add(Automation(name))
        except ValueError:
            raise InvalidInput(f"no automation {name!r} ({', '.join(a.value for a in Automation)})",
                               rule="table.automations") from None
    return frozenset(out)


def chores_left(state: TableState) -> list[tuple[Automation, type[cmd.Command]]]:
    """The dealer's chores still to do, in order: a no roll's wagers to return, the
    settlement of the roll on the table, the shaker to pass on."""
    if state.returns_due:
        return [(Automation.RETURN_WAGERS, cmd.ReturnWagers)]
    out: list[tuple[Automation, type[cmd.Command]]] = []
    pending = state.pending
    if state.phase is Phase.SETTLING and pending is not None:
        steps = ((Automation.COLLECT_LOSERS, cmd.CollectLosers),
                 (Automation.PAY_WINNERS, cmd.PayWinners),
                 (Automation.COMPLETE_ROLL, state.variant.final_chore))
        out += steps[pending.step:]
    if KEY in state.extra and procedure(state).pass_due:
        out.append((Automation.PASS_SHAKER, tcmd.PassShaker))
    return out


def settle_commands(state: TableState, actor: str, role: object) -> Iterator[cmd.Command]:
    """A dealer's 'settle': each chore due, given by ``actor`` in ``role``, asked for once the
    one before it is done (a round's completion can make the shaker's pass due), until none
    is left. The one settle: ``Table.settle``, the script's ``settle`` and the route's."""
    while due := chores_left(state):
        yield due[0][1](actor=actor, role=role)  # type: ignore[arg-type]


Sink = Callable[[Sequence[ev.Event]], None]
"""Receives each batch of events before the table applies them (the durable store)."""

MODES = ("live", "electronic", "bare")


class Decider(Protocol):
    def decide(self, state: TableState, command: cmd.Command, now: str) -> list[ev.Event]: ...

    def can(self, state: TableState, command: cmd.Command, now: str = "") -> bool: ...


def engine_for(game: str, mode: str = "bare", authorizer: Authorizer = default_authorizer,
               dice_registry: DiceRegistry | None = None) -> Decider:
    """The engine for a game in a mode."""
    if mode == "bare":
        return engine_of(game, authorizer)
    if mode not in MODES:
        raise InvalidInput(f"no table mode {mode!r} (live, electronic or bare)",
                           rule="table.mode")
    return ProcedureEngine(engine_of(game, by_matrix), dice_registry)


def _table_events(events: Iterable[envelope.Event]) -> Iterable[ev.Event]:
    for event in events:
        if not isinstance(event, ev.Event):
            raise InvalidInput(f"{event.kind} is not a table event", rule="events.log")
        yield event


class Table(CommandMethods):
    """One table: its engine, its state and its log; a method per catalogued command
    (``CommandMethods``, generated from the catalogue) besides ``do(name, ...)``."""

    def __init__(self, engine: Decider, *, clock: Clock | None = None,
                 sink: Sink | None = None,
                 automations: Iterable[Automation] | None = None,
                 betting_seconds: int = BETTING_SECONDS) -> None:
        self.engine = engine
        self.state = TableState()
        self.clock: Clock = clock or SystemClock()
        self.sink = sink
        self._held: list[ev.Event] | None = None
        self.log: list[ev.Event] = []
        """Every event applied, in order; none once ``keep_no_log`` (the log is a store's)."""
        self.keeps_log = True
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
            self.assign(person, staff_role, actor=actor, role=role)

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
        return self.engine.can(self.state, command, self.now())

    def execute(self, command: cmd.Command) -> list[ev.Event]:
        """Decide and apply ``command``, then whatever the table's automations make due."""
        events = self._execute(command)
        return events + self.automate()

    @contextmanager
    def holding(self) -> Iterator[list[ev.Event]]:
        """Commands executed inside are applied, their events held in the list given instead
        of handed to the sink: the caller commits them all at once (a pipeline's batch)."""
        held: list[ev.Event] = []
        saved, self._held = self._held, held
        try:
            yield held
        finally:
            self._held = saved

    def _execute(self, command: cmd.Command) -> list[ev.Event]:
        events = self.decide(command)
        if self._held is not None:
            self._held.extend(events)
        elif self.sink is not None:
            self.sink(events)  # durable before applied: an acknowledged command is never lost
        self._apply(events)
        return events

    def keep_no_log(self) -> None:
        """Hold no events from now on, and let go of those held: for a table whose log is
        a store's (``store.DurableTable``). A server's table would otherwise hold every
        event of its life in memory, growing with its history, and each one would be
        counted and scanned by the garbage collector as it aged.

        >>> t = Table.open("pa-craps", "t1")
        >>> len(t.log)
        1
        >>> t.keep_no_log()
        >>> [e.kind for e in t.join("ann")], t.log, t.state.seq
        (['PlayerJoined'], [], 2)
        """
        self.keeps_log = False
        self.log = []

    def _apply(self, events: Iterable[ev.Event]) -> None:
        log = self.log if self.keeps_log else None
        for event in events:
            before = self.state.phase
            apply(self.state, event)
            if log is not None:
                log.append(event)
            if self.state.phase is Phase.BETTING and before is not Phase.BETTING:
                self.betting_opened_at = event.at

    def command(self, name: str, *, actor: str | None = None, role: Role | None = None,
                **fields: object) -> cmd.Command:
        """The catalogued command ``name`` with ``fields``: a roll given as ``3-4`` or drawn
        from a dice source, sequences as tuples, a field left as None that the catalogue
        lets the table supply (``Method.defaults``) supplied; given by ``actor``/``role``, or
        by default by whoever at this table gives it (``giver``)."""
        entry = CATALOGUE.named(name)
        unknown = [f for f in fields if f not in entry.fields]
        if unknown:
            raise InvalidInput(f"{name} has no field {', '.join(unknown)} (fields: "
                               f"{', '.join(entry.fields) or 'none'})", rule="commands")
        values = self._values(entry, dict(fields))
        a, r = self.giver(entry, values, actor, role)
        try:
            return entry.command(actor=a, role=r, **values)
        except TypeError as e:  # a field it needs is missing
            raise InvalidInput(f"{name}: {e}", rule="commands") from None

    def do(self, name: str, *, actor: str | None = None, role: Role | None = None,
           **fields: object) -> list[ev.Event]:
        """Give any catalogued command by its name (``do("no-more-bets")``)."""
        return self.execute(self.command(name, actor=actor, role=role, **fields))

    DEFAULTS: Mapping[str, Callable[[Table], object]] = {
        "offered-pair": lambda t: tuple(t.procedure.offered[:2]),
        "shaker-dealer": lambda t: next(iter(t.procedure.people_in(Role.DEALER)), None)
        if t.state.variant.has_shaker else None,
    }
    """What the table supplies for a field left out, by the name the catalogue gives it:
    the first two dice offered (a shooter selecting), the dealer as witness of the dice
    loaded into a shaker."""

    def _values(self, entry: Entry, values: dict[str, object]) -> dict[str, object]:
        rolls, tuples, defaults, special = _special_fields(entry)
        for name in special.intersection(values):
            value = values[name]
            if (value is None or value == ()) and name in defaults:
                values[name] = self.DEFAULTS[defaults[name]](self)
            elif name in rolls and isinstance(value, str):
                values[name] = Roll.parse(value)
            elif name in rolls and hasattr(value, "next_roll"):  # a DiceSource
                source = typing.cast(DiceSource, value)
                values[name] = source.next_roll()
                if values.get("source", "manual") == "manual":
                    values["source"] = source.kind.value
            elif name in tuples and isinstance(value, list | tuple):
                values[name] = tuple(value)
        return values

    def giver(self, entry: Entry, values: Mapping[str, object], actor: str | None = None,
              role: Role | None = None) -> tuple[str, Role]:
        """Who gives ``entry``'s command by default: the table's own clock (no authority),
        the player it concerns where players may give it (the one named, the bet's owner,
        or the one the dice or the shaker wait on), else someone here allowed to."""
        if actor is not None and role is not None:
            return actor, role
        if entry.authority is None:
            return actor or "table", role or Role.SYSTEM
        if Role.PLAYER.value in self.pack.get(entry.authority, ()):
            player = self._concerned(values)
            if player is not None:
                return actor or player, role or Role.PLAYER
        found_actor, found_role = self.who(entry.command)
        return actor or found_actor, role or found_role

    def _concerned(self, values: Mapping[str, object]) -> str | None:
        player, bet = values.get("player"), values.get("bet")
        if isinstance(player, str):
            return player
        if isinstance(bet, str):
            return self.state.bets[bet].player if bet in self.state.bets else ""
        p = self.procedure
        return p.offer_to or p.shooter or p.shaker_holder

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
            out += self.no_more_bets(actor="table", role=Role.SYSTEM)
        if Automation.CSPRNG_ROLL in self.automations and self.phase is Phase.CLOSED \
                and (close_at is not None or out):
            out += self.roll(CsprngDice(), actor="table", role=Role.SYSTEM)
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
        from dicetable.table.procedure import dice_expired

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

    # -- conveniences over the command methods ------------------------------------------
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

    def odds_bases(self, player: str, bets: Iterable[str]) -> list[str]:
        """Which of ``bets`` ``player`` may put odds behind now, whatever the amount."""
        bets = list(bets)
        if not bets:
            return []  # nothing to ask the engine (a player who only watches)
        engine = self.engine
        if isinstance(engine, ProcedureEngine):
            return engine.odds_bases(self.state, player, bets, self.now())
        if isinstance(engine, Engine):
            return engine.odds_bases(self.state, player, bets)
        return []

    def odds(self, player: str, base: str, amount: int) -> str:
        """Odds behind the line or put bet ``base`` (the ``odds`` wager of ``place-bet``)."""
        return self.bet(player, "odds", amount, base=base)

    def settle(self, *, actor: str | None = None, role: Role | None = None) -> list[ev.Event]:
        """The dealer's chores left, in order: collect losers, pay winners, complete the roll.

        (Where the table automates them, they are done already and this does nothing.)
        """
        events: list[ev.Event] = []
        for command in self.settle_steps(actor=actor, role=role):
            events += self.execute(command)
        return events

    def settle_steps(self, *, actor: str | None = None, role: Role | None = None
                     ) -> Iterator[cmd.Command]:
        """``settle``'s commands, each made once the one before it is executed (what a
        pipeline decides for a script's or a command line's ``settle``)."""
        a, r = self._by(cmd.CollectLosers, actor, role)
        if not chores_left(self.state) and Automation.COMPLETE_ROLL not in self.automations:
            raise ProcedureViolation("there is no roll to settle", rule="settlement.order")
        yield from settle_commands(self.state, a, r)

    # -- live procedure conveniences ------------------------------------------------------------
    def new_shooter(self, patron: str, first: str | None = None,
                    second: str | None = None) -> None:
        """Offer the bowl to ``patron`` and have them select two dice (the first two offered
        unless named)."""
        self.offer_dice(patron)
        self.select_dice(*(s for s in (first, second) if s), actor=patron, role=Role.PLAYER)

    def shaker_round(self, roll: str | Roll | None, *, shakes: int = 3,
                     facts: Sequence[str] = ()) -> list[ev.Event]:
        """Props & Hops, live: no more bets, offer, shake, return, uncover, read, settle."""
        from dicetable.table.procedure import next_shaker_holder

        dealer, role = self.who(tcmd.OfferShaker)
        p = self.procedure
        holder = p.shaker_holder if p.shaker_holder else next_shaker_holder(
            self.state, None, first=True)
        if holder is None:  # refused before anything is done, not halfway through the round
            raise ProcedureViolation("no seated player to offer the shaker to",
                                     rule="shaker.first_to",
                                     citation=self.pack.cite("shaker.first_to"))
        events = self.no_more_bets(actor=dealer, role=role)
        events += self.offer_shaker(holder, actor=dealer, role=role)
        events += self.player_shake(shakes, actor=holder, role=Role.PLAYER)
        events += self.return_shaker(actor=holder, role=Role.PLAYER)
        events += self.uncover(actor=dealer, role=role)
        events += self.roll(roll, facts=facts)
        if chores_left(self.state):
            events += self.settle()
        events += self.shake(actor=dealer, role=role)
        return events


_Special = tuple[frozenset[str], frozenset[str], dict[str, str], frozenset[str]]
_SPECIAL: dict[str, _Special] = {}


def _special_fields(entry: Entry) -> _Special:
    """Of ``entry``'s fields: those that hold a roll, a tuple, a table default (by field), and
    all of these (the others are taken as given)."""
    found = _SPECIAL.get(entry.name)
    if found is None:
        hints = type_hints(entry.command)
        rolls = frozenset(n for n, h in hints.items()
                          if h is Roll or Roll in typing.get_args(h))
        tuples = frozenset(n for n, h in hints.items() if typing.get_origin(h) is tuple)
        defaults = dict(entry.method.defaults) if entry.method is not None else {}
        found = _SPECIAL[entry.name] = (rolls, tuples, defaults,
                                        rolls | tuples | frozenset(defaults))
    return found
