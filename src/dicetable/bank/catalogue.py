"""Every table-bank step, once: its verb, its words (``key=value``), how they are parsed and
how a recorded step is written back. The CLI (``dicetable bank VERB``), the scripts (bank
scripts, ``dicetable script export``) and the pit console's routes all come from here.

Values: chips ``2500x800,500x2`` (denomination in cents x count); a person ``NAME:ROLE`` (the
server resolves a bare ``NAME`` from its staff list); a list ``a,b``; drop items
``currency:850000,chips:30000``; text is percent-encoded (``reason=torn%20slip``).

>>> parse_chips("2500x800,250x4")
((250, 4), (2500, 800))
>>> format_chips(((250, 4), (2500, 800)))
'250x4,2500x800'
>>> sorted(VERBS)[:4]
['acknowledge', 'carry', 'close', 'colour-change']
>>> parse_words(["kind=fill", "chips=2500x80", "shift=06:00"], VERBS["request"])["chips"]
((2500, 80),)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any
from urllib.parse import quote, unquote

from dicetable.bank import events as bev
from dicetable.bank.follow import Totals
from dicetable.bank.ledger import TableBank
from dicetable.bank.model import Chips, normalise
from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event
from dicetable.core.roles import Role

Person = tuple[str, Role]


@dataclass(frozen=True)
class Field:
    key: str
    kind: str
    """chips, person, people, items, text, int, flag, fractions."""
    help: str
    required: bool = True


@dataclass
class Context:
    """What a step needs from around it: the table's log (its expected inventory), and how a
    bare name becomes a person."""

    table_log: Sequence[Event] = ()
    table_seq: int = 0
    totals: Totals | None = None
    resolve: Callable[[str], Role] | None = None
    floor_tables: Callable[[str], Sequence[tuple[str, Sequence[Role]]]] | None = None
    """The other open tables a floorperson supervises (their game and crew), by name."""


Runner = Callable[[TableBank, Person, dict[str, Any], Context], list[bev.BankEvent]]


@dataclass(frozen=True)
class Verb:
    name: str
    help: str
    fields: tuple[Field, ...]
    run: Runner


# -- values ------------------------------------------------------------------------------------
def parse_chips(text: str) -> Chips:
    if not text:
        return ()
    out = []
    for part in text.split(","):
        d, sep, n = part.strip().partition("x")
        try:
            out.append((int(d), int(n)))
        except ValueError:
            raise InvalidInput(f"{part!r}: chips are DENOMINATION_CENTSxCOUNT, e.g. 2500x80",
                               rule="chips.denominations") from None
        if not sep:
            raise InvalidInput(f"{part!r}: chips are DENOMINATION_CENTSxCOUNT",
                               rule="chips.denominations")
    return normalise(out)


def parse_float(text: str) -> dict[int, int]:
    """A chip float by denomination (68 IAC 15-5-3): ``2500:300000,10000:50000`` (cents).

    >>> parse_float("2500:300000")
    {2500: 300000}
    """
    out: dict[int, int] = {}
    for part in filter(None, text.split(",")):
        d, _, amount = part.partition(":")
        try:
            out[int(d)] = out.get(int(d), 0) + int(amount)
        except ValueError:
            raise InvalidInput(f"{part!r}: a chip float is DENOMINATION:CENTS",
                               rule="win.chip_float_adjustment") from None
    return out


def format_chips(chips: Chips) -> str:
    return ",".join(f"{d}x{n}" for d, n in chips)


def parse_person(text: str, resolve: Callable[[str], Role] | None = None) -> Person:
    name, sep, role = text.partition(":")
    name = name.strip()
    if not name:
        raise InvalidInput(f"not a person: {text!r} (NAME:ROLE)", rule="bank.person")
    if sep:
        try:
            return name, Role(role.strip())
        except ValueError:
            raise InvalidInput(f"{role!r} is not a role", rule="bank.person") from None
    if resolve is None:
        raise InvalidInput(f"{name}: name the role (NAME:ROLE)", rule="bank.person")
    return name, resolve(name)


def _items(text: str) -> tuple[tuple[str, int], ...]:
    out = []
    for part in filter(None, text.split(",")):
        kind, _, amount = part.partition(":")
        try:
            out.append((kind.strip(), int(amount)))
        except ValueError:
            raise InvalidInput(f"{part!r}: an item is KIND:CENTS", rule="drop.included") \
                from None
    return tuple(out)


def parse_value(f: Field, raw: Any, resolve: Callable[[str], Role] | None) -> Any:
    if f.kind == "flag":
        return raw in (True, "true", "yes", "1", "")
    text = str(raw)
    if len(text) > 2000:
        raise InvalidInput(f"{f.key} is too long", rule="api.limits")
    if f.kind == "chips":
        return parse_chips(text)
    if f.kind == "person":
        return parse_person(text, resolve) if text else ("", Role.SYSTEM)
    if f.kind == "people":
        return tuple(parse_person(p, resolve) for p in text.split(",") if p.strip())
    if f.kind == "items":
        return _items(text)
    if f.kind == "int":
        try:
            return int(text)
        except ValueError:
            raise InvalidInput(f"{f.key} is a whole number", rule="bank.input") from None
    if f.kind == "fractions":
        try:
            return tuple(Fraction(x) for x in text.split(",") if x)
        except (ValueError, ZeroDivisionError):
            raise InvalidInput(f"{f.key}: fractions such as 1/5", rule="bank.input") from None
    return unquote(text)


def parse_words(words: Sequence[str], verb: Verb,
                resolve: Callable[[str], Role] | None = None) -> dict[str, Any]:
    raw: dict[str, str] = {}
    for w in words:
        key, sep, value = w.partition("=")
        if not sep and any(f.key == key and f.kind == "flag" for f in verb.fields):
            value = "true"
        elif not sep:
            raise InvalidInput(f"{w!r}: write key=value", rule="bank.input")
        raw[key] = value
    return parse_fields(raw, verb, resolve)


def parse_fields(raw: Mapping[str, Any], verb: Verb,
                 resolve: Callable[[str], Role] | None = None) -> dict[str, Any]:
    known = {f.key: f for f in verb.fields}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise InvalidInput(f"{verb.name} takes {', '.join(known)}; not {', '.join(unknown)}",
                           rule="bank.input")
    out: dict[str, Any] = {}
    for f in verb.fields:
        if f.key in raw and raw[f.key] not in (None, ""):
            out[f.key] = parse_value(f, raw[f.key], resolve)
        elif f.required and f.kind not in ("flag",):
            raise InvalidInput(f"{verb.name} needs {f.key} ({f.help})", rule="bank.input")
        elif f.kind == "flag":
            out[f.key] = False
    return out


def _person_text(p: tuple[str, str] | Person) -> str:
    return f"{p[0]}:{Role(p[1]).value}"


# -- the verbs ------------------------------------------------------------------------------------
CHIPS = Field("chips", "chips", "chips by denomination, e.g. 2500x800")
COUNTER = Field("counter", "person", "who counts (dealer or boxperson)")
OBSERVER = Field("observer", "person", "who observes and signs (floorperson or above)")
CONTAINER = Field("container", "text", "the locked container", required=False)
REQUEST = Field("request", "int", "the request number")
SLIP = Field("serial", "int", "the slip")


def _count_args(a: dict[str, Any]) -> dict[str, Any]:
    nobody = ("", Role.SYSTEM)
    (c, cr), (o, orole) = a.get("counter", nobody), a.get("observer", nobody)
    return {"counter": c, "counter_role": cr, "observer": o, "observer_role": orole}


def _log(ctx: Context) -> dict[str, Any]:
    return {"table_log": ctx.table_log, "table_seq": ctx.table_seq, "totals": ctx.totals}


def _open(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    carrier = a.get("carrier", ("", Role.SYSTEM))
    observer = a.get("observer", ("", Role.SYSTEM))
    span = ctx.floor_tables(observer[0]) if ctx.floor_tables is not None \
        and observer[1] is Role.FLOORPERSON else ()
    return bank.open_table(a["chips"], crew=a["crew"], container=a.get("container", ""),
                           floor_tables=span, carrier=carrier[0],
                           carrier_role=carrier[1] if carrier[0] else None,
                           **_count_args(a), **_log(ctx))


def _supervise(bank: TableBank, me: Person, a: dict[str, Any],
               ctx: Context) -> list[bev.BankEvent]:
    person, role = a["person"]
    span = ctx.floor_tables(person) if ctx.floor_tables is not None else ()
    return bank.supervise(person, role, actor=me[0], role=me[1], floor_tables=span,
                          crew=bank.opened_crew())


def _acknowledge(bank: TableBank, me: Person, a: dict[str, Any],
                 ctx: Context) -> list[bev.BankEvent]:
    return bank.acknowledge(a["notice"], person=me[0], role=me[1])


def _close(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.close_table(a["chips"], container=a["container"],
                            location=a.get("location", "cage"), **_count_args(a), **_log(ctx))


def _count(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.count(a["purpose"], a["chips"], container=a.get("container", ""),
                      **_count_args(a), **_log(ctx))


def _drop(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.drop(a["box"], a["replacement"], a.get("chips", ()), team=a["team"],
                     **_count_args(a), **_log(ctx))


def _count_box(bank: TableBank, me: Person, a: dict[str, Any],
               ctx: Context) -> list[bev.BankEvent]:
    return bank.count_box(a["box"], a["items"], counters=a["counters"])


def _request(bank: TableBank, me: Person, a: dict[str, Any],
             ctx: Context) -> list[bev.BankEvent]:
    return bank.request(a["kind"], a["chips"], shift=a.get("shift", ""), actor=me[0],
                        role=me[1], electronic=a["electronic"], sign=not a["unsigned"])


def _sign(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.sign_request(a["request"], actor=me[0], role=me[1])


def _notify(bank: TableBank, me: Person, a: dict[str, Any],
            ctx: Context) -> list[bev.BankEvent]:
    return bank.notify_surveillance(a["request"], actor=me[0], role=me[1],
                                    officer=a.get("officer", ""))


def _issue(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.issue(a["request"], actor=me[0], role=me[1], serial=a.get("serial"))


def _carry(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.carry(a["serial"], officer=me[0], role=me[1])


def _sign_slip(bank: TableBank, me: Person, a: dict[str, Any],
               ctx: Context) -> list[bev.BankEvent]:
    return bank.sign_slip(a["serial"], actor=me[0], role=me[1])


def _receive(bank: TableBank, me: Person, a: dict[str, Any],
             ctx: Context) -> list[bev.BankEvent]:
    return bank.receive(a["serial"], a["chips"], counter=me[0], counter_role=me[1],
                        officer=a["officer"], table_seq=ctx.table_seq)


def _void(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.void(actor=me[0], role=me[1], reason=a["reason"],
                     request=a.get("request", 0), serial=a.get("serial", 0))


def _mover(reason: str, kind: str) -> Runner:
    def run(bank: TableBank, me: Person, a: dict[str, Any],
            ctx: Context) -> list[bev.BankEvent]:
        return bank.move(reason, kind, a["ref"], a["chips"], actor=me[0], role=me[1],
                         table_seq=ctx.table_seq)
    return run


def _retire(bank: TableBank, me: Person, a: dict[str, Any],
            ctx: Context) -> list[bev.BankEvent]:
    return bank.retire_chip_set(a["set"], actor=me[0], role=me[1])


def _hold(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context) -> list[bev.BankEvent]:
    return bank.investigate_hold(a["day"], a["hold"][0], a["history"], actor=me[0],
                                 role=me[1])


def _verbs() -> dict[str, Verb]:
    v = [
        Verb("open", "Open the table: crew checked, the opening count signed by two",
             (CHIPS, COUNTER, OBSERVER, Field("crew", "people", "the crew at the table"),
              CONTAINER, Field("carrier", "person", "security who brought the container",
                               required=False)), _open),
        Verb("supervise", "The floorperson who supervises this open table (the register)",
             (Field("person", "person", "a floorperson or above"),), _supervise),
        Verb("acknowledge", "A recipient read a notice (a discrepancy, a hold outside its band)",
             (Field("notice", "int", "the notice's number"),), _acknowledge),
        Verb("close", "Close the table: the closing count, the inventory locked away",
             (CHIPS, COUNTER, OBSERVER, Field("container", "text", "the locked container"),
              Field("location", "text", "where it is kept (cage, table)", required=False)),
             _close),
        Verb("count", "A Table Inventory Slip (shift, closed-daily, a recount)",
             (Field("purpose", "text", "opening, drop, closing, shift or closed-daily"), CHIPS,
              COUNTER, OBSERVER, CONTAINER), _count),
        Verb("drop", "Collect the drop box; at an open table, the drop-time count",
             (Field("box", "text", "the outgoing box"),
              Field("replacement", "text", "the box put on"),
              Field("chips", "chips", "the drop-time count", required=False),
              Field("counter", "person", "who counts (an open table)", required=False),
              Field("observer", "person", "who observes (an open table)", required=False),
              Field("team", "people", "the collection team")), _drop),
        Verb("count-box", "The count room's count of a drop box, typed",
             (Field("box", "text", "the box"),
              Field("items", "items", "currency:CENTS,counter-check:CENTS,chips:..,coupon:.."),
              Field("counters", "people", "the count team")), _count_box),
        Verb("request", "A Fill Request Slip or a credit request",
             (Field("kind", "text", "fill or credit"), Field("chips", "chips", "chips",
                                                             required=False),
              Field("shift", "text", "the shift (its start, e.g. 06:00)", required=False),
              Field("electronic", "flag", "the electronic path (465a.38(e))", required=False),
              Field("unsigned", "flag", "prepare without signing", required=False)), _request),
        Verb("sign", "Sign a request (floorperson or above)", (REQUEST,), _sign),
        Verb("notify-surveillance", "Tell surveillance of a fill or credit",
             (REQUEST, Field("officer", "text", "the officer named", required=False)), _notify),
        Verb("issue", "The chip bank's Fill or Credit Slip",
             (REQUEST, Field("serial", "int", "the pre-numbered slip (default: the next)",
                             required=False)), _issue),
        Verb("carry", "Security takes the chips and the slip", (SLIP,), _carry),
        Verb("sign-slip", "Sign a Credit (or Fill) Slip", (SLIP,), _sign_slip),
        Verb("receive", "The receiving count: the chips move",
             (SLIP, CHIPS, Field("officer", "text", "the officer who carried it")), _receive),
        Verb("void", "Void a request or slip (never edited)",
             (Field("request", "int", "the request", required=False),
              Field("serial", "int", "the slip", required=False),
              Field("reason", "text", "why")), _void),
        Verb("colour-change", "An equal-value exchange with a patron",
             (Field("ref", "text", "the exchange's reference"),
              Field("chips", "chips", "+ in, - out, e.g. 500x20,10000x-1")),
             _mover("colour-change", "exchange")),
        Verb("counter-check", "Chips issued against a Counter Check",
             (Field("ref", "text", "the counter check number"),
              Field("chips", "chips", "chips out, negative, e.g. 2500x-20")),
             _mover("counter-check", "counter-check")),
        Verb("retire-chip-set", "Retire a chip set (redeemed only at the cage)",
             (Field("set", "text", "the chip set"),), _retire),
        Verb("investigate-hold", "Hold a day's win-to-drop against the band",
             (Field("day", "text", "the gaming day"),
              Field("hold", "fractions", "the day's hold, e.g. 9/20"),
              Field("history", "fractions", "earlier days' holds")), _hold),
    ]
    return {x.name: _with_chip_set(x) for x in v}


CHIP_SET = Field("set", "text", "the chip set the chips are from (a retired set is refused)",
                 required=False)


def _with_chip_set(verb: Verb) -> Verb:
    """A step that moves chips names their chip set if asked: a retired set is refused
    (603a.10(b)) before anything is written."""
    if not any(f.kind == "chips" for f in verb.fields):
        return verb
    runner = verb.run

    def run(bank: TableBank, me: Person, a: dict[str, Any], ctx: Context
            ) -> list[bev.BankEvent]:
        chip_set = str(a.get("set") or "")
        if not chip_set:
            return runner(bank, me, a, ctx)
        bank.check_chip_set(chip_set)
        bank.chip_set = chip_set  # recorded on the step's chip events (the script's set=)
        try:
            return runner(bank, me, a, ctx)
        finally:
            bank.chip_set = ""

    return dataclasses.replace(verb, fields=(*verb.fields, CHIP_SET), run=run)


VERBS: dict[str, Verb] = _verbs()


# -- recorded steps back to words -------------------------------------------------------------
def _kv(key: str, value: Any) -> str:
    return f"{key}={quote(str(value), safe=':,./-+x')}"


def lines_of(events: Sequence[bev.BankEvent]) -> list[tuple[bev.BankEvent, str, list[str]]]:
    """Each step of a bank log as (its first event, verb, words); the events a step writes
    together (a count and its discrepancy, an electronic request and its slip) are one."""
    out: list[tuple[bev.BankEvent, str, list[str]]] = []
    # checkpoints are not steps: the steps replayed write them again
    events = [e for e in events if not isinstance(e, bev.TotalsNoted)]
    i = 0
    while i < len(events):
        e = events[i]
        nxt = events[i + 1] if i + 1 < len(events) else None
        take = 1
        words: list[str]
        if isinstance(e, bev.BankOpened):
            i += 1
            continue
        if isinstance(e, bev.InventoryCounted):
            after = list(events[i + 1:i + 3])
            disc = [x for x in after if isinstance(x, bev.DiscrepancyFound) and x.slip == e.slip]
            status = [x for x in after if isinstance(x, bev.TableStatusChanged)]
            take = 1 + len(disc) + len(status[:1])
            counts = [_kv("chips", format_chips(e.chips)),
                      _kv("counter", _person_text((e.counter, e.counter_role))),
                      _kv("observer", _person_text((e.observer, e.observer_role)))]
            if status and status[0].status == "open":
                s = status[0]
                verb = "open"
                words = [*counts, _kv("crew", ",".join(_person_text(c) for c in s.crew))]
                if e.container:
                    words.append(_kv("container", e.container))
                if s.carrier:
                    words.append(_kv("carrier", f"{s.carrier}:security"))
            elif status:
                verb = "close"
                words = [*counts, _kv("container", e.container),
                         _kv("location", status[0].location)]
            else:
                verb = "count"
                words = [_kv("purpose", e.purpose), *counts]
                if e.container:
                    words.append(_kv("container", e.container))
        elif isinstance(e, bev.DropBoxCollected):
            verb = "drop"
            words = [_kv("box", e.box), _kv("replacement", e.replacement)]
            if isinstance(nxt, bev.InventoryCounted) and nxt.purpose == "drop":
                take = 2
                if i + 2 < len(events) and isinstance(events[i + 2], bev.DiscrepancyFound):
                    take = 3
                words += [_kv("chips", format_chips(nxt.chips)),
                          _kv("counter", _person_text((nxt.counter, nxt.counter_role))),
                          _kv("observer", _person_text((nxt.observer, nxt.observer_role)))]
            words.append(_kv("team", ",".join(f"{p}:{_team_role(e, p)}" for p in e.team)))
        elif isinstance(e, bev.DropBoxCounted):
            verb = "count-box"
            words = [_kv("box", e.box), _kv("items", ",".join(f"{k}:{v}" for k, v in e.items)),
                     _kv("counters", ",".join(
                         f"{p}:{e.counter_roles[i] if e.counter_roles else 'count-team'}"
                         for i, p in enumerate(e.counters)))]
        elif isinstance(e, bev.SlipRequested):
            verb = "request"
            words = [_kv("kind", e.slip_kind), _kv("chips", format_chips(e.chips)),
                     _kv("shift", e.shift)]
            signed = isinstance(nxt, bev.RequestSigned) and nxt.request == e.request \
                and nxt.actor == e.actor and nxt.at == e.at
            if e.electronic:
                words.append("electronic")
            if signed:
                take = 2 + (1 if e.electronic else 0)
            else:
                words.append("unsigned")
        elif isinstance(e, bev.RequestSigned):
            verb, words = "sign", [_kv("request", e.request)]
        elif isinstance(e, bev.NoticeAcknowledged):
            verb, words = "acknowledge", [_kv("notice", e.notice)]
        elif isinstance(e, bev.SupervisorAssigned):
            verb, words = "supervise", [_kv("person", _person_text((e.person, e.person_role)))]
        elif isinstance(e, bev.SurveillanceNotified):
            verb, words = "notify-surveillance", [_kv("request", e.request)]
            if e.officer:
                words.append(_kv("officer", e.officer))
        elif isinstance(e, bev.SlipIssued):
            verb, words = "issue", [_kv("request", e.request), _kv("serial", e.serial)]
        elif isinstance(e, bev.SlipCarried):
            verb, words = "carry", [_kv("serial", e.serial)]
        elif isinstance(e, bev.SlipSignature):
            verb, words = "sign-slip", [_kv("serial", e.serial)]
        elif isinstance(e, bev.SlipCompleted):
            verb, words = "receive", [_kv("serial", e.serial),
                                      _kv("chips", format_chips(e.chips)),
                                      _kv("officer", e.officer)]
        elif isinstance(e, bev.SlipVoided):
            verb, words = "void", [_kv("request", e.request), _kv("reason", e.reason)]
        elif isinstance(e, bev.InventoryMoved):
            verb = e.reason
            words = [_kv("ref", e.source_ref), _kv("chips", format_chips(e.chips))]
        elif isinstance(e, bev.ChipSetRetired):
            verb, words = "retire-chip-set", [_kv("set", e.chip_set)]
        elif isinstance(e, bev.HoldInvestigated):
            verb, words = "investigate-hold", [_kv("day", e.gaming_day),
                                               _kv("hold", e.hold_exact),
                                               _kv("history", ",".join(e.history))]
        else:
            raise InvalidInput(f"{e.kind} is not the start of a bank step", rule="script.export")
        named = next((x.chip_set for x in events[i:i + take]
                      if isinstance(x, bev.ChipStep) and x.chip_set), "")
        if named:
            words.append(_kv("set", named))
        out.append((e, verb, words))
        i += take
    return out


def _team_role(e: bev.DropBoxCollected, person: str) -> str:
    return e.team_roles[e.team.index(person)] if e.team_roles else "count-team"
