"""Bet placement under load on loopback: throughput, p50 and p99 latency.

A real ``dicetable serve`` process on a fresh SQLite file (``synchronous=FULL``, group commit),
four live Craps tables, 200 players. Each client logs in, then places a $1 Field bet and takes
it down again, as fast as it is answered, for the run's duration. The same loop with a single
client runs first, side by side, as the baseline. Figures are printed, not asserted.

    .venv/bin/python -m bench.server_bench [--clients 200] [--seconds 15] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from argon2 import PasswordHasher

from dicetable.application.accounts import Kind
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Chore
from dicetable.server.main import build_floor

TABLES = ("craps-pa-1", "craps-in-1", "minicraps-pa-1", "craps-pa-e1")


def prepare(db: Path, players: int, hasher: PasswordHasher | None = None) -> None:
    """The demo floor plus ``players`` bench players, each at one table with chips
    (``hasher``: the accounts' Argon2 cost; a login pays what its stored hash says)."""
    floor, _ = build_floor(db, hasher=hasher)
    for i in range(players):
        name = f"bench{i:03d}"
        floor.accounts.create(name, DEMO_PASSWORD, Kind.PLAYER)
        table = TABLES[i % len(TABLES)]
        seller = ("table", Role.SYSTEM) if table == "craps-pa-e1" else ("dee", Role.DEALER)
        floor.submit(table, Chore(lambda n=name, s=seller: [  # type: ignore[misc]
            g.JoinTable(actor=n, role=Role.PLAYER, player=n),
            g.BuyChips(actor=s[0], role=s[1], player=n, amount=1_000_000)])).result()
    floor.close()
    floor.store.close()
    floor.accounts.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def login(http: httpx.AsyncClient, index: int) -> str:
    for attempt in range(30):  # 200 Argon2 checks at once can outlast a connect backlog
        try:
            reply = await http.post("/api/login", json={"username": f"bench{index:03d}",
                                                        "password": DEMO_PASSWORD})
            if reply.status_code in (429, 503):  # logins are checked a few at a time
                await asyncio.sleep(0.2 * (attempt + 1))
                continue
            if reply.status_code != 200:
                raise RuntimeError(f"login refused: {reply.status_code} {reply.text[:200]}")
            token: str = reply.json()["token"]
            return token
        except httpx.TransportError:
            await asyncio.sleep(0.5 * (attempt + 1))
    raise RuntimeError(f"bench{index:03d} could not log in")


async def client(http: httpx.AsyncClient, index: int, token: str, until: float,
                 latencies: list[float], errors: list[str]) -> None:
    table = TABLES[index % len(TABLES)]
    headers = {"authorization": f"Bearer {token}"}
    if True:
        while time.perf_counter() < until:
            start = time.perf_counter()
            placed = await http.post(f"/api/tables/{table}/bets", headers=headers,
                                     json={"wager": "field", "amount": 100})
            latencies.append(time.perf_counter() - start)
            if placed.status_code != 200:
                errors.append(placed.text[:120])
                await asyncio.sleep(0.05)
                continue
            # The reply holds the command's own events (the whole view only on request).
            bet = next(e["bet"] for e in placed.json()["events"] if e["type"] == "BetPlaced")
            start = time.perf_counter()
            removed = await http.delete(f"/api/tables/{table}/bets/{bet}", headers=headers)
            latencies.append(time.perf_counter() - start)
            if removed.status_code != 200:
                errors.append(removed.text[:120])


async def run(base: str, clients: int, seconds: float, one_login_at_a_time: bool = False
              ) -> tuple[int, float, float, float, int]:
    """``clients`` clients betting for ``seconds``: (requests, per second, p50 ms, p99 ms,
    errors). ``one_login_at_a_time``: the clients log in in turn, not all at once (the server
    checks one login at a time from one address and refuses the rest 429: retried with a
    growing pause, that is most of a short run)."""
    latencies: list[float] = []
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        if one_login_at_a_time:
            tokens = [await login(http, i) for i in range(clients)]
        else:
            tokens = await asyncio.gather(*(login(http, i) for i in range(clients)))
        until = time.perf_counter() + seconds
        started = time.perf_counter()
        await asyncio.gather(*(client(http, i, tokens[i], until, latencies, errors)
                               for i in range(clients)))
        elapsed = time.perf_counter() - started
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 2 else [0.0] * 99
    return len(latencies), len(latencies) / elapsed, q[49] * 1000, q[98] * 1000, len(errors)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--quick", action="store_true",
                        help="a few seconds: 10 clients for 1 s, passwords hashed at a test's "
                        "Argon2 cost (a smoke run; figures only)")
    args = parser.parse_args()
    hasher: PasswordHasher | None = None
    if args.quick:
        args.clients, args.seconds = min(args.clients, 10), min(args.seconds, 1)
        # The logins are set-up, not what is measured; at full cost they are checked one at
        # a time from this one address (0.4 CPU-s each) and took most of a quick run.
        from tests.demo_floor import CHEAP_HASHER
        hasher = CHEAP_HASHER
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        t0 = time.perf_counter()
        prepare(db, args.clients, hasher)
        print(f"setup: demo floor + {args.clients} players in {time.perf_counter() - t0:.1f} s")
        port = free_port()
        env = dict(os.environ, DICETABLE_DB=str(db), DICETABLE_ELECTRONIC="0")
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory",
             "dicetable.server.main:app_from_env", "--host", "127.0.0.1", "--port",
             str(port), "--log-level", "warning"], env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                try:
                    httpx.get(base + "/openapi.json", timeout=1)
                    break
                except httpx.HTTPError:
                    time.sleep(0.2)
            one = asyncio.run(run(base, 1, min(args.seconds, 5)))
            many = asyncio.run(run(base, args.clients, args.seconds, args.quick))
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"{'clients':>8} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for label, (n, rate, p50, p99, errs) in (("1", one), (str(args.clients), many)):
        print(f"{label:>8} {n:>9} {rate:>8.0f} {p50:>8.1f} {p99:>8.1f} {errs:>7}")
    print(f"throughput with {args.clients} clients / 1 client: {many[1] / one[1]:.1f}x "
          "(durable SQLite, synchronous=FULL; one server process)")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; reproduce: "
          f"python -m bench.server_bench {' '.join(sys.argv[1:])}")


if __name__ == "__main__":
    main()
