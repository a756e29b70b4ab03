"""Custody scenarios in process against a ``dicetable`` process per step.

A regulator's custody scenario used to be a sequence of ``dicetable dice ...`` calls, each a
new Python process (imports, then replaying the JSON-lines log). The same scenario now runs in
process as a table script (``docs/table-scripts.md``, 68 IAC 10-4-3: dice from receipt to the
table and back), and the CLI steps run in process through Typer's ``CliRunner``. Printed side
by side with the cost of one ``dicetable dice`` process, measured in the same run:

    .venv/bin/python -m bench.custody_bench [--repeat 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

from dicetable.application.scripts import run_script
from dicetable.cli.main import app

DOC = Path(__file__).parent.parent / "docs" / "table-scripts.md"


def _scenario() -> str:
    """The documented 68 IAC 10-4-3 scenario (the same text the tests run)."""
    text = DOC.read_text(encoding="utf-8").split("## 68 IAC 10-4-3", 1)[1]
    return text.split("```\n", 2)[1]


def scenario_seconds(repeat: int) -> tuple[float, int]:
    best, steps = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = run_script(_scenario(), DOC.parent)
        best = min(best, time.perf_counter() - start)
        assert result.ok, result.failure
        assert result.custody is not None
        steps = len(result.custody.log)
    return best, steps


def cli_steps_seconds(log: Path, repeat: int) -> float:
    runner = CliRunner()
    best = float("inf")
    for _ in range(repeat):
        log.unlink(missing_ok=True)
        start = time.perf_counter()
        for args in (["open", "--jurisdiction", "in", "--site", "river"],
                     ["key", "draw", "table-games", "--actor", "Ann", "--role",
                      "shift-manager"],
                     ["key", "draw", "security", "--actor", "Sam", "--role", "security"],
                     ["report", "--json"]):
            out = runner.invoke(app, ["dice", "--log", str(log), *args])
            assert out.exit_code == 0, out.output
        best = min(best, (time.perf_counter() - start) / 4)
    return best


def process_seconds(log: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dicetable.cli.main", "dice", "--log", str(log),
                    "report", "--json"], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one repeat (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "dice.jsonl"
        scenario, steps = scenario_seconds(args.repeat)
        step = cli_steps_seconds(log, args.repeat)
        process = process_seconds(log)
    print(f"10-4-3 scenario in process (table + {steps} custody events): {scenario:.3f} s")
    print(f"one 'dicetable dice' step in process (CliRunner):          {step * 1000:.1f} ms")
    print(f"one 'dicetable dice' step as its own process:              {process:.3f} s")
    print(f"ratio, one process per step / the whole scenario in process: "
          f"{process / scenario:.1f}x")


if __name__ == "__main__":
    main()
