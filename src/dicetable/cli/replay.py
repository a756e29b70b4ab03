"""``dicetable replay SCRIPT``: run a table script, print its event log and final balances."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from dicetable.core.errors import InvalidInput
from dicetable.games.events import event_to_dict
from dicetable.table.script import run_file, transcript


def replay(script: Path = typer.Argument(..., metavar="SCRIPT",
                                         help="A table script (docs/table-scripts.md)"),
           as_json: bool = typer.Option(False, "--json",
                                        help='{"events": [...], "balances": {...}}'),
           citations: bool = typer.Option(False, "--citations",
                                          help="each event's rule citation under it")) -> None:
    """Run SCRIPT: print the event log and final balances; exit 1 at the first unmet
    expectation or unexpected refusal (with its line, error and citation)."""
    try:
        result = run_file(script)
    except InvalidInput as e:
        typer.echo(f"{script}: {e}", err=True)
        raise typer.Exit(2) from None
    table = result.table
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
