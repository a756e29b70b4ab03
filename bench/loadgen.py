"""An efficient load generator: raw HTTP/1.1 keep-alive over asyncio streams (uvloop when
installed), one connection per client, latency per request, and its own CPU share.

The generator must not compete with the server for the CPU: ``load_bench`` pins it to a
different core from the server (``taskset``/``sched_setaffinity``) and reports what share of
its core it used, beside the figures.

An open-loop share runs as a process of its own (``python -m bench.loadgen SPEC OUT``,
``open_loop``): it opens its connections, says ``ready`` and reads the schedule's start (a
``time.monotonic`` instant, the same clock in every process) from its standard input; then
the requests due at ``rate`` from then, every ``shares``-th of them from index ``share``, each sent
when due over a free keep-alive connection (or a new one, up to ``most``); latencies count
from when a request was due. It writes the latencies by outcome, when each accepted one was
sent (from the start), how late each request was sent (its own lag: a generator that cannot
keep up shows it here, not as the server's latency), its CPU seconds and the bets
acknowledged per path. Its requests are bets taken in turn, each placed or, when its turn
before placed it, taken down (``bet_turn``): the schedule can wrap round its list and every
request stays one the rules accept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def proc_cpu_seconds(pid: int, thread: int | None = None) -> float:
    """A process's user + system CPU seconds, from /proc (the server's share); ``thread``:
    that one thread's (the process's own id: its main thread)."""
    with open(f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(parts[11]) + int(parts[12])) / ticks


@dataclass
class Stats:
    """Latencies (seconds) by outcome, and what went wrong."""

    ok: list[float] = field(default_factory=list)
    busy: list[float] = field(default_factory=list)
    busy_sent: list[float] = field(default_factory=list)
    ok_sent: list[float] = field(default_factory=list)
    """Accepted requests' latency from when they were sent (not when they were due)."""
    refused: int = 0
    taken_down: int = 0
    """Accepted requests that took a bet down (``bet_turn``); the other accepted placed one."""
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)

    def error(self, what: str) -> None:
        self.errors += 1
        self.error_kinds[what] = self.error_kinds.get(what, 0) + 1


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def ms(x: float) -> str:
    return "   n/a" if x != x else f"{x * 1000:7.1f}"


class Connection:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port = host, port
        self.auth = f"Authorization: Bearer {token}\r\n".encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(self, method: str, path: str, body: Any = None
                      ) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            await self.open()
        assert self.reader is not None
        assert self.writer is not None
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n").encode() + self.auth
        if body is not None:
            head += b"Content-Type: application/json\r\n"
        head += f"Content-Length: {len(data)}\r\n\r\n".encode()
        self.writer.write(head + data)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0"))
        payload = await self.reader.readexactly(length) if length else b""
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, headers, payload

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None


BET_ID = re.compile(rb'"bet":"([^"]+)"')
"""A bet's id in the reply to its placement (the BetPlaced event's ``bet``)."""


async def bet_turn(conn: Connection, path: str, body: Any, held: dict[Any, str], key: Any
                   ) -> tuple[int, bool]:
    """One turn of a bet cycle that can go on for ever, every request a command the rules
    accept: the bet ``body`` (a wager the player may take down again, ``load_bench.spots``) is
    placed at ``path`` (``/api/tables/T/bets``), or, when an earlier turn on ``key`` placed it
    (``held``: key -> bet id), taken down (``DELETE path/ID``), which gives its chips back,
    commission and all. Without a cycle a player who holds every spot is refused every bet
    after, and a closed loop measures how fast refusals are decided. The status, and whether
    the turn was a placement."""
    bet = held.pop(key, None)
    if bet is None:
        status, _, reply = await conn.request("POST", path, body)
        found = BET_ID.search(reply) if status == 200 else None
        if found is not None:  # (the bare ceiling app's reply names none: it only places)
            held[key] = found.group(1).decode()
        return status, True
    try:
        status, _, _ = await conn.request("DELETE", f"{path}/{bet}")
    except BaseException:
        held[key] = bet  # perhaps still placed: a refusal next turn (no such bet) settles it
        raise
    if status not in (200, 409, 422):  # shed (503) or failed: still on the layout
        held[key] = bet
    return status, False


def install_uvloop() -> str:
    try:
        import uvloop
    except ImportError:
        return "asyncio"
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return "uvloop"


def report(name: str, stats: Stats, seconds: float, gen_cpu: float, server_cpu: float,
           lost: int, extra: str = "", wall: float | None = None) -> dict[str, Any]:
    """One scenario's line; the CPU shares are over ``wall`` (the whole run, warm-up too)."""
    accepted = len(stats.ok)
    wall = wall or seconds
    answered = accepted + len(stats.busy) + stats.refused + stats.errors
    share = len(stats.busy) / answered if answered else 0.0
    line = {
        "scenario": name, "accepted": accepted, "per_s": accepted / seconds if seconds else 0,
        "p50_ms": pct(stats.ok, 50) * 1000, "p99_ms": pct(stats.ok, 99) * 1000,
        "p999_ms": pct(stats.ok, 99.9) * 1000, "busy": len(stats.busy), "busy_share": share,
        "busy_p99_ms": pct(stats.busy, 99) * 1000, "refused": stats.refused,
        "taken_down": stats.taken_down,
        "errors": stats.errors, "lost": lost,
        "generator_cpu": gen_cpu / wall, "server_cpu": server_cpu / wall,
    }
    downs = f" ({stats.taken_down} of them take-downs)" if stats.taken_down else ""
    print(f"  {name:<34} accepted {accepted / seconds:7.0f}/s{downs}  503s {len(stats.busy)} "
          f"({100 * share:.1f}%)  refused {stats.refused}  p50 {ms(pct(stats.ok, 50))}  "
          f"p99 {ms(pct(stats.ok, 99))}  "
          f"p99.9 {ms(pct(stats.ok, 99.9))} ms  errors {stats.errors}  lost {lost}  "
          f"gen CPU {100 * gen_cpu / wall:3.0f}%  server CPU {100 * server_cpu / wall:3.0f}%"
          + (f"  {extra}" if extra else ""), flush=True)
    if stats.error_kinds:
        print(f"  {'':<34} errors by kind: {stats.error_kinds}", flush=True)
    return line


def now() -> float:
    return time.perf_counter()


_BARE_BODY = b'{"ok":true}'
_BARE_HEAD = [(b"content-type", b"application/json"),
              (b"content-length", str(len(_BARE_BODY)).encode())]


async def bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The ceiling: a bare ASGI app that reads the request and answers 200, on the same
    uvicorn as the server (``load_bench`` serves it as ``bench.loadgen:bare_app``)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": _BARE_HEAD})
    await send({"type": "http.response.body", "body": _BARE_BODY})


async def open_loop(spec: dict[str, Any]) -> dict[str, Any]:
    """One share of an open-loop schedule (see the module's text); ``spec``: ``port``,
    ``rate`` (requests a second in all shares), ``seconds``, ``share``, ``shares``,
    ``requests`` (``[path, token, body]``, bets taken in turn, ``bet_turn``), ``fleet`` and
    ``most`` (connections opened first, and at most)."""
    port, rate, shares = spec["port"], spec["rate"], spec["shares"]
    requests = spec["requests"]
    out: dict[str, Any] = {"ok": [], "ok_sent": [], "ok_at": [], "busy": [], "busy_sent": [],
                           "busy_at": [], "late": [], "refused": 0, "taken_down": 0,
                           "errors": {}, "acked": {}}
    held: dict[Any, str] = {}  # a request's bet, placed: taken down on its next turn
    fleet = asyncio.Queue[Connection]()
    made = [0]
    for _ in range(spec["fleet"]):
        conn = Connection("127.0.0.1", port, "x")
        await conn.open()
        fleet.put_nowait(conn)
        made[0] += 1

    async def one(k: int, due: float) -> None:
        path, token, body = requests[k % len(requests)]
        if fleet.empty() and made[0] < spec["most"]:
            made[0] += 1
            conn = Connection("127.0.0.1", port, "x")
        else:
            conn = await fleet.get()
        conn.auth = f"Authorization: Bearer {token}\r\n".encode()
        sent = time.monotonic()
        out["late"].append(sent - due)
        try:
            status, placing = await bet_turn(conn, path, body, held, k % len(requests))
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            kind = type(e).__name__
            out["errors"][kind] = out["errors"].get(kind, 0) + 1
            await conn.close()
            fleet.put_nowait(conn)
            return
        done = time.monotonic()
        if status == 200:
            out["ok"].append(done - due)
            out["ok_sent"].append(done - sent)
            out["ok_at"].append(sent - start)
            if placing:
                out["acked"][path] = out["acked"].get(path, 0) + 1
            else:
                out["taken_down"] += 1
        elif status == 503:
            out["busy"].append(done - due)
            out["busy_sent"].append(done - sent)
            out["busy_at"].append(sent - start)
        elif status in (409, 422):
            out["refused"] += 1
        else:
            out["errors"][f"HTTP {status}"] = out["errors"].get(f"HTTP {status}", 0) + 1
        fleet.put_nowait(conn)

    # Ready once the fleet is open; the schedule's start (a ``time.monotonic`` instant shared
    # by every share) comes back on standard input.
    print("ready", flush=True)
    start = float(sys.stdin.readline())
    c0 = cpu_seconds()
    # Only the requests still unanswered are kept: gathering every task of the schedule at
    # its end (75,000 in (d)) queued a callback for each one already done in a single turn
    # of the loop, and the last answers waited behind them, counted as the server's latency.
    pending: set[asyncio.Task[None]] = set()
    for k in range(spec["share"], int(rate * spec["seconds"]), shares):
        due = start + k / rate
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(one(k, due))
        pending.add(task)
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)
    out["cpu"] = cpu_seconds() - c0
    out["wall"] = time.monotonic() - start
    out["connections"] = made[0]
    while not fleet.empty():
        await fleet.get_nowait().close()
    return out


def _main(spec_path: str, out_path: str) -> None:
    with open(spec_path) as f:
        spec = json.load(f)
    install_uvloop()
    import gc

    gc.disable()  # a collection mid-window would count as the server's latency
    result = asyncio.run(open_loop(spec))
    with open(out_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])
