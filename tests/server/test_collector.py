"""Issue 13: a full collection waits for a quiet moment (nothing in flight, the loop keeping
up), never longer than ``MAX_DEFER``, and only once one is due. Counted, never timed: the
clock and the collector are the test's own."""

from __future__ import annotations

import asyncio
import threading

from dicetable.server.door import QUIET_LAG, Admission, collect_when_quiet


def _run(steps: list[tuple[int, float, int]], *, max_defer: float = 300.0) -> list[float]:
    """Each step: the admission's in-flight count and lag, and generation-1 collections since
    the last full one; the clock moves 1 s a step. Returns when full collections ran."""
    admission = Admission()
    now = [0.0]
    young = [0]
    ran: list[float] = []

    def collect(generation: int) -> None:
        assert generation == 2
        ran.append(now[0])
        young[0] = 0

    async def main() -> None:
        task = asyncio.create_task(collect_when_quiet(
            admission, 100, every=0, max_defer=max_defer, collect=collect,
            count=lambda: (0, 0, young[0]), clock=lambda: now[0]))
        for in_flight, lag, since in steps:
            admission.in_flight, admission.lag = in_flight, lag
            young[0] = max(young[0], since) if since else young[0]
            for _ in range(3):  # the task looks again
                await asyncio.sleep(0)
            now[0] += 1
        task.cancel()

    # on a thread of its own: this one may hold another test's running loop
    runner = threading.Thread(target=lambda: asyncio.run(main()))
    runner.start()
    runner.join()
    return ran


def test_issue_13_a_due_full_collection_waits_for_a_quiet_moment() -> None:
    busy = (40, 0.0, 100)  # commands in flight: a full collection is due, and waits
    lagging = (0, 2 * QUIET_LAG, 100)  # nothing in flight, but the loop is behind
    ran = _run([busy, busy, lagging, (0, 0.0, 100), (0, 0.0, 0)])
    assert ran == [3.0]  # at the first quiet moment, once


def test_issue_13_none_is_run_before_one_is_due() -> None:
    assert _run([(0, 0.0, 99)] * 5) == []


def test_issue_13_a_full_collection_waits_no_longer_than_max_defer() -> None:
    ran = _run([(40, 0.0, 100)] * 8, max_defer=5)
    assert ran == [5.0]  # whatever the load, once five seconds have passed
