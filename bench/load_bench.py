"""The table server under load, honestly measured: server and generator on different cores.

A real server process (``uvicorn`` on the ``dicetable.server.main`` factory, SQLite with
``synchronous=FULL``) is pinned to one core with ``taskset``; this generator pins itself to
another and drives it with raw HTTP/1.1 keep-alive (``bench.loadgen``) and WebSocket clients,
reporting its own CPU share and the server's beside the figures. Every table is warmed (its
pack compiled, a first bet taken) before anything is measured.

Scenarios:

(a) 200 clients betting on 4 electronic tables, each as fast as it is answered, going round
    its players' spots (each placed, then taken down on its next turn: bets only for some
    30 s at 2,000 bets/s, then take-downs and bets by turns; never a refusal);
(b) 1,000 players on one electronic table, each placing its bets in a 10 s window before the
    close (more of them the nearer the close);
(c) 1,000 WebSocket viewers of one table, players who bought in for different amounts, and
    the dealer's console: time from the command that makes a public event to the last viewer
    receiving it (an upper bound of commit-to-last-delivery), and from its acknowledgement;
    then the same for the rolls (each player's own part changes);
(d) 2x overload, open loop at twice what (a) reached: the share of 503s, their latency, and the
    latency of the accepted (the same cycle: a bet that was placed is taken down when its
    request comes round again, after some 65,000).

Each prints throughput (and how many of the accepted took a bet down), the 503s, the refusals
(409/422), p50, p99, p99.9, errors and lost (bets acknowledged but not in the log),
then the same for other designs (``--baseline REF,REF``, default ``main``: each commit's
``src`` exported with ``git archive`` and served the same way) where they still run. Before
the designs, (a)'s clients drive a bare ASGI app on the same uvicorn (``bench.loadgen.bare_app``):
the ceiling. With ``--rounds N`` the ceiling and the designs run in turn N times. The headline
gives, per round, every scenario's accepted/s, its 503s and their share, its refusals, p99,
and (a)'s accepted/s as a share of that round's ceiling. ``--quick`` runs (a) and (d) for a
second each (and the ceiling), (b) and (c) with 20 players: seconds in all, so that CI notices a
benchmark that no longer runs.

With ``--pit`` this tree is also served as the design "this+pit": the same floor with the
four bench tables' banks open and a pit console asking each table's bank every second (as
``pit-bank.js`` does): the cost of tracking the bank, side by side with "this" in one run.
With ``--variant LABEL:NAME=VALUE,...`` this tree is served again as LABEL with more
environment (``DICETABLE_SHED_WAIT_MS=20``, say), in turn with the others: a setting measured
side by side with its default.

    .venv/bin/python -m bench.load_bench [--seconds 10] [--baseline main,REF|none]
        [--rounds 1] [--only abcd] [--quick] [--pit] [--variant LABEL:NAME=VALUE,...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import json
import os
import random
import re
import resource
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher

from bench import spy
from bench.loadgen import (
    Connection,
    Stats,
    bet_turn,
    cpu_seconds,
    install_uvloop,
    now,
    pct,
    proc_cpu_seconds,
    report,
)
from bench.loadgen import ms as fmt_ms
from bench.ws_viewer import OnMessage, Viewer
from dicetable.application.accounts import Kind
from dicetable.cli.serve import HTTP_PROTOCOL
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.server.demo import DEMO_PASSWORD, electronic_pack
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from dicetable.store.keys import default_key_path
from dicetable.table import Table

JOINED = re.compile(rb'\{[^{}]*"type":"PlayerJoined"[^{}]*\}')
ROLLED = re.compile(rb'"type":"DiceRolled","seq":(\d+),"actor":"[^"]*","role":"[^"]*",'
                    rb'"at":"([^"]+)"')
ROLL_BET_SECONDS = 2
"""The electronic tables' countdown while the rolls are watched (c, a roll)."""
BENCH_TABLES = ("bench-1", "bench-2", "bench-3", "bench-4")
STADIUM, ARENA = "stadium", "arena"
CHIPS = 100_000_000
PIT = "fran"
"""The demo floor's floorperson: the pit console that follows the banks (``--pit``)."""
DEALER = "dee"
"""The tables' dealer: their console watches the arena with its 1,000 players (c)."""


def arena_chips(i: int) -> int:
    """The arena's players buy in as a crowd does, each for a different amount ($100 to about
    $20,000): what each can afford, and so each one's own part, differs."""
    return 100_00 + (i * 7_919_00) % 2_000_000
SERVER_CORE, GENERATOR_CORE = 0, 1
GENERATORS = 2
"""Processes sending (d)'s open-loop schedule, each its share."""
ONSET = 0.5
"""Seconds at the start of (d) whose accepted latency is also shown apart."""
A = "(a) 200 clients, 4 tables"
CEILING = "(a) on a bare ASGI app (ceiling)"
D = "(d) 2x overload"


# -- the floor ---------------------------------------------------------------------------------
def spots(removable: bool = False) -> list[tuple[str, int]]:
    """Every (wager, amount) a fresh player may place together on the come-out; ``removable``:
    only those it may take down again there too (a bet cycle's, ``loadgen.bet_turn``: not the
    Fire Bet, All Small, All Tall or Make 'Em All)."""
    t = Table.open(electronic_pack(), "probe", mode="bare")
    t.join("p")
    t.buy_in("p", CHIPS)
    out = []
    placed = []
    pack = t.pack
    for code in pack.menu_in_order:
        if code == "odds":
            continue
        limits, _ = pack.limits(code)
        for amount in (limits.minimum, limits.minimum * 6, 30 * limits.unit, 60 * limits.unit):
            try:
                placed.append(t.bet("p", code, amount))
            except ValueError:
                continue
            out.append((code, amount))
            break
    if not removable:
        return out
    kept = []
    for spot, bet in zip(out, placed, strict=True):
        try:
            t.remove(bet)
        except ValueError:
            continue
        kept.append(spot)
    return kept


def prepare(db: Path, groups: dict[str, list[str]]) -> dict[str, str]:
    """The demo floor, the bench tables, and players seated with chips; returns the session
    tokens."""
    floor, _ = build_floor(db)
    pack = electronic_pack()
    for table in [*BENCH_TABLES, STADIUM, ARENA]:
        floor.open_table(pack, table, mode="electronic", opener="fran",
                         staff={"dee": Role.DEALER})
    banks = getattr(importlib.import_module("dicetable.server.bank_floor"), "banks_of", None)
    if banks is not None:  # the bench tables' banks, for the pit (``--pit``)
        for table in BENCH_TABLES:
            banks(floor).start(table)
    tokens = seated(floor, groups)
    floor, _ = build_floor(db)
    tokens[PIT] = floor.accounts.open_session(PIT)
    floor.close()
    floor.store.close()
    floor.accounts.close()
    return tokens


def _seat(db: Path, groups: dict[str, list[str]]) -> dict[str, str]:
    """More players seated at tables that already exist (accounts, sessions, chips)."""
    floor, _ = build_floor(db)
    return seated(floor, groups)


def run_chore(floor: Floor, table: str, build: Callable[[], Any]) -> None:
    """The table's own commands, waited for, through the floor of the tree under test: a
    baseline's ``Floor.run`` or this tree's ``Floor.submit(table, Chore(...))``."""
    chore = getattr(importlib.import_module("dicetable.server.floor"), "Chore", None)
    if chore is None:  # a baseline from before the one way in
        old: Any = floor
        old.run(table, build)
    else:
        floor.submit(table, chore(build)).result()


def seated(floor: Floor, groups: dict[str, list[str]]) -> dict[str, str]:
    """Accounts for ``groups`` (table -> player names; table "" seats nobody), each with a
    session, seated with chips; closes the floor and returns the tokens. (Accounts get one
    shared Argon2 hash and their sessions directly: 4,000 logins' worth of Argon2 is not what
    is measured.)"""
    hashed = PasswordHasher().hash(DEMO_PASSWORD)
    tokens: dict[str, str] = {}
    for table, names in groups.items():
        setup: list[g.Command] = []
        for name in names:
            floor.accounts.create(name, "", Kind.PLAYER, password_hash=hashed)
            tokens[name] = floor.accounts.open_session(name)
            if table:
                chips = arena_chips(len(setup) // 2) if table == ARENA else CHIPS
                setup += [g.JoinTable(actor=name, role=Role.PLAYER, player=name),
                          g.BuyChips(actor="table", role=Role.SYSTEM, player=name,
                                     amount=chips)]
        if table == ARENA:  # the dealer's console, a viewer like the players
            tokens[DEALER] = floor.accounts.open_session(DEALER)
        for i in range(0, len(setup), 2000):
            chunk = setup[i:i + 2000]
            run_chore(floor, table, lambda c=chunk: c)  # type: ignore[misc]
    floor.close()
    floor.store.close()
    floor.accounts.close()
    return tokens


# -- the server --------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_protocol(src: Path | None) -> str:
    """``dicetable serve``'s HTTP protocol, where the design served has one."""
    root = src or Path(__file__).resolve().parent.parent / "src"
    if (root / "dicetable" / "server" / "refusing_http.py").exists():
        return HTTP_PROTOCOL
    return "httptools"


def door_of(src: Path | None) -> bool:
    """Does the design served do proxy headers at its own door (``server.door``)?"""
    root = src or Path(__file__).resolve().parent.parent / "src"
    return (root / "dicetable" / "server" / "door.py").exists()


BARE_APP = "bench.loadgen:bare_app"
"""The ceiling: a bare ASGI app answering 200 on the same uvicorn, same generator."""
SERVER_ENV: dict[str, str] = {}
"""More environment for every design's server (``--server-env``)."""
_BUCKET, _COMMAND = b'dicetable_request_seconds_bucket{le="', b',route="command"}'
"""A line of the commands' latency histogram in ``/metrics``: its start and its end."""
_GC = b"dicetable_gc_pause_seconds_"
_GC_LINE = re.compile(rb'dicetable_gc_pause_seconds_(?P<what>count|sum|bucket)'
                      rb'\{generation="(?P<gen>\d)"(?:,le="(?P<le>[^"]+)")?\}')
"""The collector's figures read (``server.collector_pauses``; a design without them has none)."""


_SPINNING = {b"dicetable_load_refused_total": "refused",
             b"dicetable_load_refused_retries_total": "retried",
             b"dicetable_load_refused_at_once_total": "at_once",
             b"dicetable_load_refusals_held_total": "held"}
"""The refusals for load, and those of clients spinning on them (``server_figures``)."""


def figures_said(seen: dict[str, list[float]]) -> list[str]:
    """What the server's ``/metrics`` said during a scenario (``server_figures``): the
    commands in flight, its cost estimate and its event loop's lag (a design older than a
    gauge has none of it)."""
    out: list[str] = []
    if seen.get("in_flight"):
        flights, costs = seen["in_flight"], seen["ms_per_answer"]
        out.append(f"the server's own figures ({len(flights)} reads of /metrics): in flight "
                   f"p50 {pct(flights, 50):.0f}, max {max(flights):.0f}; its cost estimate "
                   f"{costs[-1]:g} ms per answer at the end")
    if seen.get("strangers"):
        strangers = seen["strangers"]
        out.append("of them, strangers (their session not remembered when admitted) by "
                   "half-second: "
                   + " ".join(f"{x:.0f}" for x in strangers[:8])
                   + (" ..." if len(strangers) > 8 else ""))
    if seen.get("loop_lag"):
        lags = [1000 * x for x in seen["loop_lag"]]
        out.append(f"its event loop's lag p50 {pct(lags, 50):.1f}, max {max(lags):.1f} ms")
    if seen.get("batches") and seen["batches"][1] > seen["batches"][0]:
        batches = seen["batches"][1] - seen["batches"][0]
        commands = seen["commands"][1] - seen["commands"][0]
        out.append(f"the tables decided {commands / batches:.1f} commands per batch "
                   f"({batches:.0f} batches)")
        by_half = [f"{(c1 - c0) / (b1 - b0):.0f}/{b1 - b0:.0f}" for b0, b1, c0, c1 in zip(
            seen["batch series"], seen["batch series"][1:], seen["command series"],
            seen["command series"][1:], strict=False) if b1 > b0][:8]
        if by_half:
            out.append("commands per batch/batches by half-second: " + " ".join(by_half))
    paused = []
    for gen in "012":
        if f"gc count {gen}" not in seen:
            continue
        count, spent, brief = (seen[f"gc {what} {gen}"][1] - seen[f"gc {what} {gen}"][0]
                               for what in ("count", "sum", "bucket"))
        if count:
            paused.append(f"generation {gen} {count:.0f} times, {1000 * spent:.0f} ms in all "
                          f"({count - brief:.0f} over 20 ms)")
    if paused:
        out.append("the collector paused it: " + ", ".join(paused))
    refused, at_once, retried, held = (seen[k][1] - seen[k][0] if k in seen else None
                                       for k in ("refused", "at_once", "retried", "held"))
    if refused:
        out.append(f"its refusals for load from its first /metrics on: {refused:.0f}, of "
                   f"which sent as soon as answered {at_once:.0f}, after a 503 {retried:.0f}, "
                   f"and written later than read (held) {held:.0f}"
                   if None not in (at_once, retried, held)
                   else f"its refusals for load from its first /metrics on: {refused:.0f}")
    within = {le: counts[-1] - counts[0] for key, counts in seen.items()
              if key.startswith("le ") for le in [key[3:]]}
    total = within.get("+Inf", 0.0)
    if total > 0 and "0.1" in within and "0.25" in within:
        out.append(f"commands from their arrival at the app to their answer: over 100 ms "
                   f"{100 * (total - within['0.1']) / total:.1f}%, over 250 ms "
                   f"{100 * (total - within['0.25']) / total:.1f}% of {total:.0f}")
    return out


class Server:
    def __init__(self, db: Path, src: Path | None, *, app: str | None = None,
                 **more_env: str) -> None:
        self.port = free_port()
        # One load generator stands in for thousands of clients: not bounded as one client.
        env = dict(os.environ, DICETABLE_DB=str(db), DICETABLE_ELECTRONIC="0",
                   DICETABLE_MAX_CONNECTIONS="16384",
                   DICETABLE_MAX_CONNECTIONS_PER_CLIENT="16384")
        env.update(more_env)
        if src is not None:  # the baseline's own package first
            env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
        target = ["--factory", "dicetable.server.main:app_from_env"] if app is None else [app]
        proxies: list[str] = []
        if app is None and door_of(src):
            # The same work as uvicorn's proxy-header middleware (which trusts loopback by
            # default, as the other designs are served here), done at the app's own door.
            env.setdefault("DICETABLE_FORWARDED_ALLOW_IPS", "127.0.0.1")
            proxies = ["--no-proxy-headers"]
        cmd = ["taskset", "-c", str(SERVER_CORE), sys.executable, "-m", "uvicorn",
               *target, "--host", "127.0.0.1",
               "--port", str(self.port), "--log-level", "warning", "--no-access-log",
               "--loop", "uvloop", "--http", http_protocol(src) if app is None
               else "httptools", "--ws", "websockets",
               "--ws-per-message-deflate", "false", "--backlog", "4096",
               "--timeout-keep-alive", "300", *proxies]
        # its warnings go to a file: a pipe nobody reads fills and stops the server
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed by ``stop``)
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                     stderr=self.errors)
        deadline = time.monotonic() + 600  # a loaded machine: verifying the floor takes long
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.errors.seek(0)
                err = self.errors.read().decode(errors="replace")
                raise RuntimeError(f"the server exited: {err[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start")

    def cpu(self) -> float:
        return proc_cpu_seconds(self.proc.pid)

    def loop_cpu(self) -> float:
        """Its main thread's CPU seconds: the event loop's (the tables' threads and the
        store's writer are the rest)."""
        return proc_cpu_seconds(self.proc.pid, self.proc.pid)

    def said(self, chars: int = 1500) -> str:
        """The end of what the server wrote to its stderr (a traceback, for an HTTP 500)."""
        self.errors.flush()
        self.errors.seek(0)
        return self.errors.read().decode(errors="replace")[-chars:]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.errors.close()


def logged_bets(db: Path, tables: list[str]) -> int:
    with sqlite3.connect(db) as conn:
        marks = ",".join("?" * len(tables))
        row = conn.execute(f"SELECT count(*) FROM event_log WHERE kind = 'BetPlaced' AND "
                           f"table_id IN ({marks})", tables).fetchone()
    return int(row[0])


# -- scenarios ---------------------------------------------------------------------------------
class Run:
    def __init__(self, label: str, server: Server, db: Path | None, tokens: dict[str, str],
                 groups: dict[str, list[str]], seconds: float, warmup: float = 2.0) -> None:
        self.label, self.server, self.db = label, server, db
        self.tokens, self.groups, self.seconds = tokens, groups, seconds
        self.warmup = warmup
        self.window_cpu: float | None = None
        self.window_loop = 0.0
        """The server's event loop's CPU seconds in the same window (its main thread)."""
        self.child_cpu = 0.0
        """CPU seconds of the generator processes of the scenario being measured."""
        """The server's CPU seconds in (a)'s counted window."""
        self.spots = spots()
        self.cycle = spots(removable=True)
        """(a)'s and (d)'s spots: placed and taken down by turns, for as long as they run."""
        self.acked: dict[str, int] = {}
        self.profile = False
        self.sampler: Any = None
        self.results: dict[str, dict[str, Any]] = {}
        self.pit = False
        """A pit console asks each bench table's bank every second during (a)."""
        self.pit_views = 0

    def conn(self, name: str) -> Connection:
        return Connection("127.0.0.1", self.server.port, self.tokens[name])

    async def warm(self, tables: list[str]) -> None:
        """A first bet, taken down again (the player a client's, who must find the spot
        free), and a view on every table: nothing compiles inside the window."""
        for table in tables:
            name = self.groups[table][-1]
            c = self.conn(name)
            await c.request("GET", f"/api/tables/{table}")
            held: dict[str, str] = {}
            for _ in range(2):
                await bet_turn(c, f"/api/tables/{table}/bets", {"wager": "field", "amount": 1_00},
                               held, "field")
            await c.close()

    def lost(self, tables: list[str], before: int) -> int:
        if self.db is None:  # the bare ceiling keeps nothing
            return 0
        return max(0, sum(self.acked.get(t, 0) for t in tables)
                   - (logged_bets(self.db, tables) - before))

    async def measure(self, name: str, work: Callable[[Stats], Awaitable[float]],
                      tables: list[str], extra: Callable[[], str] = lambda: "",
                      sample_later: bool = False) -> None:
        """``sample_later``: the work starts the profile itself (``sample``), once its set-up
        is done, so that the profile shows the measured part."""
        before = logged_bets(self.db, tables) if self.db is not None else 0
        for t in tables:
            self.acked[t] = 0
        stats = Stats()
        g0, s0, w0 = cpu_seconds(), self.server.cpu(), now()
        self.sampler = None
        if not sample_later:
            self.sample()
        # The generator's own collector must not pause it mid-window: a full collection of
        # its heap (the latencies recorded, the tasks) held its loop for up to 700 ms in (d),
        # and that counted as the server's latency. What is live now is frozen out of the
        # collector's reach, and it collects again only after the window.
        gc.collect()
        gc.freeze()
        gc.disable()
        try:
            seconds = await work(stats)
        finally:
            gc.enable()
            gc.unfreeze()
        g1, s1, w1 = cpu_seconds() + self.child_cpu, self.server.cpu(), now()
        self.child_cpu = 0.0
        self.results[name] = report(f"{name} [{self.label}]", stats, seconds, g1 - g0, s1 - s0,
                                    self.lost(tables, before), extra(), wall=w1 - w0)
        if self.window_cpu is not None:
            answered = len(stats.ok) + len(stats.busy) + stats.refused + stats.errors
            self.results[name]["cpu_ms_per_answer"] = 1000 * self.window_cpu / max(1, answered)
            self.results[name]["cpu_ms_per_accepted"] = 1000 * self.window_cpu / max(
                1, len(stats.ok))
            self.results[name]["loop_share"] = self.window_loop / self.window_cpu \
                if self.window_cpu else None
            self.window_cpu = None
        spy.finish(self.sampler)

    def sample(self) -> None:
        if self.profile:
            self.sampler = spy.start(self.server.proc.pid, self.seconds)

    # (a) -------------------------------------------------------------------------------------
    async def scenario_a(self, clients: int = 200, name: str = A) -> None:
        """``name`` ``CEILING``: the same clients against the bare ASGI app."""
        tables = list(BENCH_TABLES)
        players = [(t, p) for t in tables for p in self.groups[t]]
        per_client = max(1, len(players) // clients)
        if name != CEILING:
            await self.warm(tables)
        said: list[str] = []  # the server's own figures (``figures``), for the scenario's line

        async def work(stats: Stats) -> float:
            start = now()
            warm_until, stop_at = start + self.warmup, start + self.warmup + self.seconds

            async def client(i: int) -> None:
                mine = [players[(i * per_client + k) % len(players)]
                        for k in range(per_client)]
                conn = Connection("127.0.0.1", self.server.port, "x")
                # Each client goes round its players' spots until the window ends, a spot
                # placed on one turn and taken down on the next (a client that ran out of
                # bets would count idle time, one that kept betting would be refused): bets
                # only, for its players' 65 spots each (5 players: ~30 s at 2,000 bets/s in
                # all), then take-downs and bets by turns. The bare app's replies name no bet:
                # its clients only place.
                held: dict[tuple[str, bytes, str], str] = {}
                while True:
                    for code, amount in self.cycle:
                        for table, player in mine:
                            if now() >= stop_at:
                                await conn.close()
                                return
                            conn.auth = (f"Authorization: Bearer {self.tokens[player]}\r\n"
                                         .encode())
                            await self.bet(conn, stats, table, code, amount,
                                           now() >= warm_until, held=held)

            async def window_cpu() -> None:
                # The server's CPU seconds within the counted window: CPU per answer is a
                # figure that a machine shared with other work disturbs far less than rates.
                await asyncio.sleep(max(0.0, warm_until - now()))
                c0, l0 = self.server.cpu(), self.server.loop_cpu()
                await asyncio.sleep(max(0.0, stop_at - now()))
                self.window_cpu = self.server.cpu() - c0
                self.window_loop = self.server.loop_cpu() - l0

            async def pit() -> None:
                conn = self.conn(PIT)
                while now() < stop_at:
                    for table in tables:
                        status, _, _ = await conn.request("GET", f"/api/bank/{table}")
                        if status != 200:
                            raise RuntimeError(f"the pit's view of {table}: HTTP {status}; "
                                               f"the server said: {self.server.said()}")
                        self.pit_views += 1
                    await asyncio.sleep(1.0)
                await conn.close()

            pits = [pit()] if self.pit and name != CEILING else []
            async with self.figures(name, said):
                await asyncio.gather(window_cpu(), *pits,
                                     *(client(i) for i in range(clients)))
            return min(now(), stop_at) - warm_until

        await self.measure(name, work, tables, lambda: "; ".join(said))

    async def bet(self, conn: Connection, stats: Stats, table: str, code: str, amount: int,
                  counted: bool, since: float | None = None,
                  held: dict[tuple[str, bytes, str], str] | None = None) -> int:
        """A bet, or with ``held`` a turn of a bet cycle (``bet_turn``): the bet taken down
        when ``held`` has it."""
        t0 = now() if since is None else since
        sent = now()
        try:
            status, placing = await bet_turn(
                conn, f"/api/tables/{table}/bets", {"wager": code, "amount": amount},
                {} if held is None else held, (table, conn.auth, code))
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            if counted:
                stats.error(type(e).__name__)
            await conn.close()
            return 0
        took = now() - t0
        if status == 200 and placing:
            self.acked[table] = self.acked.get(table, 0) + 1
        if not counted:
            return status
        if status == 200:
            stats.taken_down += not placing
            stats.ok.append(took)
            stats.ok_sent.append(now() - sent)
        elif status == 503:
            stats.busy.append(took)
            stats.busy_sent.append(now() - sent)
        elif status in (409, 422):
            stats.refused += 1
        else:
            stats.error(f"HTTP {status}")
        return status

    # (b) -------------------------------------------------------------------------------------
    async def scenario_b(self, bets_each: int = 3) -> None:
        names = self.groups[STADIUM]
        await self.warm([STADIUM])
        window = self.seconds
        sent_before_close = [0]

        async def work(stats: Stats) -> float:
            conns = [self.conn(n) for n in names]
            for i in range(0, len(conns), 200):
                await asyncio.gather(*(c.open() for c in conns[i:i + 200]))
            start = now() + 1.0
            close_at = start + window
            rng = random.Random(13)

            async def player(conn: Connection) -> None:
                # More bets the nearer the close: t = window * sqrt(u).
                times = sorted(window * rng.random() ** 0.5 for _ in range(bets_each))
                for k, at in enumerate(times):
                    delay = start + at - now()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    if now() >= close_at:
                        return
                    sent_before_close[0] += 1
                    code, amount = self.spots[(k * 7 + hash(conn.auth)) % len(self.spots)]
                    await self.bet(conn, stats, STADIUM, code, amount, True)

            await asyncio.gather(*(player(c) for c in conns))
            await asyncio.gather(*(c.close() for c in conns))
            return window

        await self.measure("(b) 1,000 players, 10 s window", work, [STADIUM],
                           lambda: f"sent before close {sent_before_close[0]}")

    async def watch(self, table: str, viewers: list[str], on_message: OnMessage,
                    clock: Callable[[], float] = now) -> list[Viewer]:
        """A WebSocket per viewer of ``table`` (opened a hundred at a time), hellos read;
        each later message handed to ``on_message`` with when it was read (``ws_viewer``:
        the generator's reading must not be what is measured)."""
        sockets: list[Viewer] = []
        for i in range(0, len(viewers), 100):
            sockets += await asyncio.gather(*(Viewer.open(
                "127.0.0.1", self.server.port, f"/ws/tables/{table}?token={self.tokens[v]}",
                on_message, clock) for v in viewers[i:i + 100]))
        await asyncio.gather(*(ws.hello for ws in sockets))
        return sockets

    @staticmethod
    async def unwatch(sockets: list[Viewer]) -> None:
        for ws in sockets:
            ws.close()
        await asyncio.wait([asyncio.ensure_future(ws.closed) for ws in sockets], timeout=10)

    # (c) -------------------------------------------------------------------------------------
    async def scenario_c(self, events: int = 20) -> None:

        viewers = [*self.groups[ARENA], DEALER]
        joiners = self.groups[""][:events]
        await self.warm([ARENA])
        arrivals: dict[int, list[float]] = {}
        marks: list[tuple[float, float, int]] = []
        shares: list[tuple[float, float]] = []

        def listen(t: float, raw: bytes) -> None:
            # Only the PlayerJoined event is parsed, not the whole message and its view:
            # the generator must stay cheap beside the server.
            for m in JOINED.finditer(raw):
                arrivals.setdefault(json.loads(m.group(0))["seq"], []).append(t)

        async def work(stats: Stats) -> float:
            sockets = await self.watch(ARENA, viewers, listen)
            self.sample()  # the profile shows the pushes, not the viewers' hellos
            start = now()
            cpu0 = cpu_seconds(), self.server.cpu()
            for name in joiners:
                conn = self.conn(name)
                t0 = now()
                status, _, body = await conn.request("POST", f"/api/tables/{ARENA}/join", {})
                t1 = now()
                await conn.close()
                if status != 200:
                    stats.error(f"HTTP {status}")
                    continue
                seq = max(e["seq"] for e in json.loads(body)["events"])
                marks.append((t0, t1, seq))
                deadline = now() + 10
                while len(arrivals.get(seq, [])) < len(sockets) and now() < deadline:
                    await asyncio.sleep(0.001)
                got = arrivals.get(seq, [])
                if len(got) < len(sockets):
                    stats.error("not delivered to every viewer in 10 s")
                    continue
                stats.ok.append(max(got) - t0)
            seconds = now() - start
            shares.append(((cpu_seconds() - cpu0[0]) / seconds,
                           (self.server.cpu() - cpu0[1]) / seconds))
            await self.unwatch(sockets)
            return seconds

        def after_ack() -> str:
            gaps = [max(arrivals.get(seq, [t1])) - t1 for _, t1, seq in marks]
            acks = [t1 - t0 for t0, t1, _ in marks]
            return (f"(latency = request sent -> last of {len(viewers)} viewers; "
                    f"ack p50 {fmt_ms(pct(acks, 50)).strip()} ms; ack -> last viewer p50 "
                    f"{fmt_ms(pct(gaps, 50)).strip()} p99 {fmt_ms(pct(gaps, 99)).strip()} ms; "
                    "while the events were pushed: generator CPU "
                    f"{100 * shares[0][0]:.0f}%, server CPU {100 * shares[0][1]:.0f}%)")

        await self.measure("(c) 1,000 viewers + dealer, commit->last", work, [ARENA], after_ack,
                           sample_later=True)

    async def scenario_c_roll(self, rolls: int = 10) -> None:
        """(c) for the event every viewer waits for: an electronic roll and its settlement,
        which change every seated player's own part. The server runs the electronic cycle
        (a ``ROLL_BET_SECONDS`` countdown); the latency is from the roll's own timestamp
        (``at``, taken as it is decided, before its commit) to the last viewer receiving it."""

        viewers = [*self.groups[ARENA], DEALER]
        arrivals: dict[int, list[float]] = {}
        decided: dict[int, float] = {}

        def listen(t: float, raw: bytes) -> None:
            for m in ROLLED.finditer(raw):
                seq = int(m.group(1))
                arrivals.setdefault(seq, []).append(t)
                decided[seq] = datetime.fromisoformat(m.group(2).decode()).timestamp()

        async def work(stats: Stats) -> float:
            # wall-clock arrivals: the roll's own timestamp is the server's wall clock
            sockets = await self.watch(ARENA, viewers, listen, clock=time.time)
            self.sample()
            start = now()
            deadline = start + rolls * (ROLL_BET_SECONDS + 3) + 30
            while now() < deadline and sum(
                    len(a) == len(sockets) for a in arrivals.values()) < rolls:
                await asyncio.sleep(0.05)
            seconds = now() - start
            await asyncio.sleep(1)  # the stragglers of the last roll
            for seq, got in sorted(arrivals.items())[:rolls]:
                if len(got) < len(sockets):
                    stats.error("a roll not delivered to every viewer")
                    continue
                stats.ok.append(max(got) - decided[seq])
            await self.unwatch(sockets)
            return seconds

        def spread() -> str:
            firsts = [max(a) - min(a) for a in list(arrivals.values())[:rolls] if a]
            return (f"(latency = the roll decided -> last of {len(viewers)} viewers, over "
                    f"{len(firsts)} rolls; first -> last viewer p99 "
                    f"{fmt_ms(pct(firsts, 99)).strip()} ms)")

        await self.measure("(c) 1,000 viewers + dealer, a roll", work, [ARENA], spread,
                           sample_later=True)

    # (d) -------------------------------------------------------------------------------------
    async def server_figures(self, seen: dict[str, list[float]], every: float = 0.5) -> None:
        """Read the server's ``/metrics`` every ``every`` seconds until cancelled: the commands
        it has admitted and not answered, and what it thinks one costs (the admission's
        figures, which say why a wait is what it is). A design without them adds nothing."""
        conn = Connection("127.0.0.1", self.server.port, "")
        conn.auth = b""

        def first_and_latest(key: str, value: float) -> None:
            seen.setdefault(key, [value] * 2)[1] = value

        wanted = {b"dicetable_in_flight": "in_flight",
                  b"dicetable_ms_per_answer": "ms_per_answer",
                  b"dicetable_loop_lag_seconds": "loop_lag",
                  b"dicetable_strangers_in_flight": "strangers"}
        try:
            while True:
                await asyncio.sleep(every)
                status, _, body = await conn.request("GET", "/metrics")
                if status != 200:
                    return
                batches = commands = 0.0
                gc_now: dict[str, float] = {}
                for line in body.splitlines():
                    name, _, value = line.partition(b" ")
                    if name.startswith(b"dicetable_table_batches_total{"):
                        batches += float(value)
                    elif name.startswith(b"dicetable_table_commands_total{"):
                        commands += float(value)
                    elif name in wanted:
                        seen.setdefault(wanted[name], []).append(float(value))
                    elif name in _SPINNING:
                        # the refusals, and those sent again at once (held): first and latest
                        first_and_latest(_SPINNING[name], float(value))
                    elif name.startswith(_GC):
                        # the collector's pauses (count, seconds, within 20 ms), summed over
                        # the generations: the first reading and the latest
                        found = _GC_LINE.match(name)
                        if found is not None and found["le"] in (None, b"0.02"):
                            key = f"gc {found['what'].decode()} {found['gen'].decode()}"
                            gc_now[key] = float(value)
                    elif name.startswith(_BUCKET) and name.endswith(_COMMAND):
                        # the commands' own latency, counted from their arrival at the app:
                        # the first reading and the latest
                        le = name[len(_BUCKET):].partition(b'"')[0].decode()
                        first_and_latest(f"le {le}", float(value))
                for key, spent in gc_now.items():
                    first_and_latest(key, spent)
                if batches:  # the tables' batches and commands, first reading and latest
                    first_and_latest("batches", batches)
                    first_and_latest("commands", commands)
                    seen.setdefault("batch series", []).append(batches)
                    seen.setdefault("command series", []).append(commands)
        finally:
            await conn.close()

    @contextlib.asynccontextmanager
    async def figures(self, name: str, said: list[str]) -> AsyncIterator[None]:
        """The server's own figures read while ``name`` runs (none for the bare app), what
        they say added to ``said`` at the end."""
        seen: dict[str, list[float]] = {}
        watching = None if name == CEILING else asyncio.create_task(self.server_figures(seen))
        try:
            yield
        finally:
            if watching is not None:
                watching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watching
        said.extend(figures_said(seen))

    async def scenario_d(self, capacity: float, fleet_size: int = 2000,
                         most_connections: int = 2000) -> None:
        """Open loop at twice ``capacity``, sent by ``GENERATORS`` processes of their own
        (``bench.loadgen``, pinned to the generator's core): each sends its share of the
        schedule and reports its CPU and how late it sent (its own lag, not the server's)."""
        tables = list(BENCH_TABLES)
        players = [(t, p) for t in tables for p in self.groups[f"over-{t}"]]
        rate = 2 * capacity
        requests = [[f"/api/tables/{t}/bets", self.tokens[p], {"wager": code, "amount": amount}]
                    for code, amount in self.cycle for t, p in players]
        extra: list[str] = []

        async def work(stats: Stats) -> float:
            folder = Path(tempfile.mkdtemp(prefix="dt-openloop-"))
            procs = []
            for share in range(GENERATORS):
                spec = {"port": self.server.port, "rate": rate, "seconds": self.seconds,
                        "share": share, "shares": GENERATORS,
                        "requests": requests, "fleet": fleet_size // GENERATORS,
                        "most": most_connections // GENERATORS}
                (folder / f"spec{share}.json").write_text(json.dumps(spec))
                procs.append(await asyncio.create_subprocess_exec(
                    "taskset", "-c", str(GENERATOR_CORE), sys.executable, "-m", "bench.loadgen",
                    str(folder / f"spec{share}.json"), str(folder / f"out{share}.json"),
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE))
            for proc in procs:  # every share's connections open
                assert proc.stdout is not None
                if await proc.stdout.readline() != b"ready\n":
                    raise RuntimeError("an open-loop generator did not start")
            start = time.monotonic() + 0.2
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(f"{start!r}\n".encode())
                await proc.stdin.drain()
            async with self.figures(D, extra):
                for proc in procs:
                    if await proc.wait():
                        raise RuntimeError("an open-loop generator failed")
            late: list[float] = []
            cpu, wall, made = [], [], 0
            accepted: list[tuple[float, float]] = []  # (latency from sent, sent from the start)
            busy: list[tuple[float, float]] = []  # (503's latency from due, sent from the start)
            for share in range(GENERATORS):
                out = json.loads((folder / f"out{share}.json").read_text())
                stats.ok += out["ok"]
                stats.ok_sent += out["ok_sent"]
                accepted += zip(out["ok_sent"], out["ok_at"], strict=True)
                stats.busy += out["busy"]
                stats.busy_sent += out["busy_sent"]
                busy += zip(out["busy"], out["busy_at"], strict=True)
                stats.refused += out["refused"]
                stats.taken_down += out["taken_down"]
                for kind, n in out["errors"].items():
                    stats.errors += n
                    stats.error_kinds[kind] = stats.error_kinds.get(kind, 0) + n
                for path, n in out["acked"].items():
                    table = path.split("/")[3]
                    self.acked[table] = self.acked.get(table, 0) + n
                late += out["late"]
                cpu.append(out["cpu"])
                wall.append(out["wall"])
                made += out["connections"]
            shutil.rmtree(folder, ignore_errors=True)
            self.child_cpu = sum(cpu)
            # The first half-second apart: every overload player's session is new to the
            # server then (read from the store, ``server.session_reads``), a restart's herd.
            first, rest = at_onset(accepted)
            extra.append(f"accepted p99 from sent in its first {ONSET:g} s "
                         f"{fmt_ms(pct(first, 99)).strip()} ms ({len(first)}), after "
                         f"{fmt_ms(pct(rest, 99)).strip()} ms ({len(rest)})")
            early, later = at_onset(busy)
            extra.append(f"503 p99 from due in its first {ONSET:g} s "
                         f"{fmt_ms(pct(early, 99)).strip()} ms ({len(early)}, "
                         f"{sum(1 for b in early if b > 0.020)} over 20 ms), after "
                         f"{fmt_ms(pct(later, 99)).strip()} ms ({len(later)}, "
                         f"{sum(1 for b in later if b > 0.020)} over 20 ms)")
            extra.append(f"p99 by {ONSET:g} s of the schedule, accepted from sent (ms): "
                         f"{p99_by_window(accepted)}; 503 from due: {p99_by_window(busy)}")
            extra.append(f"offered {rate:.0f}/s over {made} connections by {GENERATORS} "
                         f"generator processes (each {100 * max(cpu) / max(wall):.0f}% of a "
                         f"core at most; sent late p50 {fmt_ms(pct(late, 50)).strip()} ms, "
                         f"p99 {fmt_ms(pct(late, 99)).strip()} ms)")
            return self.seconds

        async def measured(stats: Stats) -> float:
            seconds = await work(stats)
            total = len(stats.ok) + len(stats.busy) + stats.refused + stats.errors
            extra.append(f"accepted p99 {fmt_ms(pct(stats.ok_sent, 99)).strip()} ms from sent")
            extra.append(f"503s {len(stats.busy)}/{total} = "
                         f"{100 * len(stats.busy) / max(1, total):.0f}%, 503 p99 "
                         f"{fmt_ms(pct(stats.busy, 99)).strip()} ms from due, "
                         f"{fmt_ms(pct(stats.busy_sent, 99)).strip()} ms from sent; "
                         f"503s over 20 ms from due: "
                         f"{sum(1 for b in stats.busy if b > 0.020)}")
            return seconds

        await self.measure(D, measured, tables, lambda: "; ".join(extra))


# -- driver ------------------------------------------------------------------------------------
def export_baseline(ref: str, into: Path) -> Path | None:
    root = Path(__file__).resolve().parent.parent
    try:
        archive = subprocess.run(["git", "-C", str(root), "archive", ref, "src"],
                                 check=True, capture_output=True).stdout
    except subprocess.CalledProcessError as e:
        print(f"baseline {ref!r} cannot be exported: {e.stderr.decode().strip()}")
        return None
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


async def run_ceiling(tokens: dict[str, str], groups: dict[str, list[str]], seconds: float,
                      warmup: float) -> dict[str, dict[str, Any]]:
    """Scenario (a)'s clients against a bare ASGI app on the same uvicorn: the ceiling."""
    server = Server(Path("unused"), None, app=BARE_APP)
    run = Run("bare ASGI", server, None, tokens, groups, seconds, warmup)
    try:
        await run.scenario_a(name=CEILING)
    finally:
        server.stop()
    return run.results


async def run_design(label: str, src: Path | None, prepared: Path, tokens: dict[str, str],
                     groups: dict[str, list[str]], seconds: float, only: str,
                     capacity: float | None, profile: bool = False, warmup: float = 2.0,
                     pit: bool = False, quick: bool = False,
                     env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """One design's scenarios (``only``) on a copy of ``prepared``. ``quick``: (c) with 5
    joins and 2 rolls at a 1 s countdown (a smoke run); ``env``: more environment for its
    server (a ``--variant``)."""
    work = Path(tempfile.mkdtemp(prefix=f"dt-{label}-"))
    db = work / "floor.db"
    shutil.copyfile(prepared, db)
    key = default_key_path(prepared)
    if key.exists():  # the chain key travels with its log (#12: nothing is served without it)
        shutil.copyfile(key, default_key_path(db))
    try:
        server = Server(db, src, **SERVER_ENV, **(env or {}))
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    run = Run(label, server, db, tokens, groups, seconds, warmup)
    run.profile = profile
    run.pit = pit
    try:
        if "a" in only:
            await run.scenario_a()
        if "b" in only:
            await run.scenario_b()
        if "c" in only:
            await run.scenario_c(events=5 if quick else 20)
        if "d" in only:
            base = capacity or run.results.get(A, {}).get("per_s")
            await run.scenario_d(base or 500.0)
        if "c" in only:
            # The rolls need the electronic cycle: a server of their own, on the floor as
            # prepared (every electronic table rolls; the bench tables must not be holding the
            # other scenarios' hundred thousand bets, settled on the same core meanwhile).
            server.stop()
            rolls = work / "rolls.db"
            shutil.copyfile(prepared, rolls)
            if key.exists():
                shutil.copyfile(key, default_key_path(rolls))
            server = run.server = Server(rolls, src, DICETABLE_ELECTRONIC="1",
                                         DICETABLE_BET_SECONDS=str(1 if quick
                                                                   else ROLL_BET_SECONDS))
            run.db = rolls
            await run.scenario_c_roll(rolls=2 if quick else 10)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    if pit:
        print(f"[{label}] the pit viewed the banks {run.pit_views} times", flush=True)
    return run.results


def headline(rounds: list[dict[str, dict[str, dict[str, Any]]]]) -> None:
    """Every design's scenarios, round by round: accepted/s, the 503s and their share, the
    refusals (409/422: a bench whose requests the rules refuse measures refusals), p99, and
    accepted/s as a share of the bare ceiling measured in the same round."""
    print("\nheadline (each round: the designs run in turn, the ceiling first; compare within "
          "a round; refused = 409/422)", flush=True)
    for k, results in enumerate(rounds, 1):
        bare = results.get("bare ASGI", {}).get(CEILING, {})
        ceiling, bare_cpu = bare.get("per_s"), bare.get("cpu_ms_per_answer")
        print(f"round {k}: bare-ASGI ceiling "
              + (f"{ceiling:.0f} req/s, server CPU {bare_cpu:.3f} ms per answer"
                 if ceiling and bare_cpu else "not measured"))
        for label, scenarios in results.items():
            for name, line in scenarios.items():
                if name == CEILING:
                    continue
                ratio = f"  = {100 * line['per_s'] / ceiling:5.1f}% of the ceiling" \
                    if ceiling and name == A else ""
                if bare_cpu and line.get("cpu_ms_per_answer"):
                    ratio += (f"; server CPU {line['cpu_ms_per_answer']:.3f} ms per answer = "
                              f"{line['cpu_ms_per_answer'] / bare_cpu:.1f}x the bare app's")
                    if line.get("loop_share") is not None:
                        ratio += (f" (its event loop {100 * line['loop_share']:.0f}%, its "
                                  "other threads - the tables', the store's writer - the rest)")
                busy_p99 = f"  503 p99 {line['busy_p99_ms']:6.1f} ms" if line["busy"] else ""
                if line.get("taken_down"):
                    busy_p99 += f"  ({line['taken_down']} of the accepted take-downs)"
                print(f"  {label:<12} {name:<36} accepted {line['per_s']:7.0f}/s  "
                      f"503s {line['busy']:6d} ({100 * line['busy_share']:5.1f}%)  "
                      f"refused {line['refused']:6d}  "
                      f"p99 {line['p99_ms']:7.1f} ms{busy_p99}{ratio}", flush=True)


def pit_summary(rounds: list[dict[str, dict[str, dict[str, Any]]]], loads: list[float]
                ) -> None:
    """(a) with and without the pit (``--pit``), side by side over the rounds: each design's
    accepted/s and server CPU per accepted answer (median, with the lowest and highest), and
    the pit's cost as the median of the rounds' own ratios (each round ran both in turn, under
    the load average it names). On a machine shared with other work the rates swing with the
    neighbours; the CPU per answer much less: read that first."""
    kept = [(r["this"][A], r["this+pit"][A], load) for r, load in zip(rounds, loads,
                                                                       strict=True)
            if A in r.get("this", {}) and A in r.get("this+pit", {})]
    if not kept:
        return
    bare = [a for a, _, _ in kept]
    pit = [b for _, b, _ in kept]

    def spread(values: list[float], fmt: str) -> str:
        return (f"median {format(statistics.median(values), fmt)} "
                f"[{format(min(values), fmt)} .. {format(max(values), fmt)}]")

    print(f"\nthe pit's cost on (a), {len(kept)} rounds (this and this+pit in turn, order "
          "alternating; load average per round "
          + ", ".join(f"{x:.1f}" for _, _, x in kept) + ")", flush=True)
    for label, lines in (("this", bare), ("this+pit", pit)):
        rates = [float(x["per_s"]) for x in lines]
        cpus = [float(x["cpu_ms_per_accepted"]) for x in lines
                if x.get("cpu_ms_per_accepted")]
        print(f"  {label:<9} accepted/s {spread(rates, '.0f')}"
              + (f"; server CPU ms per accepted answer {spread(cpus, '.3f')}" if cpus else ""),
              flush=True)
    pairs = list(zip(bare, pit, strict=True))
    rate_ratio = [p[1]["per_s"] / p[0]["per_s"] for p in pairs if p[0]["per_s"]]
    cpu_ratio = [p[1]["cpu_ms_per_accepted"] / p[0]["cpu_ms_per_accepted"] for p in pairs
                 if p[0].get("cpu_ms_per_accepted") and p[1].get("cpu_ms_per_accepted")]
    if rate_ratio:
        print(f"  with the pit, accepted/s is {spread([100 * (1 - x) for x in rate_ratio], '+.1f')}"
              "% lower (per-round ratios; negative: higher)", flush=True)
    if cpu_ratio:
        print(f"  with the pit, server CPU per accepted answer is "
              f"{spread([100 * (x - 1) for x in cpu_ratio], '+.1f')}% higher (per-round ratios)",
              flush=True)


def at_onset(timed: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """The latencies of ``(latency, sent from the start)`` pairs sent in the first ``ONSET``
    seconds, and those sent after.

    >>> at_onset([(0.2, 0.1), (0.03, 0.7), (0.05, 0.4)])
    ([0.2, 0.05], [0.03])
    """
    return ([took for took, at in timed if at < ONSET],
            [took for took, at in timed if at >= ONSET])


def p99_by_window(timed: list[tuple[float, float]], width: float = ONSET) -> str:
    """The p99 latency (ms) of ``(latency, sent from the start)`` pairs, window by window of
    the schedule: where a tail comes from (a start-up, a pause of the whole server, an end).

    >>> p99_by_window([(0.2, 0.1), (0.03, 0.7), (0.05, 0.4), (0.01, 1.6)])
    '200 30 - 10'
    """
    windows: dict[int, list[float]] = {}
    for took, at in timed:
        windows.setdefault(int(at / width), []).append(took)
    if not windows:
        return ""
    return " ".join(f"{1000 * pct(windows[k], 99):.0f}" if k in windows else "-"
                    for k in range(max(windows) + 1))


def variant_envs(items: list[str], taken: Iterable[str] = ()) -> dict[str, dict[str, str]]:
    """``--variant`` arguments as each label's environment; a label must name no other design
    (``taken``, "this", "this+pit", another variant): its figures would stand in for theirs.

    >>> variant_envs(["w30:DICETABLE_SHED_WAIT_MS=30,DICETABLE_SHED_STRANGERS=32"])
    {'w30': {'DICETABLE_SHED_WAIT_MS': '30', 'DICETABLE_SHED_STRANGERS': '32'}}
    >>> variant_envs(["main:DICETABLE_SHED_WAIT_MS=30"], taken=["main"])
    Traceback (most recent call last):
    SystemExit: --variant 'main:DICETABLE_SHED_WAIT_MS=30': 'main' names another design
    """
    out: dict[str, dict[str, str]] = {}
    named = {"this", "this+pit", *taken}
    for item in items:
        label, _, assignments = item.partition(":")
        if not label or not assignments:
            raise SystemExit(f"--variant {item!r}: LABEL:NAME=VALUE[,NAME=VALUE...]")
        if label in named or label in out:
            raise SystemExit(f"--variant {item!r}: {label!r} names another design")
        env = {}
        for pair in assignments.split(","):
            name, eq, value = pair.partition("=")
            if not eq or not name:
                raise SystemExit(f"--variant {item!r}: {pair!r} is not NAME=VALUE")
            env[name] = value
        out[label] = env
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--baseline", default="main", help="git refs of other designs, "
                        "comma-separated (each that commit's src, served the same way), "
                        "or 'none'")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the ceiling and every design in turn this many times")
    parser.add_argument("--only", default="abcd")
    parser.add_argument("--players", type=int, default=1000, help="per scenario (b), (c)")
    parser.add_argument("--capacity", type=float, default=None,
                        help="bets/s that (d) offers twice of (default: what (a) measured)")
    parser.add_argument("--profile", action="store_true",
                        help="sample the server with py-spy during each scenario")
    parser.add_argument("--quick", action="store_true",
                        help="seconds, not minutes: every scenario, (a), (b) and (d) for 1 s "
                        "each, 20 players and viewers, (c) with 5 joins and 2 rolls at a 1 s "
                        "countdown, the ceiling, no baseline (checks that the bench still runs)")
    parser.add_argument("--pit", action="store_true",
                        help="also serve this tree as 'this+pit': a pit console following "
                        "the bench tables' banks every second during (a)")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                        help="more environment for every design's server (e.g. "
                        "DICETABLE_SHED_LAG_MS=1000 lifts an older design's lag limit)")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL:NAME=VALUE,...",
                        help="also serve this tree as LABEL with more environment, in turn "
                        "with the others (a setting measured side by side with its default)")
    args = parser.parse_args()
    for item in args.server_env:
        name, _, value = item.partition("=")
        SERVER_ENV[name] = value
    warmup, per_table = 2.0, 250
    if args.quick:
        args.seconds, args.players, warmup, per_table = 1.0, 20, 0.5, 50
        args.baseline, args.rounds = "none", 1
    refs = [] if args.baseline == "none" else [r for r in args.baseline.split(",") if r]
    variants = variant_envs(args.variant, taken=[ref[:12] for ref in refs])  # before work
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) >= 2:
        os.sched_setaffinity(0, {GENERATOR_CORE})
    loop = install_uvloop()
    print(f"load average {os.getloadavg()[0]:.1f} (other work on this machine competes for "
          "the same cores)")
    print(f"server pinned to core {SERVER_CORE} (taskset), generator to core "
          f"{GENERATOR_CORE} ({loop}, raw HTTP/1.1 keep-alive); {os.cpu_count()} cores; "
          f"SQLite synchronous=FULL; {args.seconds:.0f} s windows after {warmup:.1f} s of "
          "warm-up", flush=True)
    if args.quick:
        print(f"--quick: {args.players} players in (b), {args.players} viewers in (c), 5 "
              "joins and 2 rolls at a 1 s countdown; the scenarios' names give their full "
              "sizes", flush=True)
    n = args.players
    groups: dict[str, list[str]] = {t: [f"{t}-p{i:04d}" for i in range(per_table)]
                                    for t in BENCH_TABLES}
    groups.update({f"over-{t}": [f"{t}-o{i:04d}" for i in range(per_table)]
                   for t in BENCH_TABLES})
    groups[STADIUM] = [f"st-p{i:04d}" for i in range(n)]
    groups[ARENA] = [f"ar-p{i:04d}" for i in range(n)]
    groups[""] = [f"walkin{i:03d}" for i in range(40)]  # accounts not yet at a table
    prepared_dir = Path(tempfile.mkdtemp(prefix="dt-prep-"))
    prepared = prepared_dir / "floor.db"
    t0 = time.perf_counter()
    tokens = prepare(prepared, {k: v for k, v in groups.items() if not k.startswith("over-")})
    # the overload players sit at the bench tables too
    extra_tokens = _seat(prepared, {t: groups[f"over-{t}"] for t in BENCH_TABLES})
    tokens.update(extra_tokens)
    print(f"prepared {sum(len(v) for v in groups.values())} players in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    designs: list[tuple[str, Path | None]] = [("this", None)]
    if args.pit:
        designs.append(("this+pit", None))
    designs.extend((label, None) for label in variants)
    base_dir = Path(tempfile.mkdtemp(prefix="dt-base-"))
    for i, ref in enumerate(refs):
        into = base_dir / str(i)
        into.mkdir()
        src = export_baseline(ref, into)
        if src is not None:
            designs.append((ref[:12], src))
    rounds: list[dict[str, dict[str, dict[str, Any]]]] = []
    loads: list[float] = []
    for k in range(args.rounds):
        results: dict[str, dict[str, dict[str, Any]]] = {}
        loads.append(os.getloadavg()[0])
        print(f"round {k + 1} of {args.rounds}: load average {loads[-1]:.1f}", flush=True)
        if args.pit and k:  # this and this+pit in turn, each first every other round
            designs[0], designs[1] = designs[1], designs[0]
        if "a" in args.only:
            results["bare ASGI"] = asyncio.run(run_ceiling(tokens, groups, args.seconds, warmup))
        capacity = args.capacity
        for label, src in designs:
            try:
                results[label] = asyncio.run(run_design(
                    label, src, prepared, tokens, groups, args.seconds, args.only, capacity,
                    args.profile and src is None, warmup, pit=label == "this+pit",
                    quick=args.quick, env=variants.get(label)))
            except Exception as e:  # an old design may not survive a scenario
                print(f"{label} stopped: {e}")
                continue
            # every design gets the same offered overload: twice what this one took in (a)
            capacity = capacity or results[label].get(A, {}).get("per_s")
        rounds.append(results)
    headline(rounds)
    if args.pit:
        pit_summary(rounds, loads)
    print(f"load average {os.getloadavg()[0]:.1f} at the end; reproduce: python -m "
          f"bench.load_bench {' '.join(sys.argv[1:])}", flush=True)
    shutil.rmtree(base_dir, ignore_errors=True)
    shutil.rmtree(prepared_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
