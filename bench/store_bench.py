"""Store benchmarks: durable commands per second, and replay of a million events.

Run: ``.venv/bin/python -m bench.store_bench`` (``--quick`` for a short run; ``--pg URL`` to
choose the PostgreSQL server). Figures are printed, never asserted (DESIGN.md, performance).

1. Durable commands/s on SQLite with ``synchronous=FULL``: several tables, one thread each,
   every command acknowledged only once its events are committed. Group commit against the
   naive baseline (one transaction per command, serialised), run side by side; the ratio is
   what group commit buys. The same on PostgreSQL.
2. Replay: a table with 1,000,000 events in SQLite. A full replay from event 1 (read, JSON,
   decode, fold), its parts (the pure fold of ``apply`` over events already in memory; the
   codec's ``event_from_dict`` and the store's ``decode``), and a resume from the latest
   snapshot, which is what a restart does.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from dicetable.core.dice_sources import SeededDice
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games.events import Event, TableOpened, event_from_dict
from dicetable.games.fold import apply
from dicetable.games.state import TableState
from dicetable.store.base import EventStore
from dicetable.store.chain import decode, decode_body
from dicetable.store.durable import DurableTable
from dicetable.store.replay import load_state
from dicetable.store.sqlite import SqliteStore
from dicetable.store.state_codec import encode_state, pack_for
from dicetable.table import Table
from dicetable.wagers.compile import compile_pack

DEFAULT_PG = os.environ.get("DICETABLE_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
CYCLE = 5
ROUNDS = 3
"""Each durable measurement is split in rounds, naive and group commit taking turns."""
"""Commands per cycle of the load: a bet, the roll, and the three settlement chores."""


# -- 1. durable commands per second ------------------------------------------------------------
def _cycle(table: Table, dice: SeededDice) -> None:
    """Five durable commands: a field bet, the throw, collect, pay, move the puck."""
    table.execute(cmd.PlaceBet(actor="p", role=Role.PLAYER, player="p", wager="field",
                               amount=500))
    table.execute(cmd.RecordRoll(actor="stick", role=Role.STICKPERSON, roll=dice.next_roll(),
                                 source="seeded"))
    table.execute(cmd.CollectLosers(actor="dealer", role=Role.DEALER))
    table.execute(cmd.PayWinners(actor="dealer", role=Role.DEALER))
    table.execute(cmd.MovePuck(actor="dealer", role=Role.DEALER))


def durable_rate(store: EventStore, writers: int, seconds: float, tag: str) -> float:
    """Commands per second with ``writers`` tables appending at once."""
    tables = []
    for i in range(writers):
        dt = DurableTable.open(store, "pa-craps", f"{tag}-{i}", snapshot_every=0,
                                automations=())  # the chores are the durable commands
        dt.table.join("p")
        dt.table.buy_in("p", 10**9)
        tables.append(dt.table)
    for i, table in enumerate(tables):  # warm up: first roll, first append on each table
        _cycle(table, SeededDice(1000 + i))
    counts = [0] * writers
    stop = threading.Event()

    def run(i: int) -> None:
        dice = SeededDice(i)
        while not stop.is_set():
            _cycle(tables[i], dice)
            counts[i] += CYCLE

    threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - start)


def bench_sqlite(workdir: Path, seconds: float, writer_counts: list[int]) -> None:
    print(f"\n== durable commands/s, SQLite WAL synchronous=FULL ({seconds:.0f} s each)")
    print(f"{'writers':>8} {'naive tx/command':>18} {'group commit':>14} {'ratio':>7}")
    for n in writer_counts:
        rates = {"naive": 0.0, "group": 0.0}
        for rnd in range(ROUNDS):  # alternate, so that both share the machine's noise
            for mode, group in (("naive", False), ("group", True)):
                path = workdir / f"durable-{mode}-{n}.db"
                path.unlink(missing_ok=True)
                with SqliteStore(path, group_commit=group, synchronous="FULL") as store:
                    rates[mode] += durable_rate(store, n, seconds / ROUNDS, f"r{rnd}") / ROUNDS
        print(f"{n:>8} {rates['naive']:>18,.0f} {rates['group']:>14,.0f} "
              f"{rates['group'] / rates['naive']:>6.1f}x")


def bench_postgres(url: str, seconds: float, writer_counts: list[int]) -> None:
    try:
        import psycopg

        from dicetable.store.postgres import PostgresStore, drop_schema

        with psycopg.connect(url, connect_timeout=3) as conn:
            sync = conn.execute("SHOW synchronous_commit").fetchone()
    except Exception as e:
        print(f"\n== PostgreSQL: skipped ({type(e).__name__}: {e})")
        return
    print(f"\n== durable commands/s, PostgreSQL (synchronous_commit={sync[0] if sync else '?'}, "
          f"{seconds:.0f} s each)")
    print(f"{'writers':>8} {'naive tx/command':>18} {'group commit':>14} {'ratio':>7}")
    for n in writer_counts:
        rates = {"naive": 0.0, "group": 0.0}
        for rnd in range(ROUNDS):
            for mode, group in (("naive", False), ("group", True)):
                schema = f"dt_bench_{os.getpid()}_{mode}_{n}"
                drop_schema(url, schema)
                with PostgresStore(url, schema=schema, group_commit=group) as store:
                    rates[mode] += durable_rate(store, n, seconds / ROUNDS, f"r{rnd}") / ROUNDS
                drop_schema(url, schema)
        print(f"{n:>8} {rates['naive']:>18,.0f} {rates['group']:>14,.0f} "
              f"{rates['group'] / rates['naive']:>6.1f}x")


# -- 2. replay ---------------------------------------------------------------------------------
def build_log(path: Path, events: int, snapshot_every: int) -> None:
    """One busy Craps table with ``events`` events, appended in batches, with snapshots."""
    t0 = time.perf_counter()
    table = Table.open("pa-craps", "big")
    table.join("p")
    table.buy_in("p", 10**12)
    dice = SeededDice(2026)
    with SqliteStore(path, synchronous="OFF") as store:
        pending: list[Event] = list(table.log)
        table.log.clear()
        written = 0
        next_snapshot = snapshot_every
        while written + len(pending) < events:
            if table.point is None and not table.state.bets:
                table.bet("p", "pass", 1000)
            table.bet("p", "field", 500)
            table.roll(dice)
            table.settle()
            pending += table.log
            table.log.clear()
            if len(pending) >= 5000 or written + len(pending) >= events:
                store.append("big", pending)
                written += len(pending)
                pending = []
                if written >= next_snapshot and written + 5000 < events:
                    store.snapshot("big", table.state.seq, encode_state(table.state))
                    next_snapshot += snapshot_every
        if pending:
            store.append("big", pending)
        print(f"   built {store.head('big').seq:,} events in {time.perf_counter() - t0:.1f} s "
              f"({len(store.snapshots('big'))} snapshots)")


def timed(label: str, n: int, fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    print(f"   {label:<52} {dt:7.2f} s  {n / dt:>12,.0f} events/s")
    return dt


def _drain(items: Iterator[object]) -> None:
    for _ in items:
        pass


def _parts(store: EventStore, n: int) -> None:
    """Where a replay's time goes: the stages streamed cumulatively, then the pure fold over
    events held in memory (the collector paused while a million objects are kept alive)."""
    timed("stream the stored JSON", n, lambda: _drain(iter(store.bodies("big"))))
    timed("  + json.loads", n, lambda: _drain(json.loads(b) for b in store.bodies("big")))
    timed("  + decode to events (the store's decoder)", n,
          lambda: _drain(decode_body(b) for b in store.bodies("big")))
    sample = [json.loads(b) for b in itertools.islice(store.bodies("big"), 50_000)]
    current = [{k: v for k, v in d.items() if k != "v"} for d in sample]  # as upgraded
    # One codec serves every aggregate (core.codec): event_from_dict is what the store's
    # decode calls; the two timings show the cost of the stored-shape upgrade step.
    timed(f"decode {len(sample):,} with event_from_dict (the one codec)", len(sample),
          lambda: [event_from_dict(d) for d in current])
    timed(f"decode {len(sample):,} with the store's decode (+ upgrade)", len(sample),
          lambda: [decode(d) for d in sample])
    gc.disable()
    try:
        evs: list[Event] = [e for b in store.bodies("big")
                            if isinstance(e := decode_body(b), Event)]
        opened = evs[0]
        assert isinstance(opened, TableOpened)
        pack = pack_for(opened)
        compile_pack(pack)  # compiled once per process; not part of the fold

        def pure_fold(events: list[Event]) -> None:
            state = TableState()
            apply(state, opened)
            state.pack = pack
            for e in itertools.islice(events, 1, None):
                apply(state, e)

        timed("pure fold: apply over the events in memory", n, lambda: pure_fold(evs))
        evs.clear()
    finally:
        gc.enable()


def bench_replay(path: Path, events: int, snapshot_every: int) -> None:
    print(f"\n== replay of {events:,} events (SQLite)")
    ok = False
    if path.exists():
        with SqliteStore(path) as store:
            ok = store.head("big").seq >= events
    if not ok:
        path.unlink(missing_ok=True)
        build_log(path, events, snapshot_every)
    with SqliteStore(path) as store:
        n = store.head("big").seq
        _parts(store, n)
        full = timed("FULL REPLAY from event 1 (read+json+decode+fold)", n,
                     lambda: load_state(store, "big", use_snapshot=False))
        snap = store.latest_snapshot("big")
        tail = n - (snap.seq if snap else 0)
        t0 = time.perf_counter()
        DurableTable.resume(store, "big", settle=False)
        resume = time.perf_counter() - t0
        print(f"   {'RESUME from the latest snapshot':<52} {resume:7.3f} s  (replays the last "
              f"{tail:,} events)")
        print(f"   target < 10 s for {n:,} events: full replay {full:.1f} s, resume "
              f"{resume:.3f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="short run (smoke test)")
    ap.add_argument("--seconds", type=float, default=3.0, help="per durable measurement")
    ap.add_argument("--events", type=int, default=1_000_000, help="events to replay")
    ap.add_argument("--pg", default=DEFAULT_PG, help="PostgreSQL URL ('' to skip)")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the databases go (the 1M-event log is kept and reused)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.events = 0.5, min(args.events, 20_000)
    workdir = args.workdir or Path(tempfile.gettempdir()) / "dicetable-bench"
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"store bench: python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"work dir {workdir}")
    writers = [1, 4, 16] if not args.quick else [1, 4]
    bench_sqlite(workdir, args.seconds, writers)
    if args.pg:
        bench_postgres(args.pg, args.seconds, writers)
    bench_replay(workdir / f"replay-{args.events}.db", args.events,
                 snapshot_every=max(1000, args.events // 100))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
