"""The table is the fold of its log (DESIGN.md lesson 1), however the log is folded.

Replay (``apply_log``) folds a roll together with the settlement the log records after it,
without working the settlement out again; ``apply`` on each event works it out at the roll.
Cut anywhere - mid-settlement, after a no roll, at a round's end - both give the same state,
the settlement still due included.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.core.clock import FixedClock
from dicetable.games.fold import apply, apply_log
from dicetable.games.state import TableState
from dicetable.store.memory import MemoryStore
from dicetable.store.replay import load_state
from dicetable.store.state_codec import encode_state, fold
from dicetable.table import Table
from tests.store.helpers import seat, step

PRESETS = ["pa-craps", "pa-props-and-hops", "in-craps", "crapless-craps"]


def _log(preset: str, seed: int, steps: int) -> list:  # type: ignore[type-arg]
    table = Table.open(preset, "t1", clock=FixedClock(), automations=())  # chores by hand
    seat(table)
    rng = random.Random(seed)
    for _ in range(steps):
        step(table, rng)
    return list(table.log)


def _each(events: list) -> TableState:  # type: ignore[type-arg]
    state = TableState()
    for event in events:
        apply(state, event)
    return state


def _same(a: TableState, b: TableState) -> None:
    assert a.snapshot() == b.snapshot()
    assert a.pending == b.pending  # the settlement still due, item by item
    assert encode_state(a) == encode_state(b)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), preset=st.sampled_from(PRESETS))
def test_lesson_1_replay_at_every_cut_is_the_fold_of_each_event(seed: int,
                                                                 preset: str) -> None:
    events = _log(preset, seed, 150)
    assert any(type(e).__name__ == "DiceRolled" for e in events)
    for cut in range(1, len(events) + 1):
        fast = TableState()
        apply_log(fast, events[:cut])
        _same(fast, _each(events[:cut]))


@pytest.mark.parametrize("preset", PRESETS)
def test_lesson_1_load_state_mid_settlement_holds_what_is_due(preset: str) -> None:
    """From a store, cut at every event: the settlement still due is the one the live table
    had (a resumed table's dealer carries it on)."""
    events = _log(preset, 7, 200)
    store = MemoryStore()
    store.append("t1", events)
    for cut in range(1, len(events) + 1):
        loaded = load_state(store, "t1", use_snapshot=False, until=cut)
        _same(loaded, fold(events[:cut]))
        _same(loaded, _each(events[:cut]))
