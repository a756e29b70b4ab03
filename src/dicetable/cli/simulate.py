"""``dicetable simulate``: run a strategy file over many sessions or a long stream of rolls."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from dicetable.cli.tables import WIDE_OPTION_HELP, fit
from dicetable.cli.tables import console as table_console
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.money import format_cents

if TYPE_CHECKING:
    from rich.console import Console

    from dicetable.sim.prepared import Prepared

# The simulator (NumPy, Numba, Dask, Ray, matplotlib) is imported when a simulation runs, not
# when the CLI starts; the strategy checker and compiler (the rules, the games, the exact
# odds) only when the strategy is not already prepared in the cache (``sim.prepared``); Rich
# only when something is printed with it.
ENGINES = ("local", "ray", "dask")
KERNELS = ("auto", "fused", "numpy")
MAX_ROLLS = 10**13
"""The most rolls one command simulates (a plan per 16 million rolls is kept in memory)."""
MAX_SESSIONS = 10**9
"""The most sessions one command simulates (a plan per 4,096 sessions is kept in memory)."""
PROGRESS_FROM = 20_000_000
"""Show a progress bar from this many rolls on (and only on a terminal)."""


def simulate(
    strategy: Path = typer.Option(..., "--strategy", help="Strategy file (.json or .toml)"),
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
    from dicetable.sim.report import build_report
    from dicetable.sim.runner import DEFAULT_SESSION_ROLLS, plan_rolls, plan_sessions, run

    try:
        if engine not in ENGINES:
            raise InvalidInput(f"engine is one of {', '.join(ENGINES)}", rule="sim.engine")
        if kernel not in KERNELS:
            raise InvalidInput(f"--kernel is one of {', '.join(KERNELS)}", rule="sim.kernel")
        if scheduler is not None and engine != "dask":
            raise InvalidInput("--scheduler is the Dask scheduler: use it with --engine dask",
                               rule="sim.engine")
        if address is not None and engine != "ray":
            raise InvalidInput("--address is the Ray cluster: use it with --engine ray "
                               "(a Dask scheduler is --scheduler)", rule="sim.engine")
        where = scheduler if engine == "dask" else address
        use_fused = {"auto": None, "fused": True, "numpy": False}[kernel]
        if (rolls is None) == (sessions is None):
            raise InvalidInput("give exactly one of --rolls N and --sessions N",
                               rule="sim.mode")
        if as_json and as_csv:
            raise InvalidInput("choose one of --json and --csv", rule="sim.output")
        if session_rolls is not None and session_rolls < 1:
            raise InvalidInput("--session-rolls is at least 1", rule="sim.sessions")
        compiled = _prepared(strategy, session_rolls)
        trace = 512
        if rolls is not None:
            mode, plans, total = "rolls", plan_rolls(rolls, trace), rolls
        else:
            assert sessions is not None
            mode, plans = "sessions", plan_sessions(sessions, compiled.session, trace)
            total = sessions * (compiled.session.max_rolls or DEFAULT_SESSION_ROLLS)
        show = progress and total >= PROGRESS_FROM and sys.stderr.isatty()
        if show:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            with Progress(TextColumn("[bold]simulating"), BarColumn(),
                          TextColumn("{task.completed:,.0f} rolls"), TimeRemainingColumn(),
                          console=_errors(), transient=True) as bar:
                task = bar.add_task("rolls", total=total)
                result = run(compiled, plans, seed, workers, engine, where,
                             progress=lambda n: bar.advance(task, n),
                             fused=use_fused)
        else:
            result = run(compiled, plans, seed, workers, engine, where,
                         fused=use_fused)
        report = build_report(compiled, result, mode)
    except DicetableError as e:
        from rich.markup import escape

        _errors().print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(2) from None
    if plot is not None:
        from dicetable.sim.plots import write_plots

        for path in write_plots(report, plot):
            _errors().print(f"wrote {path}")
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
        return
    if as_csv:
        typer.echo(report.to_csv(), nl=False)
        return
    from rich.table import Table

    from dicetable.sim.report import Z

    console = table_console()
    for line in report.summary_lines():
        console.print(line)
    table = Table("bet", "decisions", "wagered", "net", "edge", "95% CI", "exact",
                  title="per wager")
    for w in report.wagers:
        exact = "" if w.exact_edge is None else f"{float(w.exact_edge) * 100:.3f}%"
        table.add_row(w.label, f"{w.decisions:,}", format_cents(w.handle), format_cents(w.net),
                      f"{w.edge * 100:.3f}%", f"± {Z * w.edge_se * 100:.3f}%", exact)
    table_console(wide).print(fit(table))


def _errors() -> Console:
    from dicetable.cli.output import output

    return output(stderr=True)


def _prepared(strategy: Path, session_rolls: int | None) -> Prepared:
    """The strategy checked and compiled - from the disk cache when this very file was
    prepared before by this very code (``cli.disk_cache``)."""
    from dicetable.cli import disk_cache
    from dicetable.sim.prepared import Prepared

    key = _strategy_key(strategy, session_rolls)
    found = disk_cache.load(key, Prepared) if key is not None else None
    if found is not None:
        return found
    from dicetable.sim.automaton import compile_strategy
    from dicetable.sim.prepare import prepare
    from dicetable.sim.strategy import load_strategy

    spec = load_strategy(strategy)
    if session_rolls is not None:
        spec = replace(spec, session=replace(spec.session, max_rolls=session_rolls))
    made = prepare(compile_strategy(spec))
    if key is not None:
        disk_cache.save(key, made)
    return made


def _strategy_key(strategy: Path, session_rolls: int | None) -> str | None:
    """The cache key of a strategy file, or None when it is not cached: unreadable or
    malformed (the full check then says why), or naming a pack file of its own (which the
    key does not cover)."""
    import tomllib

    from dicetable.cli import disk_cache

    try:
        raw = strategy.read_bytes()
        text = raw.decode("utf-8")
        data = tomllib.loads(text) if strategy.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or str(data.get("pack", "")).endswith(".json"):
        return None
    return disk_cache.key("strategy", strategy.suffix, session_rolls, raw)
