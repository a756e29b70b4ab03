"""The custody command catalogue: every custody step declared once.

An entry names a custody command, its fields (kind, bounds, and how each surface spells it),
the custody-pack rule that lists who may give it, its script verb with a parser *and* a
formatter that round-trip, the event it records first (so a stored ledger can be written back
as the commands that made it), and its help. The ``dicetable dice`` commands
(``dicetable.cli.dice``), the dice room's routes (``dicetable.server.dice_room``) and the
table-script verbs (``dicetable.table.script_custody``) are generated from it; adding a custody
step is adding an entry here plus its handler in the engine.

Every text a surface hands in is bounded before it is read: a string field has its
``max_length``, a list its ``max_items``, and serial ranges expand to at most ``MAX_DICE``
dice; nothing here uses a regular expression on input.

>>> e = CATALOGUE.named("count")
>>> e.verb, e.verbs, e.route_paths, e.authority
('dice-count', ('dice-count', 'dice-inventory'), ('count', 'inventory'), 'inventory.roles')
>>> c = e.parse_words(BaseContext(), "Ann", Role.SHIFT_MANAGER, ["D1-D3", "with=Sid:security"])
>>> c.counted, c.witnesses[0].name
(('D1', 'D2', 'D3'), 'Sid')
>>> e.format_words(c)
['D1', 'D2', 'D3', 'with=Sid:security']
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dicetable.core.errors import DicetableError, InvalidInput, one_named
from dicetable.core.events import carried
from dicetable.core.roles import Role
from dicetable.custody import commands as c
from dicetable.custody import events as ev
from dicetable.custody import steps as st
from dicetable.custody import transport as tr
from dicetable.custody.model import (
    Box,
    BoxInspection,
    CancelMethod,
    Check,
    DieCheck,
    Finding,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
    expand_serials,
    parse_inches,
)

MAX_DICE = 5000
"""The most dice one step may name, ranges expanded (a shipment is a few hundred)."""
SERIAL_LENGTH = 40
"""The longest serial (or range ``D0001-D0050``) one word may carry."""
NAME_LENGTH = 100
"""A person as written: ``NAME[:ROLE[:LICENCE]]``, or an account name."""
TEXT_LENGTH = 200
"""Any other free text (a manufacturer, an address, the signs of tampering)."""
DEFAULT_TOOLS = ("micrometer", "balancing-caliper", "steel-set-square", "magnet")


class Kind(enum.Enum):
    """What a field holds, and so how every surface reads it."""

    TEXT = "text"
    TEXTS = "texts"
    SERIALS = "serials"
    """Serials as people write them (``D0001-D0010`` is a range), expanded and bounded."""
    PERSON = "person"
    """Someone taking part: resolved by the surface (a roster account, ``NAME:ROLE:LICENCE``)."""
    PEOPLE = "people"
    CHOICE = "choice"
    FLAG = "flag"
    INT = "int"
    INCHES = "inches"
    """A measurement as written (``0.750``, ``1/4``), kept exact."""
    RECORD = "record"
    """A small structure: an object in JSON, one word (``BOX=SERIALS``) on a command line."""
    RECORDS = "records"


MULTI = frozenset({Kind.TEXTS, Kind.SERIALS, Kind.PEOPLE, Kind.RECORDS})
_UNSET: Any = object()


@dataclass(frozen=True)
class Value:
    """What a step reads of one value, and how much it reads: a step's field, or a member of
    a record; the readers below take either."""

    name: str
    kind: Kind
    max_length: int = TEXT_LENGTH
    """The longest text (of each item, for a list)."""
    max_items: int = 1
    choices: type[enum.Enum] | None = None


@dataclass(frozen=True)
class Part(Value):
    """One member of a record (a box's ``serials``, a party's ``phone``)."""

    default: Any = _UNSET
    """Left out: required."""

    @property
    def required(self) -> bool:
        return self.default is _UNSET


@dataclass(frozen=True)
class Field(Value):
    """One field of a custody step, with how each surface spells it."""

    help: str = ""
    required: bool = False
    default: Any = None
    """The value when left out on the command line and in a script."""
    json_default: Any = _UNSET
    """The body's default, where it differs from ``default``."""
    json_required: bool | None = None
    """Whether the body must carry it, where that differs from ``required``."""
    positional: bool = False
    """Written as a plain word in a script (a list takes the rest); also a CLI argument
    unless ``cli`` names an option."""
    cli: str | None = None
    """The CLI's spelling (``--box``; ``--x/--no-x`` for a flag); None: ``--name``, or an
    argument when positional; ``""``: not on the command line."""
    script: str | None = None
    """The script's key (``day=``); None: the name with dashes; ``""``: not in scripts."""
    json: str | None = None
    """The body's key; None: the name; ``""``: not in the body."""
    split: bool = False
    """A list may be written as comma-separated items (``fail=A1:logo,A2:spots``)."""
    parts: tuple[Part, ...] = ()
    record: str = ""
    """A record's name (``Box``, ``Party``): its parts are the same wherever it is named."""
    read: Callable[[str], dict[str, Any]] | None = None
    """A record's one-word form -> its parts."""
    write: Callable[[Mapping[str, Any]], str] | None = None

    @property
    def multi(self) -> bool:
        return self.kind in MULTI

    @property
    def script_key(self) -> str:
        return self.name.replace("_", "-") if self.script is None else self.script

    @property
    def json_key(self) -> str:
        return self.name if self.json is None else self.json

    @property
    def cli_flag(self) -> str:
        return f"--{self.name.replace('_', '-')}" if self.cli is None else self.cli

    @property
    def on_cli(self) -> bool:
        return self.cli != ""

    @property
    def cli_positional(self) -> bool:
        return self.positional and self.cli is None

    @property
    def body_default(self) -> Any:
        return self.default if self.json_default is _UNSET else self.json_default


class Context:
    """What reading a step asks of its surface: who a written person is, the date, the
    table around a script. The CLI, the dice room and the script runner each give one."""

    def person(self, text: str) -> Person:
        return Person.parse(text)

    def today(self) -> str | None:
        return None

    def table_game(self) -> tuple[str, str, bool] | None:
        """(table id, game, whether its dice go into a shaker) of the table around the step."""
        return None

    def assigned(self, dice: tuple[str, ...], where: str | None) -> tuple[str, ...] | None:
        """For a tampered removal at a table: the staff that table's own log assigns
        (``where``: the table's store, when the step names one)."""
        return None


BaseContext = Context


Build = Callable[[dict[str, Any], Context], dict[str, Any]]
Recover = Callable[[Sequence[ev.CustodyEvent], int], dict[str, Any]]


@dataclass(frozen=True)
class Entry:
    """One custody command, declared once."""

    command: type[c.CustodyCommand]
    name: str
    """Its canonical name: ``dicetable dice NAME``, ``POST /api/dice-room/{site}/NAME``,
    ``dice-NAME`` in a script."""
    authority: str | None
    """The custody-pack rule that lists the roles that may give it (None: any staff)."""
    help: str
    fields: tuple[Field, ...] = ()
    build: Build | None = None
    """Typed field values -> the command's own fields (None: the values as they are)."""
    format: Callable[[Any], dict[str, Any]] | None = None
    """The command -> field values in their written form (what ``build`` reads back)."""
    records: type[ev.CustodyEvent] | None = None
    """The first event the command records: a stored ledger is read back through it."""
    recover: Recover | None = None
    """(the log, the index of that event) -> the command's own fields."""
    aliases: tuple[str, ...] = ()
    """Older names, still read on every surface (never written)."""
    witnesses: bool = False
    """The others present are named (``--with``, ``with=``, the body's ``present``)."""
    cli: str | None = None
    """The CLI command, where its words differ (``key draw``); ``""``: not on the CLI."""
    route: bool = True
    script: bool = True
    who: tuple[str, Role] | None = None
    """The CLI's default actor and role (the deadline sweep's)."""

    # -- names -------------------------------------------------------------------------------
    @property
    def verb(self) -> str:
        return f"dice-{self.name}"

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(f"dice-{n}" for n in (self.name, *self.aliases)) if self.script else ()

    @property
    def route_paths(self) -> tuple[str, ...]:
        return (self.name, *self.aliases) if self.route else ()

    @property
    def cli_words(self) -> tuple[str, ...]:
        if self.cli == "":
            return ()
        return tuple((self.cli or self.name).split())

    @property
    def all_fields(self) -> tuple[Field, ...]:
        if not self.witnesses:
            return self.fields
        return (*self.fields, WITH)

    # -- reading -------------------------------------------------------------------------------
    def make(self, actor: str, role: Role, licence: str, values: dict[str, Any],
             ctx: Context) -> c.CustodyCommand:
        """The command from raw field values (text or JSON), checked against the bounds."""
        typed: dict[str, Any] = {}
        for f in self.all_fields:
            raw = values.get(f.name)
            if raw is None or (f.multi and raw == [] and f.required):
                if f.required:
                    raise InvalidInput(f"{self.name}: {f.name.replace('_', ' ')} is required",
                                       rule="custody.request")
                continue
            typed[f.name] = _typed(self.name, f, raw, ctx)
        witnesses = typed.pop("with", ())
        own = self.build(typed, ctx) if self.build is not None else typed
        try:
            return self.command(actor=actor, role=role, licence=licence, witnesses=witnesses,
                                **own)
        except TypeError as e:  # a field the command needs was left out
            raise InvalidInput(f"{self.name}: {e}", rule="custody.request") from None

    def parse_words(self, ctx: Context, actor: str, role: Role, words: list[str],
                    licence: str = "") -> c.CustodyCommand:
        """A script's words after the verb -> the command."""
        by_key = {f.script_key: f for f in self.all_fields if f.script_key}
        plain: list[str] = []
        values: dict[str, Any] = {}
        for w in words:
            key, eq, value = w.partition("=")
            if eq and key == "licence":
                licence = _bounded(self.name, LICENCE_FIELD, value)
                continue
            f = by_key.get(key) if eq else None
            if f is None:
                plain.append(w)
                continue
            if f.multi:
                items = [v for v in value.split(",") if v] if f.split else [value]
                values.setdefault(f.name, []).extend(items)
            else:
                values[f.name] = value
        for f in (f for f in self.all_fields if f.positional):
            if not plain:
                break
            if f.multi:
                values.setdefault(f.name, []).extend(plain)
                plain = []
            else:
                values[f.name] = plain.pop(0)
        if plain:
            raise InvalidInput(f"{self.verb}: cannot read {' '.join(plain)!r}",
                               rule="script.syntax")
        return self.make(actor, role, licence, _text_defaults(self, values), ctx)

    def format_words(self, command: c.CustodyCommand) -> list[str]:
        """The command -> its script words after the verb (``parse_words`` reads them back)."""
        values = self.format(command) if self.format is not None else {
            f.name: getattr(command, f.name) for f in self.fields}
        if self.witnesses:
            values["with"] = [_person_text(p) for p in command.witnesses]
        words: list[str] = []
        keyed: list[str] = []
        positional_done = False
        for f in self.all_fields:
            value = values.get(f.name)
            if not f.script_key or value is None or value == [] or value == () or (
                    not f.required and not f.multi and value == f.default):
                if f.positional:
                    positional_done = True
                continue
            items = [str(v) for v in value] if f.multi else [_text(value)]
            if f.positional and not positional_done:
                words += items
            else:
                keyed += [f"{f.script_key}={item}" for item in items]
        if command.licence:
            keyed.append(f"licence={command.licence}")
        return words + keyed

    def command_from(self, log: Sequence[ev.CustodyEvent], i: int) -> c.CustodyCommand:
        """The command that recorded ``log[i]`` (the first event of its batch)."""
        assert self.recover is not None
        e = log[i]
        return self.command(actor=e.actor, role=e.role, licence=e.licence,
                            witnesses=e.witnesses if self.witnesses else (),
                            **self.recover(log, i))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def _person_text(p: Person) -> str:
    return ":".join([p.name, p.role.value, *([p.licence] if p.licence else [])])


def _bounded(step: str, f: Value, text: Any) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"{step}: {f.name} is text, not {type(text).__name__}",
                           rule="custody.request")
    if len(text) > f.max_length:
        raise InvalidInput(f"{step}: {f.name} is at most {f.max_length} characters",
                           rule="custody.request")
    return text


def _items(step: str, f: Value, raw: Any) -> list[Any]:
    items = list(raw) if isinstance(raw, list | tuple) else [raw]
    if len(items) > f.max_items:
        raise InvalidInput(f"{step}: at most {f.max_items} {f.name.replace('_', ' ')}",
                           rule="custody.request")
    return items


def serials(step: str, items: list[str]) -> tuple[str, ...]:
    """Serials and ranges -> at most ``MAX_DICE`` serials (each word bounded before it is
    read, so expanding them is linear in what was sent)."""
    out: list[str] = []
    for item in items:
        if len(item) > SERIAL_LENGTH:
            raise InvalidInput(f"{step}: a serial or range is at most {SERIAL_LENGTH} "
                               "characters", rule="custody.serials")
        out.extend(expand_serials([item]))
        if len(out) > MAX_DICE:
            raise InvalidInput(f"one step names at most {MAX_DICE} dice", rule="custody.serials")
    return tuple(out)


def _choice(step: str, f: Value, raw: Any) -> Any:
    assert f.choices is not None
    if isinstance(raw, f.choices):
        return raw
    text = _bounded(step, f, raw)
    try:
        return f.choices(text)
    except ValueError:
        raise InvalidInput(f"{step}: {f.name.replace('_', ' ')} is one of "
                           f"{', '.join(str(m.value) for m in f.choices)}, not {text!r}",
                           rule="custody.request") from None


def _flag(step: str, f: Value, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if raw in ("yes", "no"):
        return bool(raw == "yes")
    raise InvalidInput(f"{step}: {f.name.replace('_', ' ')} is yes or no, not {raw!r}",
                       rule="script.syntax")


def _int(step: str, f: Value, raw: Any) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    else:
        text = _bounded(step, f, raw)
        if not text.isdigit():
            raise InvalidInput(f"{step}: {f.name} is a whole number, not {text!r}",
                               rule="custody.request")
        value = int(text)
    if not 0 <= value <= 10**6:
        raise InvalidInput(f"{step}: {f.name} is 0 to 1,000,000", rule="custody.request")
    return value


def _one(step: str, f: Value, raw: Any, ctx: Context) -> Any:
    if f.kind is Kind.TEXT:
        return _bounded(step, f, raw)
    if f.kind is Kind.PERSON:
        return ctx.person(_bounded(step, f, raw))
    if f.kind is Kind.CHOICE:
        return _choice(step, f, raw)
    if f.kind is Kind.FLAG:
        return _flag(step, f, raw)
    if f.kind is Kind.INT:
        return _int(step, f, raw)
    if f.kind is Kind.INCHES:
        return parse_inches(_bounded(step, f, raw))
    raise AssertionError(f.kind)


def _record(step: str, f: Field, raw: Any, ctx: Context) -> dict[str, Any]:
    if isinstance(raw, str):
        assert f.read is not None
        raw = f.read(_bounded(step, f, raw))
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{step}: {f.name} is an object", rule="custody.request")
    out: dict[str, Any] = {}
    for p in f.parts:
        value = raw.get(p.name)
        if value is None:
            if p.default is _UNSET:
                raise InvalidInput(f"{step}: {f.name} needs its {p.name}",
                                   rule="custody.request")
            out[p.name] = p.default
        elif p.kind is Kind.SERIALS:
            out[p.name] = serials(step, [_bounded(step, p, s) for s in _items(step, p, value)])
        elif p.kind is Kind.TEXTS and p.choices is not None:  # a list of choices
            out[p.name] = tuple(_choice(step, p, s) for s in _items(step, p, value))
        elif p.kind is Kind.TEXTS:
            out[p.name] = tuple(_bounded(step, p, s) for s in _items(step, p, value))
        else:
            out[p.name] = _one(step, p, value, ctx)
    return out


def _typed(step: str, f: Field, raw: Any, ctx: Context) -> Any:
    if f.kind is Kind.SERIALS:
        return serials(step, [_bounded(step, f, s) for s in _items(step, f, raw)])
    if f.kind is Kind.TEXTS:
        return tuple(_bounded(step, f, s) for s in _items(step, f, raw))
    if f.kind is Kind.PEOPLE:
        return tuple(ctx.person(_bounded(step, f, s)) for s in _items(step, f, raw))
    if f.kind is Kind.RECORDS:
        return tuple(_record(step, f, r, ctx) for r in _items(step, f, raw))
    if f.kind is Kind.RECORD:
        return _record(step, f, raw, ctx)
    return _one(step, f, raw, ctx)


def _text_defaults(entry: Entry, values: dict[str, Any]) -> dict[str, Any]:
    for f in entry.all_fields:
        if f.name not in values and f.default is not None:
            values[f.name] = list(f.default) if isinstance(f.default, tuple) else f.default
    return values


def from_text(entry: Entry, values: dict[str, Any]) -> dict[str, Any]:
    """Command-line values (a list for a repeated option) with the text defaults filled in."""
    out = {}
    for f in entry.all_fields:
        raw = values.get(f.name)
        if f.multi and raw is not None and f.split:
            raw = [item for r in raw for item in r.split(",") if item]
        out[f.name] = raw
    return _text_defaults(entry, {k: v for k, v in out.items() if v is not None})


# -- shared fields -----------------------------------------------------------------------------
WITH = Field("with", Kind.PEOPLE, max_length=NAME_LENGTH, max_items=10, split=True,
             json="present", help="Another person present: NAME:ROLE[:LICENCE] (repeat)")
LICENCE_FIELD = Field("licence", Kind.TEXT, max_length=64)
_DICE = Field("dice", Kind.SERIALS, max_length=SERIAL_LENGTH, max_items=500, required=True,
              positional=True, help="Dice serials; D0001-D0010 is a range")
_AREA = Field("area", Kind.TEXT, default="dice-storage", help="The storage area")
_KEY = Field("key", Kind.CHOICE, choices=Key, positional=True, required=True,
             help="security or table-games", max_length=20)

def _split_at(text: str, seps: str, form: str, rule: str) -> tuple[str, str]:
    """``text`` cut at the first of ``seps`` (``S=P`` or ``S:P``); ``form`` says how it is
    written when it is not."""
    at = min((i for i in (text.find(s) for s in seps) if i >= 0), default=-1)
    if at <= 0 or at == len(text) - 1:
        raise InvalidInput(f"write {form}, not {text!r}", rule=rule)
    return text[:at], text[at + 1:]


def _read_box(text: str) -> dict[str, Any]:
    name, serials_ = _split_at(text, "=", "a box as BOX=SERIALS", "custody.shipment")
    return {"box": name, "serials": [s for s in serials_.split(",") if s]}


def _read_finding(text: str) -> dict[str, Any]:
    serial, problem = _split_at(text, ":=", "a finding as SERIAL:PROBLEM (or SERIAL=PROBLEM)",
                                "custody.inspection")
    return {"serial": serial, "problem": problem}


def _read_die(text: str) -> dict[str, Any]:
    serial, sides = _split_at(text, "=", "a die as SERIAL=SIDE,SIDE,SIDE",
                              "custody.measurement")
    return {"serial": serial, "measurements": [s for s in sides.split(",") if s.strip()]}


def _read_party(text: str) -> dict[str, Any]:
    parts = [p.strip() for p in text.split(";")]
    if len(parts) != 3:
        raise InvalidInput(f"write NAME;BUSINESS ADDRESS;TELEPHONE, not {text!r}",
                           rule="transport.notice_days")
    return dict(zip(("name", "address", "phone"), parts, strict=True))


# -- the steps ---------------------------------------------------------------------------------
def _receive(v: dict[str, Any], ctx: Context) -> dict[str, Any]:
    broken = set(v.get("seal_failed", ()))
    boxes = tuple(Box(b["box"], b["serials"], b["seal_intact"] and b["box"] not in broken)
                  for b in v["boxes"])
    where = {s: b.box for b in boxes for s in b.serials}
    found: dict[str, list[Finding]] = {b.box: [] for b in boxes if not b.seal_intact}
    for f, tampering in [(f, f["tampering"]) for f in v.get("findings", ())] + \
            [(f, True) for f in v.get("tamper_findings", ())]:
        if f["serial"] not in where:
            raise InvalidInput(f"{f['serial']!r} is in none of the boxes",
                               rule="custody.serials")
        found.setdefault(where[f["serial"]], []).append(
            Finding(f["serial"], f["problem"], tampering))
    return {"shipment": v["shipment"],
            "manufacturer": Manufacturer(v["manufacturer"], v.get("address", ""),
                                         v.get("phone", "")),
            "boxes": boxes, "delivery_witness": v.get("delivery_witness", ""),
            "opened": tuple(BoxInspection(k, tuple(f)) for k, f in found.items())}


def _format_receive(x: c.ReceiveShipment) -> dict[str, Any]:
    findings = [f for i in x.opened for f in i.findings]
    return {"shipment": x.shipment, "manufacturer": x.manufacturer.name,
            "address": x.manufacturer.address, "phone": x.manufacturer.phone,
            "boxes": [f"{b.box}={','.join(b.serials)}" for b in x.boxes],
            "seal_failed": [b.box for b in x.boxes if not b.seal_intact],
            "findings": [f"{f.serial}:{f.problem}" for f in findings if not f.tampering],
            "tamper_findings": [f"{f.serial}:{f.problem}" for f in findings if f.tampering],
            "delivery_witness": x.delivery_witness}


def _recover_receive(log: Sequence[ev.CustodyEvent], i: int) -> dict[str, Any]:
    e = log[i]
    assert isinstance(e, ev.ShipmentReceived)
    opened = []
    for later in log[i + 1:]:
        if not isinstance(later, ev.BoxOpenedAndInspected) or later.shipment != e.shipment:
            break
        opened.append(BoxInspection(later.box, later.findings))
    return {"shipment": e.shipment, "manufacturer": e.manufacturer, "boxes": e.boxes,
            "delivery_witness": e.delivery_witness, "opened": tuple(opened)}


def _inspect(v: dict[str, Any], ctx: Context) -> dict[str, Any]:
    failed: dict[str, set[Check]] = {}
    for item in v.get("fail", ()):
        serial, check = _split_at(item, ":", "a failed check as SERIAL:CHECK",
                                  "custody.inspection")
        failed.setdefault(serial, set()).add(_choice("inspect", Part("fail", Kind.CHOICE,
                                                                     choices=Check), check))
    checks = tuple(DieCheck(k["serial"], tuple(parse_inches(m) for m in k["measurements"]),
                            tuple(x for x in Check if x not in k["failed"]
                                  and x not in failed.get(k["serial"], set())))
                   for k in v["checks"])
    return {"checks": checks, "tools": tuple(v.get("tools", ())),
            "under_surveillance": v.get("under_surveillance", False)}


def _format_inspect(x: c.InspectDice) -> dict[str, Any]:
    return {"checks": [f"{k.serial}={','.join(str(m) for m in k.measurements)}"
                       for k in x.checks],
            "fail": [f"{k.serial}:{f.value}" for k in x.checks for f in Check
                     if f not in k.passed],
            "tools": list(x.tools), "under_surveillance": x.under_surveillance}


def _recover_inspect(log: Sequence[ev.CustodyEvent], i: int) -> dict[str, Any]:
    e = log[i]
    assert isinstance(e, ev.DiceInspected)
    checks = tuple(DieCheck(r.serial, r.measurements, tuple(
        k for k in Check if not any(p.startswith(f"failed the {k.value} check")
                                    for p in r.problems))) for r in e.results)
    return {"checks": checks, "tools": e.tools, "under_surveillance": e.under_surveillance}


def _issue_table(v: dict[str, Any], ctx: Context) -> dict[str, Any]:
    around = ctx.table_game()
    table = v.get("table") or (around[0] if around else "")
    if "shaker" in v:  # the dice room: a shaker's dice go to Props & Hops
        game = "props-and-hops" if v["shaker"] else "craps"
        mode = PlayMode.SHAKER if v["shaker"] else PlayMode.TABLE
    else:
        game = v.get("game") or (around[1] if around else "craps")
        mode = v.get("mode") or (PlayMode.SHAKER if around and around[2] else PlayMode.TABLE)
    return {"dice": v["dice"], "table": table, "game": game, "mode": mode,
            "received_by": v["received_by"]}


def _remove(v: dict[str, Any], ctx: Context) -> dict[str, Any]:
    assigned = v.pop("assigned", None)
    where = v.pop("table_db", None)
    if assigned is None and v["reason"] is RemovalReason.TAMPERED:
        assigned = ctx.assigned(v["dice"], where)
    return {**v, "assigned_at_table": assigned}


def _format_remove(x: c.RemoveDice) -> dict[str, Any]:
    return {"dice": list(x.dice), "reason": x.reason, "signs": x.signs,
            "table_staff": [_person_text(p) for p in x.table_staff], "envelope": x.envelope,
            "detail": x.detail,
            "assigned": list(x.assigned_at_table) if x.assigned_at_table else None}


def _recover_remove(log: Sequence[ev.CustodyEvent], i: int) -> dict[str, Any]:
    e = log[i]
    assert isinstance(e, ev.DiceRemoved)
    sealed = log[i + 1] if i + 1 < len(log) else None
    out: dict[str, Any] = {"dice": e.dice, "reason": e.reason, "detail": e.detail}
    if isinstance(sealed, ev.TamperEnvelopeSealed) and sealed.dice == e.dice:
        # The envelope's list matched the table's staff when it was recorded.
        out |= {"signs": sealed.signs, "table_staff": sealed.table_staff,
                "envelope": sealed.envelope,
                "assigned_at_table": tuple(p.name for p in sealed.table_staff)}
    return out


def _transport(v: dict[str, Any], ctx: Context) -> dict[str, Any]:
    def party(p: Mapping[str, Any] | None) -> tr.Party:
        return tr.Party(p["name"], p["address"], p["phone"]) if p else tr.Party("", "", "")

    people = {k: v.get(k, "") for k in ("responsible_supplier", "responsible_carrier",
                                        "responsible_recipient")}
    if "responsible" in v:
        names = [n.strip() for n in v["responsible"].split(";")]
        if len(names) != 3:
            raise InvalidInput("--responsible names three people: supplier;carrier;recipient",
                               rule="transport.notice_days")
        people = dict(zip(people, names, strict=True))
    return {"notice": v["notice"], "supplier": party(v.get("supplier")),
            "method": v.get("method", ""),
            "carriers": tuple(party(p) for p in v.get("carriers", ())),
            "recipient": party(v.get("recipient")), **people,
            "quantity": v.get("quantity", 0), "description": v.get("description", ""),
            "delivery_at": v.get("delivery_at", ""), "notified_at": v.get("notified_at") or ""}


def _party_text(p: tr.Party) -> str:
    return f"{p.name};{p.address};{p.phone}"


def _format_transport(x: tr.FileTransportNotice) -> dict[str, Any]:
    return {"notice": x.notice, "supplier": _party_text(x.supplier), "method": x.method,
            "carriers": [_party_text(p) for p in x.carriers],
            "recipient": _party_text(x.recipient),
            "responsible": f"{x.responsible_supplier};{x.responsible_carrier};"
                           f"{x.responsible_recipient}",
            "quantity": str(x.quantity), "description": x.description,
            "delivery_at": x.delivery_at, "notified_at": x.notified_at}


def _carried(*groups: type[Any], **renamed: str) -> Recover:
    """Recover a command from its first event: the field groups the two share
    (``dicetable.custody.steps``), and each other field the command takes from the event
    (the command's name = the event's)."""
    def recover(log: Sequence[ev.CustodyEvent], i: int) -> dict[str, Any]:
        return carried(log[i], *groups) | {mine: getattr(log[i], theirs)
                                           for mine, theirs in renamed.items()}

    return recover


def _limits(v: dict[str, Any], ctx: Context) -> dict[str, Any]:
    out = []
    for text in v.get("limits", ()):
        table, _, rest = text.partition(":")
        hours, _, citation = rest.partition(":")
        if not table or not hours.isdigit() or not citation:
            raise InvalidInput(f"check: limit {text!r} is TABLE:HOURS:CITATION",
                               rule="dice.max_hours")
        out.append((table, int(hours), citation))
    return {"limits": tuple(out)}


def _recover_limits(log: Sequence[ev.CustodyEvent], i: int) -> dict[str, Any]:
    """The limits a sweep went by: those its overdue alerts recorded."""
    first, out = log[i], []
    for e in log[i:]:
        if not isinstance(e, ev.DiceOverdue) or (e.at, e.actor) != (first.at, first.actor):
            break
        out.append((e.table_id, e.limit_hours, e.rule))
    return {"limits": tuple(out)}


def _party_part() -> tuple[Part, ...]:
    return (Part("name", Kind.TEXT, default=""), Part("address", Kind.TEXT, default=""),
            Part("phone", Kind.TEXT, default=""))


ENTRIES: tuple[Entry, ...] = (
    Entry(c.DrawKey, "key-draw", "storage.keys",
          "Draw one of the two storage keys (only security, or table games at assistant "
          "shift manager or above)", fields=(_KEY,), cli="key draw", records=ev.KeyDrawn,
          recover=_carried(st.KeyUse)),
    Entry(c.ReturnKey, "key-return", "storage.keys", "Return a storage key", fields=(_KEY,),
          cli="key return", records=ev.KeyReturned, recover=_carried(st.KeyUse)),
    Entry(c.ReceiveShipment, "receive", "receipt.roles",
          "Receive a shipment: two people, every box's seal checked, failed boxes opened and "
          "inspected (exits 1 when an opened box holds non-conforming or tampered dice)",
          witnesses=True, build=_receive, format=_format_receive, records=ev.ShipmentReceived,
          recover=_recover_receive, fields=(
              Field("shipment", Kind.TEXT, max_length=64, required=True, positional=True,
                    cli="--shipment", help="The shipment's id"),
              Field("boxes", Kind.RECORDS, max_length=SERIAL_LENGTH * 50, max_items=50,
                    required=True, positional=True, cli="--box", script="box",
                    help="BOX=SERIALS, e.g. B1=D0001-D0050 (repeat)",
                    parts=(Part("box", Kind.TEXT, max_length=64),
                           Part("serials", Kind.SERIALS, max_length=SERIAL_LENGTH,
                                max_items=500),
                           Part("seal_intact", Kind.FLAG, default=True)), read=_read_box,
                    record="Box"),
              Field("manufacturer", Kind.TEXT, required=True, help="The manufacturer's name"),
              Field("address", Kind.TEXT, default="", help="Manufacturer's business address"),
              Field("phone", Kind.TEXT, default="", help="Manufacturer's business telephone"),
              Field("seal_failed", Kind.TEXTS, max_length=64, max_items=50, split=True,
                    json="", help="A box whose seal failed (it is opened and inspected now)"),
              Field("findings", Kind.RECORDS, max_items=500, cli="--finding",
                    script="finding", help="SERIAL=PROBLEM found in an opened box",
                    parts=(Part("serial", Kind.TEXT, max_length=SERIAL_LENGTH),
                           Part("problem", Kind.TEXT),
                           Part("tampering", Kind.FLAG, default=False)), read=_read_finding,
                    record="Finding"),
              Field("tamper_findings", Kind.RECORDS, max_items=500, cli="--tamper-finding",
                    script="tamper-finding", json="",
                    help="SERIAL=SIGNS of tampering in an opened box",
                    parts=(Part("serial", Kind.TEXT, max_length=SERIAL_LENGTH),
                           Part("problem", Kind.TEXT)), read=_read_finding,
                    record="TamperFinding"),
              Field("delivery_witness", Kind.TEXT, default="",
                    help="The gaming agent or Commission staff member present at the "
                         "delivery (IN's stand-in rule)"))),
    Entry(c.StoreDice, "store", "storage.keys",
          "Put received dice in the locked storage area (both key holders present)",
          witnesses=True, fields=(_DICE, _AREA), records=ev.DiceStored,
          recover=_carried(st.NamedDice, st.Stored)),
    Entry(c.IssueForGamingDay, "issue-day", "issue.day_roles",
          "Take the gaming day's dice out of storage (shift manager, security present)",
          witnesses=True, records=ev.DiceIssuedForGamingDay,
          recover=_carried(st.NamedDice, st.GamingDay),
          build=lambda v, x: {"dice": v["dice"],
                              "gaming_day": v.get("gaming_day") or x.today() or ""},
          fields=(_DICE, Field("gaming_day", Kind.TEXT, max_length=10, script="day",
                               help="YYYY-MM-DD (default: today)"))),
    Entry(c.ReturnToStorage, "return-storage", "issue.day_roles",
          "Put issued dice that never reached a table back in storage", witnesses=True,
          fields=(_DICE, _AREA), records=ev.DiceReturnedToStorage,
          recover=_carried(st.NamedDice, st.Stored)),
    Entry(c.InspectDice, "inspect", "inspection.roles",
          "Inspect dice before play: three measured sides (0.750, 3/4) and the yes/no "
          "checks (exits 1 when a die fails inspection; it is recorded, and quarantined)",
          witnesses=True, build=_inspect, format=_format_inspect, records=ev.DiceInspected,
          recover=_recover_inspect, fields=(
              Field("checks", Kind.RECORDS, max_length=SERIAL_LENGTH + 60, max_items=500,
                    required=True, positional=True, cli="--die", script="die",
                    help="SERIAL=SIDE,SIDE,SIDE in inches (repeat)",
                    parts=(Part("serial", Kind.TEXT, max_length=SERIAL_LENGTH),
                           Part("measurements", Kind.TEXTS, max_length=16, max_items=3),
                           Part("failed", Kind.TEXTS, max_length=20, max_items=len(Check),
                                default=(), choices=Check)), read=_read_die, record="Check"),
              Field("fail", Kind.TEXTS, max_length=SERIAL_LENGTH + 20, max_items=500,
                    split=True, json="", help="SERIAL:CHECK that failed; checks: "
                                              + ", ".join(k.value for k in Check)),
              Field("tools", Kind.TEXTS, max_length=64, max_items=10, split=True,
                    cli="--tool", default=DEFAULT_TOOLS, json_default=(),
                    help="An inspection tool used (repeat)"),
              Field("under_surveillance", Kind.FLAG, default=True, json_default=False,
                    cli="--surveillance/--no-surveillance", script="surveillance",
                    help="Under surveillance monitoring"))),
    Entry(c.IssueToTable, "issue-table", "play.issue_roles",
          "Put inspected dice into play at a table, or load a shaker (the time limit starts)",
          witnesses=True, build=_issue_table, records=ev.DiceIssuedToTable,
          recover=_carried(st.NamedDice, st.IntoPlay, table="to_table"),
          format=lambda x: {"dice": list(x.dice), "table": x.table, "game": x.game,
                            "mode": x.mode, "received_by": _person_text(x.received_by)},
          fields=(_DICE,
                  Field("table", Kind.TEXT, max_length=64, json_required=True,
                        help="The table (in a script: the script's table)"),
                  Field("game", Kind.TEXT, max_length=32, json="",
                        help="The table's game (default: the script's table's, or craps)"),
                  Field("mode", Kind.CHOICE, choices=PlayMode, max_length=16, json="",
                        help="table or shaker (default: what the game's dice go into)"),
                  Field("shaker", Kind.FLAG, cli="", script="",
                        json_default=False, help="Load a Props & Hops shaker"),
                  Field("received_by", Kind.PERSON, max_length=NAME_LENGTH, required=True,
                        script="to",
                        help="NAME:ROLE[:LICENCE] at the table (the dice room: an account)"))),
    Entry(c.RemoveDice, "remove", "removal.roles",
          "Remove dice: tampered ones are sealed for the enforcement agent, others go to "
          "cancellation. A tampered die at a table needs --signs and --staff (14-3-4(b)); the "
          "envelope's list of the table's licensees is checked against the staff the table's "
          "log assigns there when its store is given (--table-db, or assigned= in a script), "
          "and taken as given without one (a table not run on this system)",
          witnesses=True, build=_remove, format=_format_remove, records=ev.DiceRemoved,
          recover=_recover_remove, fields=(
              _DICE,
              Field("reason", Kind.CHOICE, choices=RemovalReason, max_length=16,
                    required=True, help="Why the dice leave play"),
              Field("signs", Kind.TEXT, default="", help="For tampering: what suggests it"),
              Field("table_staff", Kind.PEOPLE, max_length=NAME_LENGTH, max_items=10,
                    split=True, cli="--staff", script="staff",
                    help="For tampering: NAME:ROLE[:LICENCE] of each licensee at the table "
                         "(repeat)"),
              Field("envelope", Kind.TEXT, max_length=64, default="",
                    help="The envelope's number"),
              Field("detail", Kind.TEXT, default=""),
              Field("assigned", Kind.TEXTS, max_length=NAME_LENGTH, max_items=20, split=True,
                    cli="", json="", help="The staff the table's log assigns there"),
              Field("table_db", Kind.TEXT, max_length=1000, script="", json="",
                    help="For tampering at a table: the table's store (SQLite file or "
                         "postgresql:// URL); the --staff list is checked against the staff "
                         "its log assigns there"))),
    Entry(c.DeliverEnvelope, "deliver", "removal.tamper_roles",
          "Hand a sealed tamper envelope to the enforcement agent",
          records=ev.EnvelopeDelivered, recover=_carried(st.EnvelopeHandover),
          fields=(Field("envelope", Kind.TEXT, max_length=64, required=True, positional=True),
                  Field("agent", Kind.TEXT, required=True,
                        help="The enforcement agent's name"))),
    Entry(c.TransferToCancellation, "transfer", "logs.pit_manager_roles",
          "The pit manager signs removed dice over to the cancellation room",
          records=ev.DiceTransferredToCancellation,
          recover=_carried(st.NamedDice, st.CancellationRoom),
          format=lambda x: {"dice": list(x.dice), "accepted_by": _person_text(x.accepted_by)},
          fields=(_DICE, Field("accepted_by", Kind.PERSON, max_length=NAME_LENGTH,
                               required=True,
                               help="NAME:ROLE:LICENCE in the cancellation room"))),
    Entry(c.CancelDice, "cancel", "cancellation.roles",
          "Destroy dice in the cancellation room, under surveillance (--with NAME:"
          "surveillance); the hole is written as the regulation writes it (1/4) or as a "
          "decimal (0.25)", witnesses=True, records=ev.DiceCancelled,
          recover=_carried(st.NamedDice, st.Cancellation),
          fields=(_DICE,
                  Field("method", Kind.CHOICE, choices=CancelMethod, max_length=16,
                        required=True, help="drill, shred or approved"),
                  Field("hole_in", Kind.INCHES, max_length=16, cli="--hole", script="hole",
                        help="Drilled hole, inches"),
                  Field("approval", Kind.TEXT, default="", help="For an approved method"))),
    Entry(c.TakePhysicalInventory, "count", "inventory.roles",
          "The physical inventory: reconciled at once, any discrepancy raised as an alert "
          "(exits 1 when the count differs from the record)", aliases=("inventory",),
          witnesses=True, records=ev.PhysicalInventoryTaken,
          recover=_carried(st.Count),
          build=lambda v, x: {"counted": v.get("counted", ())},
          fields=(Field("counted", Kind.SERIALS, max_length=SERIAL_LENGTH, max_items=5000,
                        positional=True, help="Every die found"),)),
    Entry(c.CheckDeadlines, "check", None,
          "Raise alerts for dice past their time limit and an overdue physical inventory "
          "(exits 1 when it raises an alert)", route=False, who=("deadline-sweep", Role.SYSTEM),
          records=ev.DiceOverdue, recover=_recover_limits, build=_limits,
          format=lambda x: {"limits": [f"{t}:{h}:{cite}" for t, h, cite in x.limits]},
          fields=(Field("limits", Kind.TEXTS, max_length=400, max_items=100, cli="--limit",
                        script="limit", json="", default=(),
                        help="TABLE:HOURS:CITATION, a table's own dice.max_hours (the floor's "
                             "sweep gives each table's; a table not named keeps the limit its "
                             "dice were issued under)"),)),
    Entry(tr.FileTransportNotice, "transport-notice", "transport.roles",
          "Record the written notice of a dice shipment (IN: at least ten days before "
          "delivery, 14-3-10(a))", build=_transport, format=_format_transport,
          records=tr.TransportNoticeFiled,
          recover=_carried(tr.NoticeContent, notified_at="notified_at"),
          fields=(
              Field("notice", Kind.TEXT, max_length=64, required=True, help="The notice's id"),
              Field("supplier", Kind.RECORD, required=True, help="NAME;ADDRESS;PHONE",
                    parts=_party_part(), read=_read_party, record="Party"),
              Field("method", Kind.TEXT, default="", help="How they travel"),
              Field("carriers", Kind.RECORDS, max_items=10, cli="--carrier",
                    script="carrier", help="NAME;ADDRESS;PHONE (repeat)",
                    parts=_party_part(), read=_read_party, record="Party"),
              Field("recipient", Kind.RECORD, required=True, help="NAME;ADDRESS;PHONE",
                    parts=_party_part(), read=_read_party, record="Party"),
              Field("responsible", Kind.TEXT, max_length=3 * NAME_LENGTH, json="",
                    help="The individual responsible for the supplier;carrier;recipient"),
              *(Field(f"responsible_{k}", Kind.TEXT, max_length=NAME_LENGTH, default="",
                      cli="", script="") for k in ("supplier", "carrier", "recipient")),
              Field("quantity", Kind.INT, max_length=8, default=0),
              Field("description", Kind.TEXT, default=""),
              Field("delivery_at", Kind.TEXT, max_length=40, default="", cli="--delivery",
                    script="delivery", help="Expected delivery, ISO 8601 with zone"),
              Field("notified_at", Kind.TEXT, max_length=40, cli="--notified",
                    script="notified", help="When the notice was given (default: now)"))),
    Entry(tr.ProveReceipt, "prove-receipt", "transport.roles",
          "Prove receipt of a shipment on the executive director's request (IN 14-3-10(b))",
          aliases=("receipt-proof",), records=tr.ReceiptProved,
          recover=_carried(tr.ProofRequest),
          fields=(Field("notice", Kind.TEXT, max_length=64, required=True),
                  Field("shipment", Kind.TEXT, max_length=64, required=True),
                  Field("requested_by", Kind.TEXT, max_length=NAME_LENGTH, required=True))),
    Entry(c.RecordFairnessAlert, "fairness-alert", "alerts.roles",
          "A die's faces drift from uniform: the fairness monitor's alert goes into its "
          "custody history", cli="", route=False, records=ev.FairnessAlertRaised,
          recover=lambda log, i: {"serial": log[i].serials[0]} | carried(
              log[i], st.FairnessFinding),
          fields=(Field("serial", Kind.TEXT, max_length=SERIAL_LENGTH, required=True,
                        positional=True),
                  Field("test", Kind.TEXT, max_length=64, required=True),
                  Field("detail", Kind.TEXT, required=True),
                  Field("statistic", Kind.TEXT, max_length=64, required=True),
                  Field("threshold", Kind.TEXT, max_length=64, required=True),
                  Field("rolls", Kind.INT, max_length=8, required=True))),
)
"""Every custody step. ``OpenCustody`` is the ledger's opening (``dicetable dice open``, the
script's ``custody`` header line), not a step."""


@dataclass
class Catalogue:
    entries: tuple[Entry, ...]
    by_name: dict[str, Entry] = field(default_factory=dict)
    by_verb: dict[str, Entry] = field(default_factory=dict)
    by_command: dict[type[c.CustodyCommand], Entry] = field(default_factory=dict)
    by_event: dict[type[ev.CustodyEvent], Entry] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for e in self.entries:
            keys: list[tuple[dict[Any, Entry], Any]] = [(self.by_command, e.command)]
            keys += [(self.by_name, n) for n in (e.name, *e.aliases)]
            for index, key in keys:
                if key in index:
                    raise ValueError(f"{key} is declared twice in the custody catalogue")
                index[key] = e
            for v in e.verbs:
                self.by_verb[v] = e
            if e.records is not None:
                self.by_event[e.records] = e

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def named(self, name: str) -> Entry:
        return one_named(self.by_name, name, "custody step", "steps",
                         (e.name for e in self.entries), rule="custody.request")

    def of(self, command: c.CustodyCommand) -> Entry:
        return self.by_command[type(command)]

    def command_for(self, log: Sequence[ev.CustodyEvent], i: int) -> c.CustodyCommand:
        """The command that recorded ``log[i]``, the first event of its batch."""
        e = log[i]
        entry = self.by_event.get(type(e))
        if entry is None and isinstance(e, ev.InventoryOverdue):
            entry = self.by_command.get(c.CheckDeadlines)
        if entry is None or entry.recover is None:
            raise InvalidInput(f"seq {e.seq}: no custody command writes a {e.kind} event by "
                               "itself", rule="script.export")
        return entry.command_from(log, i)

    def allowed(self, entry: Entry, role: Role, pack: Any) -> bool:
        """Whether ``role`` is among those the pack lets give ``entry`` at all (the cheap check
        a surface makes before it reads a request; the ledger decides the rest)."""
        if entry.authority is None:
            return role is not Role.PLAYER
        try:
            value = pack.value(entry.authority)
        except (DicetableError, KeyError):
            return True  # a pack without the rule: the ledger says why
        if isinstance(value, dict):  # the keys: whoever holds them opens storage
            return role is not Role.PLAYER
        if isinstance(value, list) and value and isinstance(value[0], list):
            groups = [pack.expand(g) for g in value]
        else:
            groups = [pack.expand(value)]
        if entry.command is c.DeliverEnvelope:
            groups.append(frozenset({Role.SECURITY}))
        return any(role in g for g in groups)


CATALOGUE = Catalogue(ENTRIES)
"""The custody steps, by name (aliases too), script verb, command class and first event."""


__all__ = ["CATALOGUE", "ENTRIES", "MAX_DICE", "BaseContext", "Context", "Entry", "Field",
           "Kind", "Part", "Value", "serials"]
