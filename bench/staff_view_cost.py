"""What the console's per-player probes cost the staff view: one live PA Craps table (seat
limit raised to the schema's most, 30) with 1, 10 and 30 players seated and bought in, viewed by its
boxperson (``Floor.view_text``, the text ``GET /api/tables/{t}`` sends) with the console's
``can`` answers, and again with them left out (``console_can`` stubbed). Each figure is the
median of the repeats, after one warm view; beside it, the engine ``can`` calls one view
makes (a count that does not depend on the machine). The table does not change between the
views: the view's other parts come from what is kept per event, while the probes are worked
out on every view (so "without" is the cached rest, and the difference is the probes). The
times depend on the machine and its load: the qualifiers are printed with them.

    python -m bench.staff_view_cost [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dicetable.application.accounts import Account, Accounts, Kind
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.packs import derive_pack, load_preset
from dicetable.server import floor as floor_module
from dicetable.server.floor import Chore, Floor
from dicetable.store.memory import MemoryStore
from dicetable.table import Table

TABLE = "bench-1"
MOST_SEATS = 30
"""The most positions a pack may give a table (``table.positions``, 1..30)."""
STAFF = {"dee": Role.DEALER, "bo": Role.BOXPERSON, "sam": Role.STICKPERSON}


def seated_floor(players: int) -> Floor:
    """A live PA Craps table with ``players`` seated, each bought in for $100."""
    pack = derive_pack(load_preset("pa-craps"), "bench-pa-craps",
                       {"table.positions": max(players, 16)})
    floor = Floor(MemoryStore(), Accounts("memory"))
    floor.open_table(pack, TABLE, mode="live", opener="fran", staff=dict(STAFF))
    setup: list[g.Command] = []
    for seat in range(1, players + 1):
        name = f"p{seat:02d}"
        setup += [g.JoinTable(actor=name, role=Role.PLAYER, player=name, seat=seat),
                  g.BuyChips(actor="dee", role=Role.DEALER, player=name, amount=100_00)]
    floor.submit(TABLE, Chore(lambda: setup)).result()
    return floor


@contextmanager
def counting_can() -> Iterator[list[int]]:
    """Count every ``Table.can`` call made inside."""
    calls = [0]
    real = Table.can

    def can(self: Table, command: g.Command) -> bool:
        calls[0] += 1
        return real(self, command)

    Table.can = can  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        Table.can = real  # type: ignore[method-assign]


@contextmanager
def without_probes() -> Iterator[None]:
    """The staff view with the console's ``can`` answers left out."""
    names = vars(floor_module)  # the name Floor.extra looks up when it builds a view
    real = names["console_can"]
    names["console_can"] = lambda *_: {}
    try:
        yield
    finally:
        names["console_can"] = real


def measure(floor: Floor, repeats: int, probes: bool) -> dict[str, Any]:
    viewer = Account("bo", Kind.STAFF, "Bo")
    with counting_can() as calls, (without_probes() if not probes else _nothing()):
        floor.view_text(TABLE, viewer)  # warm: packs, ladders and caches
        calls[0] = 0
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            floor.view_text(TABLE, viewer)
            times.append(time.perf_counter() - t0)
    return {"median_ms": round(statistics.median(times) * 1000, 3),
            "can_calls_per_view": calls[0] // repeats}


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def run(sizes: tuple[int, ...], repeats: int) -> list[dict[str, Any]]:
    out = []
    for players in sizes:
        floor = seated_floor(players)
        try:
            with_p = measure(floor, repeats, probes=True)
            without = measure(floor, repeats, probes=False)
        finally:
            floor.close()
        out.append({"players": players, "with_probes": with_p, "without_probes": without,
                    "probes_ms": round(with_p["median_ms"] - without["median_ms"], 3)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 and 10 players, 5 repeats")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes, repeats = ((1, 10), 5) if args.quick else ((1, 10, MOST_SEATS), 30)
    rows = run(sizes, repeats)
    qualifiers = {"repeats": repeats, "statistic": "median wall time of one view, after one "
                  "warm view", "load_average_1m": round(os.getloadavg()[0], 2),
                  "cpus": os.cpu_count(), "python": platform.python_version(),
                  "machine": platform.machine()}
    if args.json:
        print(json.dumps({"qualifiers": qualifiers, "rows": rows}))
        return
    print("the boxperson's view of one live PA Craps table, with and without the console's "
          "probes")
    print(f"  ({repeats} repeats, median; load average {qualifiers['load_average_1m']} on "
          f"{qualifiers['cpus']} CPUs; Python {qualifiers['python']}; an unchanged table, "
          "so the rest of the view is cached; times depend on the machine and its load, the "
          "can-call counts do not)")
    print(f"  {'players':>7}  {'with (ms)':>10}  {'can calls':>9}  {'without (ms)':>12}  "
          f"{'can calls':>9}  {'probes (ms)':>11}")
    for r in rows:
        w, wo = r["with_probes"], r["without_probes"]
        print(f"  {r['players']:>7}  {w['median_ms']:>10.3f}  {w['can_calls_per_view']:>9}  "
              f"{wo['median_ms']:>12.3f}  {wo['can_calls_per_view']:>9}  "
              f"{r['probes_ms']:>11.3f}")


if __name__ == "__main__":
    main()
