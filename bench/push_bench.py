"""A roll's push to 1,000 players, in process: what the table's thread spends making every
viewer's message after a roll (``Hub.publish``), without the network, for players who only
watch and for players who each hold bets.

A floor as ``load_bench`` prepares its arena (1,000 players who bought in for $100 to
$20,000, and the dealer), 1,001 hub connections, then electronic rounds one after the other;
with ``bets``, before each round every player puts back a Field and a Place 6 they can
afford (a stadium where everyone plays: each roll settles their bets and changes their
balance). The same is run for a baseline (``--baseline REF``: that commit's ``src``,
exported with ``git archive``), side by side: the two trees take turns (``--repeats``), so that
the load other work puts on the machine falls on both alike. Each push is timed in wall time
and in the CPU time of the table's thread (which the machine's load inflates less), with the
load average before and after each run. The dice are the same in every run (``--seed``): a
push's cost depends on the roll (a point made or missed changes every player's wagers), and
runs that roll differently differ by a quarter in their median; ``--seed -1`` rolls the
table's own CSPRNG.

    .venv/bin/python -m bench.push_bench [--rolls 20] [--repeats 2] [--baseline REF|none]
        [--only watch|bets] [--players 1000] [--seed 7] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.load_bench import export_baseline

ARENA_PLAYERS = 1000


def measure(rolls: int, bets: bool, arena: int = ARENA_PLAYERS, seed: int = -1
            ) -> dict[str, Any]:
    """Publish times (ms) of ``rolls`` electronic rounds after three to warm up, to ``arena``
    players and the dealer (``seed`` >= 0: the same rolls each time)."""
    if seed >= 0:
        _seed_the_dice(seed)
    from bench.load_bench import ARENA, DEALER, prepare, run_chore
    from dicetable.core.roles import Role
    from dicetable.games import commands as g
    from dicetable.server.app import GC_THRESHOLDS
    from dicetable.server.door import NEVER
    from dicetable.server.floor import ROUND_NOW, Hub
    from dicetable.server.main import build_floor

    db = Path(tempfile.mkdtemp(prefix="dt-push-")) / "floor.db"
    players = [f"ar-p{i:04d}" for i in range(arena)]
    prepare(db, {ARENA: players})
    floor, _ = build_floor(db, bet_seconds=2)
    hub = Hub(floor)
    hub.bind(asyncio.new_event_loop())  # never run: what it is handed is not sent
    for name in [*players, DEALER]:
        account = floor.accounts.get(name)
        assert account is not None
        hub.join(ARENA, account, 0)
    gc.freeze()  # as the server does (``app.lifespan``)
    gc.set_threshold(*GC_THRESHOLDS[:2], NEVER)
    times: list[float] = []
    cpu: list[float] = []

    def timed(table: str, events: list[Any]) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        hub.publish(table, events)
        cpu.append((time.thread_time() - c0) * 1000)
        times.append((time.perf_counter() - t0) * 1000)

    floor.listen(timed)

    def bet_again() -> None:
        state = floor.get(ARENA).table.state
        placing: list[g.Command] = []
        for name in players:
            held = {b.wager for b in state.bets_of(name)}
            for wager, amount in (("field", 500), ("place6", 600)):
                if wager not in held and state.balance(name) >= 2 * amount:
                    placing.append(g.PlaceBet(actor=name, role=Role.PLAYER, player=name,
                                              wager=wager, amount=amount))
        if placing:
            run_chore(floor, ARENA, lambda: placing)

    rounds = 0
    for i in range(rolls + 3):
        if i == 3:
            times.clear()
            cpu.clear()
            rounds = 0
        if bets:
            pushes = len(times)
            bet_again()
            del times[pushes:]  # the bets' own push is not a roll's
            del cpu[pushes:]
        floor.submit(ARENA, ROUND_NOW).result()
        rounds += 1
    floor.close()
    return {"publish_ms": times, "cpu_ms": cpu, "rounds": rounds}


def _seed_the_dice(seed: int) -> None:
    """The electronic table's rolls drawn from the project's ``SeededDice(seed)`` instead of
    the CSPRNG (its events say ``seeded``, as long a word as ``csprng``: the same sizes)."""
    from dicetable.core.dice_sources import SeededDice
    from dicetable.table import table as table_module

    dice = SeededDice(seed)
    vars(table_module)["CsprngDice"] = lambda: dice


def _run(src: Path | None, rolls: int, bets: bool, arena: int = ARENA_PLAYERS, seed: int = -1
         ) -> dict[str, Any]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-m", "bench.push_bench", "--child", str(rolls),
                          "--bets" if bets else "--watch", "--players", str(arena),
                          "--seed", str(seed)],
                         env=env, check=True,
                         capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["load"] = [load, os.getloadavg()[0]]
    return result


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _line(label: str, runs: list[dict[str, Any]]) -> tuple[float, float]:
    wall = [ms for r in runs for ms in r["publish_ms"]]
    cpu = [ms for r in runs for ms in r["cpu_ms"]]
    loads = " ".join(f"{a:.1f}-{b:.1f}" for r in runs for a, b in [r["load"]])
    p50, p90, top, cpu50 = _pct(wall, 0.5), _pct(wall, 0.9), max(wall), _pct(cpu, 0.5)
    print(f"  {label:<40} pushes {len(wall):3d}  wall p50 {p50:6.1f} p90 {p90:6.1f} "
          f"max {top:6.1f} ms  cpu p50 {cpu50:6.1f} mean {sum(cpu) / len(cpu):6.1f} ms  "
          f"(load {loads})", flush=True)
    return p50, cpu50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs of each tree, taking turns (their pushes pooled)")
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--only", choices=("watch", "bets"), default=None)
    parser.add_argument("--players", type=int, default=ARENA_PLAYERS,
                        help="players in the arena (each with a hub connection)")
    parser.add_argument("--seed", type=int, default=7,
                        help="the dice's seed, the same for every run (-1: the CSPRNG)")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--bets", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--watch", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true",
                        help="3 rolls, once, 100 players, no baseline tree (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.rolls, args.baseline, args.repeats = 3, "none", 1
        args.players = min(args.players, 100)
    if args.child is not None:
        print(json.dumps(measure(args.child, args.bets, args.players, args.seed)))
        return
    base_dir = Path(tempfile.mkdtemp(prefix="dt-push-base-"))
    base = export_baseline(args.baseline, base_dir) if args.baseline != "none" else None
    dice = "the CSPRNG" if args.seed < 0 else f"dice seeded {args.seed}, the same in every run"
    print(f"a roll's push to {args.players} players and the dealer (Hub.publish, in process), "
          f"{args.rolls} rolls after 3 ({dice}), "
          f"{args.repeats} run(s) of each tree taking turns; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    command = ["python", "-m", "bench.push_bench", *sys.argv[1:]]
    print(f"  command: PYTHONPATH=src {' '.join(command)}", flush=True)
    kinds = ((False, "players who watch"), (True, "players who each hold bets"))
    for bets, what in kinds:
        if args.only is not None and bets != (args.only == "bets"):
            continue
        now: list[dict[str, Any]] = []
        then: list[dict[str, Any]] = []
        for _ in range(args.repeats):
            now.append(_run(None, args.rolls, bets, args.players, args.seed))
            if base is not None:
                then.append(_run(base, args.rolls, bets, args.players, args.seed))
        ours = _line(f"{what} [this tree]", now)
        if base is not None:
            theirs = _line(f"{what} [{args.baseline}]", then)
            print(f"  {'':<40} this tree: wall p50 {theirs[0] / ours[0]:.2f}x faster, "
                  f"cpu p50 {theirs[1] / ours[1]:.2f}x", flush=True)


if __name__ == "__main__":
    main()
