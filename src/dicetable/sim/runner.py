"""Split a simulation into shards, run them (here, on local cores, or on Ray / Dask), merge.

The shards depend only on what is asked (sessions or rolls), never on the number of workers;
shard ``i`` rolls the dice of ``SeedSequence(seed).spawn(n)[i]``. So one seed gives the same
totals however the work is split, and in whatever order the shards come back.

>>> [(p.lanes, p.limits.rolls, p.limits.longer) for p in plan_rolls(20_000_000)]
[(4096, 2441, 1664), (4096, 2441, 1664)]
>>> sum(p.lanes * p.limits.rolls + p.limits.longer for p in plan_rolls(123_456_789))
123456789
>>> [p.lanes for p in plan_sessions(10_000, SessionSpec(max_rolls=100))]
[4096, 4096, 1808]
"""

from __future__ import annotations

import atexit
import importlib
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dicetable.core.errors import InvalidInput
from dicetable.core.money import format_cents
from dicetable.sim.dice import PackedDice
from dicetable.sim.engine import LaneResult, Limits, group_count, run_lanes
from dicetable.sim.kernel import Kernel
from dicetable.sim.session import SessionSpec
from dicetable.sim.worker import ShardPlan, run_shard

if TYPE_CHECKING:  # the process pool's modules are imported when a pool is started
    from concurrent.futures import ProcessPoolExecutor

SESSIONS_PER_SHARD = 4096
LANES_PER_SHARD = 4096
ROLLS_PER_SHARD = 1 << 24
"""A long-run shard: up to 4,096 lanes of 4,096 rolls (about 0.3 s of work)."""
MIN_LANE_ROLLS = 1_000
"""Long-run lanes are at least this long, so winding down at the end is negligible."""
DEFAULT_SESSION_ROLLS = 200
MAX_TRACED = 4096
"""Sessions whose bankroll is recorded along the way (for the bands), at most."""
ENGINES = ("local", "ray", "dask")
FUSED_FROM = 20_000_000
"""Rolls from which the fused kernel is chosen by default: loading Numba and its compiled code
costs about 1.5 s a process, which the NumPy reference's speed makes up for only on long
runs. The two give the same totals to the cent, so the choice never shows in a result."""


def choose_kernel(plans: Sequence[ShardPlan], fused: bool | None) -> bool:
    """``fused`` if given; else the fused kernel where Numba is installed and the run is long."""
    if fused:
        if not _have_numba():
            raise InvalidInput("the fused kernel needs the 'numba' package (pip install numba); "
                               "or use the NumPy reference", rule="sim.kernel")
        return True
    if fused is not None:
        return False
    total = sum(p.lanes * p.limits.rolls + p.limits.longer for p in plans)
    return total >= FUSED_FROM and _have_numba()


def _have_numba() -> bool:
    import importlib.util  # only here: most runs are short and never ask

    return importlib.util.find_spec("numba") is not None


def plan_rolls(total: int, trace: int = 0, checkpoints: int = 100) -> list[ShardPlan]:
    """Long-run mode: ``total`` betting rolls in long lanes, no session limits."""
    if total < 1:
        raise InvalidInput("ask for at least one roll", rule="sim.rolls")
    shards = max(1, math.ceil(total / ROLLS_PER_SHARD))
    plans = []
    for i in range(shards):
        share = total // shards + (1 if i < total % shards else 0)
        lanes = max(1, min(LANES_PER_SHARD, share // MIN_LANE_ROLLS))
        length, longer = divmod(share, lanes)
        every = max(1, (length + 1) // checkpoints)
        plans.append(ShardPlan(i, lanes, Limits(length, longer), trace if i == 0 else 0, every))
    return plans


def plan_sessions(sessions: int, session: SessionSpec, trace: int = 0,
                  checkpoints: int = 100) -> list[ShardPlan]:
    """Session mode: ``sessions`` sessions, each with the strategy's bankroll and limits."""
    if sessions < 1:
        raise InvalidInput("ask for at least one session", rule="sim.sessions")
    length = session.max_rolls or DEFAULT_SESSION_ROLLS
    limits = Limits(length, 0, session.bankroll, session.stop_win, session.stop_loss)
    every = max(1, length // checkpoints)
    plans = []
    for i, start in enumerate(range(0, sessions, SESSIONS_PER_SHARD)):
        lanes = min(SESSIONS_PER_SHARD, sessions - start)
        traced = min(trace, lanes, max(0, MAX_TRACED - start))
        plans.append(ShardPlan(i, lanes, limits, traced, every))
    return plans


def seeds(seed: int | None, shards: int) -> tuple[int, list[np.random.SeedSequence]]:
    """The entropy used (to repeat a run) and one independent seed per shard."""
    root = np.random.SeedSequence(seed)
    return int(root.entropy), root.spawn(shards)  # type: ignore[arg-type]


Progress = Callable[[int], None]


def _local(kernel: Kernel, plans: Sequence[ShardPlan],
           shard_seeds: Sequence[np.random.SeedSequence], groups: int, workers: int,
           fused: bool | None, progress: Progress | None) -> Iterator[tuple[int, LaneResult]]:
    if workers <= 1:
        for plan, seed in zip(plans, shard_seeds, strict=True):
            dice = PackedDice(np.random.default_rng(seed), fused=fused)
            yield plan.index, run_lanes(kernel, dice, plan.lanes, plan.limits, plan.trace,
                                        plan.every, groups, tick=progress, fused=fused)
        return
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    pool = local_pool(workers)
    try:
        futures = {pool.submit(run_shard, kernel, plan, seed, groups, fused): plan
                   for plan, seed in zip(plans, shard_seeds, strict=True)}
        for future in as_completed(futures):
            result = future.result()
            if progress is not None:
                progress(int(result.rolls.sum()))
            yield futures[future].index, result
    except BrokenProcessPool:  # a worker died: the next run gets a fresh pool
        _POOLS.pop(workers, None)
        raise


_POOLS: dict[int, ProcessPoolExecutor] = {}


def local_pool(workers: int) -> ProcessPoolExecutor:
    """The local pool of ``workers`` processes, started once a process and kept for its later
    runs (as a Dask or Ray cluster is): spawned, not forked, so no state is inherited and it
    behaves the same on every OS. Its workers import only the simulator's worker modules
    (``sim.worker``); each shard carries its kernel's arrays, so one pool serves any strategy.
    """
    pool = _POOLS.get(workers)
    if pool is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        atexit.unregister(_close_pools)  # registered once, however many pools
        atexit.register(_close_pools)
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        _POOLS[workers] = pool
    return pool


def _close_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(cancel_futures=True)
    _POOLS.clear()


def _engine_module(engine: str, module: str, package: str) -> Any:
    """The optional package a cluster engine runs on, or a refusal that says how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InvalidInput(f"--engine {engine} needs the {package!r} package (pip install "
                           f"{package!r}); or run on local cores with --engine local",
                           rule="sim.engine") from None


def _ray(kernel: Kernel, plans: Sequence[ShardPlan],
         shard_seeds: Sequence[np.random.SeedSequence], groups: int, workers: int,
         address: str | None, fused: bool | None,
         progress: Progress | None) -> Iterator[tuple[int, LaneResult]]:
    ray = _engine_module("ray", "ray", "ray")
    started = not ray.is_initialized()
    if started:
        # A cluster's address, or a private local Ray with this many worker slots.
        if address:
            ray.init(address=address)
        else:
            ray.init(num_cpus=max(1, workers), include_dashboard=False)
    try:
        remote = ray.remote(num_cpus=1)(run_shard)
        shared = ray.put(kernel)
        pending = {remote.remote(shared, plan, seed, groups, fused): plan.index
                   for plan, seed in zip(plans, shard_seeds, strict=True)}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                result: LaneResult = ray.get(ref)
                if progress is not None:
                    progress(int(result.rolls.sum()))
                yield pending.pop(ref), result
    finally:
        if started:
            ray.shutdown()


def _given(kernel: Kernel) -> Kernel:
    return kernel


def _dask(kernel: Kernel, plans: Sequence[ShardPlan],
          shard_seeds: Sequence[np.random.SeedSequence], groups: int, workers: int,
          address: str | None, fused: bool | None,
          progress: Progress | None) -> Iterator[tuple[int, LaneResult]]:
    distributed = _engine_module("dask", "dask.distributed", "dask[distributed]")
    # A scheduler's address, or a private LocalCluster of single-threaded worker processes.
    client = distributed.Client(address) if address else distributed.Client(
        n_workers=max(1, workers), threads_per_worker=1, dashboard_address=None)
    try:
        # The kernel as a task's result, not scattered data: the scheduler keeps a task's
        # recipe, so when a worker is lost (a missed heartbeat on a loaded machine) the kernel
        # is made again, where scattered data would fail the run with "lost dependencies".
        shared = client.submit(_given, kernel, pure=False)
        futures = {client.submit(run_shard, shared, plan, seed, groups, fused,
                                 pure=False): plan.index
                   for plan, seed in zip(plans, shard_seeds, strict=True)}
        for future in distributed.as_completed(list(futures)):
            result: LaneResult = future.result()
            if progress is not None:
                progress(int(result.rolls.sum()))
            yield futures[future], result
    finally:
        client.close()


@dataclass
class RunResult:
    """Every shard merged in shard order."""

    plans: list[ShardPlan]
    entropy: int
    engine: str
    workers: int
    seconds: float
    final_net: np.ndarray[Any, np.dtype[np.int64]]
    reason: np.ndarray[Any, np.dtype[np.int8]]
    rolls: np.ndarray[Any, np.dtype[np.int64]]
    groups: np.ndarray[Any, np.dtype[np.int64]]
    trace: np.ndarray[Any, np.dtype[np.int64]]
    checkpoints: np.ndarray[Any, np.dtype[np.int64]]

    @property
    def rolls_thrown(self) -> int:
        return int(self.rolls.sum())


def merge_results(plans: Sequence[ShardPlan], results: dict[int, LaneResult]) -> tuple[
        np.ndarray[Any, Any], ...]:
    ordered = [results[p.index] for p in plans]
    traced = [r for r in ordered if r.trace.size]
    trace = np.concatenate([r.trace for r in traced]) if traced else np.zeros((0, 0), np.int64)
    checkpoints = traced[0].checkpoints if traced else np.zeros(0, np.int64)
    if traced and any(r.trace.shape[1] != trace.shape[1] for r in traced):
        trace = traced[0].trace
    return (np.concatenate([r.final_net for r in ordered]),
            np.concatenate([r.reason for r in ordered]),
            np.concatenate([r.rolls for r in ordered]),
            np.concatenate([r.groups for r in ordered]), trace, checkpoints)


class Runnable(Protocol):
    """What a run needs of a strategy (a ``CompiledStrategy`` or a ``Prepared`` one)."""

    @property
    def opening_cost(self) -> int: ...

    def kernel(self) -> Kernel: ...


def run(compiled: Runnable, plans: list[ShardPlan], seed: int | None = None,
        workers: int = 1, engine: str = "local", address: str | None = None,
        progress: Progress | None = None, fused: bool | None = None) -> RunResult:
    """Run every shard of ``plans`` and merge them.

    ``address``: the Dask scheduler (``engine="dask"``) or the Ray cluster (``engine="ray"``)
    to run on; without it, a local cluster of ``workers`` processes is started for the run.
    ``fused``: the compiled kernel or the NumPy reference; None: ``choose_kernel``.
    """
    if engine not in ENGINES:
        raise InvalidInput(f"engine is one of {', '.join(ENGINES)}", rule="sim.engine")
    if workers < 1:
        raise InvalidInput("workers is at least 1", rule="sim.workers")
    bankroll = plans[0].limits.bankroll if plans else None
    if bankroll is not None and bankroll < compiled.opening_cost:
        raise InvalidInput(f"a bankroll of {format_cents(bankroll)} does not cover the opening "
                           f"bets ({format_cents(compiled.opening_cost)})", rule="sim.bankroll")
    entropy, shard_seeds = seeds(seed, len(plans))
    fused = choose_kernel(plans, fused)
    kernel = compiled.kernel()
    groups = group_count(list(kernel.components))
    started = time.perf_counter()
    stream: Iterator[tuple[int, LaneResult]]
    if address is not None and engine == "local":
        raise InvalidInput("an address is for --engine dask (--scheduler) or ray (--address)",
                           rule="sim.engine")
    if engine == "ray":
        stream = _ray(kernel, plans, shard_seeds, groups, workers, address, fused, progress)
    elif engine == "dask":
        stream = _dask(kernel, plans, shard_seeds, groups, workers, address, fused, progress)
    else:
        stream = _local(kernel, plans, shard_seeds, groups, min(workers, len(plans)), fused,
                        progress)
    results = dict(stream)
    seconds = time.perf_counter() - started
    final_net, reason, rolls, groups_arr, trace, checkpoints = merge_results(plans, results)
    return RunResult(list(plans), entropy, engine, workers, seconds, final_net, reason, rolls,
                     groups_arr, trace, checkpoints)


__all__ = ["DEFAULT_SESSION_ROLLS", "ENGINES", "FUSED_FROM", "RunResult", "ShardPlan",
           "choose_kernel", "merge_results", "plan_rolls", "plan_sessions", "run", "run_shard",
           "seeds"]
