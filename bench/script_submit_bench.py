"""What running a table script through the application's one way in costs, against the table
deciding each command in place.

Run: ``.venv/bin/python -m bench.script_submit_bench [--rounds N] [--quick]``. Every example script
(``examples/tables/*.dts``) is run ``N`` times each way, interleaved (the baseline and the
application share the machine's state), best of three: through ``Application.submit``
(``application.scripts.run_file``, the one way every script runs: a pipeline thread per
script's table, each command handed to it and answered after its commit) and, as the baseline
only, the script's commands decided in place (``InPlace`` below: no caller check, no pipeline;
no surface runs a script so). Prints ms per round and the ratio, with the load average; asserts
nothing about time.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dicetable.application.scripts import run_file as through_submit
from dicetable.core.textinput import read_utf8
from dicetable.custody import commands as ccmd
from dicetable.custody import events as cev
from dicetable.custody.ledger import CustodyLedger
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.table import Table
from dicetable.table.script import ScriptResult, play
from dicetable.table.script_runs import Caller, TableOrder

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "tables"


class InPlace:
    """The baseline's ``Runs``: the table and the ledger decide each command themselves."""

    def opened(self, table: Table) -> None:
        pass

    def table(self, table: Table, caller: Caller, order: TableOrder) -> list[gev.Event]:
        events: list[gev.Event] = []
        for command in [order] if isinstance(order, gcmd.Command) else order():
            events += table.execute(command)
        return events

    def custody(self, ledger: CustodyLedger, caller: Caller,
                command: ccmd.CustodyCommand) -> list[cev.CustodyEvent]:
        return ledger.execute(command)


def in_place(path: Path) -> ScriptResult:
    return play(read_utf8(path, rule="script.file"), path.parent, InPlace())


def _round(run: Callable[[Path], Any], scripts: list[Path], rounds: int) -> float:
    began = time.perf_counter()
    for _ in range(rounds):
        for script in scripts:
            run(script)
    return (time.perf_counter() - began) / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="two rounds (CI: it still runs)")
    args = parser.parse_args()
    rounds = 2 if args.quick else args.rounds
    scripts = sorted(EXAMPLES.glob("*.dts"))
    for script in scripts:  # warm: packs compiled, modules imported
        in_place(script)
        through_submit(script)
    base, app = [], []
    for _ in range(3):
        base.append(_round(in_place, scripts, rounds))
        app.append(_round(through_submit, scripts, rounds))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{len(scripts)} example scripts, best of 3 x {rounds} rounds (load {load}):")
    print(f"  in place                 {min(base) * 1000:7.1f} ms/round   1.00x")
    print(f"  through Application      {min(app) * 1000:7.1f} ms/round   "
          f"{min(app) / min(base):.2f}x")
    print("  command: python -m bench.script_submit_bench --rounds", rounds)


if __name__ == "__main__":
    main()
