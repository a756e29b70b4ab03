"""How fast the ``dicetable`` command starts, against the CLI framework alone.

Run: ``.venv/bin/python -m bench.cli_startup [--runs N]``. Each command is started as a fresh
process ``N`` times (interleaved, so the baseline and the commands share the machine's state) and
the median wall time is printed with its ratio to ``python -c "import typer"`` measured in the
same run (target: ``--help`` <= 2x). It also lists which heavy modules each command imported.
Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HEAVY = ("numpy", "scipy", "fastapi", "uvicorn", "matplotlib", "dicetable.server",
         "dicetable.sim.engine", "psycopg")

ENTRY = "from dicetable.cli.main import main; import sys; sys.argv[0] = 'dicetable'; main()"

CASES: list[tuple[str, list[str]]] = [
    ('python -c "import typer"', [sys.executable, "-c", "import typer"]),
    ("dicetable --help", [sys.executable, "-c", ENTRY, "--help"]),
    ("dicetable rules list", [sys.executable, "-c", ENTRY, "rules", "list"]),
    ("dicetable odds pa-craps", [sys.executable, "-c", ENTRY, "odds", "pa-craps"]),
]


def _run(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _heavy_imports(argv: list[str]) -> list[str]:
    """The heavy modules a command imports (from ``python -X importtime``)."""
    if "-c" not in argv:
        return []
    traced = [argv[0], "-X", "importtime", *argv[1:]]
    out = subprocess.run(traced, check=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True).stderr
    found = set()
    for line in out.splitlines():
        name = line.rsplit("|", 1)[-1].strip()
        for heavy in HEAVY:
            if name == heavy or name.startswith(heavy + "."):
                found.add(heavy)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="one run each (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    times: dict[str, list[float]] = {name: [] for name, _ in CASES}
    for _name, argv in CASES:  # one warm-up each: the first start reads the files from disk
        _run(argv)
    for _ in range(args.runs):
        for name, argv in CASES:
            times[name].append(_run(argv))
    base = statistics.median(times[CASES[0][0]])
    print(f"start-up, median of {args.runs} runs each (fresh processes, interleaved)")
    for name, argv in CASES:
        median = statistics.median(times[name])
        heavy = _heavy_imports(argv) if name != CASES[0][0] else []
        print(f"  {name:28s} {median * 1000:7.1f} ms  {median / base:5.2f}x"
              f"  heavy imports: {', '.join(heavy) or 'none'}")
    print("target: dicetable --help <= 2x the framework alone")


if __name__ == "__main__":
    main()
