"""Table-script format version 2: what a regulator's scenario needs beyond version 1.

Version 2 keeps every version-1 line and adds (``docs/table-scripts.md``):

- header lines ``custody pa|in|FILE [SITE]`` (the site's custody ledger, on the script's clock;
  the table then takes only dice issued to it) and ``person NAME ROLE [LICENCE]`` (someone the
  custody steps name: security, surveillance, a licence number);
- custody steps as commands, ``ACTOR ROLE dice-STEP ...``, the same steps as
  ``dicetable dice STEP``: one scenario walks dice from the dice room to the table and back;
- the ``re-cover`` verb (58 Pa. Code 585.3(e)): a lid taken off is put back explicitly;
- expectations for who is offered the dice, who holds the shaker and how, whether and how the
  last roll was voided (automatically or by whose call, on which grounds), rule-cited alerts of
  the table and of custody, and where a die is in custody.

Declared here, apart from the version-1 verbs, so the command catalogue can take them over.

>>> r = run_script('''
... dicetable-script 2
... pack pa-props-and-hops
... opener fran floorperson
... staff dee dealer
... seat 1 amy 100
... fran floorperson bring-dice P1 P2 witness=dee
... dee dealer shake
... dee dealer no-more-bets
... dee dealer offer-shaker amy
... expect shaker-with amy
... amy player player-shake 3
... amy player remove-lid
... expect shaker-state lid-off
... amy player return-shaker ! ProcedureViolation shaker.min_shakes
... amy player re-cover
... amy player player-shake 3
... amy player return-shaker
... expect shaker-with dealer
... ''')
>>> r.ok, str(r.failure or "")
(True, '')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dicetable.core.clock import Clock
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.roles import Role
from dicetable.custody import commands as ccmd
from dicetable.custody import events as cev
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import (
    Box,
    BoxInspection,
    CancelMethod,
    Check,
    DieCheck,
    DieState,
    Finding,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
    expand_serials,
    parse_inches,
)
from dicetable.custody.rules import PRESETS, load_custody_pack
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.table import commands as tcmd
from dicetable.table import events as tev

if TYPE_CHECKING:
    from dicetable.table.script import ScriptResult
    from dicetable.table.table import Table

VERSIONS = (1, 2)
"""The script format versions ``run_script`` reads (the first line names one)."""

HEADER = ("custody", "person")
"""Version-2 header lines."""


class V2SyntaxError(InvalidInput):
    """A version-2 line that cannot be read (the script runner adds the line number)."""


def _syntax(message: str) -> V2SyntaxError:
    return V2SyntaxError(message, rule="script.syntax")


@dataclass
class Extras:
    """What a version-2 script adds to the runner: its version, custody, its people."""

    version: int = 1
    custody: CustodyLedger | None = None
    people: dict[str, Person] = field(default_factory=dict)

    def needs_v2(self, what: str) -> None:
        if self.version < 2:
            raise _syntax(f"{what} needs 'dicetable-script 2' (this script is version "
                          f"{self.version})")


class Runner(Protocol):
    """What this module needs of the script runner (``dicetable.table.script._Runner``)."""

    @property
    def ext(self) -> Extras: ...
    @property
    def header(self) -> dict[str, Any]: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def base_dir(self) -> Path: ...
    @property
    def table(self) -> Table | None: ...


# -- the header -------------------------------------------------------------------------------
def header_line(runner: Runner, words: list[str]) -> None:
    key, args = words[0], words[1:]
    ext = runner.ext
    ext.needs_v2(f"the header line {key!r}")
    if key == "custody" and len(args) in (1, 2):
        if ext.custody is not None:
            raise _syntax("one custody ledger per script")
        name = args[0]
        where: str | Path = name if name in PRESETS or name in PRESETS.values() \
            else (runner.base_dir / name).resolve()
        ext.custody = CustodyLedger.open(load_custody_pack(where),
                                         args[1] if len(args) == 2 else "site",
                                         clock=runner.clock)
    elif key == "person" and len(args) in (2, 3):
        ext.people[args[0]] = Person(args[0], _role(args[1]), args[2] if len(args) == 3 else "")
    else:
        raise _syntax(f"cannot read header line {' '.join(words)!r}")


def _role(text: str) -> Role:
    try:
        return Role(text)
    except ValueError:
        raise _syntax(f"unknown role {text!r}; roles: {', '.join(r.value for r in Role)}") \
            from None


# -- table verbs of version 2 --------------------------------------------------------------------
TABLE_VERBS: dict[str, Callable[[dict[str, Any], list[str], dict[str, str]], gcmd.Command]] = {
    "re-cover": lambda b, a, o: tcmd.RecoverShaker(**b),
}
"""Version-2 verbs that are table commands."""


# -- custody steps ---------------------------------------------------------------------------
def _person(runner: Runner, spec: str) -> Person:
    """``NAME[:ROLE[:LICENCE]]``; what is left out comes from the ``person`` and ``staff``
    lines of the header."""
    parts = spec.split(":")
    name = parts[0].strip()
    if not name or len(parts) > 3:
        raise _syntax(f"not a person: {spec!r} (write NAME[:ROLE[:LICENCE]])")
    known = runner.ext.people.get(name)
    if len(parts) > 1:
        role = _role(parts[1])
    elif known is not None:
        role = known.role
    else:
        roles = [r for p, r in (*runner.header["staff"], runner.header["opener"]) if p == name]
        if len(roles) != 1:
            raise _syntax(f"{name}: name the role (NAME:ROLE), or add 'person {name} ROLE'")
        role = roles[0]
    licence = parts[2] if len(parts) == 3 else known.licence if known is not None else ""
    return Person(name, role, licence)


def _people(runner: Runner, specs: list[str]) -> tuple[Person, ...]:
    return tuple(_person(runner, s) for spec in specs for s in spec.split(",") if s)


def _split(words: list[str], options: tuple[str, ...]) -> tuple[list[str], dict[str, list[str]]]:
    """Positional words, and ``key=value`` options (``with=`` may repeat). A word whose key is
    not one of ``options`` is positional (``B1=I0001-I0005``, ``I0001=0.750,0.750,0.750``)."""
    plain: list[str] = []
    opts: dict[str, list[str]] = {}
    for w in words:
        key, eq, value = w.partition("=")
        if eq and key in options:
            opts.setdefault(key, []).append(value)
        else:
            plain.append(w)
    return plain, opts


def _one(opts: dict[str, list[str]], key: str, default: str | None = None) -> str:
    values = opts.get(key)
    if not values:
        if default is None:
            raise _syntax(f"{key}= is required")
        return default
    return values[-1]


def _serials(items: list[str]) -> tuple[str, ...]:
    return expand_serials(items)


def _yes(text: str) -> bool:
    if text not in ("yes", "no"):
        raise _syntax(f"expected yes or no, not {text!r}")
    return text == "yes"


Step = Callable[[Runner, dict[str, Any], list[str]], ccmd.CustodyCommand]


def _who(runner: Runner, actor: str, role: Role, opts: dict[str, list[str]]) -> dict[str, Any]:
    known = runner.ext.people.get(actor)
    return {"actor": actor, "role": role, "licence": known.licence if known else "",
            "witnesses": _people(runner, opts.get("with", []))}


def _receive(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("with", "manufacturer", "address", "phone", "seal-failed",
                              "finding", "tamper-finding"))
    if not plain:
        raise _syntax("dice-receive SHIPMENT BOX=SERIALS... manufacturer=NAME")
    broken = {b for v in o.get("seal-failed", []) for b in v.split(",")}
    boxes = []
    for item in plain[1:]:
        name, eq, serials = item.partition("=")
        if not eq or not name:
            raise _syntax(f"a box is BOX=SERIALS, not {item!r}")
        boxes.append(Box(name, _serials([serials]), name not in broken))
    where = {s: b.box for b in boxes for s in b.serials}
    found: dict[str, list[Finding]] = {b: [] for b in broken}
    for key, tampering in (("finding", False), ("tamper-finding", True)):
        for item in o.get(key, []):
            serial, _, problem = item.partition(":")
            if serial not in where:
                raise InvalidInput(f"{serial!r} is in none of the boxes", rule="custody.serials")
            found.setdefault(where[serial], []).append(Finding(serial, problem, tampering))
    return ccmd.ReceiveShipment(
        **_who(runner, base["actor"], base["role"], o), shipment=plain[0],
        manufacturer=Manufacturer(_one(o, "manufacturer"), _one(o, "address", ""),
                                  _one(o, "phone", "")),
        boxes=tuple(boxes),
        opened=tuple(BoxInspection(b, tuple(f)) for b, f in found.items()))


def _inspect(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("with", "fail", "tools", "surveillance"))
    failed: dict[str, set[Check]] = {}
    for item in o.get("fail", []):
        for part in item.split(","):
            serial, _, check = part.partition(":")
            try:
                failed.setdefault(serial, set()).add(Check(check))
            except ValueError:
                raise _syntax(f"unknown check {check!r}; checks: "
                              f"{', '.join(c.value for c in Check)}") from None
    checks = []
    for item in plain:
        serial, eq, sides = item.partition("=")
        if not eq:
            raise _syntax(f"a die is measured as SERIAL=SIDE,SIDE,SIDE, not {item!r}")
        checks.append(DieCheck(serial, tuple(parse_inches(s) for s in sides.split(",") if s),
                               tuple(c for c in Check if c not in failed.get(serial, set()))))
    tools = _one(o, "tools", "micrometer,balancing-caliper,steel-set-square,magnet")
    return ccmd.InspectDice(**_who(runner, base["actor"], base["role"], o), checks=tuple(checks),
                            tools=tuple(t for t in tools.split(",") if t),
                            under_surveillance=_yes(_one(o, "surveillance", "yes")))


def _issue_table(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("with", "to", "table"))
    table = runner.table
    table_id = _one(o, "table", table.id if table is not None else runner.header["table"])
    game = table.state.game if table is not None else "craps"
    return ccmd.IssueToTable(**_who(runner, base["actor"], base["role"], o),
                             dice=_serials(plain), table=table_id, game=game,
                             mode=PlayMode.SHAKER if game == "props-and-hops" else PlayMode.TABLE,
                             received_by=_person(runner, _one(o, "to")))


def _remove(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("with", "reason", "signs", "staff", "envelope", "detail"))
    dice = _serials(plain)
    try:
        reason = RemovalReason(_one(o, "reason"))
    except ValueError:
        raise _syntax(f"reason is one of {', '.join(r.value for r in RemovalReason)}") \
            from None
    # The envelope's list of the table's licensees is held against the staff the script's own
    # table has assigned (68 IAC 14-3-4(b)(4)(A)); custody of another table is not known here.
    assigned = None
    ledger, table = runner.ext.custody, runner.table
    if reason is RemovalReason.TAMPERED and ledger is not None and table is not None and any(
            ledger.state.dice.get(s) is not None and ledger.state.dice[s].table == table.id
            for s in dice):
        assigned = tuple(sorted(table.procedure.staff))
    return ccmd.RemoveDice(**_who(runner, base["actor"], base["role"], o), dice=dice,
                           reason=reason, signs=_one(o, "signs", ""),
                           table_staff=_people(runner, o.get("staff", [])),
                           assigned_at_table=assigned, envelope=_one(o, "envelope", ""),
                           detail=_one(o, "detail", ""))


def _cancel(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("with", "method", "hole", "approval"))
    try:
        method = CancelMethod(_one(o, "method"))
    except ValueError:
        raise _syntax(f"method is one of {', '.join(m.value for m in CancelMethod)}") from None
    hole = _one(o, "hole", "")
    return ccmd.CancelDice(**_who(runner, base["actor"], base["role"], o), dice=_serials(plain),
                           method=method, hole_in=parse_inches(hole) if hole else None,
                           approval=_one(o, "approval", ""))


def _key(cls: type[ccmd.DrawKey] | type[ccmd.ReturnKey]) -> Step:
    def build(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
        plain, o = _split(words, ())
        if len(plain) != 1 or plain[0] not in {k.value for k in Key}:
            raise _syntax(f"name the key: {' or '.join(k.value for k in Key)}")
        return cls(**_who(runner, base["actor"], base["role"], o), key=Key(plain[0]))

    return build


def _serial_step(make: Callable[[dict[str, Any], tuple[str, ...], dict[str, list[str]]],
                                ccmd.CustodyCommand],
                 *options: str) -> Step:
    def build(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
        plain, o = _split(words, ("with", *options))
        return make(_who(runner, base["actor"], base["role"], o), _serials(plain), o)

    return build


def _transfer(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("accepted-by",))
    return ccmd.TransferToCancellation(**_who(runner, base["actor"], base["role"], o),
                                       dice=_serials(plain),
                                       accepted_by=_person(runner, _one(o, "accepted-by")))


def _deliver(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("agent",))
    if len(plain) != 1:
        raise _syntax("dice-deliver ENVELOPE agent=NAME")
    return ccmd.DeliverEnvelope(**_who(runner, base["actor"], base["role"], o),
                                envelope=plain[0], agent=_one(o, "agent"))


CUSTODY_VERBS: dict[str, Step] = {
    "dice-key-draw": _key(ccmd.DrawKey),
    "dice-key-return": _key(ccmd.ReturnKey),
    "dice-receive": _receive,
    "dice-store": _serial_step(lambda w, d, o: ccmd.StoreDice(
        **w, dice=d, area=_one(o, "area", "dice-storage")), "area"),
    "dice-issue-day": _serial_step(lambda w, d, o: ccmd.IssueForGamingDay(
        **w, dice=d, gaming_day=_one(o, "day")), "day"),
    "dice-return-storage": _serial_step(lambda w, d, o: ccmd.ReturnToStorage(
        **w, dice=d, area=_one(o, "area", "dice-storage")), "area"),
    "dice-inspect": _inspect,
    "dice-issue-table": _issue_table,
    "dice-remove": _remove,
    "dice-deliver": _deliver,
    "dice-transfer": _transfer,
    "dice-cancel": _cancel,
    "dice-count": _serial_step(lambda w, d, o: ccmd.TakePhysicalInventory(**w, counted=d)),
    "dice-check": _serial_step(lambda w, d, o: ccmd.CheckDeadlines(**w)),
}
"""Custody steps in a script: ``ACTOR ROLE dice-STEP ...``, as ``dicetable dice STEP``."""


def custody_step(runner: Runner, words: list[str]) -> list[cev.CustodyEvent]:
    """Run one custody step on the script's ledger; a refusal raises, naming its rule."""
    from dicetable.table.script import _role as script_role

    ext = runner.ext
    ext.needs_v2(f"the custody step {words[2]!r}")
    if ext.custody is None:
        raise _syntax("custody steps need a 'custody pa|in' header line")
    base = {"actor": words[0], "role": script_role(words[1])}
    try:
        command = CUSTODY_VERBS[words[2]](runner, base, words[3:])
    except (IndexError, KeyError, ValueError) as e:
        if isinstance(e, DicetableError):
            raise
        raise _syntax(f"cannot read {words[2]!r} arguments: {' '.join(words[3:])}") from None
    return ext.custody.execute(command)


# -- expectations ------------------------------------------------------------------------------
def _kebab(kind: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", kind).lower()


CUSTODY_ALERTS = {cev.DiceOverdue: "dice-overdue", cev.InventoryOverdue: "inventory-overdue",
                  cev.InventoryDiscrepancyReported: "inventory-discrepancy",
                  cev.FairnessAlertRaised: "fairness-alert"}
"""The name each custody alert goes by in ``expect alert``."""


def alerts(runner: Runner) -> list[tuple[str, str]]:
    """Every alert raised so far, table and custody: (name, rule citation)."""
    found: list[tuple[str, str]] = []
    if runner.table is not None:
        found += [(e.name, e.rule) for e in runner.table.log if isinstance(e, tev.AlertRaised)]
    if runner.ext.custody is not None:
        found += [(CUSTODY_ALERTS.get(type(e), _kebab(e.kind)), e.rule)
                  for e in runner.ext.custody.log if e.alert]
    return found


def _voided(table: Table) -> gev.NoRollCalled | None:
    """The call or automatic void of the last roll, unless it was overturned since."""
    for e in reversed(table.log):
        if isinstance(e, tev.NoRollOverturned):
            return None
        if isinstance(e, gev.NoRollCalled):
            return e
        if isinstance(e, gev.DiceRolled):
            return None
    return None


def _expect_void(table: Table, args: list[str]) -> str | None:
    call = _voided(table)
    how = args[0]
    if how == "no":
        return None if call is None else f"the last roll was voided ({_show_void(call)})"
    if how not in ("automatic", "called"):
        raise _syntax("expect void no | automatic [GROUND...] | called BY [GROUND...]")
    if call is None:
        return "the last roll was not voided"
    rest = args[1:]
    if how == "automatic":
        if not call.automatic:
            return f"the last roll was voided by a call ({_show_void(call)})"
    else:
        if call.automatic:
            return f"the last roll was voided automatically ({_show_void(call)})"
        if not rest:
            raise _syntax("expect void called BY [GROUND...]")
        by, rest = rest[0], rest[1:]
        if call.actor != by:
            return f"the void was called by {call.actor}/{call.role.value}, not {by}"
    grounds, opts = [w for w in rest if "=" not in w], dict(w.split("=", 1) for w in rest
                                                             if "=" in w)
    if grounds and set(grounds) != set(call.grounds):
        return f"the grounds were {', '.join(call.grounds)}"
    seen = opts.get("observed")
    if seen is not None and set(seen.split(",")) - {""} != set(call.observed):
        return f"the facts observed with the call were {', '.join(call.observed) or 'none'}"
    return None


def _show_void(call: gev.NoRollCalled) -> str:
    how = "automatically" if call.automatic else f"called by {call.actor}"
    return f"{how} on {', '.join(call.grounds)}"


def _shaker_with(table: Table) -> str:
    p = table.procedure
    if p.shaker == "empty":
        return "none"
    return (p.shaker_holder or "none") if p.shaker == "offered" else "dealer"


def _shaker_state(table: Table) -> str:
    p = table.procedure
    return "lid-off" if p.lid_off else p.shaker


EXPECTATIONS = ("offered", "shaker-with", "shaker-state", "void", "alert", "no-alert", "die")
"""Expectations this module answers (``alert`` in every version; the rest from version 2)."""


def expect(runner: Runner, what: str, args: list[str]) -> str | None:
    """None when the expectation holds, else what differs."""
    table = runner.table
    assert table is not None
    if what != "alert":
        runner.ext.needs_v2(f"'expect {what}'")
    if what in ("alert", "no-alert"):
        name, cite = args[0], " ".join(args[1:])
        raised = alerts(runner)
        hits = [rule for n, rule in raised if n == name and cite in rule]
        if what == "no-alert":
            return None if not hits else f"{name} was raised ({hits[0]})"
        if hits:
            return None
        listing = "; ".join(f"{n} [{rule}]" for n, rule in raised) or "none"
        return f"no alert {name}{' citing ' + cite if cite else ''}; alerts: {listing}"
    if what == "offered":
        want = None if args[0] == "none" else args[0]
        got = table.procedure.offer_to
        return None if got == want else f"the dice are offered to {got or 'nobody'}"
    if what == "shaker-with":
        got = _shaker_with(table)
        return None if got == args[0] else f"the shaker is with {got}"
    if what == "shaker-state":
        got = _shaker_state(table)
        return None if got == args[0] else f"the shaker is {got}"
    if what == "void":
        return _expect_void(table, args)
    if what == "die":
        ledger = runner.ext.custody
        if ledger is None:
            raise _syntax("'expect die' needs a 'custody' header line")
        record = ledger.state.dice.get(args[0])
        try:
            want_state = DieState(args[1])
        except ValueError:
            raise _syntax(f"a die's state is one of {', '.join(s.value for s in DieState)}") \
                from None
        got = record.state.value if record else "not on record"
        return None if record is not None and record.state is want_state \
            else f"die {args[0]} is {got}"
    raise _syntax(f"unknown expectation {what!r}")


def run_script(text: str) -> ScriptResult:
    """``dicetable.table.script.run_script`` (for the doctest above)."""
    from dicetable.table.script import run_script as run

    return run(text)
