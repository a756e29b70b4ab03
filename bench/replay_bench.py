"""Replay against the data: a full replay of a table's log beside reading and parsing its JSON.

A busy Craps table's log (``bench.store_bench.build_log``: 10^6 events by default, in SQLite,
kept in the work dir and reused) is read in two ways, taking turns so both share the
machine's state: (1) read every stored body and ``json.loads`` it - the floor of any replay (and
the same with ``orjson.loads``, the parser replay itself uses, for a stricter floor);
(2) ``load_state`` from event 1 (read, parse, upcast, decode, fold). The ratio (2)/(1) is what
the replay costs over the data itself (target <= 1.5x). Both are measured in CPU seconds of
this process (``time.process_time``) and wall seconds; medians of ``--repeats``. The folded
state is checked against the one a live table built, so a fast wrong fold cannot pass.

    .venv/bin/python -m bench.replay_bench [--events 1000000] [--repeats 3] [--quick]

Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from bench.store_bench import build_log
from dicetable.store.base import EventStore
from dicetable.store.replay import load_state
from dicetable.store.sqlite import SqliteStore
from dicetable.store.state_codec import encode_state

TABLE = "big"


def read_and_parse(store: EventStore, loads: Callable[[str], object] = json.loads) -> int:
    n = 0
    for body in store.bodies(TABLE):
        loads(body)
        n += 1
    return n


def measure(fn: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call, the collector as in production."""
    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="20,000 events, one repeat")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the log is kept and reused (default: the temp dir)")
    args = ap.parse_args(argv)
    if args.quick:
        args.events, args.repeats = min(args.events, 20_000), 1
    workdir = args.workdir or Path(tempfile.gettempdir()) / "dicetable-bench"
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"replay-{args.events}.db"
    ok = False
    if path.exists():
        with SqliteStore(path) as store:
            ok = store.head(TABLE).seq >= args.events
    if not ok:
        path.unlink(missing_ok=True)
        build_log(path, args.events, snapshot_every=max(1000, args.events // 100))
    load = os.getloadavg()
    print(f"replay bench: python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, log {path}")
    with SqliteStore(path) as store:
        n = store.head(TABLE).seq
        parse: list[tuple[float, float]] = []
        fast: list[tuple[float, float]] = []
        replay: list[tuple[float, float]] = []
        for _ in range(args.repeats):  # taking turns: both see the same machine
            parse.append(measure(lambda: read_and_parse(store)))
            fast.append(measure(lambda: read_and_parse(store, orjson.loads)))
            replay.append(measure(lambda: load_state(store, TABLE, use_snapshot=False)))
        state = load_state(store, TABLE, use_snapshot=False)
        if state.seq != n or not state.conserved():
            raise SystemExit("the replayed table does not add up")
        snap = store.latest_snapshot(TABLE)
        # The snapshot the live table took is the fold of its prefix, to the last item.
        if snap is not None and encode_state(load_state(store, TABLE, use_snapshot=False,
                                                        until=snap.seq)) != snap.data():
            raise SystemExit("the replay differs from the live table's snapshot")
    pc = statistics.median(c for c, _ in parse)
    pw = statistics.median(w for _, w in parse)
    oc = statistics.median(c for c, _ in fast)
    ow = statistics.median(w for _, w in fast)
    rc = statistics.median(c for c, _ in replay)
    rw = statistics.median(w for _, w in replay)
    print(f"{n:,} events, medians of {args.repeats}, side by side:")
    print(f"  {'read + json.loads (the data)':<40} {pc:7.2f} CPU-s {pw:7.2f} s  "
          f"{n / pw:>12,.0f} events/s")
    print(f"  {'read + orjson.loads (its parser)':<40} {oc:7.2f} CPU-s {ow:7.2f} s  "
          f"{n / ow:>12,.0f} events/s")
    print(f"  {'full replay (load_state from event 1)':<40} {rc:7.2f} CPU-s {rw:7.2f} s  "
          f"{n / rw:>12,.0f} events/s")
    print(f"  replay / read+json.loads: {rc / pc:.2f}x CPU, {rw / pw:.2f}x wall "
          "(target <= 1.5x)")
    print(f"  replay / read+orjson.loads: {rc / oc:.2f}x CPU, {rw / ow:.2f}x wall")
    print(f"  reproduce: python -m bench.replay_bench --events {args.events} "
          f"--repeats {args.repeats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
