"""``dicetable ratings``: each player's sessions with the exact theo beside the industry
formula's, from a stored floor (``dicetable.ratings``)."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from dicetable.bank.rules import PRESETS, load_bank_pack
from dicetable.cli.output import output
from dicetable.core.errors import DicetableError
from dicetable.core.money import format_cents
from dicetable.ratings.fold import Rating, RatingsFold
from dicetable.ratings.formula import IndustryFormula, site_day
from dicetable.ratings.report import report
from dicetable.store.open import open_store
from dicetable.store.replay import load_state

console = output()
err = output(stderr=True)


def ratings(db: str = typer.Option(..., "--db", help="A SQLite file or a postgresql:// URL"),
            table: list[str] = typer.Option([], "--table", help="Only these tables"),
            day: str | None = typer.Option(None, "--day",
                                           help="Only sessions started in this gaming day "
                                                "(YYYY-MM-DD)"),
            decisions_per_hour: int | None = typer.Option(
                None, "--decisions-per-hour", help="The industry formula's decisions per hour "
                                                   "(default: the site pack's)"),
            edge: str | None = typer.Option(None, "--edge",
                                            help="The industry formula's one edge (default: "
                                                 "the site pack's)"),
            as_json: bool = typer.Option(False, "--json", help="Machine-readable output"),
            schema: str = typer.Option("dicetable", help="PostgreSQL schema holding the log"),
            ) -> None:
    """Player ratings: for each player and session (a seated period at one table), the time
    played, the average bet, the exact theoretical loss of every wager made (each at its own
    edge, per roll it worked or when placed) and the industry formula's theo (average bet x
    decisions per hour x hours x one edge). Exit 2 when the store or an option is bad."""
    try:
        store = open_store(db, schema=schema, create=False)
    except DicetableError as e:
        err.print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(2) from None
    try:
        known = store.tables()
        missing = [t for t in table if t not in known]
        if missing:
            err.print(f"[red]no such table in {escape(db)}: {escape(', '.join(missing))}[/red]")
            raise typer.Exit(2)
        rows: list[Rating] = []
        formula, gaming_day = IndustryFormula(), None
        for table_id in table or known:
            # the site's gaming day and rating values: the table's jurisdiction's bank pack
            jurisdiction = load_state(store, table_id).rules().jurisdiction.lower()
            site = load_bank_pack(jurisdiction if jurisdiction in PRESETS else "pa")
            formula = IndustryFormula.of_site(site.rules, decisions_per_hour, edge)
            gaming_day = None if day is None else site_day(site, day)
            fold = RatingsFold()
            fold.feed_all(store.table_events(table_id))
            rows += fold.ratings(formula, gaming_day)
    except DicetableError as e:
        err.print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(2) from None
    finally:
        store.close()
    data = report(rows, formula, gaming_day)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    out = RichTable(title="Player ratings: exact theo beside the industry formula")
    for column in ("Player", "Table", "Started", "Minutes", "Rolls", "Average bet",
                   "Exact theo", "Industry theo", "Difference", "Result"):
        out.add_column(column, justify="right" if column not in ("Player", "Table", "Started")
                       else "left")
    for r in data["ratings"]:
        out.add_row(f"{r['player']} #{r['session']}", r["table"], r["started"][:16],
                    str(r["seconds"] // 60), str(r["rolls"]), format_cents(r["average_bet"]),
                    format_cents(r["theo"]), format_cents(r["industry_theo"]),
                    format_cents(r["difference"]), format_cents(r["result"]))
    console.print(out)
    for rule in data["rules"]:
        console.print(f"{rule['id']} = {rule['value']}  [dim]{escape(rule['citation'])} "
                      f"[{rule['status']}][/dim]", highlight=False)
    console.print(f"[dim]figures rounded {data['rounding']}; --json gives the exact "
                  f"fractions[/dim]", highlight=False)
