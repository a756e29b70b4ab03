"""``dicetable simulate``: run a strategy file over many sessions or a long stream of rolls (the
Typer command; what it does is ``cli.simulate_run``)."""

from __future__ import annotations

from pathlib import Path

import typer

from dicetable.cli import simulate_run
from dicetable.cli.simulate_run import ENGINES, MAX_ROLLS, MAX_SESSIONS
from dicetable.cli.tables import WIDE_OPTION_HELP


def simulate(
    # A file's name as text (shown as a path is): the run reads it without pathlib.
    strategy: str = typer.Option(..., "--strategy", metavar="<path>",
                                 help="Strategy file (.json or .toml)"),
    rolls: int | None = typer.Option(None, "--rolls", min=1, max=MAX_ROLLS,
                                     help="Long run: this many rolls in all "
                                     "(no bankroll or session limits)"),
    sessions: int | None = typer.Option(None, "--sessions", min=1, max=MAX_SESSIONS,
                                        help="This many sessions, each "
                                        "with the strategy's bankroll and limits"),
    session_rolls: int | None = typer.Option(None, "--session-rolls", max=MAX_ROLLS,
                                             help="Rolls per session (overrides the file)"),
    workers: int = typer.Option(1, "--workers", min=1, max=1024,
                                help="Processes on this machine"),
    seed: int | None = typer.Option(None, "--seed", min=0,
                                    help="Seed: the same totals every time"),
    engine: str = typer.Option("local", "--engine", help=f"One of {', '.join(ENGINES)}"),
    scheduler: str | None = typer.Option(None, "--scheduler", help="With --engine dask: a "
                                         "running scheduler's address (tcp://HOST:8786); "
                                         "without it, a local cluster of --workers"),
    address: str | None = typer.Option(None, "--address", help="With --engine ray: a running "
                                       "Ray cluster's address (HOST:6379 or auto); without "
                                       "it, a local Ray of --workers"),
    kernel: str = typer.Option("auto", "--kernel", help="fused (compiled by Numba), numpy "
                               "(the reference) or auto: fused from 20 million rolls, where "
                               "it pays for loading Numba; the same totals to the cent"),
    as_json: bool = typer.Option(False, "--json", help="The full report as JSON"),
    as_csv: bool = typer.Option(False, "--csv", help="The per-wager breakdown as CSV"),
    plot: Path | None = typer.Option(None, "--plot", help="Write PNG plots into this folder: "
                                     "bankroll bands, results, and each wager's realised edge "
                                     "with its 95% interval against the exact edge"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar"),
    wide: bool = typer.Option(False, "--wide", help=WIDE_OPTION_HELP),
) -> None:
    """Simulate a strategy: realised house edge, risk of ruin, bankroll percentiles."""
    code = simulate_run.run(strategy, rolls=rolls, sessions=sessions,
                            session_rolls=session_rolls, workers=workers, seed=seed,
                            engine=engine, scheduler=scheduler, address=address, kernel=kernel,
                            as_json=as_json, as_csv=as_csv, plot=plot, progress=progress,
                            wide=wide)
    if code:
        raise typer.Exit(code)
