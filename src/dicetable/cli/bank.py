"""``dicetable bank``: a table's chip bank on a store, step by step, and its books.

Every step is a verb of the bank catalogue (``dicetable.bank.catalogue``), the same the pit
console and the bank scripts use: ``dicetable bank STEP DB TABLE --as NAME:ROLE key=value
...``. ``show`` prints the bank, ``report`` the gaming day's win and hold, ``steps`` the
verbs and their words. A refusal prints its rule and citation and exits 1; nothing changes.
"""

from __future__ import annotations

import typer
from rich.markup import escape

from dicetable.application.service import Acting, Local, Step
from dicetable.application.streams import open_bank
from dicetable.bank.catalogue import (
    VERBS,
    Context,
    Verb,
    parse_float,
    parse_person,
    parse_words,
)
from dicetable.bank.events import BankEvent, DiscrepancyFound
from dicetable.bank.follow import Totals
from dicetable.bank.model import money
from dicetable.bank.reports import conservation, day_report, indiana_receipts
from dicetable.bank.rules import load_bank_pack
from dicetable.bank.slips import render_text, slip_citations, slip_document
from dicetable.cli.main import SUBCOMMAND_STYLE
from dicetable.cli.store_cmds import DB_HELP, SCHEMA_HELP, err, opened
from dicetable.core.errors import DicetableError
from dicetable.store.bank_stream import DurableBank, bank_stream
from dicetable.store.base import EventStore
from dicetable.store.replay import load_state

app = typer.Typer(**SUBCOMMAND_STYLE,
                  help="A table's chip bank: counts, fills and credits, the drop, win and "
                       "hold (58 Pa. Code ch. 465a, 601a.9; 68 IAC 15-12, 15-5-3).",
                  no_args_is_help=True)


def _bank(store: EventStore, table: str, verb: str, pack: str | None, site: str
          ) -> DurableBank:
    if DurableBank.exists(store, table):
        return DurableBank.resume(store, table)
    if verb != "open":
        err.print(f"[red]table {table} has no bank yet: open it first[/red]")
        raise typer.Exit(2)
    state = load_state(store, table)
    jurisdiction = pack or state.rules().jurisdiction.lower()
    return open_bank(Local(), store, load_bank_pack(jurisdiction), table,
                     site=site or jurisdiction, game=state.game,
                     electronic=state.mode == "electronic")


def _submit(durable: DurableBank, table: str, step: Step) -> list[BankEvent]:
    """The step through the application's one way in, as the pit console's bank routes."""
    app = Local()
    app.hold(bank_stream(table), durable)
    answer = app.submit(bank_stream(table), step)
    assert answer is not None
    events: list[BankEvent] = answer.result()
    return events


def _make(verb: Verb) -> None:
    def step(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
             table: str = typer.Argument(..., metavar="TABLE", help="The table"),
             words: list[str] = typer.Argument(
                 None, metavar="WORDS", help="key=value ... (dicetable bank steps)"),
             actor: str = typer.Option(..., "--as", help="Who gives the step: NAME:ROLE"),
             pack: str | None = typer.Option(None, help="open only: the bank pack (pa, in, "
                                                        "or a house pack file)"),
             site: str = typer.Option("", help="open only: the site"),
             schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
        with opened(db, schema) as store:
            try:
                me = parse_person(actor)
                durable = _bank(store, table, verb.name, pack, site)
                args = parse_words(words or [], verb)
                log = list(store.table_events(table))
                totals = durable.bank.totals_of(log)
                ctx = Context(table_log=log, table_seq=totals.seq, totals=totals)
                events = _submit(durable, table, Step(
                    Acting(*me), lambda bank, who: verb.run(bank, who, args, ctx)))
            except DicetableError as e:
                err.print(f"[red]refused: {escape(str(e))}[/red]")
                raise typer.Exit(1) from None
        for done in events:
            typer.echo(f"{done.seq:>4} {done.kind} {done.rule}")

    step.__doc__ = verb.help + "."
    app.command(verb.name)(step)


for _verb in VERBS.values():
    _make(_verb)


@app.command("steps")
def steps() -> None:
    """Every bank step and its words."""
    for v in VERBS.values():
        words = " ".join(f"{f.key}={f.kind.upper()}" if f.required else f"[{f.key}=..]"
                         for f in v.fields)
        typer.echo(f"{v.name:<20} {words}\n{'':<20} {v.help}")


def _existing(store: EventStore, table: str) -> DurableBank:
    if not DurableBank.exists(store, table):
        err.print(f"[red]table {table} has no bank[/red]")
        raise typer.Exit(2)
    return DurableBank.resume(store, table)


@app.command("show")
def show(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
         table: str = typer.Argument(..., metavar="TABLE"),
         schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
    """The bank: status, expected inventory, slips, variances and the conservation check."""
    with opened(db, schema) as store:
        bank = _existing(store, table).bank
        log = list(store.table_events(table))
        state = load_state(store, table)
    totals = Totals().fold(log)
    s = bank.state
    players = sum(p.balance for p in state.players.values()) + state.on_layout()
    books = conservation(s, totals, players)
    typer.echo(f"{table}: {s.status} ({bank.pack.jurisdiction}, {s.game})")
    if s.last_count is not None:
        typer.echo(f"expected inventory {money(bank.expected(totals=totals))}; last count slip "
                   f"{s.last_count.slip} ({s.last_count.purpose}) {money(s.last_count.total)}")
    typer.echo(("money conserved: " if books.holds else "money NOT conserved: ")
               + str(books.to_dict()["text"]))
    for p in sorted(s.requests.values(), key=lambda p: p.request):
        typer.echo(f"request {p.request} {p.kind} {money(p.value)} {p.status}"
                   + (f" slip {p.serial}" if p.serial else ""))
    for event in s.log:
        if isinstance(event, DiscrepancyFound):
            typer.echo(f"variance {money(event.variance)} at slip {event.slip}: "
                       + "; ".join(event.suspects[:5]))


@app.command("slip")
def slip(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
         table: str = typer.Argument(..., metavar="TABLE"),
         kind: str = typer.Argument(..., metavar="KIND", help="fill, credit or inventory"),
         number: int = typer.Argument(..., metavar="NUMBER",
                                      help="the slip's serial (fill, credit) or number"),
         schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
    """One slip, printable: a Fill Slip, a Credit Slip or a Table Inventory Slip."""
    with opened(db, schema) as store:
        if not DurableBank.exists(store, table):
            err.print(f"[red]table {table} has no bank[/red]")
            raise typer.Exit(2)
        bank = DurableBank.resume(store, table).bank
    try:
        doc = slip_document(bank.state, kind, number, jurisdiction=bank.pack.jurisdiction,
                            cite=slip_citations(bank.pack))
    except DicetableError as e:
        err.print(f"[red]refused: {escape(str(e))}[/red]")
        raise typer.Exit(1) from None
    typer.echo(render_text(doc))


@app.command("report")
def report(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
           table: str = typer.Argument(..., metavar="TABLE"),
           day: str = typer.Option("", help="The gaming day (default: today's)"),
           float_yesterday: str = typer.Option("", help="IN: yesterday's chip float, "
                                                        "DENOMINATION:CENTS,..."),
           float_today: str = typer.Option("", help="IN: today's chip float"),
           schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
    """The gaming day's table win and hold (601a.9(c), the inferred terms labelled)."""
    with opened(db, schema) as store:
        bank = _existing(store, table).bank
    when = day or bank.day_and_shift()[0]
    rep = day_report(bank.state, when, included=bank.pack.value("drop.included"))
    typer.echo(f"{table}, gaming day {when}")
    if rep.win is None:
        typer.echo("no win yet: " + "; ".join(rep.problems))
        raise typer.Exit(0)
    for t in rep.win.terms:
        typer.echo(f"  {'+' if t.sign > 0 else '-'} {t.name:<8} {money(t.amount):>14}  {t.label}")
    typer.echo(f"  = win      {money(rep.win.win):>14}  hold {rep.win.hold_text}")
    for kind, amount in rep.win.excluded.items():
        typer.echo(f"    {kind} in the drop box {money(amount)} (reported apart)")
    for p in rep.problems:
        typer.echo(f"  ! {p}")
    if bank.pack.flag("win.chip_float_adjustment") and (float_yesterday or float_today):
        try:
            r = indiana_receipts(rep.win.win, parse_float(float_yesterday),
                                 parse_float(float_today))
        except DicetableError as e:
            err.print(f"[red]{escape(str(e))}[/red]")
            raise typer.Exit(2) from None
        typer.echo(f"  table receipts {money(r.receipts)} (win + chip float adjustment "
                   f"{money(r.adjustment)}; {bank.pack.cite('win.chip_float_adjustment')})")
        for d in r.negative:
            typer.echo(f"  ! the float of {money(d)} chips is negative: investigate, tell the "
                       "agent at once")
