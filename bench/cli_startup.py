"""How fast the ``dicetable`` command starts, against the CLI framework alone.

Run: ``.venv/bin/python -m bench.cli_startup [--runs N] [--quick]``. Each command is started as
a fresh process ``N`` times (interleaved, so the baseline and the commands share the machine's
state); the median CPU time (user + system, from ``wait4``: on a shared machine wall time also
counts the other processes) and wall time are printed with the CPU ratio to
``python -c "import typer"`` measured in the same run (targets: ``--help`` <= 2x, ``odds PACK``
<= 3x). Commands that keep work in the disk cache (``cli.disk_cache``) run twice: with a
bench-private cache, filled by the warm-up run, and with the cache off (what a first run
costs). It also lists which heavy modules each command imported, and, for ``simulate``, the
floor of any NumPy simulation in a fresh process (the interpreter and ``numpy.random``, then
with the 10^6 rolls drawn): what start-up and work remain above it are ours. Prints figures;
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("numpy", "scipy", "fastapi", "uvicorn", "matplotlib", "dicetable.server",
         "dicetable.sim.engine", "psycopg", "dicetable.games", "dicetable.odds.exact", "rich")

ENTRY = "from dicetable.cli.main import script; import sys; sys.argv[0] = 'dicetable'; script()"
STRATEGY = Path(__file__).resolve().parent.parent / "examples" / "strategies" / \
    "pass-2x-odds.json"
SIMULATE = ["simulate", "--strategy", str(STRATEGY), "--rolls", "1000000", "--seed", "1",
            "--json", "--no-progress"]
OFF = {"DICETABLE_CACHE": "off"}
DRAW = ("import numpy as np; np.random.default_rng(1).integers(0, 36, 10**6, dtype=np.uint8)")
"""The least any NumPy simulation of 10^6 rolls does: the interpreter, NumPy, the dice."""

CASES: list[tuple[str, list[str], dict[str, str]]] = [
    ('python -c "import typer"', [sys.executable, "-c", "import typer"], {}),
    ("dicetable --help", [sys.executable, "-c", ENTRY, "--help"], {}),
    ("dicetable rules list", [sys.executable, "-c", ENTRY, "rules", "list"], {}),
    ("dicetable odds pa-craps", [sys.executable, "-c", ENTRY, "odds", "pa-craps"], {}),
    ("dicetable odds pa-craps --json", [sys.executable, "-c", ENTRY, "odds", "pa-craps",
                                        "--json"], {}),
    ("  odds, cache off", [sys.executable, "-c", ENTRY, "odds", "pa-craps"], OFF),
    ("dicetable simulate 10^6 rolls", [sys.executable, "-c", ENTRY, *SIMULATE], {}),
    ("  simulate, cache off", [sys.executable, "-c", ENTRY, *SIMULATE], OFF),
    ("  floor: import numpy.random", [sys.executable, "-c", "import numpy.random"], {}),
    ("  floor: + draw 10^6 rolls", [sys.executable, "-c", DRAW], {}),
]


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds (the child's user + system) and wall seconds of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **env})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(argv[3:])} failed")
    return usage.ru_utime + usage.ru_stime, wall


def _heavy_imports(argv: list[str], env: dict[str, str]) -> list[str]:
    """The heavy modules a command imports (from ``python -X importtime``)."""
    if "-c" not in argv:
        return []
    traced = [argv[0], "-X", "importtime", *argv[1:]]
    out = subprocess.run(traced, check=True, stdout=subprocess.DEVNULL, env={**os.environ, **env},
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
    parser.add_argument("--quick", action="store_true",
                        help="one run each, warm-ups only where they fill the cache (a smoke "
                        "run)")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    with tempfile.TemporaryDirectory() as cache:
        cases = [(name, argv, env or {"DICETABLE_CACHE": cache}) for name, argv, env in CASES]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in cases}
        for _name, argv, env in cases:  # a warm-up each: files read from disk, cache filled
            if not args.quick or (env is not OFF and {"odds", "simulate"} & set(argv)):
                _run(argv, env)
        for _ in range(args.runs):
            for name, argv, env in cases:
                times[name].append(_run(argv, env))
        load = os.getloadavg()
        base = statistics.median(c for c, _ in times[cases[0][0]])
        print(f"start-up, median of {args.runs} runs each (fresh processes, interleaved; load "
              f"average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; python -m bench.cli_startup "
              f"{' '.join(sys.argv[1:])})")
        print(f"  {'':30s} {'CPU':>9s} {'ratio':>6s} {'wall':>9s}")
        for name, argv, env in cases:
            cpu = statistics.median(c for c, _ in times[name])
            wall = statistics.median(w for _, w in times[name])
            heavy = _heavy_imports(argv, env) if name != cases[0][0] else []
            print(f"  {name:30s} {cpu * 1000:6.0f} ms {cpu / base:5.2f}x {wall * 1000:6.0f} ms"
                  f"  heavy imports: {', '.join(heavy) or 'none'}")
    print("targets: dicetable --help <= 2x, dicetable odds PACK <= 3x the framework alone; "
          "simulate against a crapssim process: python -m bench.sim_bench")


if __name__ == "__main__":
    main()
