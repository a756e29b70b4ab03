"""Custody steps inside a table script (format version 2): ``ACTOR ROLE dice-STEP ...``.

The same steps, rules and refusals as ``dicetable dice STEP``, on the script's custody ledger
and clock, so one scenario walks dice from the dice room to the table and back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.roles import Role
from dicetable.custody import commands as ccmd
from dicetable.custody import events as cev
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
from dicetable.games.variant import variant_of
from dicetable.table.script_v2 import Runner, parse_role, syntax_error


# -- custody steps ---------------------------------------------------------------------------
def _person(runner: Runner, spec: str) -> Person:
    """``NAME[:ROLE[:LICENCE]]``; what is left out comes from the ``person`` and ``staff``
    lines of the header."""
    parts = spec.split(":")
    name = parts[0].strip()
    if not name or len(parts) > 3:
        raise syntax_error(f"not a person: {spec!r} (write NAME[:ROLE[:LICENCE]])")
    known = runner.ext.people.get(name)
    if len(parts) > 1:
        role = parse_role(parts[1])
    elif known is not None:
        role = known.role
    else:
        roles = [r for p, r in (*runner.header["staff"], runner.header["opener"]) if p == name]
        if len(roles) != 1:
            raise syntax_error(f"{name}: name the role (NAME:ROLE), or add 'person {name} ROLE'")
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
            raise syntax_error(f"{key}= is required")
        return default
    return values[-1]


def _serials(items: list[str]) -> tuple[str, ...]:
    return expand_serials(items)


def _yes(text: str) -> bool:
    if text not in ("yes", "no"):
        raise syntax_error(f"expected yes or no, not {text!r}")
    return text == "yes"


Step = Callable[[Runner, dict[str, Any], list[str]], ccmd.CustodyCommand]


def _who(runner: Runner, actor: str, role: Role, opts: dict[str, list[str]]) -> dict[str, Any]:
    known = runner.ext.people.get(actor)
    return {"actor": actor, "role": role, "licence": known.licence if known else "",
            "witnesses": _people(runner, opts.get("with", []))}


def _receive(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("with", "manufacturer", "address", "phone", "seal-failed",
                              "finding", "tamper-finding", "delivery-witness"))
    if not plain:
        raise syntax_error("dice-receive SHIPMENT BOX=SERIALS... manufacturer=NAME")
    broken = {b for v in o.get("seal-failed", []) for b in v.split(",")}
    boxes = []
    for item in plain[1:]:
        name, eq, serials = item.partition("=")
        if not eq or not name:
            raise syntax_error(f"a box is BOX=SERIALS, not {item!r}")
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
        boxes=tuple(boxes), delivery_witness=_one(o, "delivery-witness", ""),
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
                raise syntax_error(f"unknown check {check!r}; checks: "
                              f"{', '.join(c.value for c in Check)}") from None
    checks = []
    for item in plain:
        serial, eq, sides = item.partition("=")
        if not eq:
            raise syntax_error(f"a die is measured as SERIAL=SIDE,SIDE,SIDE, not {item!r}")
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
    # The game's variant says whether its dice go into a shaker (Props & Hops).
    shaker = variant_of(game).has_shaker
    return ccmd.IssueToTable(**_who(runner, base["actor"], base["role"], o),
                             dice=_serials(plain), table=table_id, game=game,
                             mode=PlayMode.SHAKER if shaker else PlayMode.TABLE,
                             received_by=_person(runner, _one(o, "to")))


def _remove(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
    plain, o = _split(words, ("with", "reason", "signs", "staff", "envelope", "detail"))
    dice = _serials(plain)
    try:
        reason = RemovalReason(_one(o, "reason"))
    except ValueError:
        raise syntax_error(f"reason is one of {', '.join(r.value for r in RemovalReason)}") \
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
        raise syntax_error(f"method is one of {', '.join(m.value for m in CancelMethod)}") from None
    hole = _one(o, "hole", "")
    return ccmd.CancelDice(**_who(runner, base["actor"], base["role"], o), dice=_serials(plain),
                           method=method, hole_in=parse_inches(hole) if hole else None,
                           approval=_one(o, "approval", ""))


def _key(cls: type[ccmd.DrawKey] | type[ccmd.ReturnKey]) -> Step:
    def build(runner: Runner, base: dict[str, Any], words: list[str]) -> ccmd.CustodyCommand:
        plain, o = _split(words, ())
        if len(plain) != 1 or plain[0] not in {k.value for k in Key}:
            raise syntax_error(f"name the key: {' or '.join(k.value for k in Key)}")
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
        raise syntax_error("dice-deliver ENVELOPE agent=NAME")
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
    ext = runner.ext
    ext.needs_v2(f"the custody step {words[2]!r}")
    if ext.custody is None:
        raise syntax_error("custody steps need a 'custody pa|in' header line")
    base = {"actor": words[0], "role": parse_role(words[1])}
    try:
        command = CUSTODY_VERBS[words[2]](runner, base, words[3:])
    except (IndexError, KeyError, ValueError) as e:
        if isinstance(e, DicetableError):
            raise
        raise syntax_error(f"cannot read {words[2]!r} arguments: {' '.join(words[3:])}") from None
    return ext.custody.execute(command)


