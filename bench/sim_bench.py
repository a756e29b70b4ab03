"""The simulator against crapssim (the PyPI craps simulator), side by side, on one core.

Run: ``.venv/bin/python bench/sim_bench.py``. Prints rolls per second and the ratio for
pass line + 2x odds, Iron Cross and an adaptive strategy (press after a win, stop-loss), then
the peak memory for 1e6 and 1e8 rolls. Targets (DESIGN.md, issue 5): >= 300x, >= 300x, >= 100x.
Asserts nothing about time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from crapssim import Table
from crapssim.strategy.examples import IronCross
from crapssim.strategy.odds import PassLineOddsMultiplier
from crapssim.strategy.single_bet import BetPassLine
from crapssim.strategy.tools import AggregateStrategy, PlaceHitProgression, Strategy

from dicetable.sim.automaton import compile_strategy
from dicetable.sim.runner import plan_rolls, plan_sessions, run
from dicetable.sim.strategy import strategy_from_data

BUDGET_S = 3.0
"""Seconds given to crapssim per strategy (it is the slow side)."""

PASS_2X: dict[str, Any] = {"name": "pass + 2x odds",
                           "bets": [{"wager": "pass", "amount": 10, "odds": 2}]}
IRON_CROSS: dict[str, Any] = {"name": "Iron Cross", "bets": [
    {"wager": "pass", "amount": 5, "odds": 2},
    {"wager": "place5", "amount": 10, "when": "point-on", "skip_point": True},
    {"wager": "place6", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "place8", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "field", "amount": 5, "when": "point-on"}]}
PRESS: dict[str, Any] = {
    "name": "place 6/8, press after a win, stop-loss", "bankroll": "$300",
    "session": {"max_rolls": 300, "stop_loss": "$150"},
    "bets": [{"wager": f"place{n}", "amount": 6, "press": {"by": 6, "max": 36},
              "when": "point-on"} for n in (6, 8)]}


class StopLoss(AggregateStrategy):
    """crapssim has no stop-loss: stop the run once the player is down ``limit``."""

    def __init__(self, limit: float, start: float, *parts: Strategy) -> None:
        super().__init__(*parts)
        self.limit = limit
        self.start = start

    def completed(self, player: Any) -> bool:
        return bool(player.total_player_cash <= self.start - self.limit)


def crapssim_rate(make: Any, session_rolls: int | None = None) -> float:
    """crapssim's rolls per second: sessions of ``session_rolls`` (or one long run)."""
    rolls = 0
    seed = 0
    started = time.perf_counter()
    while time.perf_counter() - started < BUDGET_S:
        table = Table(seed=seed)
        table.add_player(bankroll=300 if session_rolls else 1e9, strategy=make())
        table.run(max_rolls=session_rolls or 20_000, verbose=False)
        rolls += table.dice.n_rolls
        seed += 1
    return rolls / (time.perf_counter() - started)


def ours_rate(data: dict[str, Any], rolls: int = 0, sessions: int = 0) -> tuple[float, int]:
    compiled = compile_strategy(strategy_from_data(data))
    plans = plan_rolls(rolls) if rolls else plan_sessions(sessions,
                                                          compiled.strategy.session)
    result = run(compiled, plans, seed=1, workers=1)
    return result.rolls_thrown / result.seconds, result.rolls_thrown


def peak_rss(rolls: int) -> dict[str, float]:
    """Peak resident memory of a fresh process simulating ``rolls`` rolls (MiB)."""
    code = (
        "import json, resource, time\n"
        "from dicetable.sim.automaton import compile_strategy\n"
        "from dicetable.sim.runner import plan_rolls, run\n"
        "from dicetable.sim.strategy import strategy_from_data\n"
        f"c = compile_strategy(strategy_from_data({PASS_2X!r}))\n"
        "import os\n"
        "base = os.sysconf('SC_PAGE_SIZE') * int(open('/proc/self/statm').read().split()[1])\n"
        f"r = run(c, plan_rolls({rolls}), seed=1)\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps({'before_mib': base / 2**20, 'peak_mib': peak / 1024,"
        " 'rolls': r.rolls_thrown, 'seconds': r.seconds}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def main() -> None:
    print("one core each; crapssim gets", BUDGET_S, "s per strategy\n")
    rows = []
    for name, data, kwargs, make, session_rolls, target in (
        ("pass line + 2x odds", PASS_2X, {"rolls": 50_000_000},
         lambda: BetPassLine(10) + PassLineOddsMultiplier(2), None, 300),
        ("Iron Cross", IRON_CROSS, {"rolls": 30_000_000}, lambda: IronCross(5), None, 300),
        ("press after win + stop-loss", PRESS, {"sessions": 100_000},
         lambda: StopLoss(150, 300, PlaceHitProgression([{6: 6, 8: 6}, {6: 12, 8: 12},
                                                          {6: 18, 8: 18}, {6: 24, 8: 24},
                                                          {6: 30, 8: 30}, {6: 36, 8: 36}])),
         300, 100),
    ):
        base = crapssim_rate(make, session_rolls)
        ours, thrown = ours_rate(data, **kwargs)
        ratio = ours / base
        rows.append((name, base, ours, ratio, target))
        print(f"{name:30s} crapssim {base / 1e3:8.1f} k rolls/s | dicetable "
              f"{ours / 1e6:7.2f} M rolls/s ({thrown:,} rolls) | ratio {ratio:7.0f}x "
              f"(target >= {target}x) {'ok' if ratio >= target else 'BELOW TARGET'}")
    print()
    for rolls in (1_000_000, 100_000_000):
        f = peak_rss(rolls)
        rate = f["rolls"] / f["seconds"] / 1e6
        print(f"memory, pass + 2x odds, {rolls:>11,} rolls: peak RSS {f['peak_mib']:6.1f} MiB "
              f"(resident before the run {f['before_mib']:6.1f} MiB), {rate:.1f} M rolls/s")


if __name__ == "__main__":
    main()
