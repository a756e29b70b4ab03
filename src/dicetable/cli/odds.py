"""``dicetable odds PACK``: the exact house edge of every wager of a rule pack."""

from __future__ import annotations

import csv
import io
import json

import typer
from rich.console import Console
from rich.table import Table

from dicetable.core.errors import DicetableError
from dicetable.odds.report import CSV_FIELDS, csv_row, pack_report
from dicetable.rules.loader import load_pack

console = Console()


def _pct(value: object) -> str:
    return f"{value:.3f}%" if isinstance(value, float) else ""


def odds(pack: str = typer.Argument(..., help="A preset name or a house pack JSON file"),
         as_json: bool = typer.Option(False, "--json", help="One JSON object per wager"),
         as_csv: bool = typer.Option(False, "--csv", help="CSV, one row per wager")) -> None:
    """Exact house edge of every wager of PACK (Fractions, by Markov chains).

    Each wager is measured in action (every roll counts); the 'table' columns follow the
    table's puck and the pack's working rules for a standing wager made on the come-out.
    """
    if as_json and as_csv:
        console.print("[red]choose one of --json and --csv[/red]")
        raise typer.Exit(2)
    try:
        rules = load_pack(pack)
        rows = pack_report(rules)
    except DicetableError as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if as_csv:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(csv_row(row))
        typer.echo(buffer.getvalue(), nl=False)
        return
    table = Table("wager", "edge", "exact", "per roll", "push", "rolls", "SD", "table/roll",
                  "commission", title=f"{rules.id}: exact odds per unit staked")
    for row in rows:
        commission = row.get("commission", "")
        other = row.get("other_commission")
        if other:
            commission += f" ({other['commission']} {other['house_edge_pct']:.3f}%)"
        label = row["wager"]
        if label.startswith("odds:"):
            label += f" {row['start']}"
        elif row.get("odds"):
            label += f" {row['odds']}"
        table.add_row(
            label, _pct(row["house_edge_pct"]), row["house_edge"], _pct(row["edge_per_roll_pct"]),
            row.get("p_push", ""), f"{row['expected_rolls_float']:.3f}", f"{row['std_dev']:.3f}",
            _pct(row.get("table", {}).get("edge_per_roll_pct")), commission,
        )
    console.print(table)
    console.print("house edge = expected loss per wager resolved over the money put up "
                  "(stake + commission paid up front); per roll = per roll in action; "
                  "table per roll = made on the come-out, off when the pack's working rules "
                  "say so, per table roll.")
