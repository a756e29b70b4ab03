"""A gaming day of 1,000,000 rolls on one table: the bank reconciles and reports it, cold.

The day's table log is real table events: a block of rolls played by the engine (a player on
the pass line with odds, place 6 and 8, a buy 4 with its vigorish taken up front, the field,
a hardway, buy-ins as the rail runs low), repeated (renumbered) until the day has its rolls
(the engine plays about 2,500 rolls a second, so playing a million would take the benchmark
minutes before it measures anything). The bank then does what the pit does with such a day:

(0) following the day: the pit's follower folds the table's log as it grows and writes a
    checkpoint of the running totals (``TotalsNoted``) every ``CHECKPOINT_ROLLS`` rolls;
(1) the expected inventory after every roll (``Totals.per_roll``), printed beside;
(2) cold: a process that has nothing in memory replays the bank's own (short) log, resumes
    from its latest checkpoint and folds only the table events since; the end-of-day drop
    count (the closer, 465a.41) is reconciled, with a deliberate $5 short so the variance,
    how many movements of $5 there were since the opening count (from the checkpointed value
    counts) and the newest of them are worked out too; the drop box is counted;
(3) the gaming-day report: opener, fills, credits, closer, drop, win and hold;
(2') the same cold read with no checkpoint at all (the whole day folded), for the record.

Figures: seconds for each step. The target is < 2 s for (2) + (3) on the million-roll day.

    .venv/bin/python -m bench.bank_bench [--rolls 1000000] [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import time
from datetime import UTC, datetime

from dicetable.bank.events import BankEvent, DiscrepancyFound
from dicetable.bank.follow import CHECKPOINT_ROLLS, Totals
from dicetable.bank.ledger import TableBank
from dicetable.bank.reports import DayReport, day_report
from dicetable.core.clock import FixedClock
from dicetable.core.errors import DicetableError
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.table import Table

BLOCK = 5_000
CREW = (("dee", Role.DEALER), ("dan", Role.DEALER), ("sam", Role.STICKPERSON),
        ("bo", Role.BOXPERSON))


def play_block(rolls: int, seed: int = 7) -> list[Event]:
    log: list[Event] = []
    t = Table.open("pa-craps", "bench", sink=log.extend)
    t.join("alice")
    t.buy_in("alice", 5_000_00)
    rng = random.Random(seed)
    wagers = (("place6", 12_00), ("place8", 12_00), ("buy4", 25_00), ("hard8", 5_00))
    for _ in range(rolls):
        if t.balance("alice") < 500_00:
            t.buy_in("alice", 5_000_00)
        held = {b.wager for b in t.state.bets_of("alice")}
        try:
            if "pass" not in held and t.state.point is None:
                t.bet("alice", "pass", 10_00)
            if t.state.point is not None:
                for wager, amount in wagers:
                    if wager not in held:
                        t.bet("alice", wager, amount)
            t.bet("alice", "field", 5_00)
        except DicetableError:
            pass
        t.roll(f"{rng.randint(1, 6)}-{rng.randint(1, 6)}")
    return log


def renumbered(block: list[Event], times: int) -> list[Event]:
    """The block repeated ``times`` times, each copy's events numbered on from the last (a
    day's log is one sequence); copies share everything but their seq."""
    day: list[Event] = []
    n = 0
    new = object.__new__
    for _ in range(times):
        for e in block:
            n += 1
            c = new(type(e))
            c.__dict__.update(e.__dict__)
            c.__dict__["seq"] = n
            day.append(c)
    return day


def cold_read(bank_log: list[BankEvent], day: list[Event], clock: FixedClock,
              ) -> tuple[float, TableBank, DayReport]:
    """(2) + (3) from nothing in memory but the two logs."""
    t = time.perf_counter()
    bank = TableBank.replay(bank_log, clock=clock)
    totals = bank.totals_of(day)
    closer = bank.expected(totals=totals) - 5_00
    chips = ((100, closer % 2500 // 100), (2500, closer // 2500))
    team = (("cc1", Role.COUNT_TEAM), ("sid", Role.SECURITY))
    bank.drop("BOX-1", "BOX-2", chips, counter="bo", counter_role=Role.BOXPERSON,
              observer="fran", observer_role=Role.FLOORPERSON, team=team, table_log=day,
              totals=totals)
    bank.count_box("BOX-1", [("currency", totals.cash_exchange)], counters=team[:1])
    report = day_report(bank.state, bank.day_and_shift()[0],
                        included=bank.pack.value("drop.included"))
    return time.perf_counter() - t, bank, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true",
                        help="a 20,000-roll day (ten times a block of 2,000)")
    args = parser.parse_args()
    rolls = 20_000 if args.quick else args.rolls
    size = min(2_000 if args.quick else BLOCK, rolls)
    t0 = time.perf_counter()
    block = play_block(size)
    played = time.perf_counter() - t0
    day = renumbered(block, max(1, rolls // size))
    print(f"load average {os.getloadavg()[0]:.2f}; block of {size:,} rolls played "
          f"in {played:.2f} s; the day: {rolls:,} rolls, {len(day):,} table events")

    clock = FixedClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    bank_log: list[BankEvent] = []
    bank = TableBank.open("pa", "bench", site="river", game="craps", clock=clock,
                          sink=bank_log.extend)
    # the block's buy-ins repeat with the block: a deep opener keeps the inventory positive
    bank.open_table(((2500, 4000), (10000, 1000), (500000, 2000)), counter="bo",
                    counter_role=Role.BOXPERSON,
                    observer="fran", observer_role=Role.FLOORPERSON, crew=CREW,
                    container="C-1")
    bank.request("fill", ((2500, 400),), shift="06:00", actor="fran",
                 role=Role.FLOORPERSON, electronic=True)
    serial = bank.state.serials[-1]
    bank.carry(serial, officer="sid", role=Role.SECURITY)
    bank.receive(serial, ((2500, 400),), counter="bo", counter_role=Role.BOXPERSON,
                 officer="sid")

    # (0) the follower during the day: a fold of each new stretch, a checkpoint as due
    t0 = time.perf_counter()
    followed = Totals()
    step = 1_000
    noted = 0
    for start in range(0, len(day), step):
        followed.fold(day[start:start + step])
        if followed.rolls - noted >= CHECKPOINT_ROLLS:
            bank.note(followed)
            noted = followed.rolls
    following = time.perf_counter() - t0
    checkpoints = sum(type(e).__name__ == "TotalsNoted" for e in bank_log)

    t1 = time.perf_counter()
    last = 0
    for _, expected in Totals().per_roll(day, bank.expected(totals=Totals())):
        last = expected
    per_roll = time.perf_counter() - t1

    reconcile, cold, report = cold_read(list(bank_log), day, clock)
    # (2') the same with no checkpoint: the bank's log without its TotalsNoted events
    bare = [e for e in bank_log if type(e).__name__ != "TotalsNoted"]
    bare = [dataclasses.replace(e, seq=i + 1) for i, e in enumerate(bare)]
    whole, _, whole_report = cold_read(bare, day, clock)

    win = report.win
    if win is None or whole_report.win is None:
        raise SystemExit("no win reported")
    same = win.win == whole_report.win.win
    disc = [e for e in cold.state.log if isinstance(e, DiscrepancyFound)][-1]
    print(f"(0) following the day: {following:.3f} s for {len(day):,} events "
          f"({len(day) / following:,.0f} events/s); {checkpoints} checkpoints written "
          f"(the follower's, one per {CHECKPOINT_ROLLS:,} rolls, and one per count)")
    print(f"(1) expected inventory after each of {rolls:,} rolls: {per_roll:.3f} s "
          f"({len(day) / per_roll:,.0f} events/s); last {last / 100:,.2f}")
    print(f"(2)+(3) cold, from the latest checkpoint: bank log replayed, drop count reconciled, "
          f"box counted, day reported: {reconcile:.3f} s (target < 2 s); variance "
          f"{disc.variance / 100:,.2f}, suspects: {disc.suspects[-1]!r} "
          f"({len(disc.suspects)} lines), win {win.win / 100:,.2f}, hold {win.hold_text}")
    print(f"(2')+(3) cold with no checkpoint (the whole day folded): {whole:.3f} s; "
          f"same win: {same}")
    if not same:
        raise SystemExit("the checkpointed read and the whole fold disagree")


if __name__ == "__main__":
    main()
