"""Per-table pipelining: queued commands decided in order, one commit a batch, answered only
after it; a refusal inside a batch changes nothing; a full queue is refused at once (503).

Nothing here is timed: commits are counted with a store spy that holds each commit until the
test releases it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from dicetable.application.accounts import Kind
from dicetable.application.pipeline import Busy
from dicetable.core.errors import IllegalWager
from dicetable.games import commands as g
from dicetable.server.app import create_app
from dicetable.server.floor import Chore, Floor, Given
from dicetable.store.durable import DurableTable
from tests.server.pipeline_helpers import HeldCommits, T, account, bet, run_async, small_floor


@pytest.fixture
def floor() -> Iterator[Floor]:
    built = small_floor()
    yield built
    built.close()


def test_queued_commands_are_decided_in_order_in_one_commit_and_answered_after_it(
        floor: Floor) -> None:
    alice = account("alice")
    pipeline = floor.tables[T].pipeline
    assert pipeline is not None
    commits = pipeline.stats.commits
    spy = HeldCommits(floor.store)
    first = floor.submit(T, Given(alice, bet("pass", 10_00), g.PlaceBet))
    spy.wait_entered(0)  # the first batch is being committed; the next commands queue up
    second = floor.submit(T, Given(alice, bet("field", 60_00), g.PlaceBet))
    third = floor.submit(T, Given(alice, bet("dontpass", 60_00), g.PlaceBet))  # $30 left: refused
    fourth = floor.submit(T, Given(alice, bet("dontpass", 30_00), g.PlaceBet))
    assert not first.done()  # decided, not yet durable: not answered
    spy.release[0].set()
    assert first.result(10)["balance"] == 90_00
    spy.wait_entered(1)
    assert not (second.done())
    assert not (third.done())
    assert not (fourth.done())
    spy.release[1].set()
    assert second.result(10)["balance"] == 30_00  # after the $10 pass and the $60 field
    with pytest.raises(IllegalWager):
        third.result(10)
    assert fourth.result(10)["balance"] == 0  # decided against the state without the refusal
    # Two commits: the first bet alone, then the three queued behind it in one.
    assert spy.calls == [["BetPlaced"], ["BetPlaced", "BetPlaced"]]
    assert pipeline.stats.commits - commits == 2


def test_a_refused_command_inside_a_batch_changes_nothing(floor: Floor) -> None:
    alice, bob = account("alice"), account("bob")
    before = floor.tables[T].table.state.seq
    spy = HeldCommits(floor.store)
    blocker = floor.submit(T, Given(bob, bet("pass", 5_00), g.PlaceBet))
    spy.wait_entered(0)
    refused = [floor.submit(T, Given(alice, bet("nosuchwager", 10_00), g.PlaceBet)),
               floor.submit(T, Given(alice, bet("field", 500_01), g.PlaceBet)),
               floor.submit(T, Given(alice, bet("field", 1_00), g.PlaceBet))]
    spy.free()
    blocker.result(10)
    for future in refused[:2]:
        with pytest.raises(IllegalWager):
            future.result(10)
    refused[2].result(10)
    table = floor.tables[T].table
    log = list(floor.store.table_events(T, after=before))
    assert [(e.kind, getattr(e, "player", None)) for e in log] == [
        ("BetPlaced", "bob"), ("BetPlaced", "alice")]
    rebuilt = DurableTable.resume(floor.store, T, settle=False).state
    assert rebuilt.balance("alice") == table.balance("alice") == 99_00
    assert rebuilt.seq == table.state.seq
    assert table.state.conserved()


def test_a_full_queue_refuses_at_once_with_busy(floor: Floor) -> None:
    pipeline = floor.tables[T].pipeline
    assert pipeline is not None
    pipeline.max_queue = 2
    alice = account("alice")
    spy = HeldCommits(floor.store)
    held = floor.submit(T, Given(alice, bet("pass", 5_00), g.PlaceBet))
    spy.wait_entered(0)  # taken off the queue: the queue is empty again
    queued = [floor.submit(T, Given(alice, bet(w, 1_00), g.PlaceBet)) for w in ("field", "any7")]
    with pytest.raises(Busy) as refused:
        floor.submit(T, Given(alice, bet("anycraps", 1_00), g.PlaceBet))
    assert refused.value.retry_after >= 1
    assert refused.value.rule == "server.backpressure"
    spy.free()
    assert [f.result(10)["balance"] for f in [held, *queued]] == [95_00, 94_00, 93_00]
    assert pipeline.stats.busy == 1
    # The table's own automation is never refused for load.
    assert floor.submit(T, Chore(list)).result() == []


def test_http_past_the_bounded_queue_is_503_with_retry_after(floor: Floor) -> None:
    floor.accounts.create("alice", "correct horse battery", Kind.PLAYER)
    pipeline = floor.tables[T].pipeline
    assert pipeline is not None
    pipeline.max_queue = 1
    app = create_app(floor, electronic_loop=False)
    token = TestClient(app).post("/api/login", json={
        "username": "alice", "password": "correct horse battery"}).json()["token"]
    headers = {"authorization": f"Bearer {token}"}
    bodies = [{"wager": w, "amount": 1_00} for w in ("field", "any7", "anycraps")]
    spy = HeldCommits(floor.store)

    async def scenario() -> tuple[list[httpx.Response], httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            path = f"/api/tables/{T}/bets"
            first = asyncio.create_task(http.post(path, json=bodies[0], headers=headers))
            await asyncio.to_thread(spy.wait_entered, 0)
            second = asyncio.create_task(http.post(path, json=bodies[1], headers=headers))
            for _ in range(2000):  # until the second waits in the queue (counted, not timed)
                if pipeline.waiting == 1:
                    break
                await asyncio.sleep(0.005)
            assert pipeline.waiting == 1
            refused = await http.post(path, json=bodies[2], headers=headers)
            spy.free()
            return [await first, await second], refused

    accepted, refused = run_async(scenario)
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert refused.json()["rule"] == "server.backpressure"
    assert [r.status_code for r in accepted] == [200, 200]
    assert [r.json()["balance"] for r in accepted] == [99_00, 98_00]
