"""``dicetable odds PACK``: the exact house edge of every wager of a rule pack."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from dicetable.cli import disk_cache
from dicetable.cli.tables import SHORT_NOTE, WIDE_OPTION_HELP, fit, short_fraction
from dicetable.cli.tables import console as table_console
from dicetable.core.errors import DicetableError, InvalidInput

if TYPE_CHECKING:  # the odds, the rules and Rich are imported when they are needed
    from rich.console import Console

    from dicetable.odds.layout import LayoutBet
    from dicetable.rules.model import RulePack


def _console() -> Console:
    return table_console()


def _layout(rules: RulePack, bets: list[LayoutBet], table: bool, point: int | None,
            as_json: bool) -> None:
    from dicetable.odds.layout import layout_odds
    from dicetable.odds.report import exact

    fig = layout_odds(rules, bets, point=point, table=table)
    out = {"layout": [{"wager": b.code, "amount_cents": int(b.amount),
                       "odds": None if b.odds is None else str(b.odds)} for b in bets],
           "model": "table" if table else "in action",
           "expected_cents": exact(fig.expected), "staked_cents": exact(fig.staked),
           "house_edge": exact(fig.house_edge), "house_edge_pct": float(fig.house_edge * 100),
           "edge_per_roll_pct": float(fig.edge_per_roll * 100),
           "variance_cents2": exact(fig.variance), "std_dev_cents": fig.std_dev,
           "expected_rolls": exact(fig.expected_rolls)}
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    _console().print(f"layout on {rules.id} ({out['model']}): house edge "
                  f"{out['house_edge_pct']:.4f}% ({short_fraction(fig.house_edge)}) of "
                  f"${float(fig.staked) / 100:,.2f} put up; expected "
                  f"{_dollars(float(fig.expected) / 100)} per decision of the layout, SD "
                  f"${fig.std_dev / 100:,.2f}, "
                  f"{float(fig.expected_rolls):.3f} rolls, {out['edge_per_roll_pct']:.4f}% "
                  "per roll")


def _dollars(value: float) -> str:
    """-0.0714 -> '-$0.0714' (an expectation, kept to four places)."""
    return f"{'-' if value < 0 else ''}${abs(value):,.4f}"


def _pct(value: object) -> str:
    return f"{value:.3f}%" if isinstance(value, float) else ""


def parse_bet(text: str) -> LayoutBet:
    """``CODE``, ``CODE=AMOUNT`` or ``CODE=AMOUNTxODDS`` (odds as a multiple of the flat bet).

    >>> parse_bet("pass=$10x2")
    LayoutBet(code='pass', amount=Fraction(1000, 1), odds=Fraction(2, 1))
    """
    from dicetable.odds.layout import LayoutBet
    from dicetable.sim.strategy import money  # the strategies' money format

    code, _, rest = text.partition("=")
    amount, _, multiple = rest.partition("x")
    try:
        cents = money(amount, text) if amount else 100
        odds = Fraction(multiple) if multiple else None
        if cents <= 0 or (odds is not None and odds < 0):
            raise ValueError("a layout's amounts are positive")
        return LayoutBet(code.strip(), Fraction(cents), odds)
    except (ValueError, ZeroDivisionError):
        raise InvalidInput(f"--bet {text!r}: write CODE, CODE=AMOUNT or CODE=AMOUNTxODDS",
                           rule="odds.layout") from None


def odds(pack: str | None = typer.Argument(None, metavar="PACK",
                                           help="A preset name or a house pack JSON file"),
         as_json: bool = typer.Option(False, "--json", help="One JSON object per wager"),
         as_csv: bool = typer.Option(False, "--csv", help="CSV, one row per wager"),
         bets: list[str] = typer.Option([], "--bet", help="A layout instead: CODE[=AMOUNT"
                                        "[xODDS]], repeated; e.g. --bet pass=10x2 --bet "
                                        "place6=12"),
         with_table: bool = typer.Option(False, "--table", help="Layout: follow the puck and "
                                         "the pack's working rules"),
         point: int | None = typer.Option(None, "--point", help="Layout: the point when the "
                                          "bets are made (with --table)"),
         session: Path | None = typer.Option(None, "--session", help="A strategy file instead: "
                                             "its exact session outcomes (risk of ruin, "
                                             "bankroll after N rolls, length)"),
         bankroll: str | None = typer.Option(None, "--bankroll", help="Session: the bankroll "
                                             "(default: the strategy's)"),
         goal: str | None = typer.Option(None, "--goal", help="Session: stop on reaching this "
                                         "bankroll (default: bankroll + the stop-win)"),
         stop_loss: str | None = typer.Option(None, "--stop-loss", help="Session: stop after "
                                              "losing this much (default: the strategy's)"),
         rolls: int | None = typer.Option(None, "--rolls", min=1,
                                          help="Session: N, the rolls whose "
                                          "final bankroll is shown (default: the strategy's "
                                          "max_rolls, or 200)"),
         sessions: int = typer.Option(20_000, "--sessions", max=10**9,
                                      help="Session: simulated sessions "
                                      "for the estimates beside the exact figures"),
         seed: int | None = typer.Option(None, "--seed", min=0,
                                         help="Session: the simulator's seed"),
         wide: bool = typer.Option(False, "--wide", help=WIDE_OPTION_HELP),
         ) -> None:
    """Exact house edge of every wager of PACK (Fractions, by Markov chains).

    Each wager is measured in action (every roll counts); the 'table' columns follow the
    table's puck and the pack's working rules for a standing wager made on the come-out.
    With --bet, the combined edge and variance of that layout instead. With --session, a
    strategy's exact chance of reaching --goal before ruin, its bankroll after a session of
    --rolls N and its expected length, each beside the simulator's estimate and 99% interval.
    """
    if as_json and as_csv:
        _console().print("[red]choose one of --json and --csv[/red]")
        raise typer.Exit(2)
    if (pack is None) == (session is None):
        _console().print("[red]give a PACK, or --session STRATEGY (the strategy names its pack)"
                      "[/red]")
        raise typer.Exit(2)
    try:
        if session is not None:
            from dicetable.cli.session_odds import session_report

            session_report(session, bankroll, goal, stop_loss, rolls, sessions, seed, as_json)
            return
        assert pack is not None
        if bets:
            from dicetable.games.packs import load_pack

            _layout(load_pack(pack), [parse_bet(b) for b in bets], with_table, point,
                    as_json)
            return
        pack_id, rows = _report(pack)
    except DicetableError as e:
        from rich.markup import escape

        _console().print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if as_csv:
        from dicetable.odds.report import CSV_FIELDS, csv_row

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(csv_row(row))
        typer.echo(buffer.getvalue(), nl=False)
        return
    from rich.table import Table

    table = Table("wager", "edge", "exact", "per roll", "push", "rolls", "SD", "table/roll",
                  "commission", title=f"{pack_id}: exact odds per unit staked")
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
            label, _pct(row["house_edge_pct"]), short_fraction(row["house_edge"]),
            _pct(row["edge_per_roll_pct"]), short_fraction(row.get("p_push", "")),
            f"{row['expected_rolls_float']:.3f}", f"{row['std_dev']:.3f}",
            _pct(row.get("table", {}).get("edge_per_roll_pct")), commission,
        )
    table_console(wide).print(fit(table))
    console = _console()
    console.print(SHORT_NOTE)
    console.print("house edge = expected loss per wager resolved over the money put up "
                  "(stake + commission paid up front); per roll = per roll in action; "
                  "table per roll = made on the come-out, off when the pack's working rules "
                  "say so, per table roll.")


def _report(pack: str) -> tuple[str, list[dict[str, Any]]]:
    """The pack's id and its report rows; a preset's from the disk cache when this very code
    worked them out before (``cli.disk_cache``: a pack file of its own is not cached)."""
    preset = not pack.endswith(".json") and not Path(pack).exists()
    key = disk_cache.key("odds", pack) if preset else None
    found = disk_cache.load(key, tuple) if key is not None else None
    if found is not None:
        return found[0], found[1]
    from dicetable.games.packs import load_pack
    from dicetable.odds.report import pack_report

    rules = load_pack(pack)
    made = (rules.id, pack_report(rules))
    if key is not None:
        disk_cache.save(key, made)
    return made
