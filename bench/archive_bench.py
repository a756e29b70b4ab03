"""Archive benchmark: with a year of history archived, does a floor start and check as fast as
a small live store, and does a day a year ago come back in under a second?

Run: ``.venv/bin/python -m bench.archive_bench`` (a year of 10^6 events beside a 10^5-event
store; ``--events``, ``--days``; ``--quick``: 2x10^4 events over 20 days). Figures are printed,
never asserted.

The year: four PA Craps tables (``bench.history_bench``'s join-and-leave history, as synthetic
events through the real keyed ``EventStore.append``) whose events are spread evenly over
``--days`` gaming days; every closed day is then archived (``dicetable archive``'s
``archive_through``: one signed, compressed file a day), the last day stays live, a snapshot
sits at each head and a checkpoint is signed. Side by side with a 10^5-event store with no
archives (``history_bench.measure``), each is timed for a restart over its checkpoint
(``build_floor``) and one periodic check (``Floor.verify_all``) after a minute of play; the
year also for ``recall_day`` of its first day and of a day mid-year (each table snapshots once
a day, as a floor's tables snapshot as they play: a recall replays from the snapshot before
the day). The issue's target is 10^8 events (a year of a
busy floor); the default here is what this machine builds in minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.history_bench import KEY, TABLES, _close, _timed, measure
from dicetable.server.main import build_floor
from dicetable.store.archive import archive_through
from dicetable.store.chain import make_snapshot
from dicetable.store.checkpoints import heads_of, write_checkpoint
from dicetable.store.durable import DurableTable
from dicetable.store.recall import recall_day
from dicetable.store.sqlite import SqliteStore
from dicetable.store.state_codec import encode_state

START = datetime.combine(datetime.now(UTC).date() + timedelta(days=1), datetime.min.time(),
                         tzinfo=UTC) + timedelta(hours=12)
"""Noon of the year's first gaming day: the day after the tables open (their openings carry
the real time, and a log's times only move forward); a gaming day starts at 06:00 UTC."""
BATCH = 5_000
MINUTE = 100


def build_year(path: Path, events: int, days: int) -> None:
    """About ``events`` events over ``TABLES`` tables, spread evenly over ``days`` days."""
    per_table = events // TABLES | 1
    per_day = max(2, per_table // days)
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
                batch = []
                for s in range(seq + 1, last + 1):
                    day = min(days - 1, (s - 1) // per_day)
                    at = START + timedelta(days=day, seconds=(s - 1) % per_day % 60_000)
                    batch.append(dataclasses.replace(template[(s - seq - 1) % len(template)],
                                                     seq=s, at=at.isoformat()))
                store.append(tid, batch, expected=seq)
                seq = last
            head = store.head(tid)
            store.save_snapshot(make_snapshot(tid, head.seq, head.hash,
                                              {**state, "seq": head.seq}, KEY))
            for day in range(days - 1):  # one a day, as a floor's tables snapshot as they play
                last = min(per_table, (day + 1) * per_day)
                last -= 1 - last % 2  # after a leave: the state is the opening's
                row = next(store.records(tid, after=last - 1, until=last))
                store.save_snapshot(make_snapshot(tid, last, row.hash,
                                                  {**state, "seq": last}, KEY))


def measure_year(directory: Path, events: int, days: int) -> dict[str, float]:
    db, cps = directory / "year.db", directory / "year.cp.jsonl"
    built, _ = _timed(lambda: build_year(db, events, days))
    print(f"  built {events:,} events over {days} days in {built:.1f} s", flush=True)
    last_day = (START + timedelta(days=days - 1)).date().isoformat()
    through = (START + timedelta(days=days - 2)).date().isoformat()
    with SqliteStore(db, key=KEY, create=False) as store:
        took, done = _timed(lambda: archive_through(store, through, directory / "archive",
                                                    today=last_day))
        live = sum(store.head(t).seq for t in store.tables()) - done.events
        write_checkpoint(cps, KEY, heads_of([store]), at=f"{last_day}T12:00:00+00:00")
    files = len(list((directory / "archive").glob("*")))
    print(f"  archived {done.events:,} events into {files} files in {took:.1f} s; "
          f"{live:,} events stay live ({db.stat().st_size / 2**20:.1f} MiB store)", flush=True)
    _close(build_floor(db, key=KEY, checkpoints=cps)[0])  # the first start, untimed
    out: dict[str, float] = {}
    out["restart"], (floor, _) = _timed(lambda: build_floor(db, key=KEY, checkpoints=cps))
    try:
        assert not floor.faults.open, floor.faults.open
        for tid in sorted(floor.tables):
            info = floor.get(tid)
            with info.lock:
                for _ in range(MINUTE // 2):
                    info.table.join("bob")
                    info.table.leave("bob")
        out["period"], faulted = _timed(floor.verify_all)
        assert faulted == [], faulted
    finally:
        _close(floor)
    first_day = START.date().isoformat()
    middle = (START + timedelta(days=days // 2)).date().isoformat()
    with SqliteStore(db, key=KEY, create=False) as store:
        start = time.perf_counter()
        rounds = recall_day(store, "hist-1", first_day)
        out["recall"] = time.perf_counter() - start
        start = time.perf_counter()
        recall_day(store, "hist-1", middle)
        out["recall_middle"] = time.perf_counter() - start
    checked = floor.verification.chains.checked_archive_bytes
    print(f"  restart over its checkpoint:       {out['restart']:8.3f} s")
    print(f"  one periodic check:                {out['period']:8.3f} s ({checked / 2**20:.1f} "
          "MiB of archives hashed so far by the rolling pass)")
    print(f"  recall of {first_day} (archived):  {out['recall']:8.3f} s ({len(rounds)} "
          "rounds)")
    print(f"  recall of {middle} (archived):  {out['recall_middle']:8.3f} s", flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2x10^4 events over 20 days")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--baseline", type=int, default=100_000,
                        help="events of the live store compared with (default 10^5)")
    args = parser.parse_args(argv)
    events, days, baseline = args.events, args.days, args.baseline
    if args.quick:
        events, days, baseline = 20_000, 20, 10_000
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as tmp:
        print(f"a live store of {baseline:,} events:", flush=True)
        small = measure(Path(tmp), baseline, check=False, baseline=False)
        print(f"a year: {events:,} events, {days} days, all but the last archived:",
              flush=True)
        year = measure_year(Path(tmp), events, days)
    for name in ("restart", "period"):
        print(f"{name}: year / live store = {year[name] / small[name]:.2f}x (target <= 2x)")
    print(f"recall of the year's first day: {year['recall']:.3f} s, of a day mid-year: "
          f"{year['recall_middle']:.3f} s (target < 1 s)")


if __name__ == "__main__":
    main()
