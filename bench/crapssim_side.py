"""The crapssim side of ``bench/sim_bench.py``: each strategy written to match dicetable's.

Run as a process (crapssim has no command line; this is its shortest equivalent)::

    python -m bench.crapssim_side NAME ROLLS SEED TABLES

It plays ROLLS rolls on TABLES independent tables (seeds SEED*1000+i) and prints JSON: the
CPU time of ``Table.run`` alone (the kernel), the time with the strategy and tables built (in
process), the import time, and each table's net result (cents) and rolls (for a z-test).
This module imports crapssim only, never dicetable.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

STARTED = time.process_time()

from crapssim import Table  # noqa: E402
from crapssim.strategy.examples import IronCross, ThreePointMolly  # noqa: E402
from crapssim.strategy.odds import PassLineOddsMultiplier  # noqa: E402
from crapssim.strategy.single_bet import BetPassLine  # noqa: E402
from crapssim.strategy.tools import AggregateStrategy, PlaceHitProgression  # noqa: E402

IMPORTED = time.process_time()


def press_6_8() -> Any:
    """Place 6 and 8 at $6 once a point is on; each presses by $6 after its own win, up to
    $36, and goes back to $6 when it loses (a seven-out). Two ``PlaceHitProgression``s with
    disjoint numbers progress independently (crapssim's docs); one over {6, 8} would share a
    hit count between the two bets, which is not the dicetable strategy."""
    stages = [6 * k for k in range(1, 7)]
    return AggregateStrategy(PlaceHitProgression([{6: a} for a in stages]),
                             PlaceHitProgression([{8: a} for a in stages]))


MAKE: dict[str, Callable[[], Any]] = {
    "pass-2x": lambda: BetPassLine(10) + PassLineOddsMultiplier(2),
    "iron-cross": lambda: IronCross(5),
    "3-point-molly": lambda: ThreePointMolly(10, 2),
    "press-6-8": press_6_8,
}


def play(name: str, rolls: int, seed: int, tables: int) -> dict[str, Any]:
    built = time.process_time()
    kernel = 0.0
    nets: list[int] = []
    thrown: list[int] = []
    for i in range(tables):
        share = rolls // tables + (1 if i < rolls % tables else 0)
        table = Table(seed=seed * 1000 + i)
        player = table.add_player(bankroll=1e12, strategy=MAKE[name]())
        start = player.total_player_cash
        t = time.process_time()
        table.run(max_rolls=share, verbose=False)
        kernel += time.process_time() - t
        nets.append(round((player.total_player_cash - start) * 100))
        thrown.append(table.dice.n_rolls)
    return {"kernel_s": kernel, "in_process_s": time.process_time() - built,
            "import_s": IMPORTED - STARTED, "nets": nets, "rolls": thrown}


def shared_dice_path(name: str, dice: list[int]) -> list[int]:
    """Net (cents, bets on the layout at face value) after each roll of ``dice`` (0..35)."""
    table = Table()
    player = table.add_player(bankroll=1e12, strategy=MAKE[name]())
    start = player.total_player_cash
    out = []
    for d in dice:
        table.fixed_run([(d // 6 + 1, d % 6 + 1)], verbose=False)
        out.append(round((player.total_player_cash - start) * 100))
    return out


if __name__ == "__main__":
    name, rolls, seed, tables = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(play(name, rolls, seed, tables)))
