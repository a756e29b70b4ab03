"""``dicetable script export DB --table ID [--from SEQ]``: a stored table's log as a script.

The script ``dicetable replay`` runs gives back the same events and the same final state:
how an incident, a dispute or a bug report becomes a test.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from dicetable.cli.store_cmds import DB_HELP, SCHEMA_HELP, _opened, err
from dicetable.core.errors import DicetableError
from dicetable.table.script_export import export_script

app = typer.Typer(help="Table scripts from stored tables.", no_args_is_help=True)


@app.command("export")
def export(db: str = typer.Argument(..., help=DB_HELP),
           table: str = typer.Option(..., "--table", help="The table whose log to write"),
           from_seq: int | None = typer.Option(None, "--from", min=1,
                                               help="Start the commands at this event "
                                                    "(the log before it becomes the prelude)"),
           out: Path | None = typer.Option(None, "--out", help="Write here, not to stdout"),
           schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
    """Write TABLE's log as a table script (docs/table-scripts.md)."""
    with _opened(db, schema) as store:
        if not store.head(table).seq:
            err.print(f"[red]no table {table!r} in {db}[/red]")
            raise typer.Exit(2)
        try:
            text = export_script(store.table_events(table), from_seq)
        except DicetableError as e:
            err.print(f"[red]{escape(str(e))}[/red]")
            raise typer.Exit(1) from None
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
