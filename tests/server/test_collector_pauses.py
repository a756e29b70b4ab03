"""Issue 28: the collector's pauses while serving are counted and shown, and the serving
thresholds bound what a collection of the second generation scans (``collector_pauses``,
``app.GC_THRESHOLDS``). Counted, never timed: the objects each collection held are counted,
not how long it took."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi.testclient import TestClient

from dicetable.server.app import GC_THRESHOLDS, create_app
from dicetable.server.collector_pauses import BOUNDS, CollectorPauses
from dicetable.server.door import NEVER
from dicetable.server.floor import Floor
from tests.server.conftest import Client
from tests.server.test_health_and_metrics import _samples


@contextmanager
def _thresholds(*values: int) -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(*values)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _largest_second_generation_scan(young: int, older: int, survivors: int) -> int:
    """Under thresholds (``young``, ``older``), keep ``survivors`` new objects alive (a busy
    floor's bets and events) and return the most objects any collection of the second
    generation scanned (young and second generation together, as it began)."""
    scanned: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 1:
            scanned.append(len(gc.get_objects(0)) + len(gc.get_objects(1)))

    kept: list[list[int]] = []
    gc.collect()
    with _thresholds(young, older, NEVER):
        gc.callbacks.append(seen)
        try:
            for i in range(survivors):
                kept.append([i])
        finally:
            gc.callbacks.remove(seen)
    assert scanned, "no collection of the second generation ran"
    return max(scanned)


def test_issue_28_a_second_generation_scan_holds_a_few_young_collections_not_twenty() -> None:
    young, older = GC_THRESHOLDS[:2]
    now = _largest_second_generation_scan(young, older, 500_000)
    before = _largest_second_generation_scan(20_000, 20, 500_000)  # the thresholds until now
    # each young collection leaves at most its allocations alive: the second generation is
    # scanned with the survivors of ``older`` + 1 of them, and the young ones besides
    assert now <= (older + 2) * young + 1_000
    assert before > 10 * now  # 160 ms under the bench's overload at (20,000, 20)


def test_issue_28_each_pause_is_counted_by_generation_and_bound() -> None:
    ticks = iter([0.0, 0.0005, 1.0, 1.03, 2.0, 2.3])
    pauses = CollectorPauses(clock=lambda: next(ticks))
    for generation in (0, 1, 2):
        pauses.observe("start", {"generation": generation})
        pauses.observe("stop", {"generation": generation})
    figures = pauses.figures()
    assert [figures[g]["pauses"] for g in "012"] == [1, 1, 1]
    assert figures["0"]["over_ms"] == {f"{1000 * b:g}": 0 for b in BOUNDS}
    assert figures["1"]["over_ms"]["20"] == 1
    assert figures["1"]["over_ms"]["50"] == 0
    assert figures["2"]["over_ms"]["250"] == 1
    assert figures["1"]["longest_ms"] == 30.0
    assert round(figures["2"]["ms"]) == 300


def test_issue_28_a_server_counts_its_collectors_pauses_while_it_serves(floor: Floor) -> None:
    def counting() -> list[Any]:
        return [cb for cb in gc.callbacks if isinstance(getattr(cb, "__self__", None),
                                                        CollectorPauses)]

    others = counting()  # another server of this process's, if any, counts its own
    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        assert len(counting()) == len(others) + 1
        pat = Client(http, "pat")
        before = pat.get("/api/floor/load").json()["collector"]
        gc.collect(0)
        gc.collect(1)
        load = pat.get("/api/floor/load").json()["collector"]
        metrics = _samples(http.get("/metrics").text)
    assert load["0"]["pauses"] >= before["0"]["pauses"] + 1
    assert load["1"]["pauses"] >= before["1"]["pauses"] + 1
    assert metrics[("dicetable_gc_pause_seconds_count", (("generation", "1"),))] \
        >= load["1"]["pauses"]
    assert ("dicetable_gc_pause_seconds_bucket", (("generation", "0"), ("le", "0.02"))) \
        in metrics
    assert ("dicetable_gc_longest_pause_seconds", (("generation", "2"),)) in metrics
    assert counting() == others  # counted only while serving: gone once it stops
