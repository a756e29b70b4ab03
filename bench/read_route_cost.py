"""What a plain read costs the server, in process: CPU per request through the whole app.

A page's reads (the table's view, the account) are the requests a floor sends most after its
bets: each names its caller by session, and the framework runs each plain route on a worker
thread. Measured without sockets (the ASGI app called directly, 20 requests at a time from
one event loop, the app's lifespan started), as CPU seconds of the process per request, this
tree beside a baseline commit's ``src`` run in turn with it (``--baseline``).

    .venv/bin/python -m bench.read_route_cost [--baseline REF] [--requests N] [--rounds K]
                                               [--quick]

Nothing is asserted about speed. Figures: each design's median over the rounds, per route,
and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

ROUTES = ("/api/me", "/api/tables/craps-pa-1")
"""The account (the page's header) and the table's view (every page of a table)."""
AT_ONCE = 20


def measure(requests: int) -> dict[str, float]:
    """CPU microseconds per request of each of ``ROUTES``, in this process (the tree on
    ``sys.path``)."""
    from argon2 import PasswordHasher

    from dicetable.server.app import create_app
    from dicetable.server.demo import DEMO_PASSWORD
    from dicetable.server.main import build_floor

    folder = Path(tempfile.mkdtemp(prefix="dt-reads-"))
    # cheap hashes: the demo floor's logins are set-up here, not what is measured
    floor, _ = build_floor(folder / "floor.db",
                           hasher=PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))
    app = create_app(floor, electronic_loop=False, clock_seconds=None)
    token = floor.accounts.login("alice", DEMO_PASSWORD)

    async def run() -> dict[str, float]:
        state: dict[str, Any] = {}
        steps: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        await steps.put({"type": "lifespan.startup"})
        started = asyncio.Event()

        async def said(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "lifespan.startup.complete":
                started.set()

        life = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"},
                                        "state": state}, steps.get, said))
        await started.wait()

        async def get(path: str) -> int:
            scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                     "method": "GET", "scheme": "http", "path": path,
                     "raw_path": path.encode(), "query_string": b"", "root_path": "",
                     "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
                     "headers": [(b"host", b"bench"),
                                 (b"authorization", f"Bearer {token}".encode())],
                     "state": dict(state)}
            status = 0

            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": b"", "more_body": False}

            async def send(message: MutableMapping[str, Any]) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = message["status"]

            await app(scope, receive, send)
            return status

        out = {}
        for path in ROUTES:
            for _ in range(100):  # warm: the route's first answers build what it keeps
                if await get(path) != 200:
                    raise RuntimeError(f"GET {path} was not answered 200")
            cpu = time.process_time()
            for _ in range(requests // AT_ONCE):
                statuses = await asyncio.gather(*(get(path) for _ in range(AT_ONCE)))
                if set(statuses) != {200}:
                    raise RuntimeError(f"GET {path}: {statuses}")
            out[path] = (time.process_time() - cpu) / (requests // AT_ONCE * AT_ONCE) * 1e6
        await steps.put({"type": "lifespan.shutdown"})
        await life
        return out

    try:
        return asyncio.run(run())
    finally:
        floor.close()
        shutil.rmtree(folder, ignore_errors=True)


def in_process(src: Path | None, requests: int) -> dict[str, float]:
    """``measure`` in a fresh process of ``src`` (None: this tree)."""
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src or root / "src"), str(root)])
    done = subprocess.run([sys.executable, "-m", "bench.read_route_cost", "--child",
                           str(requests)], env=env, cwd=root, check=True,
                          capture_output=True, text=True)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="HEAD~1",
                        help="a git ref whose src runs beside this tree, or 'none'")
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="400 requests, 1 round")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child)))
        return
    requests, rounds = (400, 1) if args.quick else (args.requests, args.rounds)
    designs: dict[str, Path | None] = {"this": None}
    base_dir = Path(tempfile.mkdtemp(prefix="dt-base-"))
    if args.baseline != "none" and not args.quick:
        from bench.load_bench import export_baseline

        src = export_baseline(args.baseline, base_dir)
        if src is not None:
            designs[args.baseline] = src
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in designs}
    for k in range(rounds):
        order = list(designs)
        if k % 2:
            order.reverse()
        for name in order:
            seen[name].append(in_process(designs[name], requests))
    shutil.rmtree(base_dir, ignore_errors=True)
    print(f"{requests} GETs per route, {AT_ONCE} at a time, in process (no sockets); CPU per "
          f"request, median of {rounds} round(s), designs in turn; load average "
          f"{os.getloadavg()[0]:.1f}")
    base = next((n for n in designs if n != "this"), None)
    for path in ROUTES:
        each = {name: statistics.median(r[path] for r in seen[name]) for name in designs}
        line = "  ".join(f"{name} {us:6.0f} us" for name, us in each.items())
        ratio = f"  = {each['this'] / each[base]:.2f}x" if base is not None else ""
        print(f"  GET {path:26} {line}{ratio}")
    print("reproduce: python -m bench.read_route_cost"
          + (" --quick" if args.quick else f" --baseline {args.baseline} --requests "
             f"{requests} --rounds {rounds}"))


if __name__ == "__main__":
    main()
