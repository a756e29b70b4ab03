"""What ``dicetable odds`` does and prints, without Typer: the Typer command (``cli.odds``) and
the entry point's plain-argument path (``cli.fast``) both call ``run``."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dicetable.cli import disk_cache
from dicetable.cli.tables import SHORT_NOTE, echo, fit, short_fraction
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
        echo(json.dumps(out, indent=2))
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


def run(pack: str | None, *, as_json: bool = False, as_csv: bool = False,
        bets: list[str] | None = None, with_table: bool = False, point: int | None = None,
        session: Path | None = None, bankroll: str | None = None, goal: str | None = None,
        stop_loss: str | None = None, rolls: int | None = None, sessions: int = 20_000,
        seed: int | None = None, wide: bool = False) -> int:
    """Print the odds ``dicetable odds`` is asked for (its options, by name); the exit code."""
    if as_json and as_csv:
        _console().print("[red]choose one of --json and --csv[/red]")
        return 2
    if (pack is None) == (session is None):
        _console().print("[red]give a PACK, or --session STRATEGY (the strategy names its pack)"
                      "[/red]")
        return 2
    try:
        if session is not None:
            from dicetable.cli.session_odds import session_report

            session_report(session, bankroll, goal, stop_loss, rolls, sessions, seed, as_json)
            return 0
        assert pack is not None
        if bets:
            from dicetable.games.packs import load_pack

            _layout(load_pack(pack), [parse_bet(b) for b in bets], with_table, point,
                    as_json)
            return 0
        pack_id, rows = _report(pack)
    except DicetableError as e:
        from rich.markup import escape

        _console().print(f"[red]{escape(str(e))}[/red]")
        return 2
    if as_json:
        echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if as_csv:
        from dicetable.odds.report import CSV_FIELDS, csv_row

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(csv_row(row))
        echo(buffer.getvalue(), nl=False)
        return 0
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
    return 0

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
