"""``dicetable rng-test``: certify the electronic tables' RNG with the statistical battery."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from dicetable.cli.output import output
from dicetable.fairness.rng import certify

console = output()


def rng_test(rolls: int = typer.Option(10_000_000, "--rolls", min=100, max=10**9,
                                       help="How many rolls of two dice"),
             source: str = typer.Option("bulk", "--source",
                                        help="bulk: os.urandom with randbelow(6)'s scaling, "
                                             "in blocks; engine: CsprngDice.next_roll per roll "
                                             "(slow)"),
             as_json: bool = typer.Option(False, "--json")) -> None:
    """Chi-square, runs and serial-correlation tests at 99% on the CSPRNG's dice."""
    try:
        result = certify(rolls, source)
    except ValueError as e:
        console.print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        table = Table("test", "statistic", "df", "p-value", "99%",
                      title=f"{result.source}: {result.rolls:,} rolls in {result.seconds:.1f} s")
        for r in result.results:
            table.add_row(r.name, f"{r.statistic:.4f}", "" if r.df is None else str(r.df),
                          f"{r.p_value:.4f}",
                          "[green]pass[/green]" if r.passed() else "[red]FAIL[/red]")
        console.print(table)
        verdict = "[green]PASS[/green]" if result.passed else "[red]FAIL[/red]"
        console.print(f"{verdict}: {sum(r.passed() for r in result.results)} of "
                      f"{len(result.results)} tests pass at 99%. A perfect generator fails at "
                      f"least one of them {result.false_failure_rate:.0%} of the time; rerun a "
                      "failed test on fresh data before concluding.")
    if not result.passed:
        raise typer.Exit(1)
