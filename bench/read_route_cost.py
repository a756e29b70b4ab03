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

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from bench import side_by_side
from bench.side_by_side import served

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

    async def measured(state: dict[str, Any]) -> dict[str, float]:
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
        return out

    return served(app, measured, floor, folder)


def report(seen: dict[str, list[dict[str, Any]]], requests: int, rounds: int) -> None:
    """Each route's CPU per request, by design (median), and this tree's ratio."""
    designs = list(seen)
    print(f"{requests} GETs per route, {AT_ONCE} at a time, in process (no sockets); CPU per "
          f"request, median of {rounds} round(s), designs in turn; load average "
          f"{os.getloadavg()[0]:.1f}")
    base = next((n for n in designs if n != "this"), None)
    for path in ROUTES:
        each = {name: statistics.median(r[path] for r in seen[name]) for name in designs}
        line = "  ".join(f"{name} {us:6.0f} us" for name, us in each.items())
        ratio = f"  = {each['this'] / each[base]:.2f}x" if base is not None else ""
        print(f"  GET {path:26} {line}{ratio}")


def main() -> None:
    side_by_side.main(__doc__ or "", "bench.read_route_cost", measure, report,
                      count=("--requests", 4000, 400), rounds=3)


if __name__ == "__main__":
    main()
