"""``dicetable dice``: each custody step, and the reports, on the store or a JSON-lines file.

The steps' commands, their options and their help are generated from the custody catalogue
(``dicetable.custody.catalogue``); a step's older name (``dice inventory``) is still read.

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

import inspect
import json
import keyword
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.markup import escape

from dicetable.application.service import Acted, Acting, Bare, Holds, Local
from dicetable.application.streams import open_custody, open_log, opened
from dicetable.cli.main import SUBCOMMAND_STYLE
from dicetable.cli.output import output
from dicetable.core.clock import Clock, FixedClock, SystemClock
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.events import Event, event_from_dict, event_to_dict
from dicetable.core.roles import Role
from dicetable.core.textinput import decode_utf8, parse_json
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody import reports
from dicetable.custody.catalogue import CATALOGUE, Entry, Kind, from_text
from dicetable.custody.catalogue import Context as CustodyContext
from dicetable.custody.catalogue import Field as CustodyField
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.rules import derive_custody_pack, load_custody_pack
from dicetable.store.base import EventStore, name_of
from dicetable.store.custody import DurableCustody, custody_stream
from dicetable.store.open import open_store

app = typer.Typer(
    **SUBCOMMAND_STYLE,
    help="Dice custody from receipt to cancellation (PA 603a.13, IN 68 IAC 14-3). "
                       "Exit 0: recorded; 1: recorded, and it is a non-compliance (failed "
                       "inspection, non-conforming dice, count discrepancy, an alert); "
                       "2: refused, nothing recorded.",
                  no_args_is_help=True)
key_app = typer.Typer(
    **SUBCOMMAND_STYLE, help="The two storage keys (PA 603a.13(c)).", no_args_is_help=True)
log_app = typer.Typer(
    **SUBCOMMAND_STYLE, help="The logs the regulations ask for.", no_args_is_help=True)
app.add_typer(key_app, name="key")
app.add_typer(log_app, name="log")
console = output()
errors = output(stderr=True)


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
        raw = path.read_bytes()
    except FileNotFoundError:
        return events
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror}", rule="events.log") from None
    for n, line in enumerate(decode_utf8(raw, str(path), rule="events.log").splitlines(), 1):
        if line.strip():
            events.append(event_from_dict(parse_json(line, f"{path} line {n}",
                                                     rule="events.log")))
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
    return _held(ctx)[1]


def _held(ctx: typer.Context) -> tuple[Holds, CustodyLedger]:
    """The site's ledger, held on the store (``--db``) or on its file (``--log``)."""
    o: Options = ctx.obj
    if o.db is not None:
        store = _store(ctx)
        try:
            durable = DurableCustody.resume(store, _site(ctx, store), clock=_clock(o.at))
        except DicetableError as e:
            _fail(e)
        return durable, durable.ledger
    try:
        events = read_events(o.log)
        if not events:
            raise InvalidInput(f"{o.log} holds no custody record; start one with "
                               "'dicetable dice open'", rule="custody.open")
        ledger = CustodyLedger.replay(events, clock=_clock(o.at), sink=_appender(o.log))
    except DicetableError as e:
        _fail(e)
    return Bare(ledger), ledger


def _run(ctx: typer.Context, command: cmd.CustodyCommand,
         caller: Acting | None = None) -> None:
    """Take the step through the application's one way in (``Application.submit``), as the
    dice room's routes do: in the caller's name and role, durable before it is answered."""
    held, ledger = _held(ctx)
    app = Local()
    stream = custody_stream(ledger.state.site)
    app.hold(stream, held)
    try:
        answer = app.submit(stream, Acted(caller or Acting(command.actor, command.role),
                                          command))
        assert answer is not None
        events: list[ev.CustodyEvent] = answer.result()
    except DicetableError as error:
        _fail(error)
    for e in events:
        style = "bold red" if e.alert else "green"
        console.print(f"[{style}]#{e.seq}[/{style}] {escape(reports.describe(e))}",
                      highlight=False)
        console.print(f"    [dim]{escape(e.rule)}[/dim]", highlight=False)
    if noncompliance(events):
        raise typer.Exit(EXIT_NONCOMPLIANT)


# -- the steps, from the custody catalogue ---------------------------------------------------------
def _who(actor: str, role: str) -> dict[str, Any]:
    try:
        return {"actor": actor, "role": Role(role)}
    except ValueError:
        _fail(InvalidInput(f"unknown role {role!r}", rule="custody.person"))


class _Context(CustodyContext):
    """A step on the command line: people written NAME:ROLE[:LICENCE], a table's store."""

    def __init__(self, ctx: typer.Context) -> None:
        self.ctx = ctx

    def assigned(self, dice: tuple[str, ...], where: str | None) -> tuple[str, ...] | None:
        if where is None:
            return None
        ledger = _ledger(self.ctx)
        tables = {ledger.state.dice[s].table for s in dice if s in ledger.state.dice}
        table_id = next((t for t in tables if t), None)
        return _assigned_staff(where, table_id) if table_id is not None else None


def _param(f: CustodyField) -> inspect.Parameter:
    """A step's field as a Typer parameter: an argument, an option, a repeated option."""
    name = f"{f.name}_" if keyword.iskeyword(f.name) else f.name
    flags = () if f.cli_positional else (f.cli_flag,)
    if f.multi:
        kind: Any = list[str]
        if f.cli_positional:
            info = typer.Argument(... if f.required else None, metavar=f.name.upper(),
                                  help=f.help)
            kind = list[str] if f.required else list[str] | None
        else:
            info = typer.Option(... if f.required else list(f.default or ()), *flags,
                                help=f.help)
    else:
        kind = {Kind.FLAG: bool, Kind.INT: int, Kind.CHOICE: f.choices}.get(f.kind, str)
        default = ... if f.required else f.default
        if default is None:
            kind = kind | None
        info = typer.Argument(default, metavar=f.name.upper(), help=f.help) \
            if f.cli_positional else \
            typer.Option(default, *flags, help=f.help)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info,
                             annotation=kind)


def _step(entry: Entry) -> Callable[..., None]:
    """The ``dicetable dice`` command of a catalogued step."""
    fields = [f for f in entry.all_fields if f.on_cli]
    actor, role = entry.who or (..., ...)

    def command(ctx: typer.Context, **given: Any) -> None:
        values = {f.name: given[f"{f.name}_" if keyword.iskeyword(f.name) else f.name]
                  for f in fields}
        caller = Acting(given["actor"], _who(given["actor"], given["role"])["role"])
        try:
            step = entry.make(caller.name, caller.role, given["licence"],
                              from_text(entry, values), _Context(ctx))
        except DicetableError as e:
            _fail(e)
        _run(ctx, step, caller)

    who = [("actor", str, typer.Option(actor, "--actor", help="Who takes the step")),
           ("role", str, typer.Option(role if isinstance(role, str) else
                                      role.value if role is not ... else ..., "--role",
                                      help="Their role: " + ", ".join(r.value for r in Role))),
           ("licence", str, typer.Option("", "--licence",
                                         help="Their occupational licence number"))]
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           annotation=typer.Context),
         *(_param(f) for f in fields),
         *(inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=t)
           for n, t, d in who)])
    command.__name__ = entry.name.replace("-", "_")
    command.__doc__ = entry.help + "."
    return command


def _install_steps() -> None:
    """Every catalogued step under its CLI words (and its older names, hidden)."""
    for entry in CATALOGUE:
        words = entry.cli_words
        if not words:
            continue
        group = key_app if words[0] == "key" else app
        name = words[-1]
        group.command(name)(_step(entry))
        for alias in entry.aliases:
            app.command(alias, hidden=True)(_step(entry))



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
    # The opening is the ledger's OpenCustody, given to Application.submit as an Open.
    if o.db is not None:
        store = _store(ctx, create=True)
        who = _who(actor, role)
        try:
            durable = open_custody(Local(), store, jurisdiction, site,
                                   Acting(who["actor"], who["role"]), clock=_clock(o.at))
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
        opened(Local(), custody_stream(site),
               cmd.OpenCustody(**_who(actor, role), site=site, pack=pack), Bare(ledger))
    except DicetableError as e:
        _fail(e)
    first = ledger.log[0]
    console.print(f"#{first.seq} {escape(reports.describe(first))} -> {o.log}",
                  highlight=False)



def _assigned_staff(location: str, table_id: str) -> tuple[str, ...]:
    """Who the table's own log has assigned at ``table_id`` now."""
    from dicetable.store.durable import DurableTable
    from dicetable.store.open import open_store
    from dicetable.table.procedure import procedure

    try:
        with open_store(location, create=False) as store:
            if not store.head(table_id).seq:
                raise InvalidInput(f"{location} holds no log of table {table_id}",
                                   rule="removal.envelope.licensees")
            table = DurableTable.resume(store, table_id, settle=False).table
    except DicetableError as e:
        _fail(e)
    return tuple(sorted(procedure(table.state).staff))


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
def rules(jurisdiction: str = typer.Argument("pa", metavar="JURISDICTION",
                                             help="pa, in, or a house custody pack"),
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
                 None, metavar="EVENTS",
                 help="Table events as JSON lines: a table's event log or the output of "
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
            source: Path = typer.Argument(..., metavar="SOURCE",
                                          help="A custody event file (JSON lines)")) -> None:
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
        open_log(Local(), store, ledger.log)
    except DicetableError as e:
        _fail(e)
    console.print(f"{len(ledger.log)} custody events of {ledger.state.site} imported into "
                  f"{store.location} ({stream})", highlight=False)


_install_steps()
