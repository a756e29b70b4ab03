"""What a simulator worker runs: one shard of a plan, from plain picklable arguments.

A worker (a spawned local process, a Dask worker, a Ray task) imports this module, the engine,
the dice and the kernel's arrays: NumPy (and Numba) only, never the rule packs, the wagers or
the strategy model. ``tests/test_sim_workers.py`` checks what a fresh worker process loads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dicetable.sim.dice import PackedDice
from dicetable.sim.engine import LaneResult, Limits, run_lanes
from dicetable.sim.kernel import Kernel


@dataclass(frozen=True)
class ShardPlan:
    index: int
    lanes: int
    limits: Limits
    trace: int = 0
    every: int = 1


def run_shard(kernel: Kernel, plan: ShardPlan, seed: np.random.SeedSequence,
              groups: int, fused: bool | None = None) -> LaneResult:
    """One shard, anywhere: its dice come from its own seed, so where it runs does not matter."""
    dice = PackedDice(np.random.default_rng(seed), fused=fused)
    return run_lanes(kernel, dice, plan.lanes, plan.limits, plan.trace, plan.every, groups,
                     fused=fused)


__all__ = ["ShardPlan", "run_shard"]
