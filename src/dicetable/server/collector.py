"""Full collections at a quiet moment, not in the middle of a rush.

A full collection scans every object the server holds that was not frozen at start-up
(``app.lifespan``); after a busy spell that is the floor's bets, events and connections, and
the scan holds every table and every read for as long as it takes, which grows with the floor
and stalls every answer under load, a 503's included. So Python never starts one on its own
here (the third
threshold is ``NEVER``): ``collect_when_quiet`` starts one once as many younger collections
have passed as Python would wait for (``full_after``, the third of ``app.GC_THRESHOLDS``),
at a moment when nothing is in flight and the event loop keeps up, or, whatever the load,
once ``MAX_DEFER`` has passed since the last: cyclic garbage is still freed, only later.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

from dicetable.server.shedding import Admission

NEVER = 1_000_000
"""The collector's third threshold while serving: Python starts no full collection itself."""
QUIET_LAG = 0.002
"""Seconds of event-loop lag (``Admission.lag``) under which the server counts as quiet."""
MAX_DEFER = 300.0
"""Seconds a due full collection may wait for a quiet moment (industry-default)."""
CHECK_EVERY = 0.5
"""Seconds between looks."""


def quiet(admission: Admission) -> bool:
    """Nothing in flight and the loop keeping up: a pause now holds up no one's answer."""
    return admission.in_flight == 0 and admission.lag < QUIET_LAG


async def collect_when_quiet(admission: Admission, full_after: int, *,
                             every: float = CHECK_EVERY, max_defer: float = MAX_DEFER,
                             collect: Callable[[int], object] = gc.collect,
                             count: Callable[[], tuple[int, int, int]] = gc.get_count,
                             clock: Callable[[], float] = time.monotonic) -> None:
    """Run a full collection when one is due (``full_after`` younger collections since the
    last) and the server is quiet, or it waited too long; runs until cancelled."""
    last = clock()
    while True:
        await asyncio.sleep(every)
        if count()[2] < full_after:
            continue
        now = clock()
        if quiet(admission) or now - last >= max_defer:
            collect(2)
            last = clock()
