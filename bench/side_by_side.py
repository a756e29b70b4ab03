"""Designs measured in turn, each in a fresh process: this tree beside a baseline commit's.

``read_route_cost`` and ``bet_cost`` measure a figure in process (CPU per request), the app's
lifespan started as a server starts it (``lifespan``), with one command line (``main``). Each
design runs in a process of its own (``python -m MODULE --child ...`` with that design's
``src`` first on the path), so that nothing one design imported or built is the other's, and
the designs take turns, the order swapped each round, so that what the machine does
meanwhile falls on both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, MutableMapping
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent

Figures = dict[str, Any]


def in_process(module: str, src: Path | None, *args: str) -> Figures:
    """``python -m MODULE --child ARGS`` in a fresh process of ``src`` (None: this tree):
    the JSON object its last line prints."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src or ROOT / "src"), str(ROOT)])
    done = subprocess.run([sys.executable, "-m", module, "--child", *args], env=env,
                          cwd=ROOT, check=True, capture_output=True, text=True)
    figures: Figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def in_turn(baseline: str, rounds: int, run: Callable[[Path | None], Figures]
            ) -> dict[str, list[Figures]]:
    """``run`` for "this" tree and for ``baseline``'s ``src`` (exported; "none", or a ref
    that cannot be exported: this tree alone), ``rounds`` times in turn: each design's
    figures, by name, round by round."""
    from bench.load_bench import export_baseline

    designs: dict[str, Path | None] = {"this": None}
    base_dir = Path(tempfile.mkdtemp(prefix="dt-base-"))
    try:
        if baseline != "none":
            src = export_baseline(baseline, base_dir)
            if src is not None:
                designs[baseline] = src
        seen: dict[str, list[Figures]] = {name: [] for name in designs}
        for k in range(rounds):
            order = list(designs)
            if k % 2:
                order.reverse()
            for name in order:
                seen[name].append(run(designs[name]))
        return seen
    finally:
        shutil.rmtree(base_dir, ignore_errors=True)


Report = Callable[[dict[str, list[Figures]], int, int], None]
"""Print each design's figures (by name, round by round), given the count and the rounds."""


def main(doc: str, module: str, measure: Callable[[int], Figures], report: Report, *,
         count: tuple[str, int, int], rounds: int) -> None:
    """A side-by-side benchmark's command line: ``--baseline REF|none``, ``count`` (its
    option, default and ``--quick`` value), ``--rounds`` (``--quick``: one, this tree alone);
    each design's ``measure`` of the count in a process of its own, in turn, then
    ``report``."""
    option, default, quick = count
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--baseline", default="HEAD~1",
                        help="a git ref whose src runs beside this tree, or 'none'")
    parser.add_argument(option, dest="count", type=int, default=default)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--quick", action="store_true", help=f"{quick:,} and 1 round")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child)))
        return
    n, rounds = (quick, 1) if args.quick else (args.count, args.rounds)
    seen = in_turn("none" if args.quick else args.baseline, rounds,
                   lambda src: in_process(module, src, str(n)))
    report(seen, n, rounds)
    print(f"reproduce: python -m {module}" + (" --quick" if args.quick else
          f" --baseline {args.baseline} {option} {n} --rounds {rounds}"))


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[dict[str, Any]]:
    """The ASGI ``app``'s lifespan started (its state yielded, as uvicorn hands it to each
    connection) and shut down at the end."""
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
    try:
        yield state
    finally:
        await steps.put({"type": "lifespan.shutdown"})
        await life


T = TypeVar("T")


def served(app: Any, measured: Callable[[dict[str, Any]], Awaitable[T]], floor: Any,
           folder: Path, run: Callable[[Coroutine[Any, Any, T]], T] = asyncio.run) -> T:
    """``measured(state)`` with ``app``'s lifespan started (``lifespan``), on the event loop
    ``run`` makes (``asyncio.run``, ``uvloop.run``); then, whatever happened, ``floor``
    closed and the ``folder`` its store was made in removed."""
    async def within() -> T:
        async with lifespan(app) as state:
            return await measured(state)

    try:
        return run(within())
    finally:
        floor.close()
        shutil.rmtree(folder, ignore_errors=True)
