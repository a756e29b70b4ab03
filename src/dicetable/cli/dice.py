"""``dicetable dice``: each custody step, and the reports, on the store or a JSON-lines file.

With ``--db DB`` (a SQLite file or a ``postgresql://`` URL, the store ``dicetable serve`` runs
on) the site's ledger is its own stream ``custody:SITE`` in the one store, hash-chained beside
the tables (``--site`` picks the site when the store holds several). ``dicetable dice export``
and ``dicetable dice import`` move a ledger to and from the JSON-lines format: one event per
line, as ``dicetable.core.events.event_to_dict`` writes it. Without ``--db`` the commands work
on such a file (``--log``, default ``dice.jsonl``): each replays it, decides, appends the new
events (flushed and synced) and only then reports them.

Exit codes, the same for every step, so a lab's automation can rely on them:

- 0: the step was recorded and nothing it recorded is a non-compliance;
- 1: the step was recorded, and it records a non-compliance: a die failed inspection
  (``inspect``), a box's dice were found non-conforming (``receive``), the physical count
  differs from the record (``count``), dice are past their time limit or the inventory is
  overdue (``check``), a fairness alert was raised (``fairness``);
- 2: refused, or the input could not be read; nothing was recorded.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from dicetable.core.clock import Clock, FixedClock, SystemClock
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.events import Event, event_from_dict, event_to_dict
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody import reports
from dicetable.custody.ledger import CustodyLedger
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
from dicetable.custody.rules import derive_custody_pack, load_custody_pack
from dicetable.custody.transport import FileTransportNotice, Party, ProveReceipt
from dicetable.store.base import EventStore
from dicetable.store.custody import DurableCustody, custody_stream
from dicetable.store.open import open_store
from dicetable.store.streams import name_of

app = typer.Typer(help="Dice custody from receipt to cancellation (PA 603a.13, IN 68 IAC 14-3). "
                       "Exit 0: recorded; 1: recorded, and it is a non-compliance (failed "
                       "inspection, non-conforming dice, count discrepancy, an alert); "
                       "2: refused, nothing recorded.",
                  no_args_is_help=True)
key_app = typer.Typer(help="The two storage keys (PA 603a.13(c)).", no_args_is_help=True)
log_app = typer.Typer(help="The logs the regulations ask for.", no_args_is_help=True)
app.add_typer(key_app, name="key")
app.add_typer(log_app, name="log")
console = Console(soft_wrap=True)
errors = Console(soft_wrap=True, stderr=True)


@dataclass
class Options:
    log: Path
    at: str | None
    db: str | None = None
    site: str | None = None
    schema: str = "dicetable"


def _clock(at: str | None) -> Clock:
    if at is None:
        return SystemClock()
    try:
        when = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        _fail(InvalidInput(f"--at needs an ISO time such as 2026-03-02T08:00:00Z, not {at!r}",
                           rule="custody.time"))
    return FixedClock(when if when.tzinfo else when.replace(tzinfo=UTC))


EXIT_NONCOMPLIANT = 1
"""Recorded, and what was recorded is a non-compliance (see the module's docstring)."""
EXIT_REFUSED = 2
"""Refused or unreadable: nothing was recorded."""


def _fail(error: DicetableError) -> NoReturn:
    errors.print(f"[red]refused: {escape(str(error))}[/red]", highlight=False)
    raise typer.Exit(EXIT_REFUSED)


def noncompliance(events: list[ev.CustodyEvent]) -> list[str]:
    """What in ``events`` is a non-compliance: alerts, dice that failed inspection, dice found
    non-conforming in a box opened at receipt."""
    found: list[str] = []
    for e in events:
        if e.alert:
            found.append(reports.describe(e))
        elif isinstance(e, ev.DiceInspected):
            found += [f"{r.serial} failed inspection" for r in e.results if not r.passed]
        elif isinstance(e, ev.BoxOpenedAndInspected):
            found += [f"{f.serial}: {f.problem}" for f in e.findings]
    return found


@app.callback()
def main(ctx: typer.Context,
         log: Path = typer.Option(Path("dice.jsonl"), "--log", envvar="DICETABLE_DICE_LOG",
                                  help="The custody event file (JSON lines)"),
         at: str | None = typer.Option(None, "--at",
                                       help="Time of the step, ISO 8601 (default: now, UTC)"),
         db: str | None = typer.Option(None, "--db", envvar="DICETABLE_DICE_DB",
                                       help="The store: a SQLite file or a postgresql:// URL "
                                            "(instead of --log)"),
         site: str | None = typer.Option(None, "--site",
                                         help="With --db: the site whose ledger to use"),
         schema: str = typer.Option("dicetable", "--schema", help="PostgreSQL schema"),
         ) -> None:
    """Every step is recorded with who, in which role, when, and under which rule."""
    ctx.obj = Options(log, at, db, site, schema)


def _store(ctx: typer.Context, *, create: bool = False) -> EventStore:
    o: Options = ctx.obj
    assert o.db is not None
    try:
        store = open_store(o.db, schema=o.schema, create=create)
    except DicetableError as e:
        _fail(e)
    except Exception as e:  # a database that cannot be reached or read
        _fail(InvalidInput(f"cannot open {o.db}: {type(e).__name__}: {e}",
                           rule="store.location"))
    ctx.call_on_close(store.close)
    return store


def _site(ctx: typer.Context, store: EventStore) -> str:
    o: Options = ctx.obj
    sites = [name_of(s) for s in store.streams("custody")]
    if o.site is not None:
        if o.site not in sites:
            _fail(InvalidInput(f"{o.db} holds no custody ledger for site {o.site!r} (sites: "
                               f"{', '.join(sites) or 'none'})", rule="custody.open"))
        return o.site
    if len(sites) != 1:
        _fail(InvalidInput(f"{o.db} holds {len(sites)} custody ledgers "
                           f"({', '.join(sites) or 'none'}); name one with --site, or start "
                           "one with 'dicetable dice open'", rule="custody.open"))
    return sites[0]


# -- the event file ------------------------------------------------------------------------------
def read_events(path: Path) -> list[Event]:
    events: list[Event] = []
    try:
        lines = path.read_text("utf-8").splitlines()
    except FileNotFoundError:
        return events
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            events.append(event_from_dict(json.loads(line)))
        except json.JSONDecodeError as e:
            raise InvalidInput(f"{path}:{n}: not JSON ({e})", rule="events.log") from None
    return events


def _appender(path: Path) -> Any:
    def sink(events: Any) -> None:
        with path.open("a", encoding="utf-8") as f:
            for e in events:
                f.write(json.dumps(event_to_dict(e), ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())

    return sink


def _ledger(ctx: typer.Context) -> CustodyLedger:
    o: Options = ctx.obj
    if o.db is not None:
        store = _store(ctx)
        try:
            return DurableCustody.resume(store, _site(ctx, store), clock=_clock(o.at)).ledger
        except DicetableError as e:
            _fail(e)
    try:
        events = read_events(o.log)
        if not events:
            raise InvalidInput(f"{o.log} holds no custody record; start one with "
                               "'dicetable dice open'", rule="custody.open")
        return CustodyLedger.replay(events, clock=_clock(o.at), sink=_appender(o.log))
    except DicetableError as e:
        _fail(e)


def _run(ctx: typer.Context, command: cmd.CustodyCommand) -> None:
    ledger = _ledger(ctx)
    try:
        events = ledger.execute(command)
    except DicetableError as error:
        _fail(error)
    for e in events:
        style = "bold red" if e.alert else "green"
        console.print(f"[{style}]#{e.seq}[/{style}] {escape(reports.describe(e))}",
                      highlight=False)
        console.print(f"    [dim]{escape(e.rule)}[/dim]", highlight=False)
    if noncompliance(events):
        raise typer.Exit(EXIT_NONCOMPLIANT)


# -- people ---------------------------------------------------------------------------------------
ACTOR = typer.Option(..., "--actor", help="Who takes the step")
ROLE = typer.Option(..., "--role", help="Their role: " + ", ".join(r.value for r in Role))
LICENCE = typer.Option("", "--licence", help="Their occupational licence number")
WITH = typer.Option([], "--with", help="Another person present: NAME:ROLE[:LICENCE] (repeat)")
SERIALS = typer.Argument(..., help="Dice serials; D0001-D0010 is a range")


def _who(actor: str, role: str, licence: str, with_: list[str]) -> dict[str, Any]:
    try:
        return {"actor": actor, "role": Role(role), "licence": licence,
                "witnesses": tuple(Person.parse(w) for w in with_)}
    except ValueError as e:
        if isinstance(e, DicetableError):
            _fail(e)
        _fail(InvalidInput(f"unknown role {role!r}", rule="custody.person"))


def _serials(items: list[str]) -> tuple[str, ...]:
    if not items:
        return ()
    try:
        return expand_serials(items)
    except DicetableError as e:
        _fail(e)


def _person(text: str) -> Person:
    try:
        return Person.parse(text)
    except DicetableError as e:
        _fail(e)


# -- steps ----------------------------------------------------------------------------------------
@app.command("open")
def open_(ctx: typer.Context,
          jurisdiction: str = typer.Option(..., "--jurisdiction",
                                           help="pa, in, or a house custody pack file"),
          site: str = typer.Option(..., "--site", help="The casino"),
          time_zone: str | None = typer.Option(
              None, "--time-zone", help="The site's IANA time zone, when it is not the pack's "
                                        "(site.time_zone), e.g. America/Chicago"),
          actor: str = typer.Option("compliance", "--actor"),
          role: str = typer.Option(Role.SHIFT_MANAGER.value, "--role")) -> None:
    """Start a site's custody record under the PA or IN custody rules."""
    o: Options = ctx.obj
    if o.db is not None:
        store = _store(ctx, create=True)
        try:
            who = _who(actor, role, "", [])
            durable = DurableCustody.open(store, jurisdiction, site, clock=_clock(o.at),
                                          actor=who["actor"], role=who["role"])
        except DicetableError as e:
            _fail(e)
        first = durable.ledger.log[0]
        console.print(f"#{first.seq} {escape(reports.describe(first))} -> {store.location} "
                      f"({durable.stream})", highlight=False)
        return
    if read_events(o.log):
        _fail(InvalidInput(f"{o.log} already holds a custody record", rule="custody.open"))
    try:
        pack = load_custody_pack(jurisdiction)
        if time_zone is not None and time_zone != pack.value("site.time_zone"):
            pack = derive_custody_pack(pack, f"{pack.id}-{site}", {"site.time_zone": time_zone})
        ledger = CustodyLedger(clock=_clock(o.at), sink=_appender(o.log))
        events = ledger.execute(cmd.OpenCustody(**_who(actor, role, "", []), site=site,
                                                pack=pack))
    except DicetableError as e:
        _fail(e)
    console.print(f"#{events[0].seq} {escape(reports.describe(events[0]))} -> {o.log}",
                  highlight=False)


@key_app.command("draw")
def key_draw(ctx: typer.Context, key: Key = typer.Argument(..., help="security or table-games"),
             actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE) -> None:
    """Draw a storage key (only security, or table games at assistant shift manager or above)."""
    _run(ctx, cmd.DrawKey(**_who(actor, role, licence, []), key=key))


@key_app.command("return")
def key_return(ctx: typer.Context, key: Key = typer.Argument(...), actor: str = ACTOR,
               role: str = ROLE, licence: str = LICENCE) -> None:
    """Return a storage key."""
    _run(ctx, cmd.ReturnKey(**_who(actor, role, licence, []), key=key))


@app.command("receive")
def receive(ctx: typer.Context,
            shipment: str = typer.Option(..., "--shipment"),
            manufacturer: str = typer.Option(..., "--manufacturer"),
            address: str = typer.Option("", "--address", help="Manufacturer's business address"),
            phone: str = typer.Option("", "--phone", help="Manufacturer's business telephone"),
            box: list[str] = typer.Option(..., "--box", help="BOX=SERIALS, e.g. B1=D0001-D0050"),
            broken: list[str] = typer.Option([], "--seal-failed",
                                             help="A box whose seal failed (it is opened and "
                                                  "inspected now)"),
            finding: list[str] = typer.Option([], "--finding",
                                              help="SERIAL=PROBLEM found in an opened box"),
            tamper: list[str] = typer.Option([], "--tamper-finding",
                                             help="SERIAL=SIGNS of tampering in an opened box"),
            delivery_witness: str = typer.Option(
                "", "--delivery-witness", help="The gaming agent or Commission staff member "
                                               "present at the delivery (IN's stand-in rule)"),
            actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE,
            with_: list[str] = WITH) -> None:
    """Receive a shipment: two people, seals checked, failed boxes opened and inspected.

    Exits 1 when an opened box holds non-conforming or tampered dice.
    """
    boxes = []
    for item in box:
        name, _, serials = item.partition("=")
        if not name or not serials:
            _fail(InvalidInput(f"--box wants BOX=SERIALS, not {item!r}", rule="custody.shipment"))
        boxes.append(Box(name, _serials([serials]), name not in broken))
    where = {s: b.box for b in boxes for s in b.serials}
    findings: dict[str, list[Finding]] = {b: [] for b in broken}
    for item, tampering in [(f, False) for f in finding] + [(t, True) for t in tamper]:
        serial, _, problem = item.partition("=")
        if serial not in where:
            _fail(InvalidInput(f"{serial!r} is in none of the boxes", rule="custody.serials"))
        findings.setdefault(where[serial], []).append(Finding(serial, problem, tampering))
    _run(ctx, cmd.ReceiveShipment(
        **_who(actor, role, licence, with_), shipment=shipment,
        manufacturer=Manufacturer(manufacturer, address, phone), boxes=tuple(boxes),
        opened=tuple(BoxInspection(b, tuple(f)) for b, f in findings.items()),
        delivery_witness=delivery_witness))


@app.command("store")
def store(ctx: typer.Context, serials: list[str] = SERIALS,
          area: str = typer.Option("dice-storage", "--area"), actor: str = ACTOR,
          role: str = ROLE, licence: str = LICENCE, with_: list[str] = WITH) -> None:
    """Put received dice in the locked storage area (both key holders present)."""
    _run(ctx, cmd.StoreDice(**_who(actor, role, licence, with_), dice=_serials(serials),
                            area=area))


@app.command("issue-day")
def issue_day(ctx: typer.Context, serials: list[str] = SERIALS,
              gaming_day: str = typer.Option(..., "--gaming-day", help="YYYY-MM-DD"),
              actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE,
              with_: list[str] = WITH) -> None:
    """Take the gaming day's dice out of storage (shift manager, security present)."""
    _run(ctx, cmd.IssueForGamingDay(**_who(actor, role, licence, with_), dice=_serials(serials),
                                    gaming_day=gaming_day))


@app.command("return-storage")
def return_storage(ctx: typer.Context, serials: list[str] = SERIALS,
                   area: str = typer.Option("dice-storage", "--area"), actor: str = ACTOR,
                   role: str = ROLE, licence: str = LICENCE, with_: list[str] = WITH) -> None:
    """Put issued dice that never reached a table back in storage."""
    _run(ctx, cmd.ReturnToStorage(**_who(actor, role, licence, with_), dice=_serials(serials),
                                  area=area))


@app.command("inspect")
def inspect(ctx: typer.Context,
            die: list[str] = typer.Option(..., "--die",
                                          help="SERIAL=SIDE,SIDE,SIDE in inches (repeat)"),
            fail: list[str] = typer.Option([], "--fail", help="SERIAL:CHECK that failed; checks: "
                                                             + ", ".join(c.value for c in Check)),
            tools: list[str] = typer.Option(["micrometer", "balancing-caliper", "steel-set-square",
                                             "magnet"], "--tool"),
            surveillance: bool = typer.Option(True, "--surveillance/--no-surveillance"),
            actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE,
            with_: list[str] = WITH) -> None:
    """Inspect dice before play: three measured sides (0.750, 3/4) and the yes/no checks.

    Exits 1 when a die fails inspection (it is recorded, and quarantined).
    """
    failed: dict[str, set[Check]] = {}
    for item in fail:
        serial, _, check = item.partition(":")
        try:
            failed.setdefault(serial, set()).add(Check(check))
        except ValueError:
            _fail(InvalidInput(f"unknown check {check!r}", rule="custody.inspection"))
    checks = []
    for item in die:
        serial, _, sides = item.partition("=")
        try:
            measured = tuple(parse_inches(s) for s in sides.split(",") if s.strip())
        except DicetableError as e:
            _fail(e)
        passed = tuple(c for c in Check if c not in failed.get(serial, set()))
        checks.append(DieCheck(serial, measured, passed))
    _run(ctx, cmd.InspectDice(**_who(actor, role, licence, with_), checks=tuple(checks),
                              tools=tuple(tools), under_surveillance=surveillance))


@app.command("issue-table")
def issue_table(ctx: typer.Context, serials: list[str] = SERIALS,
                table: str = typer.Option(..., "--table"),
                game: str = typer.Option("craps", "--game"),
                mode: PlayMode = typer.Option(PlayMode.TABLE, "--mode"),
                received_by: str = typer.Option(..., "--received-by",
                                                help="NAME:ROLE[:LICENCE] at the table"),
                actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE,
                with_: list[str] = WITH) -> None:
    """Put inspected dice into play at a table (the time limit starts)."""
    _run(ctx, cmd.IssueToTable(**_who(actor, role, licence, with_), dice=_serials(serials),
                               table=table, game=game, mode=mode,
                               received_by=_person(received_by)))


@app.command("remove")
def remove(ctx: typer.Context, serials: list[str] = SERIALS,
           reason: RemovalReason = typer.Option(..., "--reason"),
           signs: str = typer.Option("", "--signs", help="For tampering: what suggests it"),
           staff: list[str] = typer.Option([], "--staff",
                                           help="For tampering: NAME:ROLE[:LICENCE] of each "
                                                "licensee at the table (repeat)"),
           envelope: str = typer.Option("", "--envelope", help="The envelope's number"),
           table_db: str | None = typer.Option(
               None, "--table-db", help="For tampering at a table: the table's store (SQLite "
                                        "file or postgresql:// URL); the --staff list is "
                                        "checked against the staff its log assigns there"),
           detail: str = typer.Option("", "--detail"),
           actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE,
           with_: list[str] = WITH) -> None:
    """Remove dice: tampered ones are sealed for the enforcement agent, others go to cancel.

    A tampered die at a table needs --signs and --staff (14-3-4(b)); with --table-db the
    envelope's list of the table's licensees is also checked against the staff that table's
    log assigns there, and without it (a table not run on this system) the names are taken
    as given.
    """
    dice_ = _serials(serials)
    assigned = None
    if reason is RemovalReason.TAMPERED and table_db is not None:
        ledger = _ledger(ctx)
        tables = {ledger.state.dice[s].table for s in dice_ if s in ledger.state.dice}
        table_id = next((t for t in tables if t), None)
        if table_id is not None:
            assigned = _assigned_staff(table_db, table_id)
    _run(ctx, cmd.RemoveDice(**_who(actor, role, licence, with_), dice=dice_,
                             reason=reason, signs=signs,
                             table_staff=tuple(_person(s) for s in staff), envelope=envelope,
                             assigned_at_table=assigned, detail=detail))


def _assigned_staff(location: str, table_id: str) -> tuple[str, ...]:
    """Who the table's own log has assigned at ``table_id`` now."""
    from dicetable.store.durable import DurableTable
    from dicetable.store.open import open_store
    from dicetable.table.procedure_state import procedure

    try:
        with open_store(location, create=False) as store:
            if not store.head(table_id).seq:
                raise InvalidInput(f"{location} holds no log of table {table_id}",
                                   rule="removal.envelope.licensees")
            table = DurableTable.resume(store, table_id, settle=False).table
    except DicetableError as e:
        _fail(e)
    return tuple(sorted(procedure(table.state).staff))


@app.command("deliver")
def deliver(ctx: typer.Context, envelope: str = typer.Argument(...),
            agent: str = typer.Option(..., "--agent", help="The enforcement agent's name"),
            actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE) -> None:
    """Hand a sealed tamper envelope to the enforcement agent."""
    _run(ctx, cmd.DeliverEnvelope(**_who(actor, role, licence, []), envelope=envelope,
                                  agent=agent))


@app.command("transfer")
def transfer(ctx: typer.Context, serials: list[str] = SERIALS,
             accepted_by: str = typer.Option(..., "--accepted-by",
                                             help="NAME:ROLE:LICENCE in the cancellation room"),
             actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE) -> None:
    """The pit manager signs removed dice over to the cancellation room."""
    _run(ctx, cmd.TransferToCancellation(**_who(actor, role, licence, []),
                                         dice=_serials(serials),
                                         accepted_by=_person(accepted_by)))


@app.command("cancel")
def cancel(ctx: typer.Context, serials: list[str] = SERIALS,
           method: CancelMethod = typer.Option(..., "--method"),
           hole: str | None = typer.Option(None, "--hole", help="Drilled hole, inches"),
           approval: str = typer.Option("", "--approval", help="For an approved method"),
           actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE,
           with_: list[str] = WITH) -> None:
    """Destroy dice in the cancellation room, under surveillance (--with NAME:surveillance).

    The hole is written as the regulation writes it (1/4) or as a decimal (0.25).
    """
    try:
        hole_in: Decimal | None = parse_inches(hole) if hole is not None else None
    except DicetableError as e:
        _fail(e)
    _run(ctx, cmd.CancelDice(**_who(actor, role, licence, with_), dice=_serials(serials),
                             method=method, hole_in=hole_in, approval=approval))


@app.command("count")
def count(ctx: typer.Context,
          serials: list[str] | None = typer.Argument(None, help="Every die found"),
          actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE,
          with_: list[str] = WITH) -> None:
    """The physical inventory: reconciled at once, any discrepancy raised as an alert.

    Exits 1 when the count differs from the record.
    """
    _run(ctx, cmd.TakePhysicalInventory(**_who(actor, role, licence, with_),
                                        counted=_serials(serials or [])))


@app.command("check")
def check(ctx: typer.Context, actor: str = typer.Option("deadline-sweep", "--actor"),
          role: str = typer.Option(Role.SYSTEM.value, "--role")) -> None:
    """Raise alerts for dice past their time limit and an overdue physical inventory.

    Exits 1 when it raises an alert.
    """
    _run(ctx, cmd.CheckDeadlines(**_who(actor, role, "", [])))


# -- reports ---------------------------------------------------------------------------------------
@app.command("report")
def report(ctx: typer.Context, as_json: bool = typer.Option(False, "--json"),
           history: bool = typer.Option(True, "--history/--no-history"),
           in_building: bool = typer.Option(False, "--in-building",
                                            help="Only dice still in the building")) -> None:
    """The pit report: every die, where it is, and its history."""
    ledger = _ledger(ctx)
    data = reports.pit_report(ledger.state, ledger.log, include_gone=not in_building)
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        typer.echo(reports.pit_report_text(data, history=history))


def _rows(rows: list[dict[str, Any]], columns: list[str], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        typer.echo(reports.rows_text(rows, columns))


@log_app.command("pit")
def log_pit(ctx: typer.Context, as_json: bool = typer.Option(False, "--json")) -> None:
    """Pit-area removal and transfer log (68 IAC 14-3-8(a))."""
    ledger = _ledger(ctx)
    _rows(reports.pit_log(ledger.state, ledger.log),
          ["date", "decks_removed", "dice_removed", "game_removed_from", "pit_manager",
           "pit_manager_licence", "signed_by"], as_json)


@log_app.command("cancellation")
def log_cancellation(ctx: typer.Context, as_json: bool = typer.Option(False, "--json")) -> None:
    """Cancellation-room log (68 IAC 14-3-8(b))."""
    ledger = _ledger(ctx)
    _rows(reports.cancellation_log(ledger.state, ledger.log),
          ["date", "entry", "decks", "dice", "person", "licence", "method",
           "uncancelled_dice_held"], as_json)


@log_app.command("inventory")
def log_inventory(ctx: typer.Context, as_json: bool = typer.Option(False, "--json")) -> None:
    """Dice inventory record: receipts, daily quantities, physical counts (68 IAC 14-3-5)."""
    ledger = _ledger(ctx)
    data = reports.inventory_record(ledger.state, ledger.log)
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    typer.echo("Receipts")
    typer.echo(reports.rows_text(data["receipts"], ["date", "quantity", "shipment",
                                                    "manufacturer", "address", "phone"]))
    typer.echo("\nDaily")
    typer.echo(reports.rows_text(data["daily"], ["date", "put_into_play", "removed_tampering",
                                                 "cancelled"]))
    typer.echo("\nPhysical inventories")
    typer.echo(reports.rows_text(data["physical_inventories"],
                                 ["date", "counted", "on_record", "missing", "unexpected"]))
    typer.echo(f"\n{data['on_record_now']} dice on record in the building now")


@app.command("rules")
def rules(jurisdiction: str = typer.Argument("pa", help="pa, in, or a house custody pack"),
          as_json: bool = typer.Option(False, "--json")) -> None:
    """Every custody rule with its value, citation and status."""
    try:
        pack = load_custody_pack(jurisdiction)
    except DicetableError as e:
        _fail(e)
    if as_json:
        typer.echo(json.dumps(pack.to_dict(), indent=2, ensure_ascii=False))
        return
    rows = [{"rule": r.id, "value": r.value if isinstance(r.value, str) else json.dumps(r.value),
             "status": r.status.value, "citation": r.citation}
            for r in sorted(pack, key=lambda r: r.id)]
    typer.echo(f"{pack.id}: {pack.name}")
    typer.echo(reports.rows_text(rows, ["rule", "value", "status", "citation"]))


@app.command("fairness")
def fairness(ctx: typer.Context,
             events: Path | None = typer.Argument(
                 None, help="Table events as JSON lines: a table's event log or the output of "
                            "'dicetable export' (DiceRolled events are read; others skipped)"),
             db: str | None = typer.Option(None, "--db", help="Read the rolls from a table "
                                           "store instead (SQLite file or postgresql:// URL)"),
             tables: list[str] = typer.Option([], "--table", help="With --db: only these "
                                              "tables"),
             as_json: bool = typer.Option(False, "--json"),
             record: bool = typer.Option(False, "--record",
                                         help="Add each alert to the dice's custody history"),
             delta: float = typer.Option(0.05, "--delta", help="CUSUM design bias"),
             h: float = typer.Option(4.6, "--h", help="CUSUM alarm level")) -> None:
    """Per-die and per-pair fairness statistics over recorded rolls, with CUSUM alerts.

    Exits 1 when a CUSUM alert is raised.
    """
    from dicetable.cli.fairness_input import rolls_from_file, rolls_from_store, sample_notes
    from dicetable.fairness.monitor import FairnessMonitor  # NumPy/SciPy: only when needed
    from dicetable.fairness.sequential import CusumDesign

    try:
        if (events is None) == (db is None):
            raise InvalidInput("give a file of table events, or --db STORE", rule="fairness")
        rolls = rolls_from_store(db, tables) if db is not None else \
            rolls_from_file(events) if events is not None else []
        monitor = FairnessMonitor.replay(rolls, CusumDesign(delta, h))
    except (DicetableError, ValueError) as e:
        _fail(e if isinstance(e, DicetableError) else InvalidInput(str(e), rule="fairness"))
    data = monitor.report()
    notes = sample_notes(data)
    if as_json:
        typer.echo(json.dumps({**data, "warnings": notes}, indent=2, ensure_ascii=False))
    else:
        typer.echo(f"CUSUM delta={delta} h={h}; {data['design']['basis']}")
        typer.echo(reports.rows_text(
            [{**d, "p": f"{d['p_value']:.4f}" if d.get("sample_ok", True) else "too few",
              "chi2": f"{d['statistic']:.2f}" if d.get("sample_ok", True) else "-",
              "counts": " ".join(map(str, d["counts"]))} for d in data["dice"]],
            ["serial", "rolls", "counts", "chi2", "p", "alerts"]))
        for note in notes:
            typer.echo(f"note: {note}")
        for a in data["alerts"]:
            typer.echo(f"ALERT {a['serial']}: {a['detail']} (CUSUM {a['statistic']:.2f})")
    if record and monitor.alerts:
        for alert in monitor.alerts:
            try:
                _run(ctx, alert.to_command())
            except typer.Exit as done:
                if done.exit_code != EXIT_NONCOMPLIANT:
                    raise
    if monitor.alerts:
        raise typer.Exit(EXIT_NONCOMPLIANT)


# -- moving a ledger between the store and the JSON-lines format ---------------------------------
@app.command("export")
def export(ctx: typer.Context,
           out: Path | None = typer.Option(None, "--out", help="Write here instead of stdout"),
           ) -> None:
    """Write the ledger of --db as JSON lines (one event a line), the format --log reads."""
    o: Options = ctx.obj
    if o.db is None:
        _fail(InvalidInput("export reads a ledger from a store: give --db", rule="custody.open"))
    ledger = _ledger(ctx)
    lines = [json.dumps(event_to_dict(e), ensure_ascii=False) for e in ledger.log]
    if out is None:
        for line in lines:
            typer.echo(line)
        return
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    errors.print(f"{len(lines)} custody events of {ledger.state.site} written to {out}")


@app.command("import")
def import_(ctx: typer.Context,
            source: Path = typer.Argument(..., help="A custody event file (JSON lines)")) -> None:
    """Load a JSON-lines custody ledger into --db as the site's stream (checked first: the
    file must replay as a custody record, and the store may not hold that site already)."""
    o: Options = ctx.obj
    if o.db is None:
        _fail(InvalidInput("import writes a ledger into a store: give --db",
                           rule="custody.open"))
    try:
        events = read_events(source)
        ledger = CustodyLedger.replay(events)
    except DicetableError as e:
        _fail(e)
    if not events:
        _fail(InvalidInput(f"{source} holds no custody record", rule="custody.open"))
    store = _store(ctx, create=True)
    stream = custody_stream(ledger.state.site)
    if store.head(stream).seq:
        _fail(InvalidInput(f"{o.db} already holds the custody ledger of "
                           f"{ledger.state.site!r}", rule="custody.open"))
    try:
        store.append(stream, ledger.log, expected=0)
    except DicetableError as e:
        _fail(e)
    console.print(f"{len(ledger.log)} custody events of {ledger.state.site} imported into "
                  f"{store.location} ({stream})", highlight=False)


# -- transport (68 IAC 14-3-10) -----------------------------------------------------------------
def _party(text: str) -> Party:
    parts = [p.strip() for p in text.split(";")]
    if len(parts) != 3:
        _fail(InvalidInput(f"write NAME;BUSINESS ADDRESS;TELEPHONE, not {text!r}",
                           rule="transport.notice_days"))
    return Party(*parts)


@app.command("transport-notice")
def transport_notice(ctx: typer.Context,
                     notice: str = typer.Option(..., "--notice", help="The notice's id"),
                     supplier: str = typer.Option(..., "--supplier", help="NAME;ADDRESS;PHONE"),
                     method: str = typer.Option(..., "--method", help="How they travel"),
                     carrier: list[str] = typer.Option(..., "--carrier",
                                                       help="NAME;ADDRESS;PHONE (repeat)"),
                     recipient: str = typer.Option(..., "--recipient", help="NAME;ADDRESS;PHONE"),
                     responsible: str = typer.Option(
                         ..., "--responsible",
                         help="The individual responsible for the supplier;carrier;recipient"),
                     quantity: int = typer.Option(..., "--quantity"),
                     description: str = typer.Option(..., "--description"),
                     delivery: str = typer.Option(..., "--delivery",
                                                  help="Expected delivery, ISO 8601 with zone"),
                     notified: str = typer.Option("", "--notified",
                                                  help="When the notice was given (default: now)"),
                     actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE) -> None:
    """Record the written notice of a dice shipment (IN: at least ten days before delivery)."""
    people = [p.strip() for p in responsible.split(";")]
    if len(people) != 3:
        _fail(InvalidInput("--responsible names three people: supplier;carrier;recipient",
                           rule="transport.notice_days"))
    _run(ctx, FileTransportNotice(
        **_who(actor, role, licence, []), notice=notice, supplier=_party(supplier),
        method=method, carriers=tuple(_party(c) for c in carrier), recipient=_party(recipient),
        responsible_supplier=people[0], responsible_carrier=people[1],
        responsible_recipient=people[2], quantity=quantity, description=description,
        delivery_at=delivery, notified_at=notified))


@app.command("prove-receipt")
def prove_receipt(ctx: typer.Context, notice: str = typer.Option(..., "--notice"),
                  shipment: str = typer.Option(..., "--shipment"),
                  requested_by: str = typer.Option(..., "--requested-by"),
                  actor: str = ACTOR, role: str = ROLE, licence: str = LICENCE) -> None:
    """Prove receipt of a shipment on the executive director's request (IN 14-3-10(b))."""
    _run(ctx, ProveReceipt(**_who(actor, role, licence, []), notice=notice, shipment=shipment,
                           requested_by=requested_by))
