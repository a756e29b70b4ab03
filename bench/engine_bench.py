"""Live engine throughput in process: commands per second (DESIGN.md target >= 5,000/s).

A PA Craps table in each mode plays a loop of real commands: two bets, a throw, the three
settlement chores, and (live) the shooter's turn. Printed side by side with the bare game
engine, which is the baseline: the ratio is what the regulated procedure costs.

    .venv/bin/python -m bench.engine_bench [--seconds 5]
"""

from __future__ import annotations

import argparse
import time

from dicetable.core.clock import FixedClock
from dicetable.core.dice_sources import SeededDice
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.table import Table


def play(mode: str, seconds: float) -> tuple[int, float]:
    staff = {"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER}
    table = Table.open("pa-craps", "bench", mode=mode, clock=FixedClock(), actor="fran",
                       staff=staff if mode == "live" else None)
    table.join("alice", 9)
    table.buy_in("alice", 10**12)
    if mode == "live":
        table.bring_dice("A1", "A2", "A3", "A4", "A5")
    dice = SeededDice(1)
    commands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            bets = 0
            if not any(b.wager == "pass" for b in table.state.bets_of("alice")) \
                    and table.point is None:
                table.bet("alice", "pass", 1000)
                bets += 1
            if table.can(g.PlaceBet(actor="alice", role=Role.PLAYER, player="alice",
                                    wager="field", amount=100)):
                table.bet("alice", "field", 100)
                bets += 1
            if mode == "live" and table.shooter is None:
                table.new_shooter("alice")
                bets += 2
            table.roll(dice)
            table.settle()
            commands += bets + 4
    return commands, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--quick", action="store_true", help="half a second each (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.5
    rates = {}
    for mode in ("bare", "live"):
        n, elapsed = play(mode, args.seconds)
        rates[mode] = n / elapsed
        print(f"{mode:>5}: {n:>8} commands in {elapsed:5.2f} s = {rates[mode]:>8,.0f} "
              "commands/s (target >= 5,000)")
    print(f"live procedure / bare engine: {rates['live'] / rates['bare']:.2f}x")


if __name__ == "__main__":
    main()
