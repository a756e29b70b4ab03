"""Refusing only what the server cannot serve within its latency bound: the work waiting.

A table's pipeline refuses a command whose wait *at that table* would be too long (its queue's
depth times the measured cost of deciding one, plus a commit per batch: ``pipeline.MAX_WAIT``).
Under overload the wait is elsewhere first: the commands admitted into the server and not yet
answered, all sharing one event loop. ``Admission`` counts them and measures what one costs the
server: the time it takes to answer one while commands are in flight (the busy time of a window
over the answers in it - Little's law: what the commands in flight will take before a new one is
reached, whatever the rate they came at and wherever the time went, the event loop, the
deciding thread, the commit, or a core shared with other work; idle spells are not counted). A
command that would find more work waiting than the server does in ``SERVER_MAX_WAIT`` is
refused at once (503 with ``Retry-After``, before the session is looked up or the body read),
so that refusing costs microseconds and the admitted keep their latency.

Only the work waiting decides, never the event loop's momentary lag: a population of clients
that each wait for their answer holds at most one command each in flight, so while their
number times the cost of one fits in the bound they are never refused, however busy the loop
looks (a young collection of the heap, a batch's answers written at once). The loop's lag is
still measured (``watch_lag``): the collector waits for a quiet loop, and staff see it at
``/api/floor/load``.

Nothing is refused while fewer than ``MIN_IN_FLIGHT`` commands are in flight: a sequential
client is never refused. Until the server has measured itself, a command is taken to cost
``FIRST_GUESS``.

Full collections at a quiet moment, not in the middle of a rush.

A full collection scans every object the server holds that was not frozen at start-up
(``app.lifespan``); after a busy spell that is the floor's bets, events and connections, and
the scan holds every table and every read for as long as it takes, which grows with the floor
and stalls every answer under load, a 503's included. So Python never starts one on its own
here (the third
threshold is ``NEVER``): ``collect_when_quiet`` starts one once as many younger collections
have passed as Python would wait for (``full_after``, the third of ``app.GC_THRESHOLDS``),
at a moment when nothing is in flight and the event loop keeps up, or, whatever the load,
once ``MAX_DEFER`` has passed since the last: cyclic garbage is still freed, only later.

The HTTP door's load gate: which table commands are refused for load before they are read.

A table's own queue (``application.pipeline.StreamPipeline``) reports its load; this module
turns that into a ``503`` with ``Retry-After`` at the door, before anything else is spent on
the request. Load is shed here and nowhere else.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from dicetable.application.pipeline import RETRY_AFTER_S, Busy, StreamPipeline

SERVER_MAX_WAIT = 0.1
"""Seconds a command may expect to wait behind those already admitted (industry-default:
with its table's batch and commit after that wait, an accepted command under overload is
answered within 250 ms)."""
MIN_IN_FLIGHT = 32
"""Commands always admitted, whatever the estimate (industry-default)."""
LAG_SMOOTHING = 0.25
"""Weight of the latest heartbeat in the loop's measured lag (an average: shown, never a
reason to refuse)."""
HEARTBEAT = 0.01
"""Seconds between the loop's heartbeats (the lag is how late one comes)."""
WINDOW = 1.0
"""Seconds over which the time per answer is measured ..."""
WINDOW_ANSWERS = 64
"""... and answers at least: a window with fewer (a start, a quiet table) says nothing."""
FIRST_GUESS = 0.00025
"""Seconds per answer assumed until the first window is measured (industry-default:
a little more than an accepted bet costs, so that a few hundred commands may be in flight at
first). Without one, a sudden overload on a server that had not measured itself yet would all
be admitted."""

class Admission:
    """Commands admitted and not yet answered, and the server's recent time per answer."""

    def __init__(self, *, max_wait: float = SERVER_MAX_WAIT, floor: int = MIN_IN_FLIGHT,
                 window: float = WINDOW, clock: Callable[[], float] = time.monotonic,
                 timer: Callable[[], float] = time.perf_counter,
                 first_guess: float = FIRST_GUESS) -> None:
        self.max_wait = max_wait
        self.lag = 0.0
        """The event loop's recent lag: its heartbeats' lateness, averaged (``watch_lag``;
        shown and used by the collector, never a reason to refuse)."""
        self.beats = 0
        """Heartbeats measured."""
        self.floor = floor
        self.window = window
        self.clock = clock
        self.timer = timer
        self.in_flight = 0
        self.per_answer = first_guess
        """Seconds per answer while busy (``first_guess`` until measured)."""
        self._measured = False
        self.refused = 0
        self.admitted = 0
        self._since = clock()
        self._busy_since = timer()
        self._answered = 0
        self._idle = True
        self._refused_since = 0
        """Refusals counted when the window began."""

    def waiting_work(self) -> float:
        """Seconds of the server's work a command arriving now finds ahead of it: the
        commands in flight times what one costs."""
        return self.in_flight * self.per_answer

    def full(self) -> bool:
        """Would a command arriving now wait longer than ``max_wait``?"""
        return self.in_flight >= self.floor and self.waiting_work() > self.max_wait

    def beat(self, late: float) -> None:
        """A heartbeat of the event loop came ``late`` seconds after it was due."""
        self.beats += 1
        self.lag += LAG_SMOOTHING * (late - self.lag)

    def refuse(self) -> bool:
        """Is a command arriving now to be refused? (Counted as refused when it is.)"""
        if self.full():
            self.refused += 1
            return True
        return False

    def admit(self) -> bool:
        """Count a command in (True), or refuse it (False: nothing is counted)."""
        if self.refuse():
            return False
        self.enter()
        return True

    def enter(self) -> None:
        """Count in a command that ``refuse`` did not refuse."""
        if self._idle:  # a window starts with the first command in flight
            self._idle = False
            self._since, self._busy_since, self._answered = self.clock(), self.timer(), 0
            self._refused_since = self.refused
        self.in_flight += 1
        self.admitted += 1

    def done(self) -> None:
        """An admitted command was answered."""
        self.in_flight -= 1
        self._answered += 1
        now = self.clock()
        if self._answered >= WINDOW_ANSWERS and now - self._since >= self.window:
            spent = self.timer()
            # A window with refusals may only lower the cost: the time refusing the others
            # took is not the admitted commands' (counted as theirs, it made each seem
            # dearer, refused more, and 200 clients retrying at once were held there); but a
            # server answering faster than it thought (a slow spell over, bigger batches)
            # must not stay held at its old estimate while it refuses.
            per = (spent - self._busy_since) / self._answered
            if self.refused == self._refused_since or per < self.per_answer:
                self.per_answer = 0.7 * self.per_answer + 0.3 * per if self._measured else per
                self._measured = True
            self._since, self._busy_since, self._answered = now, spent, 0
            self._refused_since = self.refused
        if self.in_flight == 0:  # an idle spell is not the commands' cost
            self._idle = True


async def watch_lag(admission: Admission, every: float = HEARTBEAT) -> None:
    """Keep ``admission.lag`` up to date: how late each heartbeat of the running loop is."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + every
        await asyncio.sleep(every)
        admission.beat(max(0.0, loop.time() - due))


RETRY_HOLD = 0.1
"""Seconds a client refused for load waits, at least, for its next 503 (industry-default;
``DICETABLE_SHED_HOLD_MS``, ``dicetable serve --shed-hold-ms``): a tenth of the
``Retry-After`` it was given; a player who bets again at once is slowed, one who bets again
a moment later is answered as anyone."""
REMEMBERED = 100_000
"""Clients whose last refusal is remembered at most (past that, those whose hold is over
are let go, or all of them should none be)."""

class Impatience:
    """When each client was last refused for load, and when its next 503 is written.

    A client told to retry after a second that sends again at once, over and over, was
    refused as fast as it asked: 200 such connections on a full server spent its time on
    their 503s (thousands a second), and the admitted waited behind them. A client (its
    session, or its connection) that comes back within ``hold`` of its last refusal has its
    next 503 written ``hold`` after that one: each is refused at most once per ``hold``,
    whatever it sends, and what it would be admitted for is never held.

    >>> clock = iter([0.0, 0.03, 0.2]).__next__
    >>> slow = Impatience(hold=0.1, clock=clock)
    >>> [round(slow.refused(b"alice") - t, 2) for t in (0.0, 0.03, 0.2)]
    [0.0, 0.07, 0.0]
    """

    def __init__(self, hold: float = RETRY_HOLD, *, clock: Callable[[], float] = time.monotonic,
                 most: int = REMEMBERED) -> None:
        self.hold = hold
        self.clock = clock
        self.most = most
        self.held = 0
        """503s held back, in all."""
        self._last: dict[bytes, float] = {}

    def refused(self, client: bytes, last: float | None = None) -> float:
        """When (on ``clock``) the 503 refusing ``client`` now is to be written: now, or
        ``hold`` after its last refusal (``last``: when its connection's was, if any); noted
        as that client's last refusal."""
        now = self.clock()
        before = self._last.get(client)
        if last is not None and (before is None or last > before):
            before = last
        if before is not None and now - before < self.hold:
            self.held += 1
            now = before + self.hold
        elif len(self._last) >= self.most:
            self._forget(now)
        self._last[client] = now
        return now

    def _forget(self, now: float) -> None:
        """Let go of the clients whose last refusal no longer holds anything (all of them,
        should every one be that recent)."""
        self._last = {c: t for c, t in self._last.items() if now - t < self.hold}
        if len(self._last) >= self.most:
            self._last.clear()


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


class _Piped(Protocol):
    @property
    def pipeline(self) -> StreamPipeline | None: ...


class TableHost(Protocol):
    """What the gate reads of the floor: each table's pipeline."""

    @property
    def tables(self) -> Mapping[str, _Piped]: ...


_TABLE_PATH = re.compile(r"^/api/tables/([^/]+)/")
COMMAND_METHODS = frozenset(("POST", "PATCH", "DELETE"))
"""The HTTP methods of a table's commands (every other method only reads)."""


GATE_STATE = "dicetable.load_gate"
"""The ASGI lifespan state's key for the server's ``LoadGate`` (``refusing_http`` reads it)."""


class LoadGate:
    """Which commands are refused for load: one for a table whose queue is full, or one that
    would wait too long behind the commands already in the server (``server.shedding``).
    Asked by the door and, as a request is read, by ``refusing_http.RefusingHttp``."""

    def __init__(self, floor: TableHost, admission: Admission | None = None,
                 impatience: Impatience | None = None,
                 known: Callable[[dict[bytes, bytes]], bool] | None = None) -> None:
        self.floor = floor
        self.admission = admission or Admission()
        self.impatience = impatience or Impatience()
        """Clients refused for load lately (their next 503s held, ``refusing_http``)."""
        self.known = known or (lambda headers: True)
        """Does a request (its headers) carry a session this server knows, without reading
        the database? Only such a command counts in flight: a client without a session
        cannot fill the server's capacity and so refuse the others'."""

    def pipeline(self, method: str, path: str) -> StreamPipeline | None:
        """The pipeline a command for ``path`` would queue on (None: not a table command)."""
        if method not in COMMAND_METHODS:
            return None
        match = _TABLE_PATH.match(path)
        info = self.floor.tables.get(match.group(1)) if match else None
        return info.pipeline if info is not None else None

    def refusal_at(self, pipeline: StreamPipeline) -> bytes | None:
        """The 503's body for a command that would queue on ``pipeline``, arriving now, or
        None when it is not refused for load (a refusal is counted)."""
        if pipeline.overloaded():
            pipeline.stats.busy += 1
            return TABLE_BUSY
        return SERVER_BUSY if self.admission.refuse() else None

    def admit_at(self, pipeline: StreamPipeline, *, count: bool = True) -> bytes | None:
        """``refusal_at``, and a command not refused is counted in flight at once when
        ``count`` (its ``Admission.done`` is the caller's), so that the next request read
        sees it. Asked once the command's body has arrived whole, never at its headers."""
        body = self.refusal_at(pipeline)
        if body is None and count:
            self.admission.enter()
        return body


ADMITTED = "dicetable.admitted"
"""Scope key set by ``refusing_http.RefusingHttp`` on a command it admitted as it was read,
its body whole: True when counted in flight, False when not (no session known), so that
the door does not decide it again."""


def _busy_body(message: str) -> bytes:
    """A 503's body: a ``Busy`` refusal's own shape, serialised once (refusing stays cheap)."""
    return json.dumps(Busy(message).to_dict(), separators=(",", ":")).encode()


TABLE_BUSY = _busy_body("the table has too many commands waiting; retry shortly")
SERVER_BUSY = _busy_body("the server is answering all it can; retry shortly")
"""The 503s' bodies: the table's own queue is full, or the server's (whichever layer
refuses: ``refusing_http`` writes them too)."""
RETRY_AFTER = str(RETRY_AFTER_S).encode()
