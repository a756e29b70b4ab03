"""Run every benchmark in ``bench/`` in its ``--quick`` mode, each as its own process.

A smoke run so that a benchmark that no longer runs fails CI (``.ci/run``): each prints its
figures as usual, and nothing is asserted about speed; the run fails when a benchmark exits
non-zero (or outlasts its time limit), naming which.

    .venv/bin/python -m bench.quick_all [--only NAME,...] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

BENCHMARKS = (
    "archive_bench",
    "bank_bench",
    "bet_cost",
    "cli_startup",
    "controls_cost",
    "custody_bench",
    "engine_bench",
    "fairness",
    "history_bench",
    "load_bench",
    "odds_bench",
    "push_bench",
    "ratings_bench",
    "read_route_cost",
    "refusal_cost",
    "reliability_bench",
    "replay_bench",
    "scale_bench",
    "script_submit_bench",
    "server_bench",
    "sim_bench",
    "staff_view_cost",
    "store_bench",
    "tamper_cases",
)
"""Every runnable benchmark."""
PARTS = ("attacks_round3", "crapssim_side", "loadgen", "quick_all", "side_by_side", "spy",
         "ws_viewer")
"""The other modules of ``bench/``: parts the benchmarks use (and this runner), each run
through them."""


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(name: str, timeout: float) -> tuple[int, float, float]:
    """Run ``bench.NAME --quick``; its exit status (124 past the limit), wall seconds and the
    CPU seconds of its process and what it waited for (servers it started and stopped, say;
    not PostgreSQL's, nor a process it left running)."""
    print(f"\n==== bench.{name} --quick", flush=True)
    t0, cpu0 = time.perf_counter(), _children_cpu()
    try:
        rc = subprocess.run([sys.executable, "-m", f"bench.{name}", "--quick"],
                            timeout=timeout, check=False).returncode
    except subprocess.TimeoutExpired:
        rc = 124
    return rc, time.perf_counter() - t0, _children_cpu() - cpu0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names (default: all)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per benchmark")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)} (known: {', '.join(BENCHMARKS)})")
    results = [(name, *run(name, args.timeout)) for name in names]
    print("\n==== quick benchmarks (wall s, CPU s)")
    for name, rc, seconds, cpu in results:
        print(f"  {name:<20} {'ok' if rc == 0 else f'FAILED (exit {rc})':<18} {seconds:6.1f} s"
              f" {cpu:6.1f} CPU-s")
    print(f"  {'all':<20} {'':<18} {sum(r[2] for r in results):6.1f} s"
          f" {sum(r[3] for r in results):6.1f} CPU-s")
    failed = [name for name, rc, _, _ in results if rc != 0]
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
