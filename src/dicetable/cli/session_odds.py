"""``dicetable odds --session STRATEGY``: exact session outcomes, the simulator beside them."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from dicetable.cli.output import output
from dicetable.core.errors import InvalidInput
from dicetable.core.money import format_cents

console = output()
DEFAULT_ROLLS = 200


def _pct(x: float) -> str:
    return f"{x * 100:.3f}%"


def session_report(path: Path, bankroll: str | None, goal: str | None, stop_loss: str | None,
                   rolls: int | None, sessions: int, seed: int | None, as_json: bool) -> None:
    """Compute, compare and print (raises ``DicetableError`` on bad input)."""
    from dicetable.sim.automaton import compile_strategy
    from dicetable.sim.exact import bands, estimate, exact_session, proportion
    from dicetable.sim.strategy import load_strategy, money

    spec = load_strategy(path)
    have = spec.session
    bank = money(bankroll, "--bankroll") if bankroll is not None else have.bankroll
    if bank is None:
        raise InvalidInput("give --bankroll (the strategy file has none)", rule="odds.session")
    if goal is not None:
        target = money(goal, "--goal")
    elif have.stop_win is not None:
        target = bank + have.stop_win
    else:
        raise InvalidInput("give --goal (the strategy file has no stop-win)", rule="odds.session")
    loss = money(stop_loss, "--stop-loss") if stop_loss is not None else have.stop_loss
    n = rolls if rolls is not None else (have.max_rolls or DEFAULT_ROLLS)
    if sessions < 100:
        raise InvalidInput("--sessions is at least 100", rule="odds.session")
    compiled = compile_strategy(replace(spec, session=replace(have, bankroll=bank)))
    started = time.perf_counter()
    exact = exact_session(compiled, bank, target, loss, n)
    exact_s = time.perf_counter() - started
    sim = estimate(compiled, bank, target, loss, n, sessions, seed)
    cut = bands(exact)
    rows: list[dict[str, Any]] = []

    def row(what: str, p: Fraction, est: Any) -> None:
        rows.append({"figure": what, "exact": f"{p.numerator}/{p.denominator}",
                     "exact_float": float(p), "simulated": est.value,
                     "interval_99": [est.low, est.high], "inside": est.holds(p)})

    row("reach the goal", exact.p_goal, sim.p_goal)
    row("ruin", exact.p_ruin, sim.p_ruin)
    if loss is not None:
        row("stop-loss", exact.p_stop_loss, sim.p_stop_loss)
    row("expected rolls", exact.expected_rolls, sim.expected_rolls)
    row(f"mean bankroll after {n} rolls", exact.mean_after, sim.mean_after)
    band_rows: list[dict[str, Any]] = []
    for lo, hi, p in cut:
        hits = int(((sim.after >= lo) & (sim.after <= hi)).sum())
        est = proportion(hits, sim.after.size)
        band_rows.append({"from_cents": lo, "to_cents": hi, "exact": f"{p.numerator}/"
                          f"{p.denominator}", "exact_float": float(p), "simulated": est.value,
                          "interval_99": [est.low, est.high], "inside": est.holds(p)})
    if as_json:
        typer.echo(json.dumps({
            "strategy": spec.name, "pack": spec.pack.id, "bankroll_cents": bank,
            "goal_cents": target, "stop_loss_cents": loss, "rolls": n,
            "exact_seconds": exact_s, "states": exact.states, "sessions": sessions,
            "simulator_seconds": sim.seconds, "unfinished_sessions": sim.unfinished,
            "figures": rows, "bankroll_after_bands": band_rows,
            "bankroll_after_distribution": {str(k): f"{v.numerator}/{v.denominator}"
                                            for k, v in exact.after.items()},
        }, indent=2))
        return
    console.print(f"{spec.name} on {spec.pack.id}: bankroll {format_cents(bank)}, goal "
                  f"{format_cents(target)}, stop-loss "
                  f"{format_cents(loss) if loss is not None else 'none'}")
    console.print(f"exact: {exact.states:,} (money, state) pairs in {exact_s:.2f} s; "
                  f"simulator: {sessions:,} sessions for each figure in {sim.seconds:.2f} s")
    table = Table("figure", "exact", "simulator", "99% interval", "",
                  title="session outcomes (reach the goal, ruin, length: however long it takes)")
    for r in rows:
        kind = "money" if r["figure"].startswith("mean") else \
            "rolls" if r["figure"] == "expected rolls" else "p"

        def fmt(x: float, kind: str = kind) -> str:
            if kind == "money":
                return format_cents(round(x))
            return f"{x:.2f}" if kind == "rolls" else _pct(x)

        lo, hi = r["interval_99"]
        table.add_row(r["figure"], fmt(r["exact_float"]), fmt(r["simulated"]),
                      f"[{fmt(lo)}, {fmt(hi)}]", "inside" if r["inside"] else "OUTSIDE")
    console.print(table)
    dist = Table("bankroll", "exact", "simulator", "99% interval", "",
                 title=f"bankroll when a session of at most {n} rolls is over")
    for b in band_rows:
        span = format_cents(b["from_cents"]) if b["from_cents"] == b["to_cents"] else \
            f"{format_cents(b['from_cents'])} to {format_cents(b['to_cents'])}"
        dist.add_row(span, _pct(b["exact_float"]), _pct(b["simulated"]),
                     f"[{_pct(b['interval_99'][0])}, {_pct(b['interval_99'][1])}]",
                     "inside" if b["inside"] else "OUTSIDE")
    console.print(dist)
    console.print("exact figures are Fractions (--json prints them); the intervals are the "
                  "simulator's at 99%")
    if sim.unfinished:
        console.print(f"{sim.unfinished:,} simulated sessions were still going after "
                      "1,000,000 rolls (left out of the goal and ruin counts)")


__all__ = ["session_report"]
