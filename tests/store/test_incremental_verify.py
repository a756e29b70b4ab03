"""Verification that follows the work (spec/standards.md MEM-2): each check walks only the
links added since the last verified head, and a rolling full pass walks the history behind
those heads a bounded slice at a time - so a rewrite in new events is found by the next
check, and one in old history by the pass that reaches it, on every backend."""

from __future__ import annotations

import math
import random

from dicetable.store.audit import Problem
from dicetable.store.durable import DurableTable
from dicetable.store.incremental import ChainVerifier
from tests.store import test_tamper
from tests.store.helpers import play
from tests.store.test_tamper import Raw, body_with

raw = test_tamper.raw
"""The played log and raw access to its rows (the tamper tests' fixture)."""
played = test_tamper.played
"""The played log itself, written once per test process (``raw`` gives each test a copy)."""

SLICE = 10


def _verified(raw: Raw) -> ChainVerifier:
    chains = ChainVerifier(raw.store(), slice_events=SLICE)
    for stream in chains.store.stream_ids():
        assert chains.check_new(stream) is None
    return chains


def _roll_until_found(chains: ChainVerifier) -> tuple[int, list[Problem]]:
    """Slices rolled until a problem is found (or two whole passes end without one)."""
    for n in range(1, 1000):
        found = chains.roll()
        if found or chains.passes >= 2:
            return n, found
    raise AssertionError("the rolling pass never ended")


def test_mem_2_a_check_with_nothing_new_walks_nothing(raw: Raw) -> None:
    chains = _verified(raw)
    walked = chains.walked_new
    for stream in chains.store.stream_ids():
        assert chains.check_new(stream) is None
    assert chains.walked_new == walked


def test_mem_2_a_rewrite_in_old_history_is_found_by_the_rolling_pass(raw: Raw) -> None:
    chains = _verified(raw)
    rows = raw.rows("t1")
    seq, _, body, _, _ = rows[len(rows) // 2]  # deep in the verified history
    raw.update("t1", seq, body=body_with(body, actor="mallory"))
    assert chains.check_new("t1") is None  # nothing new: the old part is the pass's
    slices, found = _roll_until_found(chains)
    assert [(p.table, p.seq, p.what) for p in found] == [("t1", seq, "altered")]
    # Found by the slice that reached it, not before; and within one pass.
    total = sum(chains.verified[s].seq for s in chains.verified)
    assert slices == math.ceil(seq / SLICE)
    assert slices <= math.ceil(total / SLICE) + len(chains.verified)


def test_mem_2_a_deletion_in_old_history_is_found_by_the_rolling_pass(raw: Raw) -> None:
    chains = _verified(raw)
    seq = raw.rows("t1")[7][0]
    raw.delete("t1", seq)
    _, found = _roll_until_found(chains)
    assert [(p.table, p.seq, p.what) for p in found] == [("t1", seq, "deleted")]


def test_mem_2_a_rewrite_in_new_events_is_found_by_the_incremental_check(raw: Raw) -> None:
    chains = _verified(raw)
    store = chains.store
    mark = chains.verified["t1"]
    table = DurableTable.resume(store, "t1").table
    play(table, random.Random(9), 30)
    assert store.head("t1").seq > mark.seq + 2
    seq, _, body, _, _ = raw.rows("t1")[mark.seq + 1]  # the second new event
    raw.update("t1", seq, body=body_with(body, actor="mallory"))
    found = chains.check_new("t1")
    assert found is not None
    assert (found.seq, found.what) == (seq, "altered")
    assert chains.verified["t1"] == mark  # the verified head does not move past it
    walked = chains.walked_new
    assert chains.check_new("t2") is None
    assert chains.walked_new == walked


def test_mem_2_new_events_that_verify_move_the_verified_head(raw: Raw) -> None:
    chains = _verified(raw)
    store = chains.store
    before, walked = chains.verified["t1"], chains.walked_new
    play(DurableTable.resume(store, "t1").table, random.Random(3), 20)
    assert chains.check_new("t1") is None
    assert chains.verified["t1"] == store.head("t1")
    assert chains.walked_new - walked == store.head("t1").seq - before.seq


def test_mem_2_a_head_cut_back_behind_the_verified_one_is_found(raw: Raw) -> None:
    chains = _verified(raw)
    last = raw.rows("t1")[-1][0]
    raw.delete("t1", last)
    found = chains.check_new("t1")
    assert found is not None
    assert found.what in ("deleted", "truncated")


def test_mem_2_a_whole_pass_of_a_clean_log_finds_nothing_and_ends(raw: Raw) -> None:
    chains = _verified(raw)
    total = sum(h.seq for h in chains.verified.values())
    _, found = _roll_until_found(chains)
    assert found == []
    assert chains.passes == 2
    assert chains.walked_rolling == 2 * total
