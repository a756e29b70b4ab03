"""Archive benchmark: with a year of history archived, does a floor start and check as fast as
a small live store, and does a day a year ago come back in under a second?

Run: ``.venv/bin/python -m bench.archive_bench`` (a year of 10^6 events beside a 10^5-event
store; ``--events 1e8 --days 365`` is the issue's year; ``--quick``: 2x10^4 events over 20
days, every link and snapshot of the year then audited). Figures are printed, never asserted.

The year: four PA Craps tables (``bench.history_bench``'s join-and-leave history) whose events
are spread evenly over ``--days`` gaming days. The tables are opened through the store and
their opening day archived by ``archive_through``; each closed day after it is then written
straight to its archive file by the archive module's own writer (``write_archive``: one
signed, compressed file a day, every table's rows in it), its rows chained link by link under
the key from the head before it, the days in parallel processes (``--jobs``) once a first
pass has worked out each table's hash at each day's end; the index records each file's spans
and each table's head moves to its last archived event, as ``move_to_archive`` records them -
the events never pass through the live log, which at 509 bytes an event would be some 50 GB
for 10^8. The last day is appended through the store, chained on from the last archived link.
Each table snapshots at each day's end (as a floor's tables snapshot as they play: a recall
replays from the snapshot before its day), and a checkpoint is signed.

Side by side with a 10^5-event live store with no archives (``history_bench.measure``), each
is timed for a restart over its checkpoint (``build_floor``) and one periodic check
(``Floor.verify_all``) after a minute of play; the year also for ``recall_day`` of its first
day and of a day mid-year, each from a store opened afresh (wall and CPU seconds, with the
load average: the machine is shared).

Run at 10^7 (``--events 1e7 --days 36``: each day the issue's ~274k events; 10^8 would take
this shared 2-core machine hours to write, ~5 GB of files): built in 759 s; restart 0.70-1.84x
and one periodic check 0.62-1.17x the 10^5 live store's; recall of a 69k-event table day out
of a 278k-event day file 0.90 / 0.92 s wall (0.55 / 0.63 s CPU) at load 3.7, 1.4-1.9 s wall
at load 6-7 (main's recall of the same day: 3.4-3.8 s CPU). A whole year of 10^7
(``--days 365``: 365 files, 1,460 spans in the index) built in 419 s: restart 0.26x, period
0.31x, recall of a 6.8k-event table day 0.17 / 0.23 s wall at load 7.3.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hmac
import multiprocessing
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.history_bench import KEY, TABLES, _close, _timed, measure
from dicetable.server.main import build_floor
from dicetable.store.archive import archive_through, gaming_day, retention_for
from dicetable.store.archive_file import Span, write_archive
from dicetable.store.audit import verify_store
from dicetable.store.chain import StoredEvent, encode, make_snapshot
from dicetable.store.checkpoints import heads_of, write_checkpoint
from dicetable.store.durable import DurableTable
from dicetable.store.recall import recall_day
from dicetable.store.replay import opening
from dicetable.store.sqlite import SqliteStore
from dicetable.store.state_codec import encode_state, pack_for

START = datetime.combine(datetime.now(UTC).date() + timedelta(days=1), datetime.min.time(),
                         tzinfo=UTC) + timedelta(hours=12)
"""Noon of the year's first gaming day: the day after the tables open (their openings carry
the real time, and a log's times only move forward); a gaming day starts at 06:00 UTC."""
BATCH = 5_000
OPENED = 3
"""Each table's own first events, through the store: its opening, a join, a leave."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """Which seqs of each table fall on which day (the same for every table)."""

    per_table: int
    per_day: int
    days: int

    def day_of(self, seq: int) -> int:
        return min(self.days - 1, (seq - 1) // self.per_day)

    def seqs(self, day: int) -> range:
        """The synthetic seqs of ``day`` (the opening's come before the first)."""
        last = self.per_table if day == self.days - 1 else (day + 1) * self.per_day
        return range(max(OPENED + 1, day * self.per_day + 1), last + 1)

    def at(self, seq: int) -> str:
        """When event ``seq`` was recorded: its day's noon, a second per event (past midnight
        for a busy day, never past 06:00: the same gaming day)."""
        day = self.day_of(seq)
        return (START + timedelta(days=day, seconds=(seq - 1) % self.per_day % 60_000)
                ).isoformat()

    def times(self) -> Callable[[int], str]:
        """``at``, for a hundred million events: each second's text worked out once."""
        clocks = [(START + timedelta(seconds=n)) for n in range(min(self.per_day, 60_000))]
        late = [(c.date() - START.date()).days for c in clocks]
        hms = [c.strftime("T%H:%M:%S+00:00") for c in clocks]
        dates = [(START + timedelta(days=d)).date().isoformat() for d in range(self.days + 1)]
        per_day, last = self.per_day, self.days - 1

        def at(seq: int) -> str:
            n = (seq - 1) % per_day % 60_000
            return dates[min(last, (seq - 1) // per_day) + late[n]] + hms[n]
        return at

    def day_name(self, day: int) -> str:
        return (START + timedelta(days=day)).date().isoformat()

    @staticmethod
    def snapshot_seq(last: int) -> int:
        return last - (1 - last % 2)  # after a leave: the state is the opening's


@dataclasses.dataclass(frozen=True)
class Template:
    """A join and a leave as their stored JSON, split where the seq and the time go (the
    keys are sorted: ``at`` comes before ``seq``)."""

    kinds: tuple[str, str]
    parts: tuple[tuple[str, str, str], tuple[str, str, str]]

    def body(self, seq: int, at: str) -> tuple[str, str]:
        n = (seq - OPENED - 1) % 2
        a, b, c = self.parts[n]
        return self.kinds[n], f"{a}{at}{b}{seq}{c}"


_PROBE_SEQ, _PROBE_AT = 987_654_321_012, "1999-01-01T00:00:00+00:00"


def _template(events: list[Any]) -> Template:
    kinds, parts = [], []
    for event in events:
        kind, text = encode(dataclasses.replace(event, seq=_PROBE_SEQ, at=_PROBE_AT))
        a, rest = text.split(_PROBE_AT)
        b, c = rest.split(str(_PROBE_SEQ))
        kinds.append(kind)
        parts.append((a, b, c))
    return Template((kinds[0], kinds[1]), (parts[0], parts[1]))


def _chain(table: str, tpl: Template, plan: Plan, seqs: range, prev: str) -> list[StoredEvent]:
    """The stored rows of ``seqs``, each linked to the one before (``chain.link_hash``)."""
    rows = []
    at = _JOB["at"]
    for seq in seqs:
        kind, body = tpl.body(seq, at(seq))
        h = hmac.digest(KEY, prev.encode() + b"\n" + body.encode(), "sha256").hex()
        rows.append(StoredEvent(table, seq, kind, body, prev, h))
        prev = h
    return rows


_JOB: dict[str, Any] = {}
"""What each worker process was given (set before the pool forks)."""


def _table_ends(table: str) -> dict[int, str]:
    """First pass: the hash at each closed day's end of ``table`` (and one before, where its
    snapshot is taken)."""
    tpl, plan, prev = _JOB["templates"][table], _JOB["plan"], _JOB["heads"][table]
    out: dict[int, str] = {}
    at = _JOB["at"]
    for day in range(plan.days - 1):
        seqs = plan.seqs(day)
        keep = {seqs[-1], seqs[-2]} if len(seqs) > 1 else {seqs[-1]}
        for seq in seqs:
            _, body = tpl.body(seq, at(seq))
            prev = hmac.digest(KEY, prev.encode() + b"\n" + body.encode(), "sha256").hex()
            if seq in keep:
                out[seq] = prev
    return out


def _write_day(day: int) -> list[Span]:
    """Second pass: one closed day's file, every table's rows chained from its hash at the
    end of the day before, checked against the first pass's end."""
    plan, ends, directory = _JOB["plan"], _JOB["ends"], _JOB["dir"]
    streams: dict[str, list[StoredEvent]] = {}
    for table in _JOB["tables"]:
        seqs = plan.seqs(day)
        prev = _JOB["heads"][table] if day == 0 else ends[table][seqs[0] - 1]
        rows = _chain(table, _JOB["templates"][table], plan, seqs, prev)
        assert rows[-1].hash == ends[table][rows[-1].seq], "the two passes disagree"
        streams[table] = rows
    name = plan.day_name(day)
    retention = {j: {**r.to_dict(), "keep_until": r.until(name)}
                 for j, r in sorted(_JOB["retention"].items())}
    return write_archive(directory / f"{name}.jsonl.gz", KEY, name, streams,
                         {"by_jurisdiction": retention})


def build_year(directory: Path, events: int, days: int, jobs: int) -> None:
    """About ``events`` events over ``TABLES`` tables, spread evenly over ``days`` days, all
    but the last archived."""
    db, archive = directory / "year.db", directory / "archive"
    per_table = events // TABLES | 1
    plan = Plan(per_table, max(2, per_table // days), days)
    tables = [f"hist-{n + 1}" for n in range(TABLES)]
    now = datetime.now(UTC).isoformat()
    states, events_of = {}, {}
    with SqliteStore(db, synchronous="OFF", key=KEY) as store:
        for tid in tables:
            table = DurableTable.open(store, "pa-craps", tid, snapshot_every=0).table
            table.join("alice")
            table.leave("alice")
            states[tid] = encode_state(table.state)
            events_of[tid] = list(store.table_events(tid, after=1))
        jurisdiction = pack_for(opening(store, tables[0])).jurisdiction
        archive_through(store, gaming_day(now), archive, today=plan.day_name(0))
        heads = {t: store.head(t).hash for t in tables}
    templates = {t: _template(events_of[t]) for t in tables}
    for tid, seq in ((t, s) for t in tables for s in (OPENED + 1, OPENED + 2)):
        # the split template writes what the codec writes
        assert templates[tid].body(seq, plan.at(seq))[1] == encode(dataclasses.replace(
            events_of[tid][(seq - OPENED - 1) % 2], seq=seq, at=plan.at(seq)))[1]
    at = plan.times()
    probes = {OPENED + 1, per_table, *range(OPENED + 1, per_table, max(1, per_table // 997))}
    assert all(at(seq) == plan.at(seq) for seq in probes), "the fast clock is not the clock"
    _JOB.update(at=at, templates=templates, plan=plan, heads=heads, tables=tables, dir=archive,
                retention={jurisdiction: retention_for(jurisdiction)})
    ctx = multiprocessing.get_context("fork")
    start = time.perf_counter()
    with ctx.Pool(jobs) as pool:
        _JOB["ends"] = dict(zip(tables, pool.map(_table_ends, tables), strict=True))
    print(f"  first pass (each table's hash at each day's end): "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    spans: list[Span] = []
    with ctx.Pool(jobs) as pool:
        for n, done in enumerate(pool.imap(_write_day, range(days - 1), chunksize=1), 1):
            spans += done
            if n % 10 == 0 or n == days - 1:
                print(f"    {n}/{days - 1} days written, {time.perf_counter() - start:.0f} s, "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
    ends: dict[str, dict[int, str]] = _JOB["ends"]
    with sqlite3.connect(db) as conn:  # what move_to_archive records
        conn.executemany("INSERT INTO archives VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         [(s.stream, s.first, s.first_prev, s.last, s.last_hash, s.day, s.file,
                           s.mac) for s in spans])
        for tid in tables:
            last = plan.seqs(days - 2)[-1]
            conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                         (last, ends[tid][last], tid))
    with SqliteStore(db, synchronous="OFF", key=KEY, create=False) as store:
        for tid in tables:
            for day in range(days - 1):  # one a day, as a floor's tables snapshot as they play
                seq = plan.snapshot_seq(plan.seqs(day)[-1])
                store.save_snapshot(make_snapshot(tid, seq, ends[tid][seq],
                                                  {**states[tid], "seq": seq}, KEY))
            seqs = plan.seqs(days - 1)
            for first in range(seqs[0], seqs[-1] + 1, BATCH):  # the live day, through the store
                last = min(seqs[-1], first + BATCH - 1)
                batch = [dataclasses.replace(events_of[tid][(s - OPENED - 1) % 2], seq=s,
                                             at=plan.at(s)) for s in range(first, last + 1)]
                store.append(tid, batch, expected=first - 1)
            head = store.head(tid)
            store.save_snapshot(make_snapshot(tid, head.seq, head.hash,
                                              {**states[tid], "seq": head.seq}, KEY))


def measure_year(directory: Path, events: int, days: int, *, jobs: int, audit: bool,
                 reuse: bool) -> dict[str, float]:
    db, cps = directory / "year.db", directory / "year.cp.jsonl"
    last_day = (START + timedelta(days=days - 1)).date().isoformat()
    if reuse and db.exists():
        print(f"  reusing the year built in {directory}", flush=True)
    else:
        built, _ = _timed(lambda: build_year(directory, events, days, jobs))
        print(f"  built {events:,} events over {days} days in {built:.1f} s", flush=True)
    with SqliteStore(db, key=KEY, create=False) as store:
        spans = [s for t in store.tables() for s in store.archive_spans(t)]
        archived = sum(s.last - s.first + 1 for s in spans)
        live = sum(store.head(t).seq for t in store.tables()) - archived
        cps.unlink(missing_ok=True)
        write_checkpoint(cps, KEY, heads_of([store]), at=f"{last_day}T12:00:00+00:00")
        if audit:
            took, reports = _timed(lambda: verify_store(store))
            assert all(r.ok for r in reports), [r.problems for r in reports if not r.ok]
            print(f"  audit verify of the whole year (every link, replayed, every snapshot "
                  f"checked): {took:.1f} s, {sum(r.events for r in reports):,} events",
                  flush=True)
    files = sorted((directory / "archive").glob("*.jsonl.gz"))
    size = sum(f.stat().st_size for f in files)
    print(f"  {archived:,} events archived in {len(files)} files ({size / 2**20:.0f} MiB); "
          f"{live:,} events stay live ({db.stat().st_size / 2**20:.1f} MiB store)", flush=True)
    _close(build_floor(db, key=KEY, checkpoints=cps)[0])  # the first start, untimed
    out: dict[str, float] = {}
    out["restart"], (floor, _) = _timed(lambda: build_floor(db, key=KEY, checkpoints=cps))
    try:
        assert not floor.faults.open, floor.faults.open
        for tid in sorted(floor.tables):
            info = floor.get(tid)
            with info.lock:
                for _ in range(50):
                    info.table.join("bob")
                    info.table.leave("bob")
        out["period"], faulted = _timed(floor.verify_all)
        assert faulted == [], faulted
    finally:
        _close(floor)
    checked = floor.verification.chains.checked_archive_bytes
    print(f"  restart over its checkpoint:       {out['restart']:8.3f} s "
          f"(load {os.getloadavg()[0]:.1f})")
    print(f"  one periodic check:                {out['period']:8.3f} s ({checked / 2**20:.1f} "
          "MiB of archives hashed so far by the rolling pass)", flush=True)
    per_day = (events // TABLES | 1) // days
    for name, day in (("recall", 0), ("recall_middle", days // 2)):
        wanted = (START + timedelta(days=day)).date().isoformat()
        with SqliteStore(db, key=KEY, create=False) as store:
            wall, cpu, rounds = _recalled(functools.partial(recall_day, store, "hist-1",
                                                            wanted))
        out[name], out[name + "_cpu"] = wall, cpu
        print(f"  recall of {wanted} (archived, ~{per_day:,} of its day's "
              f"~{per_day * TABLES:,} events): {wall:6.3f} s wall, {cpu:6.3f} s CPU, "
              f"{sum(len(r.activity) + len(r.rolls) for r in rounds):,} events in "
              f"{len(rounds)} rounds (load {os.getloadavg()[0]:.1f})", flush=True)
    return out


def _recalled(work: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = work()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2x10^4 events over 20 days")
    parser.add_argument("--events", type=float, default=1e6)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--baseline", type=int, default=100_000,
                        help="events of the live store compared with (default 10^5)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes writing the year's files")
    parser.add_argument("--dir", default=None, help="build the year here and keep it "
                        "(default: a temporary directory)")
    parser.add_argument("--reuse", action="store_true", help="measure the year already in "
                        "--dir instead of building it")
    parser.add_argument("--audit", action="store_true", help="audit the whole year once "
                        "built (--quick does)")
    args = parser.parse_args(argv)
    events, days, baseline = int(args.events), args.days, args.baseline
    if args.quick:
        events, days, baseline = 20_000, 20, 10_000
    print(f"archive bench: load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs; "
          f"--events {events:.0e} --days {days} --baseline {baseline} --jobs {args.jobs}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as tmp:
        print(f"a live store of {baseline:,} events:", flush=True)
        small = measure(Path(tmp), baseline, check=False, baseline=False)
        where = Path(args.dir) if args.dir else Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        print(f"a year: {events:,} events, {days} days, all but the last archived:",
              flush=True)
        year = measure_year(where, events, days, jobs=args.jobs,
                            audit=args.audit or args.quick, reuse=args.reuse)
    for name in ("restart", "period"):
        print(f"{name}: year / live store = {year[name] / small[name]:.2f}x (target <= 2x)")
    print(f"recall of the year's first day: {year['recall']:.3f} s wall "
          f"({year['recall_cpu']:.3f} s CPU), of a day mid-year: {year['recall_middle']:.3f} s "
          f"wall ({year['recall_middle_cpu']:.3f} s CPU) (target < 1 s); load average after "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
