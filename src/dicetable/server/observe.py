"""What an operator's tools read: health, readiness, Prometheus metrics and one log line per
request.

``Observer`` stands outside the door (``server.door``): ``/healthz``, ``/readyz`` and
``/metrics`` are answered here, before admission and before any session is looked up, so a
load balancer's probe is never shed and needs no account. Every other request passes through
to the door, timed; its status, its command's kind and a refusal's rule are counted, and with
``--log-format json`` one JSON line is logged for it (method, path, status, milliseconds,
table, kind, the ``Idempotency-Key``, the refusal's rule). A WebSocket is counted too: its
connection accepted or refused, while it is open, and its messages each way.

``/healthz`` says the process is alive. ``/readyz`` says it is verified and serving: 503
until the start-up verification has finished, while the server drains (shutting down), while
a store-wide fault is open (the checkpoint file failed), while every table is faulted, or
when the periodic verification has not completed for three of its periods.

The load view (``/api/floor/load``) and ``/metrics`` read the same figures (``figures``).
"""

from __future__ import annotations

import bisect
import json
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dicetable.application.integrity import CHECKPOINTS
from dicetable.core.errors import InvalidInput
from dicetable.server.collector_pauses import CollectorPauses
from dicetable.server.cpu_pin import pinned
from dicetable.server.door import table_of
from dicetable.server.floor import Floor
from dicetable.server.shared_values import shared

REQUESTS = logging.getLogger("dicetable.requests")
"""One line per request (INFO): JSON with ``--log-format json``."""

PROBES = ("/healthz", "/readyz", "/metrics")
STALE_PERIODS = 3
"""Periods without a completed verification after which the process is not ready
(industry-default: a check that stopped running is a check that is not vouching)."""
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0)
_METRICS_TYPE = (b"content-type", b"text/plain; version=0.0.4; charset=utf-8")
_JSON = (b"content-type", b"application/json")
_COMMAND_VERBS = frozenset(("POST", "PATCH", "DELETE"))


@dataclass
class Readiness:
    """Whether this process is verified and serving."""

    verify_every: float = 60.0
    verified_at: float | None = None
    """Wall time of the last completed verification (None: start-up's has not finished)."""
    draining: bool = False
    clock: Callable[[], float] = time.time

    def verified(self) -> None:
        self.verified_at = self.clock()

    def lag(self) -> float | None:
        """Seconds since the last verified head (None: never verified)."""
        return None if self.verified_at is None else max(0.0, self.clock() - self.verified_at)

    def problems(self, floor: Floor) -> list[str]:
        """Why this process is not ready (empty: ready)."""
        out = []
        lag = self.lag()
        if lag is None:
            out.append("start-up verification has not finished")
        elif self.verify_every > 0 and lag > STALE_PERIODS * self.verify_every:
            out.append(f"no verification completed for {lag:.0f} s "
                       f"({STALE_PERIODS} periods of {self.verify_every:g} s)")
        if self.draining:
            out.append("draining: the server is shutting down")
        faults = floor.faults.open
        if CHECKPOINTS in faults:
            out.append(f"store-wide fault: {faults[CHECKPOINTS]['detail']}")
        stored = floor.store.tables()
        if stored and all(t in faults for t in stored):
            out.append("every table is faulted")
        return out


M = TypeVar("M", bound=MetricWrapperBase)


class Tally:
    """A counter by label values, kept as plain integers and exported when ``/metrics`` is
    read. Counted by the ``Observer`` on the event loop only, where every answer is counted:
    a ``prometheus_client`` counter takes a lock per count, and its child per label values
    is looked up through another (7 us an answer in all, against 2).

    >>> t = Tally("x_things", "Things", ["kind"])
    >>> t.add("a"); t.add("a"); t.add("b")
    >>> sorted((s.labels["kind"], s.value) for s in t.family().samples)
    [('a', 2), ('b', 1)]
    """

    def __init__(self, name: str, doc: str, labels: list[str]) -> None:
        self.name, self.doc, self.labels = name, doc, labels
        self.counts: dict[tuple[str, ...], int] = {}

    def add(self, *values: str) -> None:
        counts = self.counts
        counts[values] = counts.get(values, 0) + 1

    def family(self) -> CounterMetricFamily:
        family = CounterMetricFamily(self.name, self.doc, labels=self.labels)
        for values, count in list(self.counts.items()):
            family.add_metric(list(values), count)
        return family


class Timings:
    """A histogram by label values, kept as plain numbers (see ``Tally``).

    >>> t = Timings("x_seconds", "Seconds", ["route"], (0.1, 1.0))
    >>> t.observe(0.05, "read"); t.observe(0.5, "read"); t.observe(5.0, "read")
    >>> [(s.name, s.labels.get("le"), s.value) for s in t.family().samples][:4]
    [('x_seconds_bucket', '0.1', 1), ('x_seconds_bucket', '1.0', 2), \
('x_seconds_bucket', '+Inf', 3), ('x_seconds_count', None, 3)]
    """

    def __init__(self, name: str, doc: str, labels: list[str],
                 buckets: tuple[float, ...]) -> None:
        self.name, self.doc, self.labels, self.buckets = name, doc, labels, buckets
        self.series: dict[tuple[str, ...], tuple[list[int], list[float]]] = {}

    def observe(self, seconds: float, *values: str) -> None:
        found = self.series.get(values)
        if found is None:
            found = self.series[values] = ([0] * (len(self.buckets) + 1), [0.0])
        found[0][bisect.bisect_left(self.buckets, seconds)] += 1
        found[1][0] += seconds

    def family(self) -> HistogramMetricFamily:
        family = HistogramMetricFamily(self.name, self.doc, labels=self.labels)
        for values, (counts, total) in list(self.series.items()):
            running, buckets = 0, []
            for bound, count in zip((*self.buckets, float("inf")), counts, strict=True):
                running += count
                buckets.append(("+Inf" if bound == float("inf") else repr(bound), running))
            family.add_metric(list(values), buckets, total[0])
        return family


class _Tallies(Collector):
    """The ``Tally`` and ``Timings`` of a registry, read when it is scraped."""

    def __init__(self, *kept: Tally | Timings) -> None:
        self.kept = kept

    def collect(self) -> Iterable[Metric]:
        for one in self.kept:
            yield one.family()


@dataclass
class Meters:
    """The request counters, in their own registry (one per app: tests build many)."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.commands = Tally("dicetable_commands", "Table commands answered, by kind and "
                              "HTTP status", ["kind", "status"])
        self.refusals = Tally("dicetable_refusals", "Requests refused, by the rule named "
                              "in the refusal", ["rule"])
        self.responses = Tally("dicetable_responses", "HTTP answers by status (503s "
                               "included; a 503 written by the protocol before the app "
                               "is in dicetable_load_refused)", ["status"])
        self.latency = Timings("dicetable_request_seconds", "Seconds from a request's "
                               "arrival at the app to its answer", ["route"], LATENCY_BUCKETS)
        r.register(_Tallies(self.commands, self.refusals, self.responses, self.latency))
        self.sockets = Counter("dicetable_websocket_connections", "WebSocket connections "
                               "by outcome (accepted; refused: closed or denied before "
                               "being accepted)", ["outcome"], registry=r)
        self.sockets_open = Gauge("dicetable_websocket_open", "WebSocket connections "
                                  "accepted and not yet ended", registry=r)
        self.socket_messages = Counter("dicetable_websocket_messages", "WebSocket messages "
                                       "by direction (out: pushed to the client; in: from "
                                       "it)", ["direction"], registry=r)
        self._children: dict[tuple[Any, ...], Any] = {}

    def child(self, metric: M, *values: str) -> M:
        """``metric.labels(*values)``, looked up once: ``labels`` checks its arguments and
        takes the metric's lock on every call."""
        found: M = shared(self._children, (metric, *values), lambda: metric.labels(*values))
        return found


def figures(floor: Floor, admission: Any, gate: Any, connections: Any,
            readiness: Readiness, pauses: CollectorPauses) -> dict[str, Any]:
    """The load view's numbers (``/api/floor/load``), which ``/metrics`` also exports."""
    tables = {tid: {"waiting": p.waiting, "refused_busy": p.stats.busy,
                    "batches": p.stats.batches, "commits": p.stats.commits,
                    "commands": p.stats.commands}
              for tid, info in sorted(floor.tables.items())
              if (p := info.pipeline) is not None}
    lag = readiness.lag()
    return {"in_flight": admission.in_flight, "admitted": admission.admitted,
            "strangers_in_flight": admission.strangers,
            "refused": admission.refused,
            "refused_retries": admission.retried,
            "refused_at_once": admission.at_once,
            "refusals_held": gate.impatience.held,
            "ms_per_answer": round(admission.per_answer * 1000, 3),
            "waiting_work_ms": round(admission.waiting_work() * 1000, 1),
            "loop_lag_ms": round(admission.lag * 1000, 1),
            "cpu": pinned(),
            "pipeline_depth": sum(t["waiting"] for t in tables.values()),
            "verification_lag_s": None if lag is None else round(lag, 3),
            "custody_alerts": len(floor.custody.open_alerts()),
            "faults": len(floor.faults.open),
            "limits": {"wait_ms": admission.max_wait * 1000,
                       "retry_hold_ms": gate.impatience.hold * 1000,
                       "resend_hold_ms": gate.impatience.resend * 1000,
                       "always_admitted": admission.floor,
                       "strangers_in_flight": admission.most_strangers,
                       "header_timeout_s": connections.header_timeout,
                       "body_timeout_s": connections.body_timeout,
                       "connections": connections.most,
                       "connections_per_client": connections.per_client},
            "connections": {"open": connections.open,
                            "refused": connections.refused,
                            "timed_out": connections.expired},
            "collector": pauses.figures(),
            "tables": tables}


class FloorCollector(Collector):
    """The floor's own figures, read when ``/metrics`` is scraped (never kept twice)."""

    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self.read = read

    def collect(self) -> Iterable[Metric]:
        f = self.read()
        yield _gauge("dicetable_in_flight", "Commands admitted and not yet answered",
                     f["in_flight"])
        yield _gauge("dicetable_strangers_in_flight", "Commands in flight whose session the "
                     "server did not remember when it admitted them", f["strangers_in_flight"])
        yield _gauge("dicetable_pipeline_depth", "Commands queued on the tables' pipelines",
                     f["pipeline_depth"])
        depth = GaugeMetricFamily("dicetable_table_queue", "Commands queued per table",
                                  labels=["table"])
        for tid, t in f["tables"].items():
            depth.add_metric([tid], t["waiting"])
        yield depth
        for what, doc in (("batches", "Batches the tables' pipelines decided (one commit "
                           "each when any of it was accepted)"),
                          ("commands", "Commands the tables' pipelines decided")):
            counted = CounterMetricFamily(f"dicetable_table_{what}", doc, labels=["table"])
            for tid, t in f["tables"].items():
                counted.add_metric([tid], t[what])
            yield counted
        lag = f["verification_lag_s"]
        yield _gauge("dicetable_verification_lag_seconds", "Seconds since the last verified "
                     "head (the last completed verification)", -1 if lag is None else lag)
        yield _gauge("dicetable_custody_alerts", "Open dice-custody alerts",
                     f["custody_alerts"])
        yield _gauge("dicetable_faults", "Open integrity faults", f["faults"])
        yield _gauge("dicetable_ms_per_answer", "Measured milliseconds of work per answer",
                     f["ms_per_answer"])
        yield _gauge("dicetable_loop_lag_seconds", "How late the event loop's heartbeats "
                     "come, averaged (how long what became ready waits for the loop)",
                     f["loop_lag_ms"] / 1000)
        yield _gauge("dicetable_connections_open", "Open connections",
                     f["connections"]["open"])
        yield _counter("dicetable_load_refused", "Commands refused for load (503; the load "
                       "view's refused)", f["refused"])
        yield _counter("dicetable_load_refused_retries", "Of those, the ones sent again at "
                       "once after a 503 on the same connection (clients spinning on their "
                       "refusals)", f["refused_retries"])
        yield _counter("dicetable_load_refused_at_once", "Of those, the ones sent as soon as "
                       "the connection's last answer came, a 503 or not (clients that wait "
                       "for each answer: refusing them lowers no load)", f["refused_at_once"])
        yield _counter("dicetable_load_refusals_held", "Of those, the ones written later "
                       "than read: a client sending again before its hold was over (the "
                       "resend hold, the retry hold)", f["refusals_held"])
        yield _counter("dicetable_connections_refused", "Connections refused (503) as they "
                       "were accepted", f["connections"]["refused"])
        paused = HistogramMetricFamily("dicetable_gc_pause_seconds", "The garbage "
                                       "collector's pauses while serving, by generation "
                                       "(each stops every answer)", labels=["generation"])
        longest = GaugeMetricFamily("dicetable_gc_longest_pause_seconds", "The garbage "
                                    "collector's longest pause while serving, by generation",
                                    labels=["generation"])
        for generation, g in f["collector"].items():
            total = g["pauses"]
            # cumulative buckets: the pauses within each bound (in seconds)
            within = [(f"{float(ms) / 1000:g}", total - over) for ms, over in
                      g["over_ms"].items()]
            paused.add_metric([generation], [*within, ("+Inf", total)], g["ms"] / 1000)
            longest.add_metric([generation], g["longest_ms"] / 1000)
        yield paused
        yield longest


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, value=value)


class Observer:
    """The ASGI layer outside the door (see the module's text)."""

    def __init__(self, door: ASGIApp, *, floor: Floor, readiness: Readiness, meters: Meters,
                 figures: Callable[[], dict[str, Any]], kinds: CommandKinds) -> None:
        self.door = door
        self.kinds = kinds
        self.floor = floor
        self.readiness = readiness
        self.meters = meters
        meters.registry.register(FloorCollector(figures))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._socket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.door(scope, receive, send)
            return
        path: str = scope["path"]
        if path in PROBES and scope["method"] in ("GET", "HEAD"):
            await self._probe(path, send)
            return
        started = time.perf_counter()
        seen = _Seen()
        method: str = scope["method"]
        table = table_of(path) if method in _COMMAND_VERBS else None
        if table is not None and path.endswith("/commands"):
            receive = _peek_command(receive, seen, self.kinds.commands)
        try:
            await self.door(scope, receive, seen.watch(send))
        finally:
            self._count(scope, method, path, table, seen, time.perf_counter() - started)

    def answered(self, scope: Scope, kind: str, table: str, status: int, body: bytes,
                 seconds: float) -> None:
        """A command of route ``kind`` (``bets/{bet}``) that the protocol answered itself
        (``bets_at_read``), counted as the door's are."""
        seen = _Seen()
        seen.status, seen.kind = status, kind
        if status >= 400:
            seen.body = body[:4096]
        self._count(scope, scope["method"], scope["path"], table, seen, seconds)

    def _count(self, scope: Scope, method: str, path: str, table: str | None, seen: _Seen,
               seconds: float) -> None:
        m = self.meters
        status = str(seen.status)
        kind = None
        if table is not None:
            kind = seen.kind or self.kinds(path)
            m.commands.add(kind, status)
            m.latency.observe(seconds, "command")
        else:
            m.latency.observe(seconds, "read")
        m.responses.add(status)
        rule = seen.rule()
        if rule is not None:
            m.refusals.add(rule)
        if REQUESTS.isEnabledFor(logging.INFO):
            headers = dict(scope["headers"])
            key = headers.get(b"idempotency-key")
            REQUESTS.info("request", extra={"fields": {
                "method": method, "path": path, "status": seen.status,
                "ms": round(seconds * 1000, 3), "table": table, "kind": kind,
                "idempotency_key": key.decode("latin-1") if key else None, "rule": rule}})

    async def _socket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A WebSocket passes through, its acceptance and its messages counted."""
        m = self.meters
        accepted = False

        async def sent(message: Message) -> None:
            nonlocal accepted
            if message["type"] == "websocket.accept" and not accepted:
                accepted = True
                m.sockets.labels("accepted").inc()
                m.sockets_open.inc()
            elif message["type"] == "websocket.send":
                m.child(m.socket_messages, "out").inc()
            await send(message)

        async def received() -> Message:
            message = await receive()
            if message["type"] == "websocket.receive":
                m.child(m.socket_messages, "in").inc()
            return message

        try:
            await self.door(scope, received, sent)
        finally:
            if accepted:
                m.sockets_open.dec()
            else:
                m.sockets.labels("refused").inc()

    async def _probe(self, path: str, send: Send) -> None:
        if path == "/healthz":
            await _reply(send, 200, b'{"status":"alive"}', _JSON)
        elif path == "/readyz":
            problems = self.readiness.problems(self.floor)
            lag = self.readiness.lag()
            body = orjson.dumps({"ready": not problems, "problems": problems,
                                 "verification_lag_s": lag,
                                 "faulted": sorted(self.floor.faults.open)})
            await _reply(send, 503 if problems else 200, body, _JSON)
        else:
            await _reply(send, 200, generate_latest(self.meters.registry), _METRICS_TYPE)


class _Seen:
    """What the answer to one request was: its status, and a refusal's body."""

    __slots__ = ("body", "kind", "status")

    def __init__(self) -> None:
        self.status = 500  # no answer started: the server failed
        self.body = b""
        self.kind: str | None = None

    def watch(self, send: Send) -> Send:
        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
            elif message["type"] == "http.response.body" and self.status >= 400 \
                    and len(self.body) < 4096:
                self.body += message.get("body", b"")
            await send(message)

        return watched

    def rule(self) -> str | None:
        """The rule a refusal (4xx/5xx JSON in the one error shape) named."""
        if self.status < 400 or not self.body:
            return None
        try:
            data = json.loads(self.body)
        except ValueError:
            return None
        rule = data.get("rule") if isinstance(data, dict) else None
        return rule if isinstance(rule, str) and rule else None


def _peek_command(receive: Receive, seen: _Seen, known: frozenset[str]) -> Receive:
    """``receive``, noting the ``command`` a generic command's body names as it passes (one
    of ``known``; any other is counted as ``commands``)."""
    async def peeking() -> Message:
        message = await receive()
        if seen.kind is None and message["type"] == "http.request":
            seen.kind = "commands"
            try:
                data = orjson.loads(message.get("body", b""))
            except orjson.JSONDecodeError:
                return message
            named = data.get("command") if isinstance(data, dict) else None
            if isinstance(named, str) and named in known:
                seen.kind = named
        return message

    return peeking


OTHER = "other"
"""The kind counted for a command path no route takes."""


class CommandKinds:
    """The kind a table command is counted under: the route its path takes, named by its
    template under ``/api/tables/{table_id}/`` (``bets``, ``bets/{bet}``, ``money/buy-in``),
    else ``OTHER``. Never a part of the path as sent: a bet's id, or any path a client makes
    up, would each be one more series kept for ever (an unauthenticated client could grow
    the registry without end).

    >>> kinds = CommandKinds(lambda: ["/api/tables/{table_id}/bets",
    ...                                "/api/tables/{table_id}/bets/{bet}", "/api/me"])
    >>> [kinds(p) for p in ("/api/tables/t1/bets", "/api/tables/t1/bets/b17",
    ...                     "/api/tables/t1/b17", "/api/tables/t1/bets/b17/x")]
    ['bets', 'bets/{bet}', 'other', 'other']
    """

    PREFIX = "/api/tables/{table_id}/"

    def __init__(self, templates: Callable[[], Iterable[str]],
                 commands: frozenset[str] = frozenset()) -> None:
        self._templates = templates
        self.commands = commands
        """The generic route's command names, each counted as its own kind."""
        self._exact: dict[str, str] | None = None
        self._patterns: list[tuple[re.Pattern[str], str]] = []

    def __call__(self, path: str) -> str:
        if self._exact is None:  # the routes are all in once the app serves
            self._learn()
        assert self._exact is not None
        parts = path.split("/", 4)
        suffix = parts[4] if len(parts) == 5 else ""
        found = self._exact.get(suffix)
        if found is not None:
            return found
        for pattern, template in self._patterns:
            if pattern.fullmatch(suffix):
                return template
        return OTHER

    def _learn(self) -> None:
        exact: dict[str, str] = {}
        for path in self._templates():
            if not path.startswith(self.PREFIX):
                continue
            template = path.removeprefix(self.PREFIX)
            if "{" in template:
                pattern = re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template))
                self._patterns.append((re.compile(pattern), template))
            else:
                exact[template] = template
        self._exact = exact


async def _reply(send: Send, status: int, body: bytes, kind: tuple[bytes, bytes]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [kind, (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


class JsonLines(logging.Formatter):
    """One JSON object per log record: time, level, logger, message and any ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name,
            "message": record.getMessage()}
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


LOG_FORMATS = ("text", "json")
LOG_ENV = "DICETABLE_LOG_FORMAT"


def configure_logging(fmt: str, stream: Any = None) -> None:
    """``--log-format``: ``json`` gives one JSON line per record, a line per request among
    them; ``text`` keeps the plain warnings-and-errors log (no line per request)."""
    if fmt not in LOG_FORMATS:
        raise InvalidInput(f"--log-format is one of {', '.join(LOG_FORMATS)}, not {fmt!r}",
                           rule="server.log_format")
    root = logging.getLogger()
    handler = logging.StreamHandler(stream)
    if fmt == "json":
        handler.setFormatter(JsonLines())
        root.setLevel(logging.WARNING)
        REQUESTS.setLevel(logging.INFO)
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: "
                                               "%(message)s"))
        root.setLevel(logging.WARNING)
    root.handlers[:] = [handler]

