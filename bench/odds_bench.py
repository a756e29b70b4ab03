"""Exact odds of every wager of every preset: how long it takes (target: under 1 s).

Run: ``.venv/bin/python bench/odds_bench.py``. Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import time

from dicetable.games.packs import PRESETS, compile_pack, load_preset
from dicetable.odds import markov
from dicetable.odds.exact import pack_odds
from dicetable.odds.report import pack_report


def main() -> None:
    # Already a few seconds: ``--quick`` (what CI passes) runs the same thing.
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same run (it is seconds)")
    parser.parse_args()
    t0 = time.perf_counter()
    packs = [load_preset(name) for name in PRESETS]
    for pack in packs:
        compile_pack(pack)
    t1 = time.perf_counter()
    wagers = sum(len(pack_odds(pack)) for pack in packs)
    t2 = time.perf_counter()
    markov._GROUPED.clear()  # solve again from the compiled tables, nothing remembered
    t3 = time.perf_counter()
    rows = sum(len(pack_report(pack)) for pack in packs)
    t4 = time.perf_counter()
    print(f"presets: {', '.join(PRESETS)}")
    print(f"load + compile the packs (cold):            {t1 - t0:7.3f} s")
    print(f"every wager of every preset, exactly:        {t2 - t1:7.3f} s  ({wagers} wagers)")
    print(f"  compile + every wager, from cold:          {t2 - t0:7.3f} s  (target < 1 s)")
    print(f"full report (commission both ways, table-joint standing bets, line+odds): "
          f"{t4 - t3:.3f} s  ({rows} rows)")


if __name__ == "__main__":
    main()
