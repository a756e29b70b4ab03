"""RES-5 (spec/standards.md): a pipelined command's Idempotency-Key is committed with its own
events, in the same transaction, even when several commands share one group commit."""

from __future__ import annotations

import threading

from dicetable.games import commands as g
from dicetable.server.floor import Chore, Given
from dicetable.store.base import request_in_progress
from tests.server.pipeline_helpers import T, account, bet, small_floor


def test_res_5_each_key_of_a_batch_is_committed_with_its_own_events() -> None:
    floor = small_floor()
    try:
        info = floor.tables[T]
        assert info.pipeline is not None
        gate = threading.Event()

        def blocker() -> list[g.Command]:
            assert gate.wait(20)
            return []

        first = floor.submit(T, Chore(blocker))
        batches = info.pipeline.stats.batches
        futures = []
        for player, key in (("alice", "alice:k1"), ("bob", "bob:k2"), ("carol", "carol:k3")):
            with request_in_progress(key):
                futures.append((key, floor.submit(
                    T, Given(account(player), bet("pass", 5_00), g.PlaceBet))))
        gate.set()
        first.result(20)
        replies = [(key, f.result(20)) for key, f in futures]
        # The three were decided into one batch after the blocker's: one append for them all.
        assert info.pipeline.stats.batches - batches <= 2
        for key, reply in replies:
            record = floor.store.request_record(key)
            assert record is not None, key
            assert record.table == T
            assert record.first_seq == record.last_seq == reply["seq"]
            placed = [e for e in floor.store.table_events(T, after=record.first_seq - 1)
                      if e.seq <= record.last_seq]
            assert [e.kind for e in placed] == ["BetPlaced"]
        assert floor.store.request_record("dave:k4") is None
    finally:
        floor.close()


def test_res_5_a_refused_command_records_no_key() -> None:
    floor = small_floor()
    try:
        with request_in_progress("alice:big"):
            future = floor.submit(T, Given(account("alice"), bet("pass", 10_000_00), g.PlaceBet))
        try:
            future.result(20)
        except ValueError:
            pass
        else:
            raise AssertionError("a bet over the balance was taken")
        assert floor.store.request_record("alice:big") is None
    finally:
        floor.close()
