"""What an admitted bet costs the server, in process: CPU per command, every thread counted.

Scenario (a) of ``bench.load_bench`` measures a whole server against a generator on a shared
machine, and its figures drift by a fifth from one run to the next; a change that saves a few
percent of a bet's cost cannot be told from that. Here the server's own parts run in one
process: the app and its floor on a SQLite file (``synchronous=FULL``, as served), its
lifespan started, and ``CLIENTS`` of the load generator's keep-alive connections
(``loadgen.Connection``) read by the server's protocol (``server.refusing_http.RefusingHttp``)
with no socket between them. Each goes round its player's spots as (a)'s clients do
(``loadgen.bet_turn``: each bet placed, then taken down on its next turn), all of them at
once, each sending its next command when the last is answered. The figure is the process's
CPU (the event loop, the tables' threads, the store's committer) per command answered, this
tree beside a baseline commit's ``src`` run in turn with it (``--baseline``). No socket: the
system calls are the same for every design and not what a change to the server can save.
The clients' own work (each request built, each answer read) is in the figure too, the same
for every design.

    .venv/bin/python -m bench.bet_cost [--baseline REF|none] [--commands N] [--rounds K]
                                        [--quick]

Nothing is asserted about speed. Figures: each design's best run (the least disturbed) and
median, their ratio and the median of the pairs' ratios; and where the CPU went, by thread
(``by_part``: the event loop with the clients, the tables' threads, the store's writer).
Every command must be answered 200 (one refused for load is sent again, and counted), or the
run fails.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, cast

from bench import side_by_side
from bench.side_by_side import served

CLIENTS = 200
"""Connections, one player each, as (a)'s clients (four tables, fifty players at each)."""
TABLES = ("bench-1", "bench-2", "bench-3", "bench-4")


def measure(commands: int) -> dict[str, float]:
    """CPU microseconds per command answered, and how many were bets placed (the rest were
    taken down), in this process (the tree on ``sys.path``)."""
    import uvloop
    from uvicorn.server import ServerState

    from bench.load_bench import prepare, spots
    from bench.loadgen import Connection, bet_turn
    from bench.refusal_cost import CountingTransport, uvicorn_config
    from dicetable.server.app import create_app
    from dicetable.server.main import build_floor
    from dicetable.server.refusing_http import RefusingHttp

    # One core, as the served process is pinned (``load_bench``): on two, the tables'
    # threads and the loop contend for the interpreter from both, and what that costs varied
    # by half from one run to the next.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    folder = Path(tempfile.mkdtemp(prefix="dt-bets-"))
    db = folder / "floor.db"
    players = [f"bc-{i:03d}" for i in range(CLIENTS)]
    per_table = CLIENTS // len(TABLES)
    tokens = prepare(db, {table: players[i * per_table:(i + 1) * per_table]
                          for i, table in enumerate(TABLES)})
    floor, _ = build_floor(db)
    app = create_app(floor, electronic_loop=False, clock_seconds=None)
    cycle = [{"wager": code, "amount": amount} for code, amount in spots(removable=True)]

    class Answers(CountingTransport):
        """The server's side of a connection: what the protocol writes, read by the
        client's ``reader``."""

        def __init__(self, reader: asyncio.StreamReader) -> None:
            super().__init__()
            self.reader = reader

        def write(self, data: Any) -> None:
            super().write(data)
            self.reader.feed_data(bytes(data))

    class Requests:
        """The client's side: what ``loadgen.Connection`` writes, read by the protocol."""

        def __init__(self, protocol: RefusingHttp) -> None:
            self.protocol = protocol

        def write(self, data: bytes) -> None:
            self.protocol.data_received(data)

    def connected(config: Any, server: Any, state: dict[str, Any], token: str) -> Connection:
        """A keep-alive connection of the load generator's, read by the server's protocol
        (no socket between them)."""
        reader = asyncio.StreamReader()
        protocol = RefusingHttp(config=config, server_state=server, app_state=state)
        protocol.connection_made(Answers(reader))
        conn = Connection("bench", 0, token)
        conn.reader, conn.writer = reader, cast(asyncio.StreamWriter, Requests(protocol))
        return conn

    async def measured(state: dict[str, Any]) -> dict[str, float]:
        config, server = uvicorn_config(app), ServerState()
        pipelines = [pipeline for table in TABLES
                     if (pipeline := floor.get(table).pipeline) is not None]
        placed = busy = 0
        # kept alive, each going round its player's spots as (a)'s clients do
        connections = [connected(config, server, state, tokens[player]) for player in players]
        held: list[dict[Any, str]] = [{} for _ in players]
        turn_of = [0] * CLIENTS

        async def client(k: int, turns: int) -> None:
            nonlocal placed, busy
            path = f"/api/tables/{TABLES[k // per_table]}/bets"
            for _ in range(turns):
                spot = turn_of[k] % len(cycle)
                turn_of[k] += 1
                while True:
                    status, placing = await bet_turn(connections[k], path, cycle[spot],
                                                     held[k], spot)
                    if status != 503:
                        break
                    busy += 1  # refused for load: sent again, as a closed loop would
                if status != 200:
                    raise RuntimeError(f"{players[k]}: {status} on turn {turn_of[k]}")
                placed += placing

        # each session read once, a few at a time (at most MOST_STRANGERS in flight)
        for k in range(0, CLIENTS, 32):
            await asyncio.gather(*(client(j, 1) for j in range(k, min(k + 32, CLIENTS))))
        await asyncio.gather(*(client(k, 2 * len(cycle)) for k in range(CLIENTS)))  # warm
        placed = busy = 0
        turns = max(1, commands // CLIENTS)
        before, batches = os.times(), sum(p.stats.batches for p in pipelines)
        parts = by_part()
        await asyncio.gather(*(client(k, turns) for k in range(CLIENTS)))
        parts = {name: spent - parts.get(name, 0.0) for name, spent in by_part().items()}
        after, batches = os.times(), sum(p.stats.batches for p in pipelines) - batches
        answered = turns * CLIENTS
        user, system = after.user - before.user, after.system - before.system
        return {"us_per_command": (user + system) / answered * 1e6,
                "system": system / (user + system), "placed": placed / answered,
                "per_batch": answered / max(1, batches), "busy": busy,
                **{f"us_{name}": spent / answered * 1e6 for name, spent in parts.items()}}

    return served(app, measured, floor, folder, uvloop.run)


PARTS = {"loop": "the event loop (and the clients)", "tables": "the tables' threads",
         "writer": "the store's writer", "other": "other threads"}
"""Where a command's CPU is spent, by thread (``by_part``)."""


def by_part() -> dict[str, float]:
    """CPU seconds so far of this process's running threads, by part (``PARTS``): the
    main thread runs the event loop; the tables' and the writer's threads are known by the
    names the server gives them. Read per thread, as a sampling profiler cannot: one that
    samples the thread holding the interpreter's lock (py-spy ``--gil``) attributed a small
    share to the tables' threads where they spend half the served process's CPU."""
    spent = dict.fromkeys(PARTS, 0.0)
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        try:
            seconds = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except OSError:  # ended meanwhile
            continue
        name = thread.name
        part = ("loop" if thread is main else "tables" if name.startswith("dicetable-table-")
                else "writer" if name.startswith("dicetable-writer-") else "other")
        spent[part] += seconds
    return spent


def report(seen: dict[str, list[dict[str, Any]]], commands: int, rounds: int) -> None:
    """Each design's CPU per command, best and median, and this tree's ratio to the other."""
    designs = list(seen)
    print(f"{commands:,} commands per run from {CLIENTS} connections at once (bets placed and "
          f"taken down by turns), in process (no sockets); CPU of the whole process per "
          f"command, {rounds} round(s), designs in turn; load average "
          f"{os.getloadavg()[0]:.1f}")
    for name in designs:
        runs = seen[name]
        each = " ".join(f"{r['us_per_command']:.1f}" for r in runs)
        print(f"  {name:<12} {min(r['us_per_command'] for r in runs):6.1f} us per command at "
              f"best, {statistics.median(r['us_per_command'] for r in runs):.1f} median (runs "
              f"{each}); in the kernel "
              f"{100 * statistics.median(r['system'] for r in runs):.0f}%, "
              f"{statistics.median(r['per_batch'] for r in runs):.0f} commands per commit, "
              f"{100 * runs[0]['placed']:.0f}% of them bets placed, "
              f"{sum(r['busy'] for r in runs)} refused for load (sent again)")
        split = ", ".join(f"{label} {statistics.median(r.get(f'us_{part}', 0.0) for r in runs):.1f}"
                          for part, label in PARTS.items())
        print(f"  {'':<12} by thread, us per command (median): {split}")
    base = next((n for n in designs if n != "this"), None)
    if base is not None:
        ratios = sorted(a["us_per_command"] / b["us_per_command"]
                        for a, b in zip(seen["this"], seen[base], strict=True))
        best = (min(r["us_per_command"] for r in seen["this"])
                / min(r["us_per_command"] for r in seen[base]))
        print(f"  this / {base}: best runs {best:.3f}x; round by round median "
              f"{statistics.median(ratios):.3f}x (from {ratios[0]:.3f} to {ratios[-1]:.3f})")


def main() -> None:
    side_by_side.main(__doc__ or "", "bench.bet_cost", measure, report,
                      count=("--commands", 40_000, 2_000), rounds=5)


if __name__ == "__main__":
    main()
