"""The command catalogue: every command declared once (DESIGN.md, one declaration per concept).

An entry names a command, its fields (the command's dataclass), the rule that lists the roles
that may give it (read from the table's pack), its script verb with a parser *and* a formatter
that round-trip, and its help. The engine's handlers, the permission matrix, the
table-script verbs, the server's routes and the ``Table`` facade all derive from it; adding a
command is adding an entry here (or in ``dicetable.table.catalogue`` for the procedure's
commands) plus its handler: a method marked ``@decides(Command)``.

>>> e = CATALOGUE.named("place-bet")
>>> e.verb, e.authority
('bet', 'authority.wager')
>>> v = CATALOGUE.by_verb["bet"]
>>> c = v.parse_words(None, "alice", Role.PLAYER, ["pass", "10"], {})
>>> c  # doctest: +ELLIPSIS
PlaceBet(actor='alice', role=<Role.PLAYER: 'player'>, player='alice', wager='pass', ...)
>>> CATALOGUE.verb_for(c).verb, v.format_words(None, c)
('bet', ['pass', '10'])

Game variants: how Craps, Mini-Craps, Crapless Craps and Props & Hops differ, as hooks
(python-chess style).

Every difference between the games lives in its variant, declared in the game's own module
(``dicetable.games.craps``, ``dicetable.games.crapless``, ``dicetable.games.props_hops``):
its facts (shooter or shaker, puck, felt, point numbers, what ends a round), which the pages
read from the view (``facts``); what its pack must hold (the rules it needs, the wagers it
lacks), which ``dicetable.games.packs`` checks at pack load and from which the wagers compile;
and the live procedure's hooks (``before_throw`` ...). Everything else asks the
variant of the table (``variant_of(state.game)``) and never compares the game's name, in
Python or JavaScript; ``tools/check_game_names.py`` keeps it so.

>>> variant_of("props-and-hops").has_shaker, variant_of("mini-craps").has_shooter
(True, True)
>>> variant_of("baccarat")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: no game variant 'baccarat' (crapless-craps, ...) [rule game]
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Protocol, TypeVar

from dicetable.core.dice import POINTS, Roll
from dicetable.core.errors import InvalidInput, one_named
from dicetable.core.events import type_hints
from dicetable.core.money import parse_money
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.phase import Phase
from dicetable.rules.model import RulePack


class ScriptContext(Protocol):
    """What a verb's parser or formatter may ask of the script around it."""

    def bet_ref(self, ref: str) -> str:
        """The bet id a script's name for a bet stands for."""
        ...

    def bowl(self) -> tuple[str, ...]:
        """The dice in the bowl now (a dice offer without serials offers them all)."""
        ...


Parse = Callable[[ScriptContext | None, list[str], dict[str, str]], dict[str, Any]]
"""Script words (plain arguments, ``key=value`` options) -> the command's own fields."""
Format = Callable[[ScriptContext | None, Any], list[str]]
"""A command -> the script words after its verb (``Parse`` reads them back)."""


ACTOR = "__actor__"
"""The option under which a parser finds the line's actor."""


def dollars(cents: int) -> str:
    """Cents as a script's amount: ``10``, ``12.50``."""
    whole, rest = divmod(cents, 100)
    return str(whole) if not rest else f"{whole}.{rest:02d}"


def _ref(ctx: ScriptContext | None, ref: str) -> str:
    return ctx.bet_ref(ref) if ctx is not None else ref


def _no_args(ctx: ScriptContext | None, a: list[str], o: dict[str, str]) -> dict[str, Any]:
    if a:
        raise InvalidInput(f"this verb takes no arguments, not {' '.join(a)!r}",
                           rule="script.syntax")
    return {}


def _nothing(ctx: ScriptContext | None, c: Any) -> list[str]:
    return []


MAX_TEXT = 200
"""Characters in any text field of a command given as JSON, unless its route declares
fewer (industry-default: names, codes and rolls are a few dozen)."""
MAX_ITEM_TEXT = 64
"""Characters in each text of a list field (serials, throw facts: industry-default)."""
MAX_ITEMS = 100
"""Items in a list field, unless its route declares fewer (industry-default)."""


@dataclass(frozen=True)
class Field:
    """A field of a readable route's JSON body: the command field it fills, and its limits
    (the server turns these into the request model OpenAPI documents)."""

    name: str
    """The command's field."""
    json: str | None = None
    """Its name in the body, where the route spells it otherwise (``faces`` for ``roll``)."""
    max_length: int | None = None
    min_length: int | None = None
    gt: int | None = None
    ge: int | None = None
    lt: int | None = None
    le: int | None = None
    description: str = ""
    examples: tuple[Any, ...] = ()
    default: tuple[Any, ...] = ()
    """``(value,)``: the body's default, where it differs from the command's."""
    optional: bool = False
    """May be left out although the command needs it (a route that gives several commands
    gives each one whose fields the body carries)."""

    @property
    def key(self) -> str:
        return self.json or self.name


@dataclass(frozen=True)
class Route:
    """A readable route, ``METHOD /api/tables/{table_id}/<path>``, giving one command (or, in
    order, each of several whose fields the body carries)."""

    path: str
    """After ``/api/tables/{table_id}/``; ``{field}`` parts fill the command's fields."""
    commands: tuple[str, ...]
    method: str = "POST"
    body: tuple[Field, ...] | None = None
    """The body's fields (None: every field of the command, as the generic route takes them)."""
    from_caller: tuple[str, ...] = ()
    """Fields the caller's own account fills when the body leaves them out (``player``)."""
    help: str = ""

    @property
    def path_fields(self) -> tuple[str, ...]:
        return tuple(part[1:-1] for part in self.path.split("/") if part.startswith("{"))


@dataclass(frozen=True)
class Method:
    """The ``Table`` facade's method for a command (``dicetable.table.command_methods``,
    generated from these by ``tools/gen_table_methods.py``)."""

    name: str
    args: tuple[str, ...] = ()
    """The fields taken by position, in order (the others are keyword-only)."""
    varargs: str | None = None
    """A tuple field taken as ``*args`` (``bring_dice(*serials)``)."""
    returns_bet: bool = False
    """Return the id of the bet the command places instead of its events."""
    defaults: tuple[tuple[str, str], ...] = ()
    """(field, name of a value the table works out when the field is left out): ``bowl``,
    ``offered-pair``, ``shaker-dealer`` (``Table.DEFAULTS``)."""


@dataclass(frozen=True)
class Entry:
    """One command, declared once."""

    command: type[cmd.Command]
    name: str
    """The command's name in the API (``POST /api/tables/{id}/commands``)."""
    authority: str | None
    """The pack rule that lists the roles that may give it (None: the table's own clock)."""
    help: str
    verb: str | None = None
    """Its table-script verb (None: not written in scripts)."""
    parse: Parse = _no_args
    format: Format = _nothing
    route: str | Route | None = None
    """Its readable route: a path (``POST /api/tables/{id}/<route>``, the command's fields as
    the body) or a ``Route``; None: only the generic ``POST /api/tables/{id}/commands``."""
    method: Method | None = None
    """Its ``Table`` method (None: ``Table.do(name, ...)`` only)."""
    automatable: bool = False
    """An electronic table's own automation (role ``system``) may give it."""
    tags: tuple[str, ...] = ()
    since: int = 1
    """The table-script format version that brought its verb."""
    records: type[ev.Event] | None = None
    """The event that records the command by itself, carrying its fields under their own
    names: a log's event of that kind is written back as this command, with the event's values
    of them (a field the event does not carry keeps its default; ``script export``)."""

    @functools.cached_property
    def fields(self) -> tuple[str, ...]:
        """The command's own fields (besides actor and role)."""
        return tuple(f.name for f in dataclasses.fields(self.command)
                     if f.name not in ("actor", "role"))

    @functools.cached_property
    def field_set(self) -> frozenset[str]:
        """``fields``, to look names up in."""
        return frozenset(self.fields)

    def from_json(self, actor: str, role: Role, data: Mapping[str, Any]) -> cmd.Command:
        """Build the command from JSON fields (the API's generic route), checking types."""
        if not self.field_set.issuperset(data):
            unknown = data.keys() - self.field_set
            raise InvalidInput(f"{self.name} has no field {', '.join(sorted(unknown))} "
                               f"(fields: {', '.join(self.fields) or 'none'})",
                               rule="api.request")
        hints = type_hints(self.command)
        values = {}
        for k, v in data.items():
            hint, kind = hints[k], type(v)
            # the common case (an int, a short text, for a field of that type) without a
            # call: every field of every command
            values[k] = v if hint is kind and (kind is int or (
                kind is str and len(v) <= MAX_TEXT)) else _coerce(self.name, k, hint, v)
        try:
            return self.command(actor=actor, role=role, **values)
        except TypeError as e:  # a required field is missing
            raise InvalidInput(f"{self.name}: {e}", rule="api.request") from None


@functools.cache
def _nullable(hint: Any) -> bool:
    """May a field of type ``hint`` be None?

    >>> _nullable(str | None), _nullable(str)
    (True, False)
    """
    return isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)


def _coerce(command: str, name: str, hint: Any, value: Any) -> Any:
    """JSON -> a command field of type ``hint`` (strings, ints, rolls, tuples, fractions);
    ``Entry.from_json`` takes the common case, a value of the field's own type, itself."""
    if value is None and _nullable(hint):
        return None  # a field left out, as the checks below would find it
    where = f"{command}.{name}"
    # Bounded before anything reads it: no field's parse is given a long text.
    if isinstance(value, str) and len(value) > MAX_TEXT:
        raise InvalidInput(f"{where} is at most {MAX_TEXT} characters, not {len(value)}",
                           rule="api.field_length")
    if isinstance(value, list) and (len(value) > MAX_ITEMS or any(
            isinstance(v, str) and len(v) > MAX_ITEM_TEXT for v in value)):
        raise InvalidInput(f"{where} holds at most {MAX_ITEMS} items of at most "
                           f"{MAX_ITEM_TEXT} characters", rule="api.field_length")
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if value is None:
        if type(None) in options:
            return None
        raise InvalidInput(f"{where} may not be null", rule="api.request")
    for option in options:
        if option is type(None):
            continue
        origin = typing.get_origin(option)
        if origin is tuple:
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return tuple(value)
            continue
        if option is Roll and isinstance(value, str):
            return Roll.parse(value)
        if option is Fraction and isinstance(value, str | int) and not isinstance(value, bool):
            try:
                return Fraction(value)
            except (ValueError, ZeroDivisionError):
                raise InvalidInput(f"{where}: {value!r} is not a fraction",
                                   rule="api.request") from None
        if option is Role and isinstance(value, str):
            try:
                return Role(value)
            except ValueError:
                raise InvalidInput(f"{where}: no role {value!r}", rule="api.request") from None
        if option is bool and isinstance(value, bool):
            return value
        if option is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if option is str and isinstance(value, str):
            return value
    raise InvalidInput(f"{where}: {value!r} is not a {hint}", rule="api.request")


@dataclass(frozen=True)
class Verb:
    """A table-script verb: the command it writes, its parser and its formatter."""

    verb: str
    entry: Entry
    parse: Parse
    format: Format
    claims: Callable[[Any], bool] | None = None
    """For a second verb of one command (``odds`` for a ``PlaceBet`` on odds): which
    commands it writes. None: the command's own verb, for any command of its class."""

    def parse_words(self, ctx: ScriptContext | None, actor: str, role: Role,
                    args: list[str], opts: dict[str, str]) -> cmd.Command:
        return self.entry.command(actor=actor, role=role,
                                  **self.parse(ctx, args, {**opts, ACTOR: actor}))

    def format_words(self, ctx: ScriptContext | None, command: cmd.Command) -> list[str]:
        return self.format(ctx, command)


@dataclass
class Catalogue:
    """The entries, by command class, name and verb."""

    entries: list[Entry] = field(default_factory=list)
    by_command: dict[type[cmd.Command], Entry] = field(default_factory=dict)
    by_name: dict[str, Entry] = field(default_factory=dict)
    by_verb: dict[str, Verb] = field(default_factory=dict)
    by_record: dict[type[ev.Event], Entry] = field(default_factory=dict)
    """By the event that records the command by itself (``Entry.records``)."""
    routes: list[Route] = field(default_factory=list)
    """Every readable route, in declaration order."""

    def add(self, entry: Entry) -> Entry:
        for index, key in ((self.by_command, entry.command), (self.by_name, entry.name)):
            if key in index:
                raise ValueError(f"{key} is declared twice in the command catalogue")
        if entry.records in self.by_record:
            raise ValueError(f"{entry.records} records two commands in the catalogue")
        self.entries.append(entry)
        self.by_command[entry.command] = entry
        self.by_name[entry.name] = entry
        if entry.records is not None:
            self.by_record[entry.records] = entry
        if entry.verb is not None:
            self.add_verb(Verb(entry.verb, entry, entry.parse, entry.format))
        if entry.route is not None:
            self.add_route(entry.route if isinstance(entry.route, Route) else Route(
                entry.route, (entry.name,), help=entry.help,
                from_caller=("player",) if "player" in entry.fields else ()))
        return entry

    def add_route(self, route: Route) -> Route:
        taken = [r for r in self.routes if (r.path, r.method) == (route.path, route.method)]
        if taken:
            raise ValueError(f"{route.method} {route.path} is declared twice in the catalogue")
        unknown = [n for n in route.commands if n not in self.by_name]
        if unknown:
            raise ValueError(f"route {route.path} names no catalogued {', '.join(unknown)}")
        self.routes.append(route)
        return route

    def add_verb(self, verb: Verb) -> Verb:
        if verb.verb in self.by_verb:
            raise ValueError(f"verb {verb.verb!r} is declared twice in the command catalogue")
        self.by_verb[verb.verb] = verb
        return verb

    def verb_for(self, command: cmd.Command) -> Verb:
        """The verb that writes ``command`` in a script."""
        own = [v for v in self.by_verb.values() if v.entry.command is type(command)]
        for v in own:
            if v.claims is not None and v.claims(command):
                return v
        for v in own:
            if v.claims is None:
                return v
        raise InvalidInput(f"{type(command).__name__} has no script verb", rule="script.verb")

    def __iter__(self) -> typing.Iterator[Entry]:
        return iter(self.entries)

    def of(self, command: type[cmd.Command] | cmd.Command) -> Entry:
        kind = command if isinstance(command, type) else type(command)
        return self.by_command[kind]

    def recorded_by(self, event: type[ev.Event]) -> Entry | None:
        """The command an event of kind ``event`` records by itself, if any."""
        return self.by_record.get(event)

    def named(self, name: str) -> Entry:
        found = self.by_name.get(name)  # the known names sorted only for a refusal
        return found if found is not None else one_named(
            self.by_name, name, "command", "commands", sorted(self.by_name), rule="commands")


CATALOGUE = Catalogue()
"""Every command of a table: the game's here, the procedure's added by dicetable.table."""


def declare(command: type[cmd.Command], name: str, authority: str | None, help: str,
            **kw: Any) -> Entry:
    return CATALOGUE.add(Entry(command, name, authority, help, **kw))


C = TypeVar("C", bound=cmd.Command)
Owner = TypeVar("Owner")
State = TypeVar("State")
Out = TypeVar("Out")
_DECIDES = "_decides_command"


class Decides(Protocol[C]):
    def __call__(self, method: Callable[[Owner, State, C, Out], None]
                 ) -> Callable[[Owner, State, C, Out], None]: ...


_NEEDS = "_decides_needs"


def decides(command: type[C], *, needs: Callable[[Any], bool] | None = None) -> Decides[C]:
    """Mark a method of an engine (or of the procedure) as the one that decides ``command``:
    mypy checks that the method takes that command, and a command that is not catalogued is
    refused when the class is defined.

    ``needs`` is what the table's state must be for the method to accept the command at all
    (the settlement step, the phase), asked of the state without raising: a control that asks
    whether the command would be taken (``can``) is answered no at once when it fails, without
    building the refusal that deciding would raise. It must never be false where the method
    would accept."""
    if command not in CATALOGUE.by_command:
        raise TypeError(f"{command.__name__} is not in the command catalogue")

    def mark(method: Callable[[Owner, State, C, Out], None]
             ) -> Callable[[Owner, State, C, Out], None]:
        setattr(method, _DECIDES, command)
        if needs is not None:
            setattr(method, _NEEDS, needs)
        return method

    return mark


def needs_of(owner: type) -> dict[type[cmd.Command], Callable[[Any], bool]]:
    """What the state must be for the marked methods of class ``owner`` to accept their
    commands (``decides(..., needs=...)``), by command."""
    return {command: getattr(method, _NEEDS) for command, method in _marked(owner).items()
            if hasattr(method, _NEEDS)}


def decided_by(owner: type) -> dict[type[cmd.Command], str]:
    """The commands the methods of class ``owner`` (and its bases) decide, with the method's
    name (a subclass's override of a marked method decides the same command)."""
    return {command: method.__name__ for command, method in _marked(owner).items()}


def _marked(owner: type) -> dict[type[cmd.Command], Callable[..., None]]:
    """The marked methods of class ``owner`` (and its bases), by the command each decides:
    the function objects themselves, never looked up again by name."""
    out: dict[type[cmd.Command], Callable[..., None]] = {}
    for klass in reversed(owner.__mro__):
        for value in vars(klass).values():
            command = getattr(value, _DECIDES, None)
            if command is not None:
                out[command] = value
    return out


def require_handlers(owner: type, kinds: Iterable[Entry]) -> None:
    """Refuse a class that leaves one of the commands of ``kinds`` without a handler."""
    missing = sorted(e.name for e in kinds if e.command not in decided_by(owner))
    if missing:
        raise TypeError(f"{owner.__name__} decides no {', '.join(missing)}")


def handlers(owner: object, kinds: Iterable[Entry]
             ) -> dict[type[cmd.Command], Callable[..., None]]:
    """``owner``'s handlers of the commands of ``kinds``, by command class; a method marked
    for a command not among ``kinds`` is an error (it could never be given)."""
    wanted = {e.command for e in kinds}
    out: dict[type[cmd.Command], Callable[..., None]] = {}
    for command, method in _marked(type(owner)).items():
        if command not in wanted:
            raise TypeError(f"{type(owner).__name__}.{method.__name__} decides "
                            f"{command.__name__}, which is not one of its commands")
        out[command] = types.MethodType(method, owner)
    return out


def declare_by_name(command: type[cmd.Command], name: str, authority: str | None, help: str,
                    **kw: Any) -> Entry:
    """``declare`` a command that takes no arguments and is given by its name alone
    everywhere: its script verb, its route (``POST /api/tables/{id}/<name>``) and its
    ``Table`` method (the name in snake case)."""
    return declare(command, name, authority, help, verb=name, route=name,
                   method=Method(name.replace("-", "_")), **kw)


def declare_route(route: Route) -> Route:
    """A readable route that gives several catalogued commands (``PATCH bets/{bet}``)."""
    return CATALOGUE.add_route(route)


def declare_verb(verb: str, command: type[cmd.Command], parse: Parse, format: Format,
                 claims: Callable[[Any], bool] | None = None) -> Verb:
    """A further script verb for a catalogued command."""
    return CATALOGUE.add_verb(Verb(verb, CATALOGUE.of(command), parse, format, claims))




# -- parsers and formatters shared by several verbs --------------------------------------------
def _working(args: list[str]) -> bool | None:
    return True if "on" in args else False if "off" in args else None


def _player_opt(c: Any) -> list[str]:
    return [f"for={c.player}"] if c.player != c.actor else []


def _parse_bet(ctx: ScriptContext | None, a: list[str], o: dict[str, str]) -> dict[str, Any]:
    return {"player": o.get("for") or o[ACTOR], "wager": a[0],
            "amount": parse_money(a[1]), "working": _working(a[2:]),
            "medium": o.get("with", "chips"), "chip_set": o.get("set", "")}


def _format_bet(ctx: ScriptContext | None, c: Any) -> list[str]:
    words = [c.wager, dollars(c.amount)]
    if c.working is not None:
        words.append("on" if c.working else "off")
    if c.medium != "chips":
        words.append(f"with={c.medium}")
    return words + _chip_set_opt(c) + _player_opt(c)


def _chip_set_opt(c: Any) -> list[str]:
    return [f"set={c.chip_set}"] if c.chip_set else []


def _parse_odds(ctx: ScriptContext | None, a: list[str], o: dict[str, str]) -> dict[str, Any]:
    return {"player": o.get("for") or o[ACTOR], "wager": "odds",
            "base": _ref(ctx, a[0]), "amount": parse_money(a[1]), "chip_set": o.get("set", "")}


def _format_odds(ctx: ScriptContext | None, c: Any) -> list[str]:
    return [str(c.base), dollars(c.amount), *_chip_set_opt(c), *_player_opt(c)]


def _parse_roll(ctx: ScriptContext | None, a: list[str], o: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"roll": None if a[0] == "-" else Roll.parse(a[0]),
                           "facts": tuple(a[1:]), "source": o.get("source", "manual"),
                           "distance": Fraction(o["distance"]) if "distance" in o else None,
                           "thrower": o.get("thrower")}
    if "serials" in o:
        out["serials"] = tuple(s for s in o["serials"].split(",") if s)
    return out


def _format_roll(ctx: ScriptContext | None, c: Any) -> list[str]:
    words = [str(c.roll) if c.roll is not None else "-", *c.facts]
    if c.source != "manual":
        words.append(f"source={c.source}")
    if c.distance is not None:
        words.append(f"distance={c.distance}")
    if c.thrower is not None:
        words.append(f"thrower={c.thrower}")
    if c.serials:
        words.append("serials=" + ",".join(c.serials))
    return words


def _bet_only(ctx: ScriptContext | None, a: list[str], o: dict[str, str]) -> dict[str, Any]:
    return {"bet": _ref(ctx, a[0])}


def _format_bet_only(ctx: ScriptContext | None, c: Any) -> list[str]:
    return [c.bet]


# -- the game's commands -------------------------------------------------------------------------
_PLAYER = Field("player", max_length=64)
_CENTS = Field("amount", gt=0, lt=10**12, description="cents")
_CHIPS = Route("", (), body=(_PLAYER, _CENTS))
_CHIP_SET = Field("chip_set", max_length=32,
                  description="the chip set the chips are from (a retired set is refused)")
_BUY = Route("chips", ("buy-chips",), body=(_PLAYER, _CENTS, _CHIP_SET))

declare(cmd.OpenTable, "open-table", "authority.open_table",
        "Open the table under a rules pack (written as a script's header).")
declare(cmd.JoinTable, "join", "authority.seat", "A player joins, at a seat or standing.",
        verb="join",
        parse=lambda x, a, o: {"player": a[0], "seat": int(a[1]) if len(a) > 1 else None},
        format=lambda x, c: [c.player] + ([str(c.seat)] if c.seat is not None else []),
        route=Route("join", ("join",), body=(Field("seat", ge=1, le=30),),
                    from_caller=("player",)),
        method=Method("join", ("player", "seat")), tags=("players",), records=ev.PlayerJoined)
declare(cmd.LeaveTable, "leave", "authority.seat", "A player leaves the table.",
        verb="leave", parse=lambda x, a, o: {"player": a[0]}, format=lambda x, c: [c.player],
        route="leave", method=Method("leave", ("player",)), tags=("players",),
        records=ev.PlayerLeft)
declare(cmd.BuyChips, "buy-chips", "authority.chips", "Sell a player chips (cents).",
        verb="buy", parse=lambda x, a, o: {"player": a[0], "amount": parse_money(a[1]),
                                           "chip_set": o.get("set", "")},
        format=lambda x, c: [c.player, dollars(c.amount), *_chip_set_opt(c)],
        automatable=True,
        route=_BUY,
        method=Method("buy_in", ("player", "amount")), tags=("dealer",), records=ev.ChipsBought)
declare(cmd.CashOut, "cash-out", "authority.chips", "Cash a player's chips out.",
        verb="cashout", parse=lambda x, a, o: {"player": a[0], "amount": parse_money(a[1])},
        format=lambda x, c: [c.player, dollars(c.amount)], automatable=True,
        route=dataclasses.replace(_CHIPS, path="cash-out", commands=("cash-out",)),
        method=Method("cash_out", ("player", "amount")), tags=("dealer",),
        records=ev.ChipsCashedOut)
declare(cmd.PlaceBet, "place-bet", "authority.wager",
        "Place a wager (odds: name the line or put bet it stands behind).",
        verb="bet", parse=_parse_bet, format=_format_bet,
        route=Route("bets", ("place-bet",), body=(
            Field("wager", max_length=32, examples=("pass", "place6", "hop2-3")), _CENTS,
            Field("base", max_length=16, description="odds: the line bet's id"),
            Field("working"),
            Field("player", max_length=64, description="staff booking for a player"),
            _CHIP_SET),
            from_caller=("player",)),
        method=Method("bet", ("player", "wager", "amount"), returns_bet=True), tags=("wagers",))
declare_verb("odds", cmd.PlaceBet, _parse_odds, _format_odds, claims=lambda c: c.base is not None)
declare(cmd.ChangeBet, "change-bet", "authority.wager",
        "Increase or reduce a wager (cents).", verb="change",
        parse=lambda x, a, o: {"bet": _ref(x, a[0]), "amount": parse_money(a[1])},
        format=lambda x, c: [c.bet, dollars(c.amount)], method=Method("change", ("bet", "amount")),
        tags=("wagers",), records=ev.BetChanged)
declare(cmd.RemoveBet, "remove-bet", "authority.wager", "Take a wager down.",
        verb="remove", parse=_bet_only, format=_format_bet_only,
        route=Route("bets/{bet}", ("remove-bet",), method="DELETE", body=()),
        method=Method("remove", ("bet",)), tags=("wagers",))
declare(cmd.SetWorking, "set-working", "authority.wager",
        "Call a wager on or off.", verb="working",
        parse=lambda x, a, o: {"bet": _ref(x, a[0]), "working": {"on": True, "off": False}[a[1]]},
        format=lambda x, c: [c.bet, "on" if c.working else "off"],
        method=Method("set_working", ("bet", "working")), tags=("wagers",),
        records=ev.BetWorkingSet)
declare_route(Route("bets/{bet}", ("change-bet", "set-working"), method="PATCH", body=(
    dataclasses.replace(_CENTS, optional=True), Field("working", optional=True)),
    help="Change a wager's amount, its working status, or both."))
# Format 1's shorter spellings, read but never written (``working`` writes them).
declare_verb("on", cmd.SetWorking, lambda x, a, o: {"bet": _ref(x, a[0]), "working": True},
             lambda x, c: [c.bet], claims=lambda c: False)
declare_verb("off", cmd.SetWorking, lambda x, a, o: {"bet": _ref(x, a[0]), "working": False},
             lambda x, c: [c.bet], claims=lambda c: False)
declare_by_name(cmd.CloseBetting, "no-more-bets", "authority.close_betting",
                "Announce 'no more bets'.", automatable=True, tags=("dealer",),
                records=ev.BettingClosed)
declare(cmd.RecordRoll, "roll", "authority.record_roll",
        "Record the throw: both faces (or '-' when unreadable) and the facts seen.",
        verb="roll", parse=_parse_roll, format=_format_roll, automatable=True,
        route=Route("roll", ("roll",), body=(
            Field("roll", json="faces", max_length=8, examples=("3-4",), default=(None,),
                  description="both faces; null when unreadable"),
            Field("facts", max_length=20), Field("distance", max_length=16, examples=("2/5",)),
            Field("thrower", max_length=64), Field("serials", max_length=3))),
        method=Method("roll", ("roll",)), tags=("dealer",), records=ev.DiceRolled)


def _parse_no_roll(ctx: ScriptContext | None, a: list[str], o: dict[str, str]
                   ) -> dict[str, Any]:
    return {"grounds": tuple(a),
            "observed": tuple(f for f in o.get("observed", "").split(",") if f)}


def _format_no_roll(ctx: ScriptContext | None, c: Any) -> list[str]:
    return [*c.grounds, *(["observed=" + ",".join(c.observed)] if c.observed else [])]


declare(cmd.CallNoRoll, "no-roll", "noroll.callers",
        "Call 'no roll' on the throw just made, naming the grounds (and any throw facts the "
        "caller saw that the recorded throw does not carry).", verb="no-roll",
        parse=_parse_no_roll, format=_format_no_roll,
        route=Route("no-roll", ("no-roll",), body=(
            Field("grounds", min_length=1, max_length=10),
            Field("observed", max_length=10, description="throw facts the caller saw that the "
                                                         "recorded throw does not carry"))),
        method=Method("call_no_roll", varargs="grounds"), tags=("dealer",), records=ev.NoRollCalled)
declare_by_name(cmd.CollectLosers, "collect", "authority.settle",
                "Collect the losing wagers (the first settlement chore).", automatable=True,
                tags=("dealer",), records=ev.LosersCollected)
declare_by_name(cmd.PayWinners, "pay", "authority.settle",
                "Pay the winning wagers (the second settlement chore).", automatable=True,
                tags=("dealer",), records=ev.WinnersPaid)
declare_by_name(cmd.MovePuck, "move-puck", "authority.settle",
                "Craps: come bets travel and the puck moves (the last settlement chore).",
                automatable=True, tags=("dealer",), records=ev.PuckMoved)
declare_by_name(cmd.CompleteRound, "complete-round", "authority.settle",
                "Props & Hops: the round is complete (the last settlement chore).",
                automatable=True, tags=("dealer",), records=ev.RoundCompleted)
declare_by_name(cmd.ReturnWagers, "return-wagers", "authority.settle",
                "After a no roll that returns the wagers (noroll.effect): give every wager "
                "back.", automatable=True, tags=("dealer",), since=3,
                records=ev.WagersReturned)

GAME_ENTRIES: tuple[Entry, ...] = tuple(CATALOGUE)
"""The game's own commands (decided by ``dicetable.games.engine``)."""


class DiceAtTable(Protocol):
    """What a variant's procedure hooks read of the table's live procedure
    (``dicetable.table.procedure.Procedure``)."""

    @property
    def dice(self) -> Mapping[str, str]: ...
    @property
    def shooter(self) -> str | None: ...
    @property
    def shooter_dice(self) -> tuple[str, ...]: ...
    @property
    def shaker(self) -> str: ...
    @property
    def dealer_shook(self) -> bool: ...
    def holds(self, person: str, role: Role) -> bool: ...


class Variant:
    """The hooks a game fills in. One instance per game name, registered by its module."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    has_shooter: ClassVar[bool] = False
    """Craps: a shooter is offered the dice and keeps them until a seven-out."""
    has_shaker: ClassVar[bool] = False
    """Props & Hops: a covered shaker, loaded in a dealer's presence, passed after a 7."""
    closed_rule: ClassVar[str] = "wagering.late_bets"
    """The rule that refuses a wager while betting is closed."""
    final_chore: ClassVar[type[cmd.Command]] = cmd.MovePuck
    """The last settlement chore of a roll."""
    round_ends: ClassVar[tuple[str, ...]] = ()
    """Event kinds that end a round (for recall)."""
    after_no_roll: ClassVar[Phase] = Phase.BETTING
    """Where the table stands after a no roll."""
    staffing_rule: ClassVar[str] = ""
    """The table-bank rule of the crew this game needs while it runs (58 Pa. Code
    § 465a.35(b)); "" when the bank packs set none."""
    has_puck: ClassVar[bool] = False
    """Craps: a point, marked by the puck, carries from roll to roll."""
    layout: ClassVar[str] = ""
    """Which felt the pages draw (``craps`` or ``props``); its numbers are ``points``."""
    final_chore_label: ClassVar[str] = ""
    """The last settlement chore, as the dealer's console names it."""
    points: ClassVar[tuple[int, ...]] = POINTS
    """The totals that become the point on the come-out (and on which a come bet travels);
    the rest of 2, 3, 11, 12 decide a line bet on the come-out. The line bets compile from
    them."""
    required_rules: ClassVar[frozenset[str]] = frozenset()
    """Rules every pack of this game defines."""
    not_offered: ClassVar[frozenset[str]] = frozenset()
    """Wager families the game does not have."""
    not_offered_codes: ClassVar[frozenset[str]] = frozenset()
    """Single wagers of an offered family the game does not have."""
    offer_references: ClassVar[frozenset[str]] = frozenset()
    """The seats of reference from which the dice are first offered (``shooter.first_offer``);
    empty where the game has no shooter."""

    def offers(self, family: str) -> bool:
        return family not in self.not_offered

    def offers_code(self, code: str, family: str) -> bool:
        return self.offers(family) and code not in self.not_offered_codes

    def next_point(self, point: int | None, roll: Roll) -> tuple[int | None, bool]:
        """The puck after ``roll`` and whether it was a seven-out (no puck: None, False)."""
        return None, False

    def round_label(self, hand: int, hand_rolls: int, round_no: int) -> str:
        return f"round {round_no}"

    # -- the live procedure's hooks (dicetable.table.procedure asks them, never the game) ---
    def before_throw(self, p: DiceAtTable, pack: RulePack) -> None:
        """Refuse a throw recorded before the dice are ready for it."""

    def before_close(self, p: DiceAtTable, pack: RulePack) -> None:
        """Refuse 'no more bets' before the dice are ready for the round."""

    def thrown(self, p: DiceAtTable, serials: tuple[str, ...], thrower: str | None,
               facts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The dice a recorded throw used (``serials``, or those in play) and its facts."""
        return serials, facts

    def dice_keepers(self, pack: RulePack) -> tuple[frozenset[Role], str]:
        """Who answers for the dice at the table, and how a refusal says so."""
        keepers = pack.roles("authority.dice")
        return keepers, ("nobody else here may handle them "
                         f"({', '.join(sorted(r.value for r in keepers))})")

    def check_brought(self, p: DiceAtTable, pack: RulePack, serials: tuple[str, ...],
                      witness: str | None, actor: str) -> None:
        """Refuse dice brought to the table in a way the game does not allow."""

    def dice_change_closed(self, phase: Phase) -> bool:
        """Whether the dice may not be changed in ``phase`` (a roll being settled)."""
        return phase is Phase.SETTLING

    def facts(self) -> dict[str, Any]:
        """What the pages need to know of the game, so none of them compares its name.

        >>> f = variant_of("props-and-hops").facts()
        >>> f["layout"], f["has_shaker"], f["round_ends"], f["final_chore"]["route"]
        ('props', True, ['RoundCompleted'], 'complete-round')
        """
        known = _FACTS.get(self.name)
        if known is not None:
            return dict(known)
        chore = CATALOGUE.of(self.final_chore)
        known = _FACTS[self.name] = {
                "name": self.name, "title": self.title, "has_shooter": self.has_shooter,
                "has_shaker": self.has_shaker, "has_puck": self.has_puck,
                "layout": self.layout, "points": list(self.points),
                "round_ends": list(self.round_ends),
                "final_chore": {"command": chore.name, "route": chore.route,
                                "label": self.final_chore_label}}
        return dict(known)


_REGISTRY: dict[str, Variant] = {}
_FACTS: dict[str, dict[str, Any]] = {}


def register(variant: Variant) -> Variant:
    """Declare a variant (its module calls this once)."""
    _REGISTRY[variant.name] = variant
    return variant


def known_variant(game: str) -> Variant | None:
    """The variant of ``game``, or None when no module declares it."""
    return _REGISTRY.get(game)


def variant_of(game: str) -> Variant:
    """The variant a table of ``game`` plays."""
    found = _REGISTRY.get(game)
    if found is None:
        raise InvalidInput(f"no game variant {game!r} ({', '.join(sorted(_REGISTRY))})",
                           rule="game")
    return found


def variants() -> tuple[Variant, ...]:
    return tuple(_REGISTRY[name] for name in sorted(_REGISTRY))
