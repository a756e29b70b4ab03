"""The simulator against crapssim, side by side, honestly.

    .venv/bin/python -m bench.sim_bench [--sizes 1e5,1e6,1e7,1e8] [--repeats 3]
        [--crapssim-cap 1e5] [--equal pass-2x:1e6] [--no-clusters]

For each strategy, both sides play the same strategy (``bench/crapssim_side.py`` writes the
crapssim side to match; the two are first run on the same 5,000 dice and must agree to the
cent), on the same number of rolls, interleaved crapssim / dicetable / crapssim / ..., and the
median of ``--repeats`` runs is taken. Three ratios, each dicetable's rate over crapssim's:

* kernel: the run alone, in process, warm (crapssim: ``Table.run``; dicetable: ``run`` with
  the strategy compiled and the fused Numba kernel loaded);
* in process: building the strategy (dicetable: compiling its tables), the run and (dicetable)
  the report, imports excluded;
* CLI process: a whole fresh process, start-up and imports included (dicetable: ``dicetable
  simulate --json``, which picks the NumPy reference below 20 million rolls and the fused
  kernel above, where loading Numba pays; crapssim has no command line:
  ``python -m bench.crapssim_side``). The CLI reads the prepared strategy from its disk cache
  (filled by a warm-up run); "CLI cold" is one run with the cache off, which checks and
  compiles the strategy as a first run does.

Everything is timed in CPU seconds of the process doing the work (``time.process_time``; a
child process's user + system time from ``wait4``), the dice draw included: on a shared
machine wall time also counts the other processes. The workers table (several processes) is
timed by the wall clock.

crapssim runs about 5-17 thousand rolls a second, so above ``--crapssim-cap`` rolls it is not
run at the full size: it is run at the cap and the ratio printed is of per-roll rates (marked
``rate@cap``), except the ``--equal`` sizes, which it runs in full. Where the dice differ
(every timed run), the per-roll results are compared by a z-test. The kernel's rate is also
given as a fraction of NumPy's own dice draw (``Generator.integers(0, 36, uint8)``) measured
in the same run, and each dicetable CLI process's peak memory. Then 1 against 2 workers on
the local, Dask and Ray engines. Nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dicetable.sim.automaton import compile_strategy
from dicetable.sim.engine import Limits
from dicetable.sim.report import build_report
from dicetable.sim.runner import plan_rolls, run
from dicetable.sim.strategy import strategy_from_data
from dicetable.sim.worker import ShardPlan

STRATEGIES: dict[str, dict[str, Any]] = {
    "pass-2x": {"name": "pass + 2x odds", "bets": [{"wager": "pass", "amount": 10, "odds": 2}]},
    "iron-cross": {"name": "Iron Cross", "bets": [
        {"wager": "pass", "amount": 5, "odds": 2},
        {"wager": "place5", "amount": 10, "when": "point-on", "skip_point": True},
        {"wager": "place6", "amount": 12, "when": "point-on", "skip_point": True},
        {"wager": "place8", "amount": 12, "when": "point-on", "skip_point": True},
        {"wager": "field", "amount": 5, "when": "point-on"}]},
    "3-point-molly": {"name": "3-point Molly, 2x odds", "bets": [
        {"wager": "pass", "amount": 10, "odds": 2},
        {"wager": "come", "amount": 10, "odds": 2, "max_bets": 2}]},
    "press-6-8": {"name": "place 6/8, each pressed after its win", "bets": [
        {"wager": f"place{n}", "amount": 6, "press": {"by": 6, "max": 36}, "when": "point-on"}
        for n in (6, 8)]},
}
TARGETS = {"pass-2x": "kernel >= 50% of the dice draw; kernel >= 1,000x and CLI >= 50x at 1e6",
           "iron-cross": "kernel >= 50% of the dice draw",
           "3-point-molly": "kernel >= 20 M rolls/s"}
ROOT = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "dicetable"
AGREE_ROLLS = 5_000


def size(text: str) -> int:
    return int(float(text))


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def timed_process(args: list[str], env: dict[str, str] | None = None
                  ) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds, peak RSS (KiB) and stdout of one fresh process."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT,
                            env={**os.environ, **(env or {})})
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{args[:3]} exited {proc.returncode}")
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - started, cpu, usage.ru_maxrss, out


def agree_on_shared_dice(key: str) -> str:
    from bench.crapssim_side import shared_dice_path
    from dicetable.sim.engine import Limits, ScriptedDice, run_lanes

    dice = np.random.default_rng(2024).integers(0, 36, AGREE_ROLLS + 1).astype(np.uint8)
    compiled = compile_strategy(strategy_from_data(STRATEGIES[key]))
    result = run_lanes(compiled.kernel(), ScriptedDice(dice), 1, Limits(len(dice)), trace=1)
    ours = result.trace[0].tolist()[:-1]  # the last roll winds the session down
    theirs = shared_dice_path(key, dice[:-1].tolist())
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a != b:
            return f"DIFFER from roll {i + 1}: {a} vs {b} cents"
    return f"identical to the cent on {AGREE_ROLLS:,} shared rolls"


def dice_draw_rate(n: int = 20_000_000) -> float:
    rng = np.random.default_rng(1)
    started = time.process_time()
    rng.integers(0, 36, size=n, dtype=np.uint8)
    return n / (time.process_time() - started)


def ours_in_process(key: str, rolls: int, seed: int) -> dict[str, float]:
    started = time.process_time()
    compiled = compile_strategy(strategy_from_data(STRATEGIES[key]))
    t1 = time.process_time()
    result = run(compiled, plan_rolls(rolls), seed=seed, fused=True)
    t2 = time.process_time()
    build_report(compiled, result, "rolls")
    t3 = time.process_time()
    return {"kernel_s": t2 - t1, "in_process_s": t3 - started, "rolls": result.rolls_thrown,
            "net": int(result.final_net.sum())}


CACHE = tempfile.mkdtemp(prefix="dt-sim-bench-cache-")
"""The CLI's disk cache for this run (``cli.disk_cache``): filled by a warm-up run."""


def ours_cli(path: Path, rolls: int, seed: int, cache: str = CACHE) -> dict[str, Any]:
    wall, cpu, rss, out = timed_process([str(CLI), "simulate", "--strategy", str(path), "--rolls",
                                    str(rolls), "--seed", str(seed), "--json",
                                    "--no-progress"], {"DICETABLE_CACHE": cache})
    report = json.loads(out)
    lo, hi = report["mean_result_ci_cents"]
    se_lane = (hi - lo) / (2 * 1.959964)
    return {"wall_s": wall, "cpu_s": cpu, "rss_kib": rss, "net": report["total_net_cents"],
            "rolls": report["rolls"],
            "se_per_roll": se_lane * report["sessions"] / report["rolls"]}


def crapssim_process(key: str, rolls: int, seed: int) -> dict[str, Any]:
    tables = max(2, min(20, rolls // 5_000))
    wall, cpu, rss, out = timed_process([sys.executable, "-m", "bench.crapssim_side", key,
                                    str(rolls), str(seed), str(tables)])
    data: dict[str, Any] = json.loads(out)
    nets = np.array(data["nets"], dtype=np.float64)
    thrown = np.array(data["rolls"], dtype=np.float64)
    edge = nets.sum() / thrown.sum()
    resid = nets - edge * thrown
    b = len(nets)
    data["per_roll"] = edge
    data["se_per_roll"] = math.sqrt(b / (b - 1) * float((resid ** 2).sum())) / thrown.sum()
    data["wall_s"] = wall
    data["cpu_s"] = cpu
    data["rss_kib"] = rss
    data["rolls_total"] = int(thrown.sum())
    return data


def bench_strategy(key: str, sizes: list[int], repeats: int, cap: int,
                   equal: dict[str, int], draw_rates: list[float]) -> None:
    data = STRATEGIES[key]
    print(f"\n## {data['name']} ({key})   target: {TARGETS.get(key, 'none set')}")
    print(f"   agreement: {agree_on_shared_dice(key)}")
    path = Path(tempfile.mkdtemp()) / f"{key}.json"
    path.write_text(json.dumps(data))
    ours_in_process(key, 100_000, 0)  # warm: the strategy's first compile, the kernel loaded
    ours_cli(path, 1000, 0)  # the CLI's disk cache filled: the prepared strategy
    print(f"   {'rolls':>11} {'crapssim at':>11} {'kernel':>10} {'in process':>10} "
          f"{'CLI (CPU)':>11} {'CLI cold':>9}   {'dicetable M rolls/s':>19} {'of draw':>7} "
          f"{'peak RSS':>9}   agreement (z)")
    crapssim_cache: dict[int, list[dict[str, Any]]] = {}
    for n in sizes:
        theirs_n = n if n <= max(cap, equal.get(key, 0)) else cap
        theirs: list[dict[str, Any]] = []
        ours: list[dict[str, float]] = []
        cli: list[dict[str, Any]] = []
        cold = ours_cli(path, n, seed=1, cache="off")  # a first run: the strategy compiled
        cached = crapssim_cache.get(theirs_n)
        for i in range(repeats):  # interleaved: crapssim, dicetable, crapssim, dicetable ...
            if cached is None:
                theirs.append(crapssim_process(key, theirs_n, seed=i + 1))
            ours.append(ours_in_process(key, n, seed=i + 1))
            cli.append(ours_cli(path, n, seed=i + 1))
            draw_rates.append(dice_draw_rate())
        if cached is not None:
            theirs = cached
        crapssim_cache[theirs_n] = theirs
        c_kernel = median([t["rolls_total"] / t["kernel_s"] for t in theirs])
        c_inproc = median([t["rolls_total"] / t["in_process_s"] for t in theirs])
        c_cli = median([t["rolls_total"] / t["cpu_s"] for t in theirs])
        o_kernel = median([o["rolls"] / o["kernel_s"] for o in ours])
        o_inproc = median([o["rolls"] / o["in_process_s"] for o in ours])
        o_cli = median([c["rolls"] / c["cpu_s"] for c in cli])
        draw = median(draw_rates[-repeats:])
        ours_per_roll = sum(c["net"] for c in cli) / sum(c["rolls"] for c in cli)
        ours_se = math.sqrt(sum(c["se_per_roll"] ** 2 for c in cli)) / len(cli)
        their_per_roll = statistics.fmean(t["per_roll"] for t in theirs)
        their_se = math.sqrt(sum(t["se_per_roll"] ** 2 for t in theirs)) / len(theirs)
        z = (ours_per_roll - their_per_roll) / math.hypot(ours_se, their_se)
        mark = "" if theirs_n == n else " rate@cap"
        print(f"   {n:>11,} {theirs_n:>11,} {o_kernel / c_kernel:>9,.0f}x "
              f"{o_inproc / c_inproc:>9,.0f}x {o_cli / c_cli:>10,.1f}x "
              f"{cold['rolls'] / cold['cpu_s'] / c_cli:>8,.1f}x   "
              f"{o_kernel / 1e6:>8.1f} kernel {o_cli / 1e6:>5.1f} CLI {o_kernel / draw:>6.0%} "
              f"{median([c['rss_kib'] for c in cli]) / 1024:>6.0f} MiB   "
              f"z = {z:+.2f}{' ok' if abs(z) < 3 else ' DISAGREE'} "
              f"({ours_per_roll / 100:+.4f} vs {their_per_roll / 100:+.4f} $/roll){mark}")
    print(f"   crapssim: kernel {c_kernel / 1e3:.1f} k rolls/s, CLI process "
          f"{c_cli / 1e3:.1f} k rolls/s at {theirs_n:,} rolls; NumPy dice draw "
          f"{median(draw_rates[-repeats:]) / 1e6:.0f} M rolls/s in the same run")


def bench_engines(rolls: int, repeats: int, quick: bool = False) -> None:
    """1 against 2 workers on each engine, pass + 2x odds, totals checked against local.
    ``quick``: the local pool warmed with a small shard a worker, not a long-run shard (16M
    rolls) each, and Dask's and Ray's 1 and 2 workers both on one 2-worker cluster (a smoke
    run: a cluster's start-up costs more than all its runs)."""
    print(f"\n## workers, pass + 2x odds, {rolls:,} rolls (pool and cluster start-up not timed; "
          f"{os.cpu_count()} cores on this machine)")
    compiled = compile_strategy(strategy_from_data(STRATEGIES["pass-2x"]))
    plans = plan_rolls(rolls)
    reference = run(compiled, plans, seed=77)
    rows: list[tuple[str, int, float, bool]] = []

    def timed(engine: str, workers: int, address: str | None = None) -> None:
        times = []
        same = True
        for _ in range(repeats):
            result = run(compiled, plans, seed=77, workers=workers, engine=engine,
                         address=address)
            times.append(result.seconds)
            same &= bool(np.array_equal(result.groups, reference.groups))
        rows.append((engine, workers, rolls / median(times), same))

    for w in (1, 2):  # the local pool is kept between runs, as a cluster is: warm it first
        warm = [ShardPlan(i, 64, Limits(1_000)) for i in range(w)] if quick \
            else plan_rolls(w << 24)
        run(compiled, warm, seed=1, workers=w, fused=True)  # a shard each
        timed("local", w)
    try:
        import importlib

        local_cluster: Any = importlib.import_module("dask.distributed").LocalCluster
        for n in (2,) if quick else (1, 2):
            with local_cluster(n_workers=n, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster:
                run(compiled, plan_rolls(1_000_000), seed=1, engine="dask",
                    address=cluster.scheduler_address)  # warm the workers
                for w in (1, 2) if quick else (n,):
                    timed("dask", w, cluster.scheduler_address)
    except ImportError:
        print("   dask: not installed")
    try:
        import ray

        for n in (2,) if quick else (1, 2):
            ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False)
            try:
                run(compiled, plan_rolls(1_000_000), seed=1, engine="ray")
                for w in (1, 2) if quick else (n,):
                    timed("ray", w)
            finally:
                ray.shutdown()
    except ImportError:
        print("   ray: not installed")
    by = {(e, w): r for e, w, r, _ in rows}
    for engine, workers, rate, same in rows:
        speedup = f"  {rate / by[(engine, 1)]:.2f}x one worker (target >= 1.6x)" \
            if workers == 2 else ""
        print(f"   {engine:6s} {workers} worker{'s' if workers > 1 else ' '} "
              f"{rate / 1e6:7.1f} M rolls/s  totals "
              f"{'identical to the local run' if same else 'DIFFER'}{speedup}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6,1e7,1e8")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--crapssim-cap", type=size, default=100_000)
    parser.add_argument("--equal", default="pass-2x:1e6",
                        help="KEY:ROLLS,... crapssim runs in full up to ROLLS for KEY")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--no-clusters", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="2x10^4 rolls, one repeat, crapssim at 10^4 except pass-2x in "
                        "full, the local pool warmed with small shards, Dask's and Ray's 1 and "
                        "2 workers on one cluster each (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeats, args.crapssim_cap = "2e4", 1, 10_000
        args.equal = "pass-2x:2e4"
    sizes = [size(s) for s in args.sizes.split(",")]
    equal = {k: size(v) for k, v in (item.split(":") for item in args.equal.split(",") if item)}
    print(f"dicetable vs crapssim: medians of {args.repeats}, interleaved; crapssim capped at "
          f"{args.crapssim_cap:,} rolls except {equal} (above its size, 'rate@cap': the ratio "
          "is of per-roll rates, crapssim at the cap); load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; reproduce: python -m "
          f"bench.sim_bench {' '.join(sys.argv[1:])}")
    draw_rates: list[float] = []
    for key in args.strategies.split(","):
        bench_strategy(key, sizes, args.repeats, args.crapssim_cap, equal, draw_rates)
    if not args.no_clusters:
        bench_engines(max(sizes), args.repeats, quick=args.quick)


if __name__ == "__main__":
    main()
