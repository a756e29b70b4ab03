"""``dicetable audit verify``, ``dicetable recall`` and ``dicetable export``: the log of every
stream (each table, the site's dice custody ledger) for compliance, surveillance and
regulators.

DB is a SQLite file or a ``postgresql://`` URL (with ``--schema``, default ``dicetable``).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from dicetable.cli.main import SUBCOMMAND_STYLE
from dicetable.cli.output import human_time, output
from dicetable.cli.refusal import refused_in_red
from dicetable.core.errors import DicetableError
from dicetable.core.money import format_cents
from dicetable.store.audit import verify_store
from dicetable.store.base import TABLE, EventStore, kind_of
from dicetable.store.open import open_store
from dicetable.store.recall import RoundRecall, recall_custody, recall_day, recall_rounds

audit_app = typer.Typer(
    **SUBCOMMAND_STYLE, help="Check the table log's hash chain.", no_args_is_help=True)
console = output()
err = output(stderr=True)

DB_HELP = "A SQLite file or a postgresql:// URL"
KEY_HELP = ("The chain key, to read archived days (default: DICETABLE_KEY, DICETABLE_KEY_FILE, "
            "or DB.key)")
SCHEMA_HELP = "PostgreSQL schema holding the log"


@contextlib.contextmanager
def opened(db: str, schema: str, key: bytes | None = None) -> Iterator[EventStore]:
    try:
        store = open_store(db, schema=schema, create=False, key=key)
    except DicetableError as e:
        err.print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(2) from None
    except Exception as e:  # a database that cannot be reached or read
        err.print(f"[red]cannot open {escape(db)}: {type(e).__name__}: {escape(str(e))}[/red]")
        raise typer.Exit(2) from None
    try:
        yield store
    finally:
        store.close()


def chain_key(key_file: Path | None, db: str) -> bytes | None:
    """The chain key ``--key`` names (or the default places), exiting 2 with why when it
    cannot be read."""
    from dicetable.store.keys import find_key

    try:
        return find_key(key_file, db)
    except DicetableError as e:
        err.print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(2) from None


TRUNCATION_WARNING = (
    "without --checkpoints, truncation cannot be detected: events dropped from the end of a "
    "stream with its recorded head moved back leave a shorter chain that verifies. Verify "
    "against the checkpoint file the server keeps (dicetable serve --checkpoints FILE, "
    "written at every --verify-every) to find it.")


@audit_app.command("verify")
def verify(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
           table: list[str] = typer.Option([], "--table",
                                           help="Only these streams (a table id, custody:SITE)"),
           quick: bool = typer.Option(False, "--quick",
                                      help="Chain only: do not replay to check snapshots"),
           as_json: bool = typer.Option(False, "--json", help="Machine-readable output"),
           schema: str = typer.Option("dicetable", help=SCHEMA_HELP),
           key_file: Path | None = typer.Option(
               None, "--key", help="The chain key (default: DICETABLE_KEY, "
                                   "DICETABLE_KEY_FILE, or DB.key)"),
           checkpoints: Path | None = typer.Option(
               None, "--checkpoints", help="Check the log against this checkpoint file"),
           adjudicate: bool = typer.Option(
               False, "--adjudicate", help="Settle every roll again from the roll, the "
                                           "standing wagers and the pack; name the first "
                                           "difference")) -> None:
    """Check every stored event's hash link (keyed with the store's key), every other stream
    (accounts, staff, faults), and optionally the signed checkpoints and every settlement;
    report the first problem of each. Exit 0 when the log is intact, 1 when it is not."""
    from dicetable.store.adjudicate import adjudicate_store
    from dicetable.store.checkpoints import verify_checkpoints
    from dicetable.store.keys import find_key

    with refused_in_red(err):
        key = find_key(key_file, db)
    extra: list[dict[str, Any]] = []
    with opened(db, schema, key) as store:
        with refused_in_red(err):
            reports = verify_store(store, table or None, replay=not quick)
            if checkpoints is not None:
                extra += [p.to_dict() for p in verify_checkpoints(checkpoints, key, [store])]
            if adjudicate:
                extra += [{**d.to_dict(), "what": f"adjudication: {d.what}",
                           "detail": str(d)} for d in adjudicate_store(store, table or None)]
        location = store.location
    ok = all(r.ok for r in reports) and not extra
    warnings = [] if checkpoints is not None else [TRUNCATION_WARNING]
    if as_json:
        typer.echo(json.dumps({"store": location, "ok": ok, "keyed": key is not None,
                               "tables": [r.to_dict() for r in reports],
                               "other": extra, "warnings": warnings}, indent=2, default=str))
    else:
        for r in reports:
            if r.ok:
                head = r.head.hash[:16] if r.head else "-"
                console.print(f"[green]ok[/green]   {r.table}: {r.events} events, head "
                              f"{head}…, {r.snapshots} snapshots")
            else:
                for p in r.problems:
                    console.print(f"[red]FAIL[/red] {r.table} seq {p.seq}: {p.what} — "
                                  f"{p.detail}")
        for x in extra:
            console.print(f"[red]FAIL[/red] {x.get('table')} seq {x.get('seq')}: "
                          f"{x.get('what')} — {x.get('detail')}")
        verdict = "[green]log intact[/green]" if ok else "[red]log TAMPERED or damaged[/red]"
        keyed = "keyed chain" if key is not None else "unkeyed chain"
        console.print(f"{location}: {len(reports)} stream(s), {keyed}; {verdict}")
        for warning in warnings:
            console.print(f"[yellow]warning[/yellow]: {escape(warning)}")
    if not ok:
        raise typer.Exit(1)


def _money(cents: int) -> str:
    return format_cents(cents)


def _print_round(r: RoundRecall) -> None:
    state = "complete" if r.complete else "[yellow]IN PROGRESS[/yellow]"
    console.rule(f"{r.table} — {r.label} (events {r.first_seq}-{r.last_seq}, {state})")
    console.print(f"{human_time(r.started)} to {human_time(r.ended, since=r.started)}")
    for a in r.activity:
        detail = ", ".join(f"{k}={_fmt(k, v)}" for k, v in a.items()
                           if k not in ("type", "seq", "actor", "role", "at", "rule")
                           and v not in (None, "", 0, False))
        console.print(f"  #{a['seq']} {a['type']} by {a['actor']} ({a['role']}) {detail}")
    if r.wagers:
        wt = RichTable("bet", "player", "wager", "amount", "state", "working",
                       title="wagers in action at the throw")
        for w in r.wagers:
            wt.add_row(w["bet"], w["player"], w["wager"], _money(w["amount"]), w["state"],
                       "yes" if w["working"] else "off")
        console.print(wt)
    for roll in r.rolls:
        total = f" ({roll['total']})" if roll["total"] is not None else ""
        shot = f", shot by {roll['shooter']}" if roll.get("shooter") else ""
        console.print(f"  dice: [bold]{roll['roll']}{total}[/bold] from {roll['source']}{shot}, "
                      f"recorded by {roll['actor']}"
                      + (f"; facts {roll['facts']}" if roll["facts"] else ""))
    if r.no_roll is not None:
        console.print(f"  [yellow]no roll[/yellow]: {', '.join(r.no_roll)}")
    for c in r.collections:
        console.print(f"  collected {c['player']} {c['wager']} ({c['bet']}) "
                      f"{_money(c['amount'])}")
    for p in r.payments:
        extra = f", commission {_money(p['commission'])}" if p["commission"] else ""
        console.print(f"  paid {p['player']} {p['wager']} ({p['bet']}) win {_money(p['win'])}"
                      f", stake back {_money(p['stake_returned'])}{extra}")
    for x in r.returns:
        console.print(f"  returned {x['player']} {x['wager']} ({x['bet']}) "
                      f"{_money(x['amount'])}")
    if r.point_before != r.point_after or r.seven_out:
        console.print(f"  puck: {r.point_before or 'OFF'} → {r.point_after or 'OFF'}"
                      + (" (seven-out)" if r.seven_out else ""))
    bt = RichTable("player", "before", "after", "change", title="balances")
    for player in sorted(set(r.balances_before) | set(r.balances_after)):
        before = r.balances_before.get(player, 0)
        after = r.balances_after.get(player, 0)
        bt.add_row(player, _money(before), _money(after), _money(after - before))
    console.print(bt)


def _fmt(key: str, value: Any) -> str:
    if key in ("amount", "returned", "commission") and isinstance(value, int):
        return _money(value)
    return str(value)


def recall(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
           table: str = typer.Option(..., "--table",
                                     help="The table to recall, or a custody ledger "
                                          "(custody:SITE)"),
           die: str | None = typer.Option(None, "--die", help="Custody: only this die"),
           rounds: int = typer.Option(10, "--rounds", min=1,
                                      help="How many rounds (a Craps round is one throw)"),
           as_json: bool = typer.Option(False, "--json", help="Machine-readable output"),
           day: str | None = typer.Option(None, "--day",
                                          help="Every round of this gaming day (YYYY-MM-DD), "
                                               "archived or live, instead of the last rounds"),
           schema: str = typer.Option("dicetable", help=SCHEMA_HELP),
           key_file: Path | None = typer.Option(None, "--key", help=KEY_HELP)) -> None:
    """Game recall: the last rounds of TABLE with every wager, the roll, the outcome and each
    player's balance before and after (spec/standards.md REC-1, REC-2), or every round of one
    gaming day (``--day``; read from its archive file when it was archived). For a custody
    ledger (``--table custody:SITE``): its last steps (``--rounds`` of them), or one die's."""
    if kind_of(table) != TABLE:
        with opened(db, schema) as store:
            try:
                steps = recall_custody(store, table, rounds, die)
            except DicetableError as e:
                err.print(f"[red]{escape(str(e))}[/red]")
                raise typer.Exit(2) from None
        if as_json:
            typer.echo(json.dumps({"stream": table, "steps": steps}, indent=2))
            return
        for s in steps:
            style = "bold red" if s["alert"] else "green"
            console.print(f"[{style}]#{s['seq']}[/{style}] {human_time(s['at'])} "
                          f"{escape(s['actor'])} ({s['role']}): {escape(s['what'])}",
                          highlight=False)
            console.print(f"    [dim]{escape(s['rule'])}[/dim]", highlight=False)
        if not steps:
            console.print(f"{table}: no custody steps recorded")
        return
    with opened(db, schema, chain_key(key_file, db)) as store:
        try:
            records = recall_day(store, table, day) if day is not None \
                else recall_rounds(store, table, rounds)
        except DicetableError as e:
            err.print(f"[red]{escape(str(e))}[/red]")
            raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps({"table": table, "rounds": [r.to_dict() for r in records]},
                              indent=2))
        return
    if not records:
        console.print(f"{table}: no rounds played " + (f"on {day}" if day else "yet"))
    for r in records:
        _print_round(r)


def export(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
           out: Path | None = typer.Option(None, "--out", help="Write here instead of stdout"),
           table: list[str] = typer.Option([], "--table",
                                           help="Only these streams (a table id, custody:SITE)"),
           schema: str = typer.Option("dicetable", help=SCHEMA_HELP),
           key_file: Path | None = typer.Option(None, "--key", help=KEY_HELP)) -> None:
    """Write the log as JSON Lines: one stored event a line, with its hash and its
    predecessor's, so the export can be verified on its own (archived days included, read
    from their files)."""
    with opened(db, schema, chain_key(key_file, db)) as store:
        names = table or store.streams()
        count = 0
        with contextlib.ExitStack() as stack:
            sink = stack.enter_context(out.open("w", encoding="utf-8")) if out is not None \
                else sys.stdout
            for name in names:
                for row in store.records(name):
                    sink.write(json.dumps(row.to_line(), sort_keys=True,
                                          separators=(",", ":"), ensure_ascii=False) + "\n")
                    count += 1
    if out is not None:
        err.print(f"{count} events from {len(names)} stream(s) written to {out}")


def archive(db: str = typer.Option(..., "--db", help=DB_HELP),
            through: str = typer.Option(..., "--through",
                                        help="Archive every closed gaming day up to this one "
                                             "(YYYY-MM-DD)"),
            directory: Path | None = typer.Option(
                None, "--dir", help="Where the archive files go (default: DB.archive beside "
                                    "a SQLite file; required for PostgreSQL)"),
            retention_years: int | None = typer.Option(
                None, "--retention-years", min=1,
                help="Keep the archives this many years instead of the jurisdiction's rule"),
            day_starts: int = typer.Option(6, "--day-starts", min=0, max=23,
                                           help="The hour (UTC) a gaming day begins "
                                                "(industry-default 6)"),
            today: str | None = typer.Option(None, "--today", hidden=True,
                                             help="The current gaming day (tests)"),
            schema: str = typer.Option("dicetable", help=SCHEMA_HELP),
            key_file: Path | None = typer.Option(None, "--key", help="The chain key")) -> None:
    """Move the closed gaming days' table events up to --through out of the live log into
    signed, compressed archive files (one a day), each anchored in the chain at both ends.
    Recall, export, audit verify and the adjudication read them as before. Refused while a
    server serves the store (stop it first)."""
    from dicetable.store.archive import archive_through
    from dicetable.store.open import is_postgres
    from dicetable.store.serving import exclusive

    key = chain_key(key_file, db)
    if directory is None:
        if is_postgres(db):
            err.print("[red]--dir is required for a PostgreSQL store[/red]")
            raise typer.Exit(2)
        directory = Path(f"{db}.archive")
    # opened first: a store that is not there is refused before its lock file is made
    with opened(db, schema, key) as store, refused_in_red(err), \
            exclusive(db, "archive", schema):  # a serving floor walks the days it would move
        try:
            done = archive_through(store, through, directory, today=today, starts=day_starts,
                                   retention_years=retention_years)
        except DicetableError as e:
            err.print(f"[red]{escape(str(e))}[/red]")
            raise typer.Exit(2) from None
    if not done.files:
        console.print(f"nothing to archive through {through}")
        return
    for (day, count), file in zip(sorted(done.days.items()), done.files, strict=True):
        console.print(f"{day}: {count} events -> {file}", highlight=False)
    for jurisdiction, rule in sorted(done.retention.items()):
        console.print(f"retention {jurisdiction}: {rule['years']} years ({rule['status']}): "
                      f"{escape(rule['citation'])}", highlight=False)
    console.print(f"{done.events} events archived from {len(done.files)} gaming day(s)")
