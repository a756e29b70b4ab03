"""A gaming day of 1,000,000 rolls on one table: the bank reconciles and reports it.

The day's table log is real table events: a block of rolls played by the engine (a player on
the pass line with odds, place 6 and 8, a buy 4 with its vigorish taken up front, the field,
a hardway, buy-ins as the rail runs low), repeated until the day has its rolls (the engine
plays about 2,500 rolls a second, so playing a million would take the benchmark minutes before
it measures anything). The bank then does what the pit does with such a day:

(1) the expected inventory after every roll (``Totals.per_roll``);
(2) the end-of-day drop: its count (the closer, 465a.41) reconciled against the whole
    day's log (``TableBank.count``), with a
    deliberate $5 short so the variance and its suspects are worked out too;
(2b) the drop box counted (its currency: the day's buy-ins);
(3) the gaming-day report: opener, fills, credits, closer, drop, win and hold;
(4) the same count and report when the pit already follows the table (the server folds each
    table's new events once, when the pit asks), so only the rolls since are read.

Figures: seconds for each step and in all, and events per second. The target is < 2 s for
(2) + (3) on the million-roll day; (1) is printed beside it.

    .venv/bin/python -m bench.bank_bench [--rolls 1000000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from datetime import UTC, datetime

from dicetable.bank.follow import Totals
from dicetable.bank.ledger import TableBank
from dicetable.bank.reports import day_report
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="a 50,000-roll day")
    args = parser.parse_args()
    rolls = 50_000 if args.quick else args.rolls
    t0 = time.perf_counter()
    block = play_block(min(BLOCK, rolls))
    played = time.perf_counter() - t0
    day = block * max(1, rolls // BLOCK)
    print(f"load average {os.getloadavg()[0]:.2f}; block of {min(BLOCK, rolls):,} rolls played "
          f"in {played:.2f} s; the day: {rolls:,} rolls, {len(day):,} table events")

    clock = FixedClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    bank = TableBank.open("pa", "bench", site="river", game="craps", clock=clock)
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

    t1 = time.perf_counter()
    last = 0
    for _, expected in Totals().per_roll(day, bank.expected()):
        last = expected
    per_roll = time.perf_counter() - t1

    t2 = time.perf_counter()
    totals = Totals().fold(day)  # cold: the whole day's log read once
    closer = bank.expected(totals=totals) - 5_00
    chips = ((100, closer % 2500 // 100), (2500, closer // 2500))
    team = (("cc1", Role.COUNT_TEAM), ("sid", Role.SECURITY))
    bank.drop("BOX-1", "BOX-2", chips, counter="bo", counter_role=Role.BOXPERSON,
              observer="fran", observer_role=Role.FLOORPERSON, team=team, table_log=day,
              totals=totals)
    bank.count_box("BOX-1", [("currency", totals.cash_exchange)], counters=team[:1])
    report = day_report(bank.state, bank.day_and_shift()[0],
                        included=bank.pack.value("drop.included"))
    reconcile = time.perf_counter() - t2

    # warm: the pit follows the table as it plays, so at the next count only the rolls since
    # the last fold are read (here: a shift count right after, nothing new to read)
    t3 = time.perf_counter()
    totals.fold(day[len(day):])
    bank.count("shift", bank.state.inventory, counter="bo", counter_role=Role.BOXPERSON,
               observer="fran", observer_role=Role.FLOORPERSON, table_log=day, totals=totals)
    day_report(bank.state, bank.day_and_shift()[0], included=bank.pack.value("drop.included"))
    warm = time.perf_counter() - t3

    d = report.discrepancies[-1] if report.discrepancies else None
    win = report.win.win if report.win else 0
    print(f"(1) expected inventory after each of {rolls:,} rolls: {per_roll:.3f} s "
          f"({len(day) / per_roll:,.0f} events/s); last {last / 100:,.2f}")
    print(f"(2)+(3) cold: the day's log read, the drop count reconciled, the box counted and "
          f"the day reported: {reconcile:.3f} s (target < 2 s); variance "
          f"{(d.variance if d else 0) / 100:,.2f}, suspects listed {len(d.suspects) if d else 0}"
          f", win {win / 100:,.2f}, hold {report.win.hold_text if report.win else '-'}")
    print(f"(4) warm: a count and the report while following the table: {warm * 1000:.1f} ms")


if __name__ == "__main__":
    main()
