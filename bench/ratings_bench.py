"""Rating a gaming day: 1,000,000 rolls of one table's log folded into player ratings.

The log is played by the table engine (bare PA Craps, seeded dice, three players with a mixed
layout: pass with odds, come, place 6 and 8, the field, a hardway, a don't pass taken down)
as one block of sessions that ends with every wager decided or down and every player gone,
and that block is read again and again until the day has its rolls (the same event objects:
only the fold is measured, not the engine). Printed side by side with the baseline, the
table's own fold of the same events (``games.fold.apply``: what replaying the table costs),
so the ratio is what rating adds.

    .venv/bin/python -m bench.ratings_bench [--quick] [--rolls N]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Iterator
from fractions import Fraction

from dicetable.core.clock import FixedClock
from dicetable.core.dice_sources import SeededDice
from dicetable.games import events as ev
from dicetable.games.fold import apply
from dicetable.games.state import TableState
from dicetable.ratings.fold import RatingsFold
from dicetable.table import Table

PLAYERS = ("alice", "bob", "carol")


def block(rolls: int, seed: int = 2026) -> tuple[ev.Event, list[ev.Event]]:
    """The table's opening, and a block of ``rolls`` rolls that leaves the table empty."""
    clock = FixedClock()
    t = Table.open("pa-craps", "bench", mode="bare", clock=clock)
    dice, choice = SeededDice(seed), random.Random(seed)
    for seat, p in enumerate(PLAYERS, 1):
        t.join(p, seat)
        t.buy_in(p, 10**12)
    for p in PLAYERS[1:]:
        t.leave(p)
    t.leave(PLAYERS[0])
    start = len(t.log)
    for seat, p in enumerate(PLAYERS, 1):
        t.join(p, seat)
    for _ in range(rolls):
        for p in PLAYERS:
            mine = {b.wager: b for b in t.state.bets_of(p)}
            if t.point is None and "pass" not in mine:
                t.bet(p, "pass", 10_00)
            elif t.point is not None and "pass" in mine and "odds:take" not in mine:
                t.odds(p, mine["pass"].id, 20_00)
            if t.point is not None and choice.random() < 0.2:
                t.bet(p, "come", 5_00)
            for wager in ("place6", "place8"):
                if t.point is not None and wager not in mine:
                    t.bet(p, wager, 12_00)
            if p == "bob":
                t.bet(p, "field", 5_00)
            if p == "carol" and "hard8" not in mine:
                t.bet(p, "hard8", 1_00)
            if p == "carol" and t.point is None and "dontpass" not in mine:
                t.bet(p, "dontpass", 10_00)
            if "dontpass" in mine and mine["dontpass"].state and choice.random() < 0.1:
                t.remove(mine["dontpass"].id)
        clock.advance(seconds=40)
        t.roll(dice)
        t.settle()
    for p in PLAYERS:
        for bet in t.state.bets_of(p):
            if bet.wager in ("place6", "place8", "hard8", "dontpass"):
                t.remove(bet.id)
    while t.state.bets:
        t.roll(dice)
        t.settle()
    for p in PLAYERS:
        t.leave(p)
    return t.log[0], t.log[start:]


def day(opening: ev.Event, events: list[ev.Event], tiles: int) -> Iterator[ev.Event]:
    yield opening
    for _ in range(tiles):
        yield from events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true",
                        help="4,000 rolls (twice a block of 2,000): a smoke run")
    parser.add_argument("--rolls", type=int, default=None)
    args = parser.parse_args()
    target = args.rolls or (4_000 if args.quick else 1_000_000)
    per_block = min(2_000 if args.quick else 10_000, target)
    opening, events = block(per_block)
    rolls_per_block = sum(1 for e in events if isinstance(e, ev.PuckMoved))
    tiles = max(1, round(target / rolls_per_block))
    rolls = tiles * rolls_per_block
    print(f"log: {rolls:,} rolls, {1 + tiles * len(events):,} events "
          f"({tiles} x a block of {rolls_per_block:,} rolls); load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; reproduce: python -m "
          f"bench.ratings_bench {' '.join(sys.argv[1:])}")

    began = time.perf_counter()
    state = TableState()
    for e in day(opening, events, tiles):
        apply(state, e)
    baseline = time.perf_counter() - began

    began = time.perf_counter()
    fold = RatingsFold()
    fold.feed_all(day(opening, events, tiles))
    ratings = fold.ratings()
    rated = time.perf_counter() - began

    theo = sum((r.theo for r in ratings), Fraction(0))
    industry = sum((r.industry_theo for r in ratings), Fraction(0))
    print(f"table fold (baseline): {baseline:7.2f} s  {rolls / baseline:>10,.0f} rolls/s")
    print(f"ratings fold + report: {rated:7.2f} s  {rolls / rated:>10,.0f} rolls/s  "
          f"ratio {rated / baseline:.2f}x the baseline")
    print(f"{len(ratings)} sessions; exact theo ${float(theo) / 100:,.2f}, industry formula "
          f"${float(industry) / 100:,.2f}, actual result "
          f"${sum(r.result for r in ratings) / 100:,.2f}")


if __name__ == "__main__":
    main()
