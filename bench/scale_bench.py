"""Scale-out: one server process against two over the same PostgreSQL store, the tables split.

Two processes started with ``DICETABLE_WORKERS=2`` on one PostgreSQL store split the tables
(``server.owners``: advisory locks, each process a fair share); a command that reaches a
process that does not own its table is forwarded to the owner. Measured, in turn:

1. one process (``DICETABLE_WORKERS=1``): every table decided there;
2. two processes, each client sent to the process that owns its table (a load balancer that
   routes ``/api/tables/ID/...`` by owner, as ``GET /api/floor/owners`` tells it);
3. two processes, the clients spread over both whatever the table (a load balancer that does
   not know the owners): about half of the commands are forwarded.

Eight bench tables, with the demo floor's five idle ones: each of two processes owns some of
them, but how many depends on where each process's claim starts (its pid), from one to seven.
So that the line measures two processes and not how the tables fell, the clients are shared
equally between the processes, each process's half spread over the bench tables it owns (as
an operator balances a floor: by which tables each process owns); one process's clients
are spread over all eight alike.

Closed-loop clients as ``load_bench`` (a)'s, each on its own player at a bench table, as fast
as it is answered: each spot placed and then taken down (``bench.loadgen.bet_turn``), so that
every request is a command the rules accept however long the run (a player who kept betting
would hold every spot within seconds, and the rest would be refusals, 409/422); half the
commands are bets, in every configuration alike. Nothing is pinned: on a machine with as many
cores as server processes the generator and PostgreSQL compete with the servers, and the
figures say how much (the CPU of the generator and of the servers beside each line); there
the two-process ratio cannot show what a second core would give.

    .venv/bin/python -m bench.scale_bench [--seconds 10] [--clients 200] [--rounds 1]
        [--quick] [--pg postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

import httpx

from bench.load_bench import free_port, seated, spots
from bench.loadgen import (
    Connection,
    Stats,
    bet_turn,
    cpu_seconds,
    install_uvloop,
    now,
    proc_cpu_seconds,
)
from bench.loadgen import report as report_line
from dicetable.core.roles import Role
from dicetable.server.demo import electronic_pack
from dicetable.server.main import build_floor

PG_CANDIDATES = ("postgresql://postgres@127.0.0.1:5432/test",
                 "postgresql://root@127.0.0.1:5432/test")
STAFF = "pat"
"""A pit boss: asks each process which tables it owns."""
SCALE_TABLES = tuple(f"bench-{i}" for i in range(1, 9))
"""The tables the clients bet at: eight of the floor's thirteen, so that each of two processes
owns at least one (a process claims at most seven, ``table_owners.TableOwners.share``, and
the demo floor has five)."""
Plan = list[tuple[str, str, int]]
"""Each client's table, player and port."""


def find_pg(given: str | None) -> str:
    import psycopg

    for url in [given] if given else [os.environ.get("DICETABLE_PG_URL") or "",
                                      *PG_CANDIDATES]:
        if not url:
            continue
        try:
            with psycopg.connect(url, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            return url
        except psycopg.Error:
            continue
    raise SystemExit("no PostgreSQL server answers (give --pg URL)")


def postgres_cpu_seconds() -> float:
    """The CPU seconds of this machine's PostgreSQL processes (0 for a server elsewhere, or
    one whose processes this user cannot read)."""
    spent = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as f:
                if f.read().strip() != "postgres":
                    continue
            spent += proc_cpu_seconds(int(entry))
        except (OSError, ValueError):  # gone meanwhile
            continue
    return spent


def machine_busy_seconds() -> tuple[float, float]:
    """Seconds of CPU time spent by every process on this machine, and the seconds its cores
    could have given (``/proc/stat``'s first line: all but idle and iowait, and all)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / ticks, sum(fields[:8]) / ticks


def prepare(url: str, schema: str, players: int) -> tuple[dict[str, list[str]], dict[str, str]]:
    floor, _ = build_floor(url, schema=schema)
    for table in SCALE_TABLES:
        floor.open_table(electronic_pack(), table, mode="electronic", opener="fran",
                         staff={"dee": Role.DEALER})
    groups = {t: [f"{t}-p{i:04d}" for i in range(players)] for t in SCALE_TABLES}
    tokens = seated(floor, groups)
    again, _ = build_floor(url, schema=schema)
    tokens[STAFF] = again.accounts.open_session(STAFF)
    again.close()
    again.store.close()
    again.accounts.close()
    return groups, tokens


def _staff_read(port: int, path: str, token: str) -> dict[str, Any]:
    """A staff page's JSON from the server on ``port``."""
    reply = httpx.get(f"http://127.0.0.1:{port}{path}",
                      headers={"authorization": f"Bearer {token}"})
    reply.raise_for_status()
    found: dict[str, Any] = reply.json()
    return found


class Servers:
    """``count`` server processes on the store, each on its own port."""

    def __init__(self, url: str, schema: str, count: int) -> None:
        self.ports = [free_port() for _ in range(count)]
        env = dict(os.environ, DICETABLE_DB=url, DICETABLE_SCHEMA=schema,
                   DICETABLE_ELECTRONIC="0", DICETABLE_WORKERS=str(count),
                   DICETABLE_VERIFY_EVERY="0", DICETABLE_MAX_CONNECTIONS="16384",
                   DICETABLE_MAX_CONNECTIONS_PER_CLIENT="16384")
        # their warnings go to files: a pipe nobody reads fills, and stops the server
        self.errors = [tempfile.TemporaryFile() for _ in self.ports]  # noqa: SIM115 (stop)
        self.read = [0 for _ in self.ports]
        self.procs = [subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "dicetable.server.main:app_from_env",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
             "--no-access-log", "--loop", "uvloop", "--http",
             "dicetable.server.refusing_http:RefusingHttp", "--no-proxy-headers",
             "--backlog", "4096", "--timeout-keep-alive", "300"],
            env=env, stdout=subprocess.DEVNULL, stderr=errors)
            for port, errors in zip(self.ports, self.errors, strict=True)]
        for k, (port, proc) in enumerate(zip(self.ports, self.procs, strict=True)):
            self._wait(k, port, proc)

    def said(self, k: int) -> str:
        """What server ``k`` wrote to its stderr since the last call (read where it was,
        the offset the server shares left alone)."""
        fd = self.errors[k].fileno()
        text = os.pread(fd, os.fstat(fd).st_size - self.read[k], self.read[k])
        self.read[k] += len(text)
        return text.decode(errors="replace")

    def _wait(self, k: int, port: int, proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"a server exited: {self.said(k)[-2000:]}")
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/me", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("a server did not start")

    def owners(self, token: str) -> dict[str, int]:
        """Each bench table's owner's port, once every one has one (the split settles within
        a few seconds of the second process starting: the first claims only its share)."""
        deadline = time.monotonic() + 60
        while True:
            found: dict[str, int] = {}
            for port in self.ports:
                data = _staff_read(port, "/api/floor/owners", token)
                for table in data["owns"] if data["split"] else []:
                    found[table] = port
            if all(t in found for t in SCALE_TABLES) or time.monotonic() > deadline:
                return found
            time.sleep(0.5)

    def cpu(self) -> float:
        return sum(proc_cpu_seconds(p.pid) for p in self.procs)

    def kept_to(self, token: str) -> list[str]:
        """The CPU each process keeps its threads on, as it says (``server.cpu_pin``):
        "none" where it is not kept to one, "?" where it does not say (an older tree)."""
        said = []
        for port in self.ports:
            cpu = _staff_read(port, "/api/floor/load", token).get("cpu", "?")
            said.append("none" if cpu is None else str(cpu))
        return said

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        for errors in self.errors:
            errors.close()


def plan(groups: dict[str, list[str]], clients: int, ports: list[int],
         owned: dict[int, list[str]] | None) -> Plan:
    """Each client's table, player and port: with ``owned`` (each port's bench tables), the
    clients shared equally between the ports, each port's spread over its own tables; without,
    spread over every bench table, each table's clients shared between the ports (one
    process, or a load balancer that does not know the owners: about half of every table's
    commands reach a process that does not own it, however the tables fell; sent to
    ``ports[i % len(ports)]``, each table's clients all went to one port, and the share
    forwarded was all or nothing by how the split fell).

    >>> groups = {t: [f"{t}-p{i}" for i in range(2)] for t in SCALE_TABLES}
    >>> plan(groups, 3, [80, 81], None)
    [('bench-1', 'bench-1-p0', 80), ('bench-2', 'bench-2-p0', 80), ('bench-3', 'bench-3-p0', 80)]
    >>> [c for c in plan(groups, 16, [80, 81], None) if c[0] == "bench-1"]
    [('bench-1', 'bench-1-p0', 80), ('bench-1', 'bench-1-p1', 81)]
    >>> for client in plan(groups, 4, [80, 81], {80: ["bench-1"], 81: ["bench-2", "bench-5"]}):
    ...     print(client)
    ('bench-1', 'bench-1-p0', 80)
    ('bench-2', 'bench-2-p0', 81)
    ('bench-1', 'bench-1-p1', 80)
    ('bench-5', 'bench-5-p0', 81)
    """
    given = dict.fromkeys(groups, 0)  # players of each table given a client so far
    out: Plan = []
    for i in range(clients):
        port = ports[i % len(ports) if owned is not None
                     else i // len(SCALE_TABLES) % len(ports)]
        tables = owned[port] if owned is not None else SCALE_TABLES
        table = tables[(i // len(ports) if owned is not None else i) % len(tables)]
        out.append((table, groups[table][given[table]], port))
        given[table] += 1
    return out


async def closed_loop(clients: Plan, tokens: dict[str, str], seconds: float,
                      warmup: float) -> tuple[Stats, float]:
    """A client for each of ``clients`` (table, player, port), each betting as fast as it is
    answered: each spot placed, then taken down, then the next (``bet_turn``; a request shed
    with a 503 is sent again), so that the run can go on for ever with every request a
    command accepted, half of them bets in every configuration."""
    bets = spots(removable=True)
    stats = Stats()
    start = now()
    warm_until, stop_at = start + warmup, start + warmup + seconds

    async def client(table: str, player: str, port: int) -> None:
        conn = Connection("127.0.0.1", port, tokens[player])
        path = f"/api/tables/{table}/bets"
        held: dict[int, str] = {}
        spot = 0
        while now() < stop_at:
            code, amount = bets[spot]
            sent = now()
            try:
                status, placing = await bet_turn(conn, path, {"wager": code, "amount": amount},
                                                 held, spot)
            except (OSError, asyncio.IncompleteReadError, ValueError) as e:
                stats.error(type(e).__name__)
                await conn.close()
                continue
            if spot not in held and status != 503:  # placed and taken down: the next spot
                spot = (spot + 1) % len(bets)
            if sent < warm_until:
                continue
            if status == 200:
                stats.taken_down += not placing
                stats.ok.append(now() - sent)
            elif status == 503:
                stats.busy.append(now() - sent)
            elif status in (409, 422):
                stats.refused += 1
            else:
                stats.error(f"HTTP {status}")
        # After the window, the bet it holds taken down (again after a 503): the next line,
        # on the same players, finds the layout bare.
        give_up = now() + 60
        while held and now() < give_up:
            try:
                await bet_turn(conn, path, {}, held, spot)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                await conn.close()
            if held:
                await asyncio.sleep(0.1)
        await conn.close()

    await asyncio.gather(*(client(*c) for c in clients))
    return stats, seconds


def measure(name: str, url: str, schema: str, count: int, routed: bool,
            groups: dict[str, list[str]], tokens: dict[str, str], clients: int,
            seconds: float, warmup: float, servers: Servers | None = None) -> dict[str, Any]:
    """One configuration's line, on ``servers`` when given (left running: the caller's), else
    on ``count`` processes started for it."""
    own = servers is None
    servers = servers or Servers(url, schema, count)
    try:
        owned: dict[int, list[str]] | None = None
        if count > 1:
            found = servers.owners(tokens[STAFF])  # the split settled (spread: then blindly)
            if routed:
                owned = {port: [t for t in SCALE_TABLES if found.get(t) == port]
                         for port in servers.ports}
                if not all(owned.values()):  # the split did not settle: the first takes all
                    print(f"  (the owners found: {found}; the clients go to the first)")
                    owned = {servers.ports[0]: list(SCALE_TABLES)}
                print(f"  {'':<34} owned: " + "; ".join(
                    f"{len(t)} by process {k + 1}" for k, t in enumerate(owned.values())),
                    flush=True)
        ports = list(owned) if owned is not None else servers.ports
        clients_plan = plan(groups, clients, ports, owned)
        g0, s0, w0 = cpu_seconds(), servers.cpu(), now()
        p0, (b0, t0) = postgres_cpu_seconds(), machine_busy_seconds()
        stats, measured = asyncio.run(closed_loop(clients_plan, tokens, seconds, warmup))
        g1, s1, w1 = cpu_seconds(), servers.cpu(), now()
        p1, (b1, t1) = postgres_cpu_seconds(), machine_busy_seconds()
        line = report_line(name, stats, measured, g1 - g0, s1 - s0, 0, wall=w1 - w0)
        # Where the cores went: a second process can only be given what the first left idle.
        line["postgres_cpu"], line["machine_busy"] = (p1 - p0) / (w1 - w0), (b1 - b0) / (t1 - t0)
        print(f"  {'':<34} PostgreSQL CPU {100 * line['postgres_cpu']:.0f}%; the machine's "
              f"{os.cpu_count()} cores busy {100 * line['machine_busy']:.0f}% of the time; "
              f"each process kept to CPU {', '.join(servers.kept_to(tokens[STAFF]))}",
              flush=True)
        for k, port in enumerate(servers.ports):
            said = servers.said(k).strip().splitlines()
            if said:  # a warning (an owner that did not answer a forwarded command...)
                print(f"  {'':<34} the server on {port} wrote {len(said)} lines to stderr, the "
                      f"last: {said[-1][:300]}", flush=True)
        return line
    finally:
        if own:
            servers.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--pg", default=None, help="PostgreSQL URL (default: 127.0.0.1:5432/test)")
    parser.add_argument("--quick", action="store_true",
                        help="half a second per configuration, 40 clients, the two processes "
                        "started once for both of theirs: checks the bench runs")
    args = parser.parse_args()
    warmup = 2.0
    if args.quick:
        args.seconds, args.clients, args.rounds, warmup = 0.5, 40, 1, 0.25
    # Players enough at each table for half the clients: a process that owns a single bench
    # table gives it all of its half.
    players = -(-args.clients // 2)
    install_uvloop()
    url = find_pg(args.pg)
    schema = f"scale_{uuid.uuid4().hex[:10]}"
    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores shared by the "
          f"servers, the generator and PostgreSQL; {args.clients} closed-loop clients; "
          f"{args.seconds:g} s windows after {warmup:g} s of warm-up", flush=True)
    groups, tokens = prepare(url, schema, players)
    rows: list[tuple[int, str, dict[str, Any]]] = []
    two: Servers | None = None  # --quick: one pair for both two-process lines
    try:
        for k in range(args.rounds):
            print(f"round {k + 1}: load average {os.getloadavg()[0]:.1f}", flush=True)
            for name, count, routed in (
                    ("1 process", 1, True), ("2 processes, routed to owners", 2, True),
                    ("2 processes, spread (forwarded)", 2, False)):
                if args.quick and count == 2 and two is None:
                    two = Servers(url, schema, 2)  # a server's start-up is most of a line's CPU
                rows.append((k, name, measure(name, url, schema, count, routed, groups,
                                              tokens, args.clients, args.seconds, warmup,
                                              two if count == 2 else None)))
    finally:
        if two is not None:
            two.stop()
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    print("\nheadline (accepted commands/s, bets and their take-downs, against one process "
          "in the same round; refused = 409/422)")
    for k in range(args.rounds):
        one = next(line["per_s"] for r, n, line in rows if r == k and n == "1 process")
        for r, name, line in rows:
            if r == k:
                bets = (line["accepted"] - line["taken_down"]) / args.seconds
                ratio = line["per_s"] / one if one else float("nan")
                print(f"  round {k + 1} {name:<34} accepted {line['per_s']:7.0f}/s (bets "
                      f"{bets:.0f}/s)  = {ratio:4.2f}x  503s "
                      f"{line['busy']} ({100 * line['busy_share']:.1f}%)  refused "
                      f"{line['refused']}  p99 "
                      f"{line['p99_ms']:6.1f} ms  servers' CPU {100 * line['server_cpu']:.0f}%"
                      f"  PostgreSQL {100 * line['postgres_cpu']:.0f}%  cores busy "
                      f"{100 * line['machine_busy']:.0f}%")
    print(f"load average {os.getloadavg()[0]:.1f} at the end; reproduce: python -m "
          f"bench.scale_bench {' '.join(sys.argv[1:])}", flush=True)


if __name__ == "__main__":
    main()
