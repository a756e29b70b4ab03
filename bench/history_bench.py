"""History benchmark: does a floor's start-up and periodic check follow the work, or the log?

Run: ``.venv/bin/python -m bench.history_bench`` (stores of 10^5 and 10^7 events; ``--sizes``
to choose; ``--quick`` for 10^3 and 10^4 in seconds). Figures are printed, never asserted.

For each size a keyed SQLite store is built in bulk through ``EventStore.append`` (the real
keyed chain): four PA Craps tables whose history is players joining and leaving, each table
with a snapshot at its head, as a floor that ran for a long time has. A checkpoint file is
signed by a first start. Then, side by side for each size:

- the whole-log walk (``verify_store`` without replay: what every start-up and every period
  cost before the checks were incremental - and what ``audit verify`` still does);
- a restart of the floor over its checkpoint (``build_floor``: verify, then load every table
  from its snapshot and the tail);
- one periodic check (``Floor.verify_all``) after a minute of play (events on each table).

The ratios of the largest size to the smallest are printed last; the target is 2x or less
for the restart and the periodic check. ``--quick`` only shows that the bench runs: its stores
are smaller than what a start reads whatever the history (the last 3,000 events of each
table, for its views; one rolling slice), so its ratios say nothing about the target.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from dicetable.games.events import Event
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from dicetable.store.audit import verify_store
from dicetable.store.chain import make_snapshot
from dicetable.store.checkpoints import heads_of, write_checkpoint
from dicetable.store.durable import DurableTable
from dicetable.store.incremental import ROLLING_SLICE
from dicetable.store.replay import load_state
from dicetable.store.sqlite import SqliteStore
from dicetable.store.state_codec import encode_state

KEY = bytes(range(32))
TABLES = 4
BATCH = 5_000
MINUTE = 100
"""Events per table in the minute before a periodic check."""

T = TypeVar("T")


def _timed(work: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    out = work()
    return time.perf_counter() - start, out


def _history(template: list[Event], first: int, last: int) -> Iterator[Event]:
    """Events ``first``..``last`` of a table whose history repeats ``template`` (a player
    joining and leaving)."""
    for seq in range(first, last + 1):
        yield dataclasses.replace(template[(seq - first) % len(template)], seq=seq)


def build(path: Path, events: int, *, check_snapshot: bool = False) -> None:
    """A keyed store of about ``events`` events over ``TABLES`` tables, each with a snapshot
    at its head (the state after joins and leaves is the opening's, at a later seq)."""
    per_table = events // TABLES | 1  # odd: after whole join-leave cycles
    with SqliteStore(path, synchronous="OFF", key=KEY) as store:
        for n in range(TABLES):
            tid = f"hist-{n + 1}"
            table = DurableTable.open(store, "pa-craps", tid, snapshot_every=0).table
            table.join("alice")
            table.leave("alice")
            state = encode_state(table.state)
            template = list(store.table_events(tid, after=1))
            seq = store.head(tid).seq
            while seq < per_table:
                last = min(per_table, seq + BATCH)
                store.append(tid, list(_history(template, seq + 1, last)), expected=seq)
                seq = last
            head = store.head(tid)
            assert head.seq % len(template) == 1  # back where the opening left it
            data = {**state, "seq": head.seq}
            store.save_snapshot(make_snapshot(tid, head.seq, head.hash, data, KEY))
            if check_snapshot:
                replayed = encode_state(load_state(store, tid, use_snapshot=False))
                assert replayed == data, "the bench's snapshot is not the replayed state"


def measure(directory: Path, events: int, *, check: bool, baseline: bool
            ) -> dict[str, float]:
    """Build, then time the restart and one periodic check (and, with ``baseline``, the
    first start and the whole-log walk; without it the builder signs the first checkpoint
    itself, as ``dicetable audit checkpoint`` would)."""
    db, cps = directory / f"h{events}.db", directory / f"h{events}.cp.jsonl"
    built, _ = _timed(lambda: build(db, events, check_snapshot=check))
    print(f"  built {events:,} events in {built:.1f} s ({db.stat().st_size / 2**20:.0f} MiB)",
          flush=True)
    out: dict[str, float] = {}
    if baseline:
        out["first"], (floor, _) = _timed(lambda: build_floor(db, key=KEY, checkpoints=cps))
        _close(floor)
        print(f"  first start (no checkpoint yet):   {out['first']:8.3f} s", flush=True)
        with SqliteStore(db, key=KEY, create=False) as store:
            out["walk"], reports = _timed(lambda: verify_store(store, replay=False))
            assert all(r.ok for r in reports), [r.problems for r in reports if not r.ok]
        print(f"  whole-log walk (the old check):    {out['walk']:8.3f} s", flush=True)
    else:
        with SqliteStore(db, key=KEY, create=False) as store:
            write_checkpoint(cps, KEY, heads_of([store]), at="2026-01-01T06:00:00+00:00")
        _close(build_floor(db, key=KEY, checkpoints=cps)[0])  # as the first start, untimed
        print("  first start and whole-log walk:    not timed (the builder signed the "
              "checkpoint)", flush=True)
    out["restart"], (floor, _) = _timed(lambda: build_floor(db, key=KEY, checkpoints=cps))
    try:
        assert not floor.faults.open, floor.faults.open
        for tid in sorted(floor.tables):
            info = floor.get(tid)
            with info.lock:
                for _ in range(MINUTE // 2):
                    info.table.join("bob")
                    info.table.leave("bob")
        chains = floor.verification.chains
        new, rolled = chains.walked_new, chains.walked_rolling
        out["period"], faulted = _timed(floor.verify_all)
        assert faulted == [], faulted
        walked = (chains.walked_new - new, chains.walked_rolling - rolled)
    finally:
        _close(floor)
    print(f"  restart over its checkpoint:       {out['restart']:8.3f} s")
    print(f"  one periodic check:                {out['period']:8.3f} s (walked {walked[0]} "
          f"new events, {walked[1]} of the rolling pass)", flush=True)
    for path in (db, cps, Path(f"{db}-wal"), Path(f"{db}-shm")):
        path.unlink(missing_ok=True)
    return out


def _close(floor: Floor) -> None:
    floor.close()
    floor.store.close()
    floor.accounts.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10^3 and 10^4 events, seconds")
    parser.add_argument("--sizes", default="100000,10000000",
                        help="comma-separated store sizes in events (smallest first)")
    parser.add_argument("--slice", type=int, default=None,
                        help=f"the rolling pass's events per period (default {ROLLING_SLICE:,}; "
                        "--quick: 500)")
    parser.add_argument("--baseline-up-to", type=int, default=1_000_000,
                        help="time the first start and the whole-log walk only up to this "
                        "size (they grow with the log: 10^7 takes most of an hour)")
    parser.add_argument("--dir", default=None, help="where to build the stores (default: a "
                        "temporary directory)")
    args = parser.parse_args(argv)
    sizes = [1_000, 10_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    slice_events = args.slice or (500 if args.quick else ROLLING_SLICE)
    os.environ["DICETABLE_VERIFY_SLICE"] = str(slice_events)  # the floors built here read it
    print(f"history bench: sizes {sizes}, {TABLES} tables, rolling slice {slice_events:,} "
          f"events, load average {os.getloadavg()[0]:.2f}", flush=True)
    results = {}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for size in sizes:
            print(f"{size:,} events:", flush=True)
            results[size] = measure(Path(tmp), size, check=size <= 100_000,
                                    baseline=size <= args.baseline_up_to)
    small, large = results[sizes[0]], results[sizes[-1]]
    print(f"ratio {sizes[-1]:,} / {sizes[0]:,} events (target <= 2x for the last two):")
    for name, label in (("walk", "whole-log walk"), ("first", "first start"),
                        ("restart", "restart over its checkpoint"),
                        ("period", "one periodic check")):
        if name in large and name in small:
            print(f"  {label:30s} {large[name] / small[name]:8.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
