"""What a refusal for load costs the event loop, in process: CPU per 503.

Under overload the server's event loop reads every request and answers the excess 503
(``server.refusing_http``); scenario (d) of ``bench.load_bench`` found that loop, not the
tables, to be what bounds an overloaded server (its thread never idle, the tables' threads
waiting for work). So a refusal's cost is the figure that decides how much of an overload
the server can refuse in time. Measured over time on a shared machine it is noise; measured
as CPU per refusal in one process, beside a baseline run in turn with it, it is a ratio.

Both designs read the same bet (``POST /api/tables/T/bets`` with the load generator's
headers) on one keep-alive connection whose transport only counts what is written (no
socket: the syscalls are the same for both and not what either design can change):

- ``refusing_http``: the server's protocol, the gate refusing every command as it is read;
- ``uvicorn + 503 app``: uvicorn's own protocol handing the request to an ASGI app that
  answers the same 503 at once (what a refusal cost before ``RefusingHttp``, and what any
  answer costs at least on uvicorn).

    .venv/bin/python -m bench.refusal_cost [--requests N] [--repeats K] [--quick]

Nothing is asserted about speed. Each design runs many short times, in turn: the figures
are each design's best run (the least disturbed) and the median of the pairs' ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import uvloop
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from dicetable.server.door import GATE_STATE, SERVER_BUSY, Admission, Impatience
from dicetable.server.refusing_http import RefusingHttp

REQUEST = (b"POST /api/tables/bench-1/bets HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Authorization: Bearer 6b0c3e5e7d3c4f2a9e1b8d7c6a5f4e3d2c1b0a99\r\n"
           b"Content-Type: application/json\r\nContent-Length: 32\r\n\r\n"
           b'{"wager": "pass", "amount": 500}')
"""A bet as ``bench.loadgen`` sends it."""


class CountingTransport(asyncio.Transport):
    """A connection that keeps nothing: it counts the writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.closing = False

    def write(self, data: Any) -> None:
        self.writes += 1

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000),
                "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class RefuseAll:
    """A load gate that refuses every command (the server full to the brim)."""

    def __init__(self) -> None:
        # none held, by client or by connection: each is written at once (one connection
        # sending again at once is what the resend hold holds: measured, every 503 was 20 ms)
        self.impatience = Impatience(hold=0.0, resend=0.0)
        self.admission = Admission()  # counts the retries among them, as a server's does

    def pipeline(self, method: str, path: str) -> object:
        return self

    def refusal_at(self, pipeline: object) -> bytes:
        return SERVER_BUSY

    def admit_at(self, pipeline: object, *, count: bool = True) -> bytes:
        return self.refusal_at(pipeline)

    def known(self, headers: dict[bytes, bytes]) -> bool:
        return True


async def busy_app(scope: Any, receive: Any, send: Any) -> None:
    """The same 503 from an ASGI app, at once."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1")]})
    await send({"type": "http.response.body", "body": SERVER_BUSY})


def uvicorn_config(app: Any) -> Config:
    config = Config(app=app, access_log=False, interface="asgi3", lifespan="off")
    config.load()
    return config


def _connection(protocol: type[HttpToolsProtocol], app: Any, state: dict[str, Any]
                ) -> tuple[HttpToolsProtocol, CountingTransport]:
    made = protocol(config=uvicorn_config(app), server_state=ServerState(), app_state=state)
    transport = CountingTransport()
    made.connection_made(transport)
    return made, transport


async def cpu_per_answer(design: str, requests: int) -> float:
    """CPU seconds per request read and answered 503 on one connection (the loop run
    between requests, as a server's would, so that an app's task completes)."""
    if design == REFUSING:
        gate = RefuseAll()
        protocol, transport = _connection(RefusingHttp, busy_app, {GATE_STATE: gate})
    else:
        protocol, transport = _connection(HttpToolsProtocol, busy_app, {})

    async def answer(n: int) -> None:
        for k in range(n):
            protocol.data_received(REQUEST)
            while transport.writes <= k:  # the answer written (an app's task, its turn)
                await asyncio.sleep(0)

    await answer(200)  # warm: everything built once is built
    transport.writes = 0
    began = time.process_time()
    await answer(requests)
    spent = time.process_time() - began
    if transport.writes != requests:
        raise RuntimeError(f"{design}: {transport.writes} answers to {requests} requests")
    if design == REFUSING and gate.impatience.held:
        raise RuntimeError(f"{design}: {gate.impatience.held} of its 503s were held: the run "
                           "measured the hold, not a refusal")
    return spent / requests


REFUSING = "refusing_http"
BASELINE = "uvicorn + 503 app"
DESIGNS = (BASELINE, REFUSING)


def measure(requests: int, repeats: int, run: Callable[[Any], Any] = uvloop.run
            ) -> tuple[dict[str, float], list[float]]:
    """Each design ``repeats`` times, in turn, in short runs (the order swapped each time):
    the best of each (the least disturbed), and each pair's ratio of refusing to baseline
    (a machine whose speed drifts over seconds changes both of a pair alike)."""
    best = {design: float("inf") for design in DESIGNS}
    ratios = []
    for k in range(repeats):
        spent = {}
        for design in DESIGNS if k % 2 == 0 else DESIGNS[::-1]:
            spent[design] = run(cpu_per_answer(design, requests))
            best[design] = min(best[design], spent[design])
        ratios.append(spent[REFUSING] / spent[BASELINE])
    return best, ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2_000, help="per run")
    parser.add_argument("--repeats", type=int, default=25, help="runs of each design")
    parser.add_argument("--quick", action="store_true", help="1,000 requests, 4 repeats")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.repeats = 1_000, 4
    best, ratios = measure(args.requests, args.repeats)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.requests:,} bets read and answered "
          f"503 on one connection per run, {args.repeats} runs of each design in turn; CPU of "
          "this process (no socket: the transport counts its writes)")
    for design in DESIGNS:
        print(f"  {design:<20} {best[design] * 1e6:7.1f} us CPU per 503 (best run)")
    ratios.sort()
    print(f"  refusing / baseline, pair by pair: median {statistics.median(ratios):.2f}x "
          f"(middle half {ratios[len(ratios) // 4]:.2f}-{ratios[(3 * len(ratios)) // 4]:.2f})")
    print(f"reproduce: python -m bench.refusal_cost --requests {args.requests} "
          f"--repeats {args.repeats}")


if __name__ == "__main__":
    main()
