"""``dicetable script export DB (--table ID [--from SEQ] | --stream ID | --all --out DIR)``:
stored streams as scripts, and ``dicetable script load DB SCRIPT...``: scripts back into a store.

The script ``dicetable replay`` runs gives back the same events and the same final state:
how an incident, a dispute or a bug report becomes a test. Every stream exports: a table's
log as a table script, a site's custody ledger as a script of custody steps alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer
from rich.markup import escape

from dicetable.application.scripts import run_bank_script, run_file
from dicetable.application.service import Local
from dicetable.application.streams import open_log
from dicetable.cli.main import SUBCOMMAND_STYLE
from dicetable.cli.store_cmds import DB_HELP, SCHEMA_HELP, err, opened
from dicetable.core.errors import DicetableError
from dicetable.core.events import Event
from dicetable.store import base as kinds
from dicetable.store.base import EventStore
from dicetable.table.script_export import SCRIPTED_KINDS, export_script, export_stream

app = typer.Typer(
    **SUBCOMMAND_STYLE, help="Table scripts from stored tables.", no_args_is_help=True)


def _file_name(stream: str) -> str:
    """A stream's script file: ``craps-1.dts``, ``custody--demo-pa.dts``."""
    return stream.replace(kinds.SEPARATOR, "--").replace("/", "_") + ".dts"


def _export(store: EventStore, stream: str) -> str:
    kind = kinds.kind_of(stream)
    table = store.events(kinds.name_of(stream)) if kind == "bank" else ()
    return export_stream(kind, store.events(stream), table)


@app.command("export")
def export(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
           table: str | None = typer.Option(None, "--table",
                                            help="The table whose log to write"),
           stream: str | None = typer.Option(None, "--stream",
                                             help="Any stored stream (custody:SITE, a table)"),
           every: bool = typer.Option(False, "--all", help="Every table log and custody "
                                                           "ledger, one script each, into --out "
                                                           "(a folder)"),
           from_seq: int | None = typer.Option(None, "--from", min=1,
                                               help="Start the commands at this event "
                                                    "(the log before it becomes the prelude)"),
           out: Path | None = typer.Option(None, "--out", help="Write here, not to stdout"),
           schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
    """Write TABLE's log (or any stream's, or every stream's) as a script
    (docs/table-scripts.md)."""
    if sum((table is not None, stream is not None, every)) != 1:
        err.print("[red]give one of --table ID, --stream ID or --all[/red]")
        raise typer.Exit(2)
    if every and out is None:
        err.print("[red]--all writes one script per stream into a folder: give --out DIR[/red]")
        raise typer.Exit(2)
    with opened(db, schema) as store:
        if every:
            assert out is not None
            out.mkdir(parents=True, exist_ok=True)
            written = skipped = 0
            for sid in store.streams():
                if kinds.kind_of(sid) not in SCRIPTED_KINDS:
                    skipped += 1  # accounts, staff, faults, answers: not replayed by scripts
                    continue
                try:
                    text = _export(store, sid)
                except DicetableError as e:
                    err.print(f"[red]{sid}: {e}[/red]")
                    raise typer.Exit(1) from None
                (out / _file_name(sid)).write_text(text, encoding="utf-8")
                written += 1
            err.print(f"{written} streams written to {out} ({skipped} of the floor's own "
                      "records - accounts, staff, faults, answers - left to dicetable export)")
            return
        sid = table or stream or ""
        if not store.head(sid).seq:
            err.print(f"[red]no {'table' if table is not None else 'stream'} {sid!r} in "
                      f"{db}[/red]")
            raise typer.Exit(2)
        try:
            text = export_script(store.table_events(sid), from_seq) \
                if kinds.kind_of(sid) == kinds.TABLE else _export(store, sid)
        except DicetableError as e:
            err.print(f"[red]{escape(str(e))}[/red]")
            raise typer.Exit(1) from None
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")


@app.command("load")
def load(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
         scripts: list[Path] = typer.Argument(..., metavar="SCRIPTS",
                                              help="Scripts (e.g. an export --all)"),
         schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
    """Run each script and store what it recorded as new streams of DB: its table's log,
    its custody ledger. A stream the store already holds is refused; nothing is stored from
    a script that fails."""
    with opened(db, schema) as store:
        # a bank script replays against its table's log: after the tables
        for path in sorted(scripts, key=_is_bank):
            if _is_bank(path):
                _load_bank(store, path)
                continue
            try:
                result = run_file(path)
            except DicetableError as e:
                err.print(f"[red]{path}: {e}[/red]")
                raise typer.Exit(2) from None
            if result.failure is not None:
                err.print(f"[red]{path}: {result.failure}[/red]")
                raise typer.Exit(1)
            logs = [log for log in (result.table.log if result.table else None,
                                    result.custody.log if result.custody else None) if log]
            for log in logs:
                _store_log(store, path, log)


def _load_bank(store: EventStore, path: Path) -> None:
    """A bank script replays against its table's log, which the store must hold already."""
    text = path.read_text(encoding="utf-8")
    table = text.split(maxsplit=3)[2]
    if not store.head(table).seq:
        err.print(f"[red]{path}: load the script of table {table} first[/red]")
        raise typer.Exit(2)
    try:
        log = run_bank_script(text, list(store.events(table))).state.log
    except DicetableError as e:
        err.print(f"[red]{path}: {escape(str(e))}[/red]")
        raise typer.Exit(1) from None
    _store_log(store, path, log)


def _store_log(store: EventStore, path: Path, log: Sequence[Event]) -> None:
    """A script's log as a new stream of the store, opened through ``Application.submit``
    (``streams.open_log``); one the store holds already is refused."""
    sid = log[0].stream
    if store.head(sid).seq:
        err.print(f"[red]{path}: the store already holds {sid}[/red]")
        raise typer.Exit(2)
    open_log(Local(), store, log)
    err.print(f"{path}: {len(log)} events -> {sid}")


def _is_bank(path: Path) -> bool:
    try:
        return path.read_text(encoding="utf-8").startswith("bank ")
    except (OSError, UnicodeDecodeError):
        return False  # run_file reports it
