"""What ``dicetable simulate`` does and prints, without Typer: the Typer command
(``cli.simulate``) and the entry point's plain-argument path (``cli.fast``) both call ``run``."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from dicetable.cli.tables import console as table_console
from dicetable.cli.tables import echo, fit
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.money import format_cents

if TYPE_CHECKING:
    from pathlib import Path

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


def run(strategy: str | os.PathLike[str], *, rolls: int | None = None,
        sessions: int | None = None, session_rolls: int | None = None, workers: int = 1,
        seed: int | None = None, engine: str = "local", scheduler: str | None = None,
        address: str | None = None, kernel: str = "auto", as_json: bool = False,
        as_csv: bool = False, plot: Path | None = None, progress: bool = True,
        wide: bool = False) -> int:
    """Simulate as ``dicetable simulate`` is asked (its options, by name); the exit code."""
    from dicetable.sim.report import build_report
    from dicetable.sim.runner import DEFAULT_SESSION_ROLLS, plan_rolls, plan_sessions
    from dicetable.sim.runner import run as run_plans

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
                result = run_plans(compiled, plans, seed, workers, engine, where,
                             progress=lambda n: bar.advance(task, n),
                             fused=use_fused)
        else:
            result = run_plans(compiled, plans, seed, workers, engine, where,
                         fused=use_fused)
        report = build_report(compiled, result, mode)
    except DicetableError as e:
        from rich.markup import escape

        _errors().print(f"[red]{escape(str(e))}[/red]")
        return 2
    if plot is not None:
        from dicetable.sim.plots import write_plots

        for path in write_plots(report, plot):
            _errors().print(f"wrote {path}")
    if as_json:
        echo(json.dumps(report.to_dict(), indent=2))
        return 0
    if as_csv:
        echo(report.to_csv(), nl=False)
        return 0
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
    return 0

def _errors() -> Console:
    from dicetable.cli.output import output

    return output(stderr=True)


def _prepared(strategy: str | os.PathLike[str], session_rolls: int | None) -> Prepared:
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

    spec = load_strategy(os.fspath(strategy))
    if session_rolls is not None:
        spec = replace(spec, session=replace(spec.session, max_rolls=session_rolls))
    made = prepare(compile_strategy(spec))
    if key is not None:
        disk_cache.save(key, made)
    return made


def _strategy_key(strategy: str | os.PathLike[str], session_rolls: int | None
                  ) -> str | None:
    """The cache key of a strategy file, or None when it is not cached: unreadable or
    malformed (the full check then says why), or naming a pack file of its own (which the
    key does not cover)."""
    from dicetable.cli import disk_cache

    try:
        with open(strategy, "rb") as f:  # a name, not a Path: the run imports no pathlib
            raw = f.read()
        text = raw.decode("utf-8")
        suffix = os.path.splitext(strategy)[1]
        if suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or str(data.get("pack", "")).endswith(".json"):
        return None
    return disk_cache.key("strategy", suffix, session_rolls, raw)
