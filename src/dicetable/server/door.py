"""The server's one ASGI layer: every request passes it once, in one pass, before the framework.

In order, each step reading the headers as parsed once:

1. proxy headers: ``X-Forwarded-For``/``-Proto`` honoured only from a proxy the operator
   named (``security.Proxies``; none by default);
2. admission: a table command that the load gate refuses (its table's queue, or the work
   already in the server, ``server.door``) gets 503 and ``Retry-After`` before anything
   else is spent on it; one decided as it was read (``refusing_http``, ``pipeline.ADMITTED``)
   is not decided again;
3. the body limit: a body over ``limits.MAX_BODY`` gets 413, declared or counted as it
   arrives; the body is read once, here, and a command is admitted (counted in flight, if it
   carries a session this server knows) only once it is whole;
4. ownership: with the tables split between processes, a command for a table another process
   owns goes to it (``owners.Forwarder``), and every command's answer names the process that
   decided it (``owners.DECIDED_BY``);
5. ``Prefer: return=representation`` noted for the command's reply (``WANT_VIEW``);
6. the origin check of a cookie-authenticated write (``origin_refused``);
7. exactly-once commands (``Idempotency-Key``, ``Keeper``);
8. the bet route answered here (``BetRoute``), its reply encoded once with orjson (most bets
   never get here: the protocol answers them as it reads them, ``server.bets_at_read``,
   when none of the checks above has anything to do for them);
   every other request, and a bet the fast path cannot take as it comes, goes to the
   framework's own route, whose answers (refusals included) it does not alter.

A WebSocket upgrade gets the proxy headers and the origin check; the lifespan goes straight
to the framework.

The hot command route answered at the door, without the framework's per-request machinery.

A bet is the request a full table sends most, and FastAPI's routing, dependency injection
(the session lookup on the thread pool) and response encoding were most of its cost.
``BetRoute`` is asked by ``server.door`` once the request has passed every check there (load,
body limit, ownership, origin, idempotency). For a ``POST`` to the bet route it does what the
route does, with the route's own pieces, and no rule of its own:

- the session, as ``Accounts.session`` gives it (remembered: ``accounts.SessionCache``;
  a miss is read on a worker thread, ``session_reads``, never on the event loop);
- the body, validated by the route's own request model;
- the command, built by the route's own builder and queued through the same ``act``;
- a refusal answered by the app's own refusal handler.

Whatever it cannot take as it comes - no valid session, a body the model refuses, a media
type other than JSON - the door hands, untouched, to the framework's route, so every refusal
of bad input or of an unauthorised caller is the framework's own answer: there is one
implementation of each rule, and the two paths cannot disagree.

Transport and request-origin checks, and the per-client limit on failed logins.

- ``origin_refused``: a request that authenticates by the session *cookie* (a browser) and
  changes something must come from this server's own origin: a page elsewhere cannot ride
  the cookie (cross-site request forgery). Requests that carry ``Authorization: Bearer`` are
  not ridden by a browser and pass. A WebSocket upgrade is checked without exception: one
  that names another origin (or that a browser marks cross-site) is refused whatever it
  carries - a ``token`` in its query, a cookie, or neither.
- ``FailureLimiter``: at most ``limit`` failed logins per client in ``window`` seconds;
  more are answered 429 without a password check (the clock is injectable: tests count).
- ``Proxies``: ``X-Forwarded-For``/``-Proto`` honoured only from the proxies named;
- the session cookie is ``Secure`` when the server is reached over TLS
  (``dicetable serve --certfile/--keyfile``).

Exactly-once commands: the ``Idempotency-Key`` header (spec/standards.md RES-5).

A client names each mutating request (POST, PATCH, PUT, DELETE) with a key of its own
choosing and sends the same key when it retries. Per account and key:

- the first request runs; its answer (status and body, refusals included) is kept;
- a retry with the same key gets that answer again, and the command is not run again;
  a key reused for a *different* request is refused (422, ``idempotency.reuse``);
- the same key while the first is still running waits for it;
- across a crash: the key travels with the command to the store and is committed in the same
  transaction as its events (``store.base.RequestRecord``), so a retry after a restart that finds no
  kept answer but a committed command rebuilds the answer from the log - never runs it twice.

Login and logout are not commands and are not kept (a kept answer would hold a session
token). A key is 1-128 visible ASCII characters.

Refusing only what the server cannot serve within its latency bound: the work waiting.

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

A window with refusals may only lower the estimate, and lowers it to what it measured at
once (the time spent refusing is not the admitted commands', so the truth is no dearer);
without a flood it need not wait for its end: a short window that finds it refusing what its
measure so far would admit ends it. That is so except amid a flood: within ``QUEUE_WINDOW``,
more new commands were refused than answered. Then answering amid the refusals is what each
admitted command waits behind, and the estimate follows what each short window measured, up
or down - under an overload that follows a quieter spell (the cost it learnt there is
cheaper than answering amid the refusals, its sessions read, its connections taken) the
admitted waited 60-150 ms for as long as the overload lasted; raised only where even the
fewest left in flight after an answer were more work than the bound, it still took the first
second and a half (accepted p99 by half-second 110-157 ms, against 65-80 after). Never below
what the long windows learnt nor above ``RAISE_AT_MOST`` times that: fewer in flight make
smaller batches, each answer dearer, and unbounded, the raise fed on itself down to
``MIN_IN_FLIGHT`` in flight (a ninefold estimate, a third less answered). Out of the flood,
the learnt estimate decides again. A refusal of a client that sent as soon as it was
answered (within ``RETRY_WINDOW`` of its connection's last answer, as read:
``Admission.at_once``) is not new work: refusing a client that waits for each answer lowers
no load, and counted as new, the refusals of 200 such clients made every answer look dearer,
refused more of them, and spun (on a slow host they were refused up to 92% of the time,
before a client's 503s after a 503 were held: ``RESEND_HOLD``; with the hold and only the
503s after a 503 left out, one process on PostgreSQL answered a third less).

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
import contextlib
import contextvars
import gc
import hashlib
import ipaddress
import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import orjson
from pydantic import BaseModel
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dicetable.application.accounts import Account, TooManyAttempts
from dicetable.application.integrity import FAULT_CITATION
from dicetable.application.pipeline import RETRY_AFTER_S, Busy, StreamPipeline
from dicetable.core.errors import DicetableError
from dicetable.server.limits import MAX_BODY, replaying, too_large_body
from dicetable.server.owners import DECIDED_BY, FORWARDED, Forwarder, Split
from dicetable.server.session_reads import SessionReads
from dicetable.store import request_stream
from dicetable.store.base import EventStore, RequestRecord, request_in_progress
from dicetable.store.chain import decode_body
from dicetable.store.versioned import retry_stale

SERVER_MAX_WAIT = 0.04
"""Seconds a command may expect to wait behind those already admitted (industry-default:
with its table's batch and commit after that wait, an accepted command under overload is
answered within 100 ms; a larger bound lets each command wait longer and serves no more, the
server being full either way)."""
MIN_IN_FLIGHT = 32
"""Commands always admitted, whatever the estimate (industry-default)."""
MOST_STRANGERS = 64
"""Commands whose session this server does not remember (a restart, a login at another
process) that may be in flight at once (industry-default). Each is read before it is
decided, so it is counted as the others are; capped, so that after a restart a floor's
sessions are read a few dozen at a time, each of their first commands answered at once (503)
or soon, and so that requests with made-up tokens can hold no more of the server than this."""
LAG_SMOOTHING = 0.25
"""Weight of the latest heartbeat in the loop's measured lag (an average: shown, never a
reason to refuse)."""
HEARTBEAT = 0.01
"""Seconds between the loop's heartbeats (the lag is how late one comes)."""
WINDOW = 1.0
"""Seconds over which the time per answer is measured ..."""
WINDOW_ANSWERS = 64
"""... and answers at least: a window with fewer (a start, a quiet table) says nothing."""
QUEUE_WINDOW = 0.1
"""Seconds over which a flood is looked for, and measured (``Admission``) ..."""
QUEUE_ANSWERS = 16
"""... and answers at least."""
RAISE_AT_MOST = 2.0
"""Times over what the long windows learnt that a flood's short windows may raise the
estimate."""
RETRY_WINDOW = 0.05
"""Seconds after a connection's last answer within which a command refused was sent at once
(``Admission.at_once``; after a 503, a retry: ``Admission.retried``): a client that waits for
each answer sends again within a round trip, plus the event loop's lag (7-14 ms under the
bench's overload); the bench's open-loop overload reuses a connection every ~140 ms."""
FIRST_GUESS = 0.0001
"""Seconds per answer assumed until the first window is measured (industry-default:
what an accepted bet costs a quick core, so that a few hundred commands may be in flight at
first; a slower server's first window says so). Without one, a sudden overload on a server
that had not measured itself yet would all be admitted."""

@dataclass(slots=True)
class _Window:
    """A span of busy time in which ``Admission`` counts answers: at least ``least`` of them
    over ``length`` seconds, and what was refused meanwhile (and sent at once)."""

    length: float
    least: int
    since: float = 0.0
    busy_since: float = 0.0
    answered: int = 0
    refused_since: int = 0
    at_once_since: int = 0

    def begin(self, now: float, spent: float, admission: Admission) -> None:
        self.since, self.busy_since, self.answered = now, spent, 0
        self.refused_since, self.at_once_since = admission.refused, admission.at_once

    def answer(self, now: float) -> bool:
        """One more answered: is the window over?"""
        self.answered += 1
        return self.answered >= self.least and now - self.since >= self.length

    def per(self, spent: float) -> float:
        """Busy seconds per answer over the window, ``spent`` its end on the timer."""
        return (spent - self.busy_since) / self.answered


class Admission:
    """Commands admitted and not yet answered, and the server's recent time per answer."""

    def __init__(self, *, max_wait: float = SERVER_MAX_WAIT, floor: int = MIN_IN_FLIGHT,
                 window: float = WINDOW, clock: Callable[[], float] = time.monotonic,
                 timer: Callable[[], float] = time.perf_counter,
                 first_guess: float = FIRST_GUESS,
                 most_strangers: int = MOST_STRANGERS,
                 queue_window: float = QUEUE_WINDOW) -> None:
        self.max_wait = max_wait
        self.most_strangers = most_strangers
        self.strangers = 0
        """Commands in flight whose session was not remembered when they were admitted."""
        self.lag = 0.0
        """The event loop's recent lag: its heartbeats' lateness, averaged (``watch_lag``;
        shown and used by the collector, never a reason to refuse)."""
        self.beats = 0
        """Heartbeats measured."""
        self.floor = floor
        self.clock = clock
        self.timer = timer
        self.in_flight = 0
        self.per_answer = first_guess
        """Seconds per answer while busy (``first_guess`` until measured): what the long
        windows learnt, or more while a flood's short windows measure more."""
        self.learnt = first_guess
        """Seconds per answer as the long windows measure it (``per_answer`` stays within
        ``RAISE_AT_MOST`` times this)."""
        self._measured = False
        self.refused = 0
        self.admitted = 0
        self.retried = 0
        """Refusals of a client sending again at once after a 503 (``sent_at_once``)."""
        self.at_once = 0
        """Refusals of a client that sent as soon as it was answered, a 503 or not
        (``sent_at_once``): one that waits for each answer, whose refusal lowers no load."""
        self._idle = True
        self._flood = False
        """Did the last short window see more new commands refused than answered?"""
        self._window = _Window(window, WINDOW_ANSWERS)
        """Where the time per answer is measured."""
        self._queue = _Window(queue_window, QUEUE_ANSWERS)
        """Where a flood is looked for, and what answering amid it costs measured."""
        self._window.begin(clock(), timer(), self)
        self._queue.begin(self._window.since, self._window.busy_since, self)

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

    def enter(self, *, stranger: bool = False) -> None:
        """Count in a command that ``refuse`` did not refuse (``stranger``: one whose session
        this server does not remember)."""
        if self._idle:  # a window starts with the first command in flight
            self._idle = False
            now, spent = self.clock(), self.timer()
            self._window.begin(now, spent, self)
            self._queue.begin(now, spent, self)
        self.in_flight += 1
        self.admitted += 1
        if stranger:
            self.strangers += 1

    def refuse_stranger(self) -> bool:
        """Is a command whose session this server does not remember, arriving now, to be
        refused, ``most_strangers`` such being in flight? (Counted as refused when it is.)"""
        if self.strangers >= self.most_strangers:
            self.refused += 1
            return True
        return False

    def refused_unasked(self) -> None:
        """A command refused without asking ``refuse`` (sent again at once after its table's
        owner, another process, refused it for load: ``refusing_http``): counted as refused."""
        self.refused += 1

    def sent_at_once(self, *, after_503: bool) -> None:
        """A refusal of a client that sent as soon as it was answered (``at_once``); with
        ``after_503``, that answer was a 503 too: a client retrying at once (``retried``).

        >>> admission = Admission()
        >>> admission.sent_at_once(after_503=False); admission.sent_at_once(after_503=True)
        >>> admission.at_once, admission.retried, admission.refused
        (2, 1, 0)
        """
        self.at_once += 1
        if after_503:
            self.retried += 1

    def done(self, *, stranger: bool = False) -> None:
        """An admitted command was answered (``stranger``: as it was admitted)."""
        if stranger:
            self.strangers -= 1
        self.in_flight -= 1
        now = self.clock()
        if self._queue.answer(now):
            self._short_window_over(now)
        if self._window.answer(now):
            self._learn(now, self.timer())
        if self.in_flight == 0:  # an idle spell is not the commands' cost
            self._idle = True

    def _learn(self, now: float, spent: float) -> None:
        """The long window is over (``spent``: its end on the timer): what an answer cost
        in it is learnt, and the next begins.

        A window with refusals may only lower the cost: the time refusing the others took
        is not the admitted commands' (counted as theirs, it made each seem dearer, refused
        more, and 200 clients retrying at once were held there); but a server answering
        faster than it thought (a slow spell over, bigger batches) must not stay held at its
        old estimate while it refuses: such a window's cost is taken at once, not averaged
        in, since the refusals' time in it can only have made it dearer (averaged, an
        estimate learnt in a start's dearer first second refused 200 clients that each wait
        for their answer for seconds after). Nor may a server started into an overload stay
        at its first guess: its first window is its first measure, refusals and all (a
        dearer cost, so shorter waits, until a window says better)."""
        window = self._window
        per = window.per(spent)
        refusing = self.refused != window.refused_since
        if not self._measured or (refusing and per < self.learnt):
            self.learnt = per
            self._measured = True
        elif not refusing:
            self.learnt = 0.7 * self.learnt + 0.3 * per
        self.per_answer = self._within_reach(self.per_answer) if self._flood else self.learnt
        window.begin(now, spent, self)

    def _short_window_over(self, now: float) -> None:
        """The short window that looks for a flood is over (see the module's text):
        amid a flood (more new commands refused than answered), follow what it measured,
        between what the long windows learnt and ``RAISE_AT_MOST`` times that; out of a
        flood, back to what the long windows learnt."""
        queue, spent = self._queue, self.timer()
        per = queue.per(spent)
        fresh = self.refused - queue.refused_since - (self.at_once - queue.at_once_since)
        self._flood = fresh >= queue.answered
        window = self._window
        if not self._flood and self.refused != window.refused_since \
                and window.answered >= window.least and window.per(spent) < self.learnt:
            # Refusing, without a flood, what the cost measured since the long window began
            # would admit: learnt now, not at its end - a server measured dear in its first
            # second (its sessions read, its caches cold) refused 200 clients that each wait
            # for their answer until the second's end. (``_learn`` sets ``per_answer``.)
            self._learn(now, spent)
        else:
            self.per_answer = self._within_reach(per) if self._flood else self.learnt
        queue.begin(now, spent, self)

    def _within_reach(self, per: float) -> float:
        """``per`` held between what the long windows learnt and ``RAISE_AT_MOST`` times
        that: where a flood may take the estimate."""
        return min(max(per, self.learnt), RAISE_AT_MOST * self.learnt)


async def watch_lag(admission: Admission, every: float = HEARTBEAT) -> None:
    """Keep ``admission.lag`` up to date: how late each heartbeat of the running loop is."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + every
        await asyncio.sleep(every)
        admission.beat(max(0.0, loop.time() - due))


RETRY_HOLD = 0.0
"""Seconds a client refused for load waits, at least, for its next 503 (industry-default:
none, every refusal is answered at once and ``Retry-After`` says when to come back;
``DICETABLE_SHED_HOLD_MS``, ``dicetable serve --shed-hold-ms`` for a floor whose clients
retry in a loop). A hold cannot tell a client retrying at once from one that sends on
several connections at its own pace: the latter's 503s came later and later (a second late
and more under an open-loop overload, where each should take milliseconds)."""
RESEND_HOLD = 0.02
"""Seconds a connection that sends again within them of its last 503 for load waits for its
next one (industry-default; ``DICETABLE_SHED_RESEND_HOLD_MS``, ``dicetable serve
--shed-resend-hold-ms``). A connection carries one request at a time, so one that sends again
at once is a client spinning on its refusals, whoever it is: 200 closed-loop clients a little
past what the server answers within its bound were each refused as fast as they could ask,
thousands of 503s a second, and those took the core from the admitted (on PostgreSQL, 927
accepted commands/s against 3,550/s with the hold, ``bench.scale_bench``). Held, each spins at
most once per hold. Unlike ``RETRY_HOLD``, it never holds a client that sends on other
connections at its own pace; a connection reused as soon as it is free (a proxy's) waits
at most this long for a 503."""
REMEMBERED = 100_000
"""Clients whose last refusal is remembered at most (past that, those whose hold is over
are let go, or all of them should none be)."""

class Impatience:
    """When each client was last refused for load, and when its next 503 is written.

    A client told to retry after a second that sends again at once, over and over, was
    refused as fast as it asked: 200 such connections on a full server spent its time on
    their 503s (thousands a second), and the admitted waited behind them. A connection that
    comes back within ``resend`` of its last refusal, or a client (its session, or its
    connection) within ``hold``, has its next 503 written that long after the last: each is
    refused at most once per hold, whatever it sends, and what it would be admitted for is
    never held.

    >>> clock = iter([0.0, 0.03, 0.2]).__next__
    >>> slow = Impatience(hold=0.1, clock=clock)
    >>> [round(slow.refused(b"alice") - t, 2) for t in (0.0, 0.03, 0.2)]
    [0.0, 0.07, 0.0]

    A connection's last 503 (``last``) holds its next by ``resend``, whatever the client:

    >>> clock = iter([1.0, 1.005, 1.5]).__next__
    >>> spinning = Impatience(resend=0.02, clock=clock)
    >>> [round(spinning.refused(b"bob", last) - t, 3)
    ...  for t, last in ((1.0, None), (1.005, 1.0), (1.5, 1.02))]
    [0.0, 0.015, 0.0]
    """

    def __init__(self, hold: float = RETRY_HOLD, *, resend: float = RESEND_HOLD,
                 clock: Callable[[], float] = time.monotonic, most: int = REMEMBERED) -> None:
        self.hold = hold
        self.resend = resend
        self.clock = clock
        self.most = most
        self.held = 0
        """503s held back, in all."""
        self._last: dict[bytes, float] = {}

    def refused(self, client: bytes, last: float | None = None) -> float:
        """When (on ``clock``) the 503 refusing ``client`` now is to be written: now, or
        ``resend`` after its connection's last refusal (``last``, if any), or ``hold`` after
        the client's; noted as that client's last refusal."""
        now = at = self.clock()
        if last is not None and now - last < self.resend:
            at = last + self.resend
        if self.hold > 0:
            before = self._last.get(client)
            if last is not None and (before is None or last > before):
                before = last
            if before is not None and now - before < self.hold:
                at = max(at, before + self.hold)
            elif len(self._last) >= self.most:
                self._forget(now)
            self._last[client] = at
        if at > now:
            self.held += 1
        return at

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


COMMAND_METHODS = frozenset(("POST", "PATCH", "DELETE"))
"""The HTTP methods of a table's commands (every other method only reads)."""


GATE_STATE = "dicetable.load_gate"
"""The ASGI lifespan state's key for the server's ``LoadGate`` (``refusing_http`` reads it)."""


class LoadGate:
    """Which commands are refused for load: one for a table whose queue is full, or one that
    would wait too long behind the commands already in the server (``server.door``).
    Asked by the door and, as a request is read, by ``refusing_http.RefusingHttp``."""

    def __init__(self, floor: TableHost, admission: Admission | None = None,
                 impatience: Impatience | None = None,
                 caller: Callable[[dict[bytes, bytes]], Any] | None = None) -> None:
        self.floor = floor
        self.admission = admission or Admission()
        self.impatience = impatience or Impatience()
        """Clients refused for load lately (their next 503s held, ``refusing_http``)."""
        self.caller = caller or (lambda headers: True)
        """The account behind a request's session (its headers) when this server remembers
        it, without reading the database; None when it does not (without ``caller``, every
        request counts as known). Only a command with one counts in flight: a client without
        a session cannot fill the server's capacity and so refuse the others'."""

    def known(self, headers: dict[bytes, bytes]) -> bool:
        """Does the request carry a session this server remembers (``caller``)?"""
        return self.caller(headers) is not None

    def pipeline(self, method: str, path: str) -> StreamPipeline | None:
        """The pipeline a command for ``path`` would queue on (None: not a table command)."""
        if method not in COMMAND_METHODS:
            return None
        table = table_of(path)
        info = self.floor.tables.get(table) if table is not None else None
        return info.pipeline if info is not None else None

    def refusal_at(self, pipeline: StreamPipeline) -> bytes | None:
        """The 503's body for a command that would queue on ``pipeline``, arriving now, or
        None when it is not refused for load (a refusal is counted)."""
        if pipeline.overloaded():
            pipeline.stats.busy += 1
            return TABLE_BUSY
        return SERVER_BUSY if self.admission.refuse() else None

    def admit_at(self, pipeline: StreamPipeline, *, stranger: bool = False) -> bytes | None:
        """``refusal_at``, and a command not refused is counted in flight at once (its
        ``Admission.done`` is the caller's), so that the next request read sees it; a
        ``stranger`` (its session not remembered) is refused too while ``MOST_STRANGERS`` are
        in flight. Asked once the command's body has arrived whole, never at its headers."""
        body = self.refusal_at(pipeline)
        if body is None:
            if stranger and self.admission.refuse_stranger():
                return SERVER_BUSY
            self.admission.enter(stranger=stranger)
        return body


RELAYED_BUSY = "dicetable.relayed_busy"
"""Scope key the door sets on a command whose owner (another process) refused it for load,
its 503 relayed: ``refusing_http`` answers a table command sent again at once on that
connection (whatever its table: a connection carries one client) with a 503 held as its own
are (``RESEND_HOLD``), rather than forward again a client spinning on the owner's."""

ADMITTED = "dicetable.admitted"
"""Scope key set by ``refusing_http.RefusingHttp`` on a command it admitted (and counted in
flight) as it was read, its body whole: True when its session was remembered, False for a
stranger (``LoadGate.admit_at``), so that the door does not decide it again and counts it
out as it was counted in."""


def _busy_body(message: str) -> bytes:
    """A 503's body: a ``Busy`` refusal's own shape, serialised once (refusing stays cheap)."""
    return json.dumps(Busy(message).to_dict(), separators=(",", ":")).encode()


TABLE_BUSY = _busy_body("the table has too many commands waiting; retry shortly")
SERVER_BUSY = _busy_body("the server is answering all it can; retry shortly")
"""The 503s' bodies: the table's own queue is full, or the server's (whichever layer
refuses: ``refusing_http`` writes them too)."""
RETRY_AFTER = str(RETRY_AFTER_S).encode()


HEADER = b"idempotency-key"
MUTATING = frozenset({"POST", "PATCH", "PUT", "DELETE"})
EXEMPT = ("/api/login", "/api/logout")
_KEY = re.compile(r"^[\x21-\x7e]{1,128}$")
_TABLE_PATH = re.compile(r"^/api/tables/([^/]+)/")


def table_of(path: str) -> str | None:
    """The table a command's path names (``/api/tables/ID/...``), or None: which process owns
    it (``owners``), and the table a request is counted under (``observe``)."""
    match = _TABLE_PATH.match(path)
    return match.group(1) if match else None

Who = Callable[[str | None], Awaitable[str | None]]
"""The account name behind a session token (None: no valid session)."""
Recover = Callable[[RequestRecord, str], Awaitable[tuple[int, bytes]]]
"""Rebuild the answer of a committed request (its record, the account) from the log."""
Applied = Callable[[str], RequestRecord | None]


KEEP_HOURS = 24
"""How long an answer is kept to be replayed (industry-default). Older retries are still
never applied twice: the command's record in the store rebuilds their answer."""

class Answers:
    """Kept answers, as ``RequestRecorded`` events of the account's ``requests:NAME`` stream
    in the one store (so they survive a restart and are chained like everything else); the
    store's request index finds each in one read."""

    def __init__(self, store: EventStore, *, now: str | None = None,
                 faulted: Callable[[str], bool] = lambda stream: False) -> None:
        self.store = store
        self.now = now
        self.faulted = faulted
        """Whether a stream is under an integrity fault: no answer is replayed from it."""
        """Answers kept longer than ``KEEP_HOURS`` before this are not replayed."""

    def get(self, scope: str) -> tuple[str, int, str] | None:
        found = self.store.request_record(request_stream.index_key(scope))
        if found is None:
            return None
        for row in self.store.records(found.table, after=found.first_seq - 1,
                                      until=found.first_seq):
            event = decode_body(row.body)
            if not isinstance(event, request_stream.RequestRecorded) or event.scope != scope:
                return None
            if self.now is not None and datetime.fromisoformat(event.at) < \
                    datetime.fromisoformat(self.now) - timedelta(hours=KEEP_HOURS):
                return None
            return event.fingerprint, event.status, event.body
        return None

    def put(self, scope: str, fingerprint: str, status: int, body: str, at: str) -> None:
        account = scope.partition(":")[0]
        stream = f"{request_stream.KIND}:{account}"

        def attempt() -> None:  # the account's other requests, here or elsewhere: after them
            if self.get(scope) is not None:
                return  # kept already (a duplicate in another process got there first)
            head = self.store.head(stream).seq
            self.store.append(stream, [request_stream.RequestRecorded(
                account=account, seq=head + 1, at=at, scope=scope,
                fingerprint=fingerprint, status=status, body=body)], expected=head,
                request=request_stream.index_key(scope))

        retry_stale(stream, attempt, exhausted=lambda: None)  # as before: then not kept


def _messages(status: int, data: dict[str, Any], replayed: bool = False) -> list[Message]:
    body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if replayed:
        headers.append((b"idempotent-replayed", b"true"))
    return [{"type": "http.response.start", "status": status, "headers": headers},
            {"type": "http.response.body", "body": body}]


def token_of(headers: dict[bytes, bytes], cookie: str) -> str | None:
    """The session token a request carries: ``Authorization: Bearer``, else the cookie."""
    auth = headers.get(b"authorization", b"").decode("latin-1")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name == cookie:
            return value
    return None


Then = Callable[[Send], Awaitable[None]]
"""Run the request (its body already read) answering through the ``Send`` given."""


@dataclass(eq=False, kw_only=True)
class Keeper:
    """Exactly-once commands, asked by ``server.door`` for a request that carries the header,
    with its body already read (bounded) and its headers parsed once."""

    answers: Answers
    who: Who
    applied: Applied
    recover: Recover
    cookie: str
    now: Callable[[], str]
    _running: dict[str, asyncio.Lock] = field(default_factory=dict, init=False)

    @staticmethod
    def applies(scope: Scope) -> bool:
        """Is this request one whose key is kept (a command, not a login or logout)?"""
        return scope.get("method") in MUTATING \
            and not str(scope.get("path", "")).startswith(EXEMPT)

    async def handle(self, scope: Scope, headers: dict[bytes, bytes], body: bytes, *,
                     answer: Send, then: Then) -> None:
        key = headers[HEADER].decode("latin-1")
        if not _KEY.match(key):
            for m in _messages(422, {"error": "InvalidInput", "message": "an Idempotency-Key is "
                                 "1-128 visible ASCII characters", "rule": "idempotency.key",
                                 "citation": ""}):
                await answer(m)
            return
        account = await self.who(token_of(headers, self.cookie))
        if account is None:  # the app refuses it (401); nothing to keep
            await then(answer)
            return
        fingerprint = hashlib.sha256(
            f"{scope['method']} {scope['path']} {scope.get('query_string', b'')!r}".encode()
            + b"\n" + body).hexdigest()
        request_scope = f"{account}:{key}"
        lock = self._running.setdefault(request_scope, asyncio.Lock())
        try:
            async with lock:  # a concurrent duplicate waits for the first, then its answer
                await self._once(answer, then, fingerprint, request_scope, account)
        finally:
            if not lock.locked():  # a later duplicate finds the kept answer
                self._running.pop(request_scope, None)

    async def _once(self, send: Send, then: Then, fingerprint: str, request_scope: str,
                    account: str) -> None:
        stream = f"{request_stream.KIND}:{account}"
        if self.answers.faulted(stream):  # a kept answer there may be a forged one
            for m in _messages(423, {"error": "TableFaulted", "message": f"{stream} is locked: "
                                 "its log failed verification; keyed requests are refused "
                                 "until a pit boss clears the fault",
                                 "rule": "integrity.fault", "citation": FAULT_CITATION}):
                await send(m)
            return
        kept = await asyncio.to_thread(self.answers.get, request_scope)
        if kept is not None:
            if kept[0] != fingerprint:
                for m in _messages(422, {"error": "InvalidInput", "message": "this "
                                     "Idempotency-Key was used for a different request",
                                     "rule": "idempotency.reuse", "citation": ""}):
                    await send(m)
                return
            for m in _messages(kept[1], json.loads(kept[2]), replayed=True):
                await send(m)
            return
        record = await asyncio.to_thread(self.applied, request_scope)
        if record is not None:  # committed before a crash, its answer never kept
            status, data = await self.recover(record, account)
            await asyncio.to_thread(self.answers.put, request_scope, fingerprint, status,
                                    data.decode(), self.now())
            for m in _messages(status, json.loads(data), replayed=True):
                await send(m)
            return
        status_box: list[int] = []
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_box.append(int(message["status"]))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        with request_in_progress(request_scope):
            await then(capture)
        status = status_box[0] if status_box else 500
        text = b"".join(chunks)
        if status < 500:
            try:
                json.loads(text)
            except ValueError:
                return
            await asyncio.to_thread(self.answers.put, request_scope, fingerprint, status,
                                    text.decode(), self.now())


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """Declare the optional ``Idempotency-Key`` header on every mutating operation."""
    header = {"name": "Idempotency-Key", "in": "header", "required": False,
              "description": "Your id for this command: a retry with the same id gets the "
                             "original answer and is never applied twice",
              "schema": {"type": "string", "minLength": 1, "maxLength": 128,
                         "pattern": "^[\\x21-\\x7e]+$"}}
    for path, item in schema.get("paths", {}).items():
        if path.startswith(EXEMPT):
            continue
        for method, op in item.items():
            if method.upper() in MUTATING:
                params = op.setdefault("parameters", [])
                if not any(p.get("name") == "Idempotency-Key" for p in params):
                    params.append(header)
    return schema


SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def _origin_of(scope: Scope, headers: dict[bytes, bytes]) -> str:
    host = headers.get(b"host", b"").decode("latin-1")
    scheme = {"https": "https", "wss": "https", "ws": "http"}.get(scope.get("scheme", "http"),
                                                                  "http")
    return f"{scheme}://{host}"


ORIGIN_REFUSED = json.dumps({"error": "RoleNotPermitted", "message": "a cookie-authenticated "
                             "request must come from this server's own pages (Origin)",
                             "rule": "security.origin", "citation": ""}).encode()
"""The 403's body for a cookie-authenticated write from another origin."""

def origin_refused(scope: Scope, headers: dict[bytes, bytes], cookie: str,
                   allowed: frozenset[str] = frozenset()) -> bool:
    """Is this request (``headers`` as parsed once) refused for its origin? A WebSocket upgrade
    from another origin always is; an HTTP write only when it authenticates by the session
    ``cookie`` (a ``Bearer`` token is never ridden by a browser)."""
    if scope["type"] == "websocket":
        return _foreign(scope, headers, allowed)
    if scope.get("method", "GET") in SAFE \
            or headers.get(b"authorization", b"").lower().startswith(b"bearer "):
        return False
    if cookie.encode() + b"=" not in headers.get(b"cookie", b""):
        return False  # not cookie-authenticated: nothing for another site to ride
    return _foreign(scope, headers, allowed)


def _foreign(scope: Scope, headers: dict[bytes, bytes], allowed: frozenset[str]) -> bool:
    """Does the request come from a page of another origin?"""
    origin = headers.get(b"origin")
    if origin is None:
        # Browsers send Origin on every cross-origin write and on WebSocket upgrades;
        # Sec-Fetch-Site tells a cross-site request even when they do not.
        return bool(headers.get(b"sec-fetch-site", b"") == b"cross-site")
    text = origin.decode("latin-1")
    return text != _origin_of(scope, headers) and text not in allowed


class Proxies:
    """The proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are honoured
    (``dicetable serve --forwarded-allow-ips``: addresses or networks; none by default).
    From one of them, the client is the nearest address in ``X-Forwarded-For`` that is not
    itself a named proxy (each proxy appends the peer it saw), and the scheme is the one it
    forwards; from anyone else both headers are ignored.

    >>> scope = {"type": "http", "client": ("10.0.0.5", 4000), "scheme": "http"}
    >>> Proxies("10.0.0.0/24").apply(scope, {b"x-forwarded-for": b"203.0.113.9, 10.0.0.7",
    ...                                      b"x-forwarded-proto": b"https"})
    >>> scope["client"], scope["scheme"]
    (('203.0.113.9', 0), 'https')
    """

    def __init__(self, named: str) -> None:
        self.addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.names: set[str] = set()
        for item in (p.strip() for p in named.split(",")):
            if not item:
                continue
            try:
                if "/" in item:
                    self.networks.append(ipaddress.ip_network(item, strict=False))
                else:
                    self.addresses.add(ipaddress.ip_address(item))
            except ValueError:
                self.names.add(item)  # not an address: a literal (a unix socket's name)

    def __bool__(self) -> bool:
        return bool(self.addresses or self.networks or self.names)

    def trusts(self, host: str | None) -> bool:
        if not host:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return host in self.names
        return address in self.addresses or any(address in net for net in self.networks)

    def apply(self, scope: Scope, headers: dict[bytes, bytes]) -> None:
        """Rewrite ``scope``'s client and scheme as a named proxy forwards them."""
        client = scope.get("client")
        if not self.trusts(client[0] if client else None):
            return
        proto = headers.get(b"x-forwarded-proto")
        if proto is not None:
            scheme = proto.decode("latin-1").strip()
            if scheme in ("http", "https", "ws", "wss"):
                scope["scheme"] = scheme.replace("http", "ws") \
                    if scope["type"] == "websocket" else scheme
        forwarded = headers.get(b"x-forwarded-for")
        if forwarded is None:
            return
        hosts = [h.strip() for h in forwarded.decode("latin-1").split(",")]
        for host in reversed(hosts):
            if not self.trusts(host):
                break
        else:
            host = hosts[0]  # every hop a named proxy: the first is the client
        if host:
            scope["client"] = (host, 0)


class FailureLimiter:
    """Failed logins per client in a sliding window."""

    def __init__(self, limit: int = 10, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str) -> deque[float]:
        now = self.clock()
        seen = self._seen.setdefault(client, deque())
        while seen and seen[0] <= now - self.window:
            seen.popleft()
        if not seen:
            self._seen.pop(client, None)
        return seen

    def check(self, client: str) -> None:
        with self._lock:
            if len(self._recent(client)) >= self.limit:
                raise TooManyAttempts(f"too many failed logins from this client; wait "
                                      f"{int(self.window)} s", rule="accounts.rate_limit")

    def failed(self, client: str) -> None:
        with self._lock:
            self._recent(client)
            self._seen.setdefault(client, deque()).append(self.clock())


Act = Callable[[str, Account, BaseModel], Awaitable[dict[str, Any]]]
"""Queue the route's command for (table, caller, validated body); the reply after the commit."""

def json_media(kind: bytes) -> bool:
    """Is ``kind`` (a Content-Type) JSON: ``application/json`` or ``application/...+json``,
    parameters after ``;`` aside? Scanned once, not matched by a pattern that backtracks."""
    media = kind.partition(b";")[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/")
                                             and media.endswith(b"+json"))


@dataclass(eq=False, kw_only=True)
class BetRoute:
    """The bet route's own pieces, as the door uses them: its path (``{prefix}TABLE{suffix}``),
    request model and ``act``; the sessions and the session cookie that name the caller."""

    prefix: str
    suffix: str
    model: type[BaseModel]
    act: Act
    sessions: SessionReads[Account]
    cookie: str

    def table(self, path: str) -> str | None:
        """The table of a path ``{prefix}TABLE{suffix}`` (one segment), else None."""
        if not (path.startswith(self.prefix) and path.endswith(self.suffix)):
            return None
        table = path[len(self.prefix):len(path) - len(self.suffix)]
        return table if table and "/" not in table else None

    async def take(self, headers: dict[bytes, bytes], body: bytes
                   ) -> tuple[Account, BaseModel] | None:
        """The caller and the validated body, or None: the framework's route answers it."""
        kind = headers.get(b"content-type")
        if kind is not None and not json_media(kind):
            return None
        token = token_of(headers, self.cookie)
        if not token:
            return None
        try:
            who = await self.sessions(token)
        except DicetableError:
            return None
        data = validated(self.model, body)
        return None if data is None else (who, data)


def validated(model: type[BaseModel], body: bytes) -> BaseModel | None:
    """``body`` as ``model`` validates it, or None: not JSON, or the model refuses it (the
    framework's route says how)."""
    try:
        return model.model_validate_json(body)
    except Exception:
        return None


log = logging.getLogger(__name__)

WANT_VIEW: contextvars.ContextVar[bool] = contextvars.ContextVar("want_view", default=False)
"""The request asked for the whole view in a command's reply (``Prefer: return=representation``,
RFC 7240); by default a reply holds only the command's events and the caller's balance."""
Refusal = Callable[[Exception], Any]
"""The app's answer (an ASGI response) to an exception a command raised; None: not one."""

_FORWARDED = FORWARDED.encode()
_DECIDED_BY = DECIDED_BY.encode()
_JSON = (b"content-type", b"application/json")


@dataclass(eq=False)
class Door:
    """The one layer in front of the framework (``app``): see the module's text."""

    app: ASGIApp
    _: KW_ONLY
    gate: LoadGate
    split: Split
    cookie: str
    keeper: Keeper
    bet: BetRoute | None
    refusal: Refusal
    allowed_origins: frozenset[str] = frozenset()
    proxies: Proxies | None = None
    limit: int = MAX_BODY
    sessions: SessionReads[Account] | None = None
    """Where a session this server does not remember is read (``_remember``)."""
    forwarder: Forwarder = field(default_factory=Forwarder, init=False)
    taken: int = field(default=0, init=False)
    passed: int = field(default=0, init=False)
    """Bets answered here, and handed to the framework's route (tests count them)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            headers = dict(scope["headers"])
            if self.proxies is not None:
                self.proxies.apply(scope, headers)
            if origin_refused(scope, headers, self.cookie, self.allowed_origins):
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 4403,
                            "reason": "cross-origin upgrade refused"})
                return
            await self.app(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers: dict[bytes, bytes] = dict(scope["headers"])
        if self.proxies is not None:
            self.proxies.apply(scope, headers)
        method: str = scope["method"]
        gate = self.gate
        pipeline = None
        counted = stranger = False
        admitted = scope.get(ADMITTED)
        if admitted is not None:  # decided as it was read, its body whole
            counted, stranger = True, not admitted
        elif method in COMMAND_METHODS:
            pipeline = gate.pipeline(method, scope["path"])
            if pipeline is not None:
                busy = gate.refusal_at(pipeline)
                if busy is not None:
                    await _answer(send, 503, busy, retry=True)
                    return
        body = await self._body(headers, receive)
        if body is None:
            await _answer(send, 413, too_large_body(self.limit), close=True)
            return
        if pipeline is not None:
            stranger = not gate.known(headers)
            busy = gate.admit_at(pipeline, stranger=stranger)
            if busy is not None:
                await _answer(send, 503, busy, retry=True)
                return
            counted = True
        try:
            await self._admitted(scope, headers, method, body, receive, send,
                                 stranger=stranger)
        finally:
            if counted:
                gate.admission.done(stranger=stranger)

    async def _remember(self, headers: dict[bytes, bytes]) -> None:
        """Read here the session of a command this server is about to forward, its session
        not remembered: the owner decides it and answers for the session, but this server
        counts the client's commands in flight too, and without the read every one of them
        stayed a stranger here - at most ``MOST_STRANGERS`` in flight, the rest refused
        (two processes on PostgreSQL, every command one of them got forwarded: strangers in
        flight there averaged 35-41 for the whole run, against 0.5-2.5 with the read)."""
        token = token_of(headers, self.cookie)
        if token and self.sessions is not None:
            with contextlib.suppress(DicetableError):  # the owner answers the refusal
                await self.sessions(token)

    async def _body(self, headers: dict[bytes, bytes], receive: Receive) -> bytes | None:
        """The request's whole body, or None when it is over the limit (declared, or counted
        as it arrives: nothing past the limit is kept)."""
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                if int(declared) > self.limit:
                    return None
            except ValueError:
                return None
        message = await receive()
        if message["type"] != "http.request":
            return b""
        body: bytes = message.get("body", b"")
        if not message.get("more_body", False):
            return body if len(body) <= self.limit else None
        chunks, size = [body], len(body)
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _admitted(self, scope: Scope, headers: dict[bytes, bytes], method: str,
                        body: bytes, receive: Receive, send: Send, *,
                        stranger: bool = False) -> None:
        owners = self.split.owners
        if owners is not None and method in COMMAND_METHODS:
            table = table_of(scope["path"])
            if table is not None and _FORWARDED not in headers and not owners.owns(table):
                url = owners.owner_url(table)
                if url is not None and url != owners.url:
                    if stranger:
                        await self._remember(headers)
                    try:
                        status, out, content = await self.forwarder.forward(url, scope, body)
                    except Exception:  # the owner is gone: decide here (the store keeps it
                        # safe: a second writer's append is refused as stale)
                        log.warning("owner of %s at %s did not answer; deciding here",
                                    table, url)
                        owners.forget(table)
                    else:
                        if status == 503 and content in (SERVER_BUSY, TABLE_BUSY):
                            scope[RELAYED_BUSY] = True
                        await send({"type": "http.response.start", "status": status,
                                    "headers": out})
                        await send({"type": "http.response.body", "body": content})
                        return
            send = _decided_here(send)
        WANT_VIEW.set(b"return=representation" in headers.get(b"prefer", b""))
        if method not in SAFE and origin_refused(scope, headers, self.cookie, self.allowed_origins):
            await _answer(send, 403, ORIGIN_REFUSED)
            return
        if b"idempotency-key" in headers and self.keeper.applies(scope):
            async def then(answer: Send) -> None:
                await self._route(scope, headers, method, body, receive, answer)

            await self.keeper.handle(scope, headers, body, answer=send, then=then)
            return
        await self._route(scope, headers, method, body, receive, send)

    async def _route(self, scope: Scope, headers: dict[bytes, bytes], method: str,
                     body: bytes, receive: Receive, send: Send) -> None:
        bet = self.bet
        table = bet.table(scope["path"]) if bet is not None and method == "POST" else None
        if table is not None and bet is not None:
            taken = await bet.take(headers, body)
            if taken is not None:
                self.taken += 1
                who, data = taken
                try:
                    reply = await bet.act(table, who, data)
                except Exception as exc:
                    response = self.refusal(exc)
                    if response is None:
                        raise
                    await response(scope, receive, send)
                    return
                await _answer(send, 200, orjson.dumps(reply, option=orjson.OPT_NON_STR_KEYS))
                return
            self.passed += 1  # the framework's route answers it, refusal and all
        await self.app(scope, replaying(body, receive), send)


def _decided_here(send: Send) -> Send:
    """``send``, naming this process as the one that decided the command."""
    pid = str(os.getpid()).encode()

    async def marked(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []),
                                               (_DECIDED_BY, pid)]}
        await send(message)

    return marked


async def _answer(send: Send, status: int, body: bytes, *, retry: bool = False,
                  close: bool = False) -> None:
    """A JSON answer written at the door: its bytes encoded once, its headers built here."""
    head = [_JSON, (b"content-length", str(len(body)).encode())]
    if retry:
        head.append((b"retry-after", RETRY_AFTER))
    if close:
        head.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})
