"""A simulator worker imports the simulator, not the domain: a fresh process given a pickled
kernel, plan and seed runs its shard having loaded neither the rule packs, nor the wagers, nor
the strategy model, nor the CLI."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np

from dicetable.sim.automaton import compile_strategy
from dicetable.sim.runner import plan_rolls, run, seeds
from dicetable.sim.strategy import strategy_from_data
from dicetable.sim.worker import run_shard

CODE = """
import pickle, sys
kernel, plan, seed, groups = pickle.load(sys.stdin.buffer)
from dicetable.sim.worker import run_shard
result = run_shard(kernel, plan, seed, groups)
loaded = sorted(m for m in sys.modules if m.startswith(("dicetable", "typer", "rich")))
pickle.dump((loaded, result), sys.stdout.buffer)
"""


def test_a_worker_process_loads_only_the_simulator() -> None:
    compiled = compile_strategy(strategy_from_data({"bets": [
        {"wager": "pass", "amount": 10, "odds": 2},
        {"wager": "place6", "amount": 12, "when": "point-on"}]}))
    kernel = compiled.kernel()
    plans = plan_rolls(50_000)
    _, shard_seeds = seeds(9, len(plans))
    whole = run(compiled, plans, seed=9)
    groups = whole.groups.shape[0] // len(plans)
    payload = pickle.dumps((kernel, plans[0], shard_seeds[0], groups))
    out = subprocess.run([sys.executable, "-c", CODE], input=payload, capture_output=True,
                         check=True)
    loaded, result = pickle.loads(out.stdout)
    assert set(loaded) <= {"dicetable", "dicetable.sim", "dicetable.sim.dice",
                           "dicetable.sim.engine", "dicetable.sim.fused",
                           "dicetable.sim.kernel", "dicetable.sim.worker"}, loaded
    here = run_shard(kernel, plans[0], shard_seeds[0], groups)
    assert np.array_equal(result.final_net, here.final_net)
    assert np.array_equal(result.groups, here.groups)
