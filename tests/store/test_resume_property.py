"""Restarting is invisible: a table that is stopped and resumed from its store at arbitrary
points (mid-round, mid-settlement, right after a snapshot) ends exactly where the same
commands take a table that never stopped (spec/standards.md RES-1)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.core.clock import FixedClock
from dicetable.store.durable import DurableTable
from dicetable.store.memory import MemoryStore
from dicetable.store.state_codec import encode_state, share_pack
from dicetable.table import Table
from tests.profiles import examples
from tests.store.helpers import electronic, seat, step


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000),
       stops=st.lists(st.integers(1, 120), min_size=1, max_size=6),
       preset=st.sampled_from(["pa-craps", "pa-props-and-hops", "electronic"]),
       every=st.integers(1, 30))
def test_res_1_resume_is_invisible(seed: int, stops: list[int], preset: str,
                                   every: int) -> None:
    pack = electronic() if preset == "electronic" else preset
    clock = FixedClock()
    shadow = Table.open(pack, "t1", clock=clock)
    share_pack(shadow.state)
    store = MemoryStore()
    durable = DurableTable.open(store, pack, "t1", clock=clock, snapshot_every=every)
    seat(shadow)
    seat(durable.table)
    rng_a, rng_b = random.Random(seed), random.Random(seed)
    for n in stops:
        for _ in range(n):
            step(shadow, rng_a)
            step(durable.table, rng_b)
        # Stop: nothing survives but the store. A live table waits for the dealer; an
        # automatic one settles a pending roll, as the shadow's next roll would have.
        durable = DurableTable.resume(store, "t1", clock=clock, snapshot_every=every,
                                      settle=False)
        assert encode_state(durable.table.state) == encode_state(shadow.state)
    assert durable.table.state.conserved()
    assert [e.seq for e in store.events("t1")] == list(range(1, shadow.state.seq + 1))
