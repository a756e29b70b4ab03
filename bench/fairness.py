"""Figures for dice-fairness monitoring and RNG certification (prints; asserts nothing).

    python -m bench.fairness [--chains 1000] [--quick]

1. CUSUM run lengths per design (delta 0.05; h 4.6, 5.5, 6.5, 7.5): rolls to the first alert
   for a die loaded +5 points on face 6, and between false alarms for a fair die (six face
   CUSUMs a die), by Monte Carlo on seeded NumPy streams.
2. rng-test throughput: the bulk CSPRNG draw against the table's own CsprngDice.next_roll,
   side by side in one run (rolls per second, and the ratio).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from dicetable.fairness.rng import csprng_rolls, engine_rolls
from dicetable.fairness.sequential import CusumDesign, first_alarms, loaded


def arl_table(chains: int, fair_chains: int | None = None) -> None:
    """``fair_chains``: of the fair die (default half of ``chains``, at least 50)."""
    fair_n = fair_chains or max(chains // 2, 50)
    print(f"CUSUM run lengths, delta 0.05, {chains} chains (loaded: face 6 at 1/6+0.05), "
          f"{fair_n} of the fair die")
    print(f"{'h':>5} {'loaded ARL':>11} {'fair ARL (die)':>15} {'censored':>9}")
    for h in (4.6, 5.5, 6.5, 7.5):
        design = CusumDesign(h=h)
        hit = first_alarms(loaded(6, 0.05), chains, 50_000, design, seed=1)
        fair = first_alarms([1 / 6] * 6, fair_n, 300_000, design, seed=2)
        print(f"{h:>5} {hit.mean():>11.0f} {fair[fair > 0].mean():>15.0f} "
              f"{int((fair < 0).sum()):>9}")


def throughput(n_bulk: int = 10_000_000, n_engine: int = 200_000) -> None:
    t = time.perf_counter()
    csprng_rolls(n_bulk)
    bulk = n_bulk / (time.perf_counter() - t)
    t = time.perf_counter()
    engine_rolls(n_engine)
    engine = n_engine / (time.perf_counter() - t)
    print(f"bulk CSPRNG draw:       {bulk:>12,.0f} rolls/s")
    print(f"CsprngDice.next_roll:   {engine:>12,.0f} rolls/s")
    print(f"ratio bulk/engine:      {bulk / engine:>12.1f}x "
          f"(10M rolls: {1e7 / bulk:.1f} s bulk, {1e7 / engine:.0f} s engine)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chains", type=int, default=1000)
    parser.add_argument("--quick", action="store_true",
                        help="20 chains, 10 of the fair die, 2M and 50k rolls drawn (a smoke run)")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; reproduce: python -m "
          f"bench.fairness {' '.join(sys.argv[1:])}")
    if args.quick:
        arl_table(20, fair_chains=10)
        print()
        throughput(2_000_000, 50_000)
        return
    arl_table(args.chains)
    print()
    throughput()


if __name__ == "__main__":
    main()
