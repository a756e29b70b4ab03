"""How long the garbage collector held the server, generation by generation.

Every collection stops every thread that wants the interpreter: the event loop answering
(503s included), the tables deciding. A pause is invisible in the averages and is the
tail: under the bench's 2x overload one collection of the second generation took 160 ms,
and every answer due in that time, accepted or refused, waited for it. So the server counts
each pause as it happens (``gc.callbacks``), as the CPU time of the thread collecting (its
wall time would also count its waits for the interpreter, which another thread may take
while a callback runs): how many, how long in all, and the longest, for
each generation, and how many took longer than each of ``BOUNDS``. ``/api/floor/load`` shows
them and ``/metrics`` exports them (a histogram per generation), so that an operator (and
``bench.load_bench``, which reads them before and after a scenario) can tell a collector's
pause from a slow table.

>>> pauses = CollectorPauses(clock=iter([1.0, 1.025, 2.0, 2.001]).__next__)
>>> pauses.observe("start", {"generation": 1}); pauses.observe("stop", {"generation": 1})
>>> pauses.observe("start", {"generation": 0}); pauses.observe("stop", {"generation": 0})
>>> {g: (f["pauses"], f["longest_ms"], f["over_ms"]["20"]) for g, f in pauses.figures().items()}
{'0': (1, 1.0, 0), '1': (1, 25.0, 1), '2': (0, 0.0, 0)}
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

GENERATIONS = 3
BOUNDS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25)
"""Seconds: the pauses longer than each are counted (20 ms is a 503's whole allowance)."""


class CollectorPauses:
    """The collector's pauses, counted by generation while ``installed``."""

    def __init__(self, clock: Callable[[], float] = time.thread_time) -> None:
        self.clock = clock
        self.pauses = [0] * GENERATIONS
        self.seconds = [0.0] * GENERATIONS
        self.longest = [0.0] * GENERATIONS
        self.over = [[0] * len(BOUNDS) for _ in range(GENERATIONS)]
        """Per generation, the pauses longer than each of ``BOUNDS``."""
        self._began = 0.0

    def observe(self, phase: str, info: dict[str, Any]) -> None:
        """``gc.callbacks``' signature: a collection starts or stops. (Collections never
        overlap: the collector runs one at a time, holding the interpreter.)"""
        if phase == "start":
            self._began = self.clock()
            return
        generation = info["generation"]
        took = self.clock() - self._began
        self.pauses[generation] += 1
        self.seconds[generation] += took
        if took > self.longest[generation]:
            self.longest[generation] = took
        over = self.over[generation]
        for i, bound in enumerate(BOUNDS):
            if took <= bound:
                break
            over[i] += 1

    def install(self) -> None:
        if self.observe not in gc.callbacks:
            gc.callbacks.append(self.observe)

    def remove(self) -> None:
        if self.observe in gc.callbacks:
            gc.callbacks.remove(self.observe)

    def figures(self) -> dict[str, dict[str, Any]]:
        """Per generation ("0", "1", "2"): pauses, milliseconds in all, the longest, and
        how many were over each bound (by its milliseconds, "20")."""
        return {str(g): {"pauses": self.pauses[g],
                         "ms": round(self.seconds[g] * 1000, 3),
                         "longest_ms": round(self.longest[g] * 1000, 3),
                         "over_ms": {f"{1000 * b:g}": n for b, n in zip(BOUNDS, self.over[g],
                                                                        strict=True)}}
                for g in range(GENERATIONS)}
