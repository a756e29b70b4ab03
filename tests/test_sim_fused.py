"""The fused kernel (Numba) against the NumPy reference, to the cent, and the packed dice."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from dicetable.sim import fused
from dicetable.sim.automaton import compile_strategy
from dicetable.sim.dice import LIMIT, PER_WORD, PackedDice, decode_fused, decode_numpy
from dicetable.sim.engine import LaneResult, Limits, ScriptedDice, run_lanes
from dicetable.sim.kernel import Kernel
from dicetable.sim.runner import plan_rolls, plan_sessions, run
from dicetable.sim.strategy import strategy_from_data
from tests.profiles import examples

pytestmark = pytest.mark.skipif(not fused.AVAILABLE, reason="numba is not installed")

PASS_2X: dict[str, Any] = {"bets": [{"wager": "pass", "amount": 10, "odds": 2}]}
IRON_CROSS: dict[str, Any] = {"bets": [
    {"wager": "pass", "amount": 5, "odds": 2},
    {"wager": "place5", "amount": 10, "when": "point-on", "skip_point": True},
    {"wager": "place6", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "place8", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "field", "amount": 5, "when": "point-on"}]}
MOLLY: dict[str, Any] = {"bets": [
    {"wager": "pass", "amount": 10, "odds": 2},
    {"wager": "come", "amount": 10, "odds": 2, "max_bets": 2}]}
MIXED: dict[str, Any] = {"bets": [
    {"wager": "dontpass", "amount": 10, "odds": "max"},
    {"wager": "come", "amount": 5, "odds": 2, "max_bets": 2},
    {"wager": "place6", "amount": 6, "press": {"by": 6, "max": 18}, "when": "point-on",
     "skip_point": True},
    {"wager": "buy4", "amount": 20},
    {"wager": "hard8", "amount": 1},
    {"wager": "fire", "amount": 1},
    {"wager": "allsmall", "amount": 1}]}
STRATEGIES = {"pass-2x": PASS_2X, "iron-cross": IRON_CROSS, "3-point-molly": MOLLY,
              "mixed": MIXED}
LIMITS = {
    "long run": Limits(700),
    "long run, longer lanes": Limits(333, 57),
    "sessions": Limits(150, 0, 30_000, 15_000, 12_000),
    "bankroll only": Limits(400, 0, 5_000),
}


def same(a: LaneResult, b: LaneResult) -> None:
    for name in ("final_net", "reason", "rolls", "groups", "trace", "checkpoints"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@cache
def kernel_of(name: str) -> Kernel:
    """A strategy's kernel, compiled once per test process (a kernel is read, never changed,
    by the runs; compiling one costs seconds)."""
    return compile_strategy(strategy_from_data(STRATEGIES[name])).kernel()


@pytest.mark.parametrize("limits", LIMITS.values(), ids=LIMITS.keys())
@pytest.mark.parametrize("name", STRATEGIES)
def test_fused_kernel_equals_the_numpy_reference_to_the_cent(name: str, limits: Limits) -> None:
    kernel = kernel_of(name)
    results = [run_lanes(kernel, PackedDice(np.random.default_rng(7)), 300, limits,
                         trace=40, every=7, fused=f) for f in (False, True)]
    same(*results)
    assert results[0].groups.any()


@settings(max_examples=examples(20), deadline=None)
@given(st.lists(st.integers(0, 35), min_size=1, max_size=60), st.integers(1, 4))
def test_fused_kernel_on_scripted_dice(dice: list[int], lanes: int) -> None:
    kernel = kernel_of("mixed")
    script = np.array([[(d + 5 * lane) % 36 for lane in range(lanes)] for d in dice],
                      dtype=np.uint8)
    a, b = (run_lanes(kernel, ScriptedDice(script.copy()), lanes, Limits(len(dice)), trace=lanes,
                      fused=f) for f in (False, True))
    same(a, b)


def test_run_gives_the_same_totals_with_either_kernel() -> None:
    compiled = compile_strategy(strategy_from_data(IRON_CROSS))
    for plans in (plan_rolls(300_000), plan_sessions(5000, compiled.strategy.session)):
        a = run(compiled, plans, seed=21, fused=False)
        b = run(compiled, plans, seed=21, fused=True)
        assert np.array_equal(a.final_net, b.final_net)
        assert np.array_equal(a.groups, b.groups)
        assert a.rolls_thrown == b.rolls_thrown


def test_decoders_agree_and_drop_the_words_above_the_limit() -> None:
    words = np.random.default_rng(3).bit_generator.random_raw(5000)
    words[:3] = [LIMIT - 1, LIMIT, 2 ** 64 - 1]
    a = np.empty(words.size * PER_WORD, np.uint8)
    b = np.empty_like(a)
    n = decode_numpy(words, a)
    assert n == decode_fused(words, b)
    assert np.array_equal(a[:n], b[:n])
    kept = int((words < np.uint64(LIMIT)).sum())
    assert n == kept * PER_WORD
    first = (LIMIT - 1) % 36 ** PER_WORD  # the first word's digits, least significant first
    assert a[:PER_WORD].tolist() == [(first // 36 ** i) % 36 for i in range(PER_WORD)]


def test_packed_dice_stream_does_not_depend_on_how_it_is_drawn() -> None:
    whole = PackedDice(np.random.default_rng(5)).draw(1, 10_000)[0]
    parts = PackedDice(np.random.default_rng(5), fused=False)
    pieces = [parts.draw(7, 3).ravel(), parts.draw(1, 1).ravel(), parts.draw(500, 19).ravel()]
    joined = np.concatenate(pieces)
    assert np.array_equal(joined, whole[:joined.size])


def test_packed_dice_are_fair() -> None:
    rolls = PackedDice(np.random.default_rng(11)).draw(1000, 360).ravel()
    counts = np.bincount(rolls, minlength=36)
    assert counts.size == 36
    assert chisquare(counts).pvalue > 1e-4


def test_the_kernel_is_chosen_by_the_length_of_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from dicetable.core.errors import InvalidInput
    from dicetable.sim.runner import FUSED_FROM, choose_kernel

    assert choose_kernel(plan_rolls(1_000_000), None) is False  # Numba's start-up not worth it
    assert choose_kernel(plan_rolls(FUSED_FROM), None) is True
    assert choose_kernel(plan_rolls(1000), True) is True
    assert choose_kernel(plan_rolls(FUSED_FROM), False) is False
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert choose_kernel(plan_rolls(FUSED_FROM), None) is False
    with pytest.raises(InvalidInput) as e:
        choose_kernel(plan_rolls(1000), True)
    assert e.value.rule == "sim.kernel"
