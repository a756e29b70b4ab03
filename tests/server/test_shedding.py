"""Server-wide load shedding (``server.shedding``, issue 13): past the wait the server can
answer in, a command gets 503 with ``Retry-After`` at once - before its session is looked up
or its body read - and changes nothing; below it, and before anything is measured, nothing
is refused. Counted with an injected clock, never timed."""

from __future__ import annotations

import gc
from typing import Any

from fastapi.testclient import TestClient

from dicetable.server.app import GC_THRESHOLDS, create_app
from dicetable.server.floor import Floor
from dicetable.server.pipeline import ShedLoad
from dicetable.server.shedding import MIN_IN_FLIGHT, SERVER_MAX_WAIT, Admission
from tests.server.conftest import Client

T = "/api/tables/craps-pa-1"


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_issue_13_nothing_is_refused_before_the_server_has_measured_itself() -> None:
    admission = Admission(clock=Ticks(), cpu=Ticks())
    assert all(admission.admit() for _ in range(10 * MIN_IN_FLIGHT))
    assert admission.refused == 0


def test_issue_13_a_command_that_would_wait_too_long_is_refused() -> None:
    ticks, cpu = Ticks(), Ticks()
    admission = Admission(clock=ticks, cpu=cpu, window=1.0, floor=4)
    # 100 commands answered in a second, each costing the server 10 ms of CPU.
    for _ in range(101):
        assert admission.admit()
    for k in range(100):
        ticks.now = cpu.now = (k + 1) / 100
        admission.done()
    assert abs(admission.per_answer - 0.01) < 1e-9
    admission.done()
    limit = int(SERVER_MAX_WAIT / 0.01)  # the work of this many fits in the wait
    admitted = sum(admission.admit() for _ in range(limit + 10))
    assert admitted == limit + 1  # the one that finds exactly the limit still fits
    assert admission.refused == 9
    for _ in range(admitted):
        admission.done()
    assert admission.in_flight == 0
    assert admission.admit()  # room again


def test_issue_13_idle_time_is_not_a_cost() -> None:
    ticks, cpu = Ticks(), Ticks()
    admission = Admission(clock=ticks, cpu=cpu, window=1.0, floor=4)
    for _ in range(100):  # one command a second, each costing 1 ms of CPU, idle between
        assert admission.admit()
        cpu.now += 0.001
        ticks.now += 0.01
        admission.done()
        cpu.now += 0.5  # background work while nothing is in flight
        ticks.now += 1.0
    assert admission.per_answer == 0.0  # never a window of answers: nothing learnt
    assert sum(admission.admit() for _ in range(200)) == 200


def test_issue_13_a_few_commands_are_always_admitted() -> None:
    ticks, cpu = Ticks(), Ticks()
    admission = Admission(clock=ticks, cpu=cpu, window=1.0, floor=8)
    for _ in range(65):
        admission.admit()
    ticks.now = cpu.now = 65.0
    for _ in range(65):
        admission.done()  # answers that cost a second each
    assert sum(admission.admit() for _ in range(8)) == 8
    assert not admission.admit()


def _shed(app: Any) -> ShedLoad:
    layer = app.middleware_stack
    while not isinstance(layer, ShedLoad):
        layer = layer.app
    return layer


def test_issue_13_shed_commands_get_503_and_retry_after_before_anything_is_read(
        floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        alice = Client(http, "alice")
        assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
        shed = _shed(app)
        shed.admission.per_answer = 1.0  # as if each answer took a second ...
        shed.admission.in_flight = shed.admission.floor  # ... with a full house waiting
        before = floor.store.head("craps-pa-1").seq
        looked_up = floor.accounts.sessions.hits + floor.accounts.sessions.misses
        reply = alice.post(f"{T}/bets", {"wager": "field", "amount": 1000})
        assert reply.status_code == 503
        assert reply.headers["retry-after"] == "1"
        assert reply.json()["rule"] == "server.backpressure"
        # a body too large for the limit is not even read: the 503 comes first
        big = http.post(f"{T}/bets", content=b"x" * 10, headers={
            **alice.headers, "content-length": str(10**9)})
        assert big.status_code == 503
        assert floor.store.head("craps-pa-1").seq == before
        assert floor.accounts.sessions.hits + floor.accounts.sessions.misses == looked_up
        assert shed.admission.refused == 2
        assert alice.get(T).status_code == 200  # reading is never shed
        shed.admission.in_flight = 0
        assert alice.post(f"{T}/bets", {"wager": "field", "amount": 1000}).status_code == 200


def test_issue_13_a_table_counts_one_commit_per_batch_not_per_command(floor: Floor) -> None:
    pipeline = floor.get("craps-pa-1").pipeline
    assert pipeline is not None
    pipeline.cost, pipeline.commit_cost = 0.001, 0.05  # 1 ms to decide, 50 ms to commit
    assert pipeline._expected(0) == 0.0
    assert abs(pipeline._expected(40) - (0.04 + 0.05)) < 1e-9  # one batch: one commit
    batches = -(-600 // pipeline.max_batch)
    assert abs(pipeline._expected(600) - (0.6 + batches * 0.05)) < 1e-9


def test_issue_13_a_due_snapshot_is_still_taken_after_the_answers(floor: Floor) -> None:
    info = floor.get("craps-pa-1")
    info.durable.snapshot_every, info.durable.snapshot_per_item = 2, 0
    with TestClient(create_app(floor, electronic_loop=False)) as http:
        alice = Client(http, "alice")
        for wager in ("pass", "field", "big6"):
            assert alice.post(f"{T}/bets", {"wager": wager, "amount": 1000}).status_code == 200
    snap = floor.store.latest_snapshot("craps-pa-1")
    assert snap is not None
    assert snap.seq > floor.store.head("craps-pa-1").seq - 2


def test_issue_13_while_serving_the_collector_rarely_scans_the_whole_heap(floor: Floor) -> None:
    before = gc.get_threshold()
    assert before != GC_THRESHOLDS
    with TestClient(create_app(floor, electronic_loop=False)):
        assert gc.get_threshold() == GC_THRESHOLDS
        assert GC_THRESHOLDS[0] > before[0]
        assert GC_THRESHOLDS[2] > before[2]
    assert gc.get_threshold() == before  # given back when the server stops
