"""The vectorised engine: tables agree with the reference model, runs are reproducible however
they are split, memory stays bounded, and the optional cluster engines fail clearly."""

from __future__ import annotations

import importlib.util
from concurrent.futures.process import BrokenProcessPool
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.core.dice import ALL_ROLLS
from dicetable.core.errors import InvalidInput
from dicetable.sim import engine as engine_mod
from dicetable.sim.automaton import CompiledStrategy, Kernel, compile_strategy
from dicetable.sim.engine import Limits, RandomDice, ScriptedDice, run_lanes
from dicetable.sim.entry import Entry
from dicetable.sim.runner import (
    merge_results,
    plan_rolls,
    plan_sessions,
    run,
    run_shard,
    seeds,
)
from dicetable.sim.strategy import SessionSpec, strategy_from_data
from tests.profiles import examples

MIXED: dict[str, Any] = {"bets": [
    {"wager": "pass", "amount": 10, "odds": "max"},
    {"wager": "come", "amount": 5, "odds": 2, "max_bets": 2},
    {"wager": "place6", "amount": 6, "press": {"by": 6, "max": 18}, "when": "point-on",
     "skip_point": True},
    {"wager": "buy4", "amount": 20},
    {"wager": "dontcome", "amount": 5, "odds": 6, "max_bets": 1},
    {"wager": "hard8", "amount": 1},
    {"wager": "fire", "amount": 1},
    {"wager": "allsmall", "amount": 1},
    {"wager": "world", "amount": 5, "when": "come-out"},
]}


@cache
def mixed() -> CompiledStrategy:
    return compile_strategy(strategy_from_data(MIXED))


@cache
def mixed_kernel() -> Kernel:
    return mixed().kernel()


def reference_path(dice: list[int]) -> list[int]:
    """The reference model, run directly in Python, bet by bet (the last roll winds down)."""
    strategy = mixed().strategy
    entries = [Entry(strategy.pack, spec) for spec in strategy.bets]
    states = []
    net = 0
    for e in entries:
        s, flow = e.initial()
        states.append(s)
        net += flow.net
    out = []
    for i, d in enumerate(dice):
        last = i == len(dice) - 1
        for k, e in enumerate(entries):
            settled, f1 = e.settle(states[k], ALL_ROLLS[d])
            states[k], f2 = (e.wind_down if last else e.bet)(settled)
            net += f1.net + f2.net
        out.append(net)
    return out


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(st.integers(0, 35), min_size=1, max_size=80))
def test_tables_and_merged_components_reproduce_the_reference_model(dice: list[int]) -> None:
    result = run_lanes(mixed_kernel(), ScriptedDice(np.array(dice, dtype=np.uint8)), 1,
                       Limits(len(dice)), trace=1)
    assert result.trace[0].tolist() == reference_path(dice)


def test_merged_components_are_fewer_than_bets() -> None:
    compiled = mixed()
    assert len(compiled.components) < len(MIXED["bets"])
    assert compiled.labels[:2] == ("pass", "pass odds")


def test_money_is_conserved_and_never_short() -> None:
    data = {**MIXED, "bankroll": "$200", "session": {"max_rolls": 150, "stop_loss": "$120",
                                                    "stop_win": "$150"}}
    compiled = compile_strategy(strategy_from_data(data))
    result = run_lanes(compiled.kernel(), RandomDice(np.random.default_rng(3)), 2000,
                       Limits(150, 0, 20_000, 15_000, 12_000))
    # What the wagers moved, counted from the tables, is what the sessions ended with.
    assert result.groups[:, :, 0].sum() == result.final_net.sum()
    assert (20_000 + result.final_net >= 0).all()
    assert (result.rolls >= 1).all()
    assert set(np.unique(result.reason).tolist()) <= {1, 2, 3, 4}


def test_same_seed_same_totals_and_different_seeds_differ() -> None:
    compiled = mixed()
    plans = plan_sessions(2000, SessionSpec(max_rolls=50))
    a = run(compiled, plans, seed=11)
    b = run(compiled, plans, seed=11)
    c = run(compiled, plans, seed=12)
    assert (a.final_net == b.final_net).all()
    assert (a.groups == b.groups).all()
    assert a.final_net.sum() != c.final_net.sum()
    assert a.entropy == 11


def test_the_split_does_not_change_the_totals() -> None:
    """Shards come back in any order, from any worker: the merge is by shard index."""
    compiled = mixed()
    kernel = compiled.kernel()
    plans = plan_sessions(9000, SessionSpec(max_rolls=20))
    assert len(plans) == 3
    whole = run(compiled, plans, seed=5)
    _, shard_seeds = seeds(5, len(plans))
    groups = whole.groups.shape[0] // len(plans)
    backwards = {p.index: run_shard(kernel, p, s, groups)
                 for p, s in reversed(list(zip(plans, shard_seeds, strict=True)))}
    final_net, _, rolls, group_totals, _, _ = merge_results(plans, backwards)
    assert (final_net == whole.final_net).all()
    assert (group_totals == whole.groups).all()
    assert rolls.sum() == whole.rolls_thrown


def test_two_local_workers_give_the_same_totals_as_one() -> None:
    compiled = compile_strategy(strategy_from_data({"bets": [
        {"wager": "pass", "amount": 10, "odds": 2}]}))
    plans = plan_sessions(8192, SessionSpec(max_rolls=100))
    one = run(compiled, plans, seed=99, workers=1)
    two = run(compiled, plans, seed=99, workers=2)
    assert (one.final_net == two.final_net).all()
    assert (one.groups == two.groups).all()


def test_the_kept_local_pool_runs_any_strategy_and_recovers_from_a_dead_worker() -> None:
    """One pool serves later runs (its shards carry their own kernel); a worker killed
    mid-life breaks that run only, and the next run gets a fresh pool with the same totals."""
    import os
    import signal

    from dicetable.sim import runner

    plans = plan_sessions(8192, SessionSpec(max_rolls=50))
    for bets in ([{"wager": "pass", "amount": 10, "odds": 2}],
                 [{"wager": "place6", "amount": 12}, {"wager": "dontpass", "amount": 5}]):
        compiled = compile_strategy(strategy_from_data({"bets": bets}))
        one = run(compiled, plans, seed=5, workers=1)
        two = run(compiled, plans, seed=5, workers=2)
        assert (one.final_net == two.final_net).all()
    pool = runner.local_pool(2)
    assert pool is runner.local_pool(2)  # kept, not started again
    victim = next(iter(pool._processes))
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(BrokenProcessPool):
        run(compiled, plans, seed=5, workers=2)
    again = run(compiled, plans, seed=5, workers=2)
    assert runner.local_pool(2) is not pool
    assert (again.final_net == one.final_net).all()


def test_plans_hit_the_exact_number_of_rolls() -> None:
    for total in (1, 999, 1000, 4_096_001, 40_000_000):
        plans = plan_rolls(total)
        assert sum(p.lanes * p.limits.rolls + p.limits.longer for p in plans) == total
    compiled = compile_strategy(strategy_from_data({"bets": [{"wager": "field",
                                                             "amount": 5}]}))
    result = run(compiled, plan_rolls(123_457), seed=1)
    assert result.rolls_thrown == 123_457  # one-roll bets leave nothing to wind down


def test_memory_is_bounded_by_the_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    biggest = 0

    class Recording(RandomDice):
        def draw(self, rolls: int, lanes: int) -> np.ndarray[Any, np.dtype[np.uint8]]:
            nonlocal biggest
            biggest = max(biggest, rolls * lanes)
            return super().draw(rolls, lanes)

    compiled = compile_strategy(strategy_from_data({"bets": [{"wager": "pass",
                                                             "amount": 10}]}))
    run_lanes(compiled.kernel(), Recording(np.random.default_rng(0)), 512, Limits(20_000))
    assert biggest <= engine_mod.CHUNK_CELLS


@pytest.mark.parametrize("engine", ["ray", "dask"])
def test_cluster_engines_are_optional_and_say_so(engine: str) -> None:
    module = "ray" if engine == "ray" else "dask"
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    compiled = compile_strategy(strategy_from_data({"bets": [{"wager": "field",
                                                             "amount": 5}]}))
    with pytest.raises(InvalidInput) as e:
        run(compiled, plan_rolls(1000), seed=1, engine=engine)
    assert module in str(e.value)
    assert "pip install" in str(e.value)


def test_bad_run_requests() -> None:
    compiled = compile_strategy(strategy_from_data({"bets": [{"wager": "field",
                                                             "amount": 5}]}))
    with pytest.raises(InvalidInput):
        run(compiled, plan_rolls(10), engine="spark")
    with pytest.raises(InvalidInput):
        run(compiled, plan_rolls(10), workers=0)
    with pytest.raises(InvalidInput):
        plan_rolls(0)
    poor = SessionSpec(bankroll=400, max_rolls=10)
    with pytest.raises(InvalidInput) as e:
        run(compiled, plan_sessions(10, poor))
    assert e.value.rule == "sim.bankroll"
    with pytest.raises(InvalidInput):
        plan_sessions(0, SessionSpec())
