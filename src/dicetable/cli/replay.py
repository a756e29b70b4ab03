"""``dicetable replay SCRIPT``: run a table script, print its event log and final balances."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from dicetable.application.scripts import run_file
from dicetable.core.errors import InvalidInput
from dicetable.games.events import event_to_dict
from dicetable.table import Table
from dicetable.table.script import transcript
from dicetable.table.script_check import first_difference


def replay(script: Path = typer.Argument(..., metavar="SCRIPT",
                                         help="A table script (docs/table-scripts.md)"),
           as_json: bool = typer.Option(False, "--json",
                                        help='{"events": [...], "balances": {...}}'),
           citations: bool = typer.Option(False, "--citations",
                                          help="each event's rule citation under it"),
           against: str | None = typer.Option(
               None, "--against", metavar="DB",
               help="A store (SQLite file or postgresql:// URL): say whether the script "
                    "reproduces the stored log of its table (exit 1 when it does not)"),
           table_id: str | None = typer.Option(
               None, "--table", help="With --against: the stored table (default: the "
                                     "script's own table id)")) -> None:
    """Run SCRIPT: print the event log and final balances; exit 1 at the first unmet
    expectation or unexpected refusal (with its line, error and citation). With --against
    DB, print instead whether it reproduces that store's log of the table."""
    try:
        result = run_file(script)
    except InvalidInput as e:
        typer.echo(f"{script}: {e}", err=True)
        raise typer.Exit(2) from None
    table = result.table
    if against is not None and table is not None and result.failure is None:
        _compare(script, table, against, table_id or table.state.table_id)
        return
    if table is not None:
        if as_json:
            data: dict[str, object] = {"events": [event_to_dict(e) for e in table.log],
                                       "balances": table.balances}
            if result.custody is not None:
                data["custody"] = [event_to_dict(e) for e in result.custody.log]
            typer.echo(json.dumps(data, indent=1))
        else:
            typer.echo(transcript(table, result.custody, citations=citations))
    if result.failure is not None:
        typer.echo(f"{script}: {result.failure}", err=True)
        raise typer.Exit(1)


def _compare(script: Path, table: Table, db: str, stored_id: str) -> None:
    """Say whether ``table`` (the script's replay) reproduces ``stored_id``'s log in ``db``."""
    from dicetable.store.open import open_store

    try:
        store = open_store(db, create=False)
    except Exception as e:  # a store that cannot be reached, read or trusted
        typer.echo(f"cannot open {db}: {e}", err=True)
        raise typer.Exit(2) from None
    try:
        stored = list(store.events(stored_id))
    finally:
        store.close()
    if not stored:
        typer.echo(f"{db} holds no table {stored_id!r}", err=True)
        raise typer.Exit(2)
    difference = first_difference(stored, table.log)
    if difference is None:
        same = Table.replay(stored).balances == table.balances
        difference = None if same else "the events agree but the final balances differ"
    if difference is not None:
        typer.echo(f"{script} does NOT reproduce {stored_id} in {db}: {difference}")
        raise typer.Exit(1)
    typer.echo(f"{script} reproduces {stored_id} in {db}: {len(stored)} events, the same "
               "kinds and fields (sequence, time and table id aside), the same balances")
