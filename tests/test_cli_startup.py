"""The CLI starts at once: ``--help``, ``rules`` and ``odds`` import no NumPy, SciPy or server
code (what they import is counted, never how long it takes: bench/cli_startup.py times it),
a server loads its floor without NumPy or SciPy, and ``serve`` says what it is doing while it
prepares a fresh store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dicetable.server.demo import PLAYERS, STAFF
from dicetable.server.main import build_floor
from tests.demo_floor import CHEAP_HASHER, copy_demo_db

HEAVY = ("numpy", "scipy", "matplotlib", "fastapi", "uvicorn", "psycopg", "dicetable.server",
         "dicetable.sim.engine", "dicetable.fairness")
PROBE = """
import json, sys
from dicetable.cli.main import app
try:
    app(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def imported(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, check=True)
    modules: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return set(modules)


@pytest.mark.parametrize("args", [["--help"], ["rules", "list"], ["rules", "show", "pa-craps"],
                                  ["odds", "pa-craps", "--json"], ["dice", "--help"]])
def test_cli_commands_import_no_heavy_modules(args: list[str]) -> None:
    modules = imported(*args)
    heavy = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == [], f"dicetable {' '.join(args)} imported {heavy}"


SERVER_PROBE = """
import json, sys
from pathlib import Path
from dicetable.server.app import create_app
from dicetable.server.main import build_floor
floor, _ = build_floor(Path(sys.argv[1]))
create_app(floor)
floor.close()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_a_server_loads_its_floor_without_numpy_or_scipy(demo_db: Path, tmp_path: Path
                                                          ) -> None:
    """The fairness monitor folds each roll in plain Python; NumPy and SciPy come with the
    first die judged (a report, the dice page), not with every server's start."""
    floor_db = copy_demo_db(demo_db, tmp_path / "floor.db")
    done = subprocess.run([sys.executable, "-c", SERVER_PROBE, str(floor_db)],
                          capture_output=True, text=True, check=True)
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    assert "dicetable.fairness.monitor" in modules  # the floor's monitor was loaded ...
    assert [m for m in modules if m.split(".")[0] in ("numpy", "scipy")] == []  # ... alone


def test_cli_help_lists_every_command_without_loading_them() -> None:
    modules = imported("--help")
    assert not any(m.startswith("dicetable.cli.") and m != "dicetable.cli.main"
                   for m in modules)


def test_serve_reports_each_step_of_preparing_a_fresh_store(tmp_path: Path) -> None:
    steps: list[str] = []
    floor, credentials = build_floor(tmp_path / "fresh.db", progress=steps.append,
                                     hasher=CHEAP_HASHER)
    try:
        assert credentials
        people = len(STAFF) + len(PLAYERS)
        assert steps[0] == f"demo floor: account 1 of {people} (fran)"
        assert f"demo floor: account {people} of {people} (dan)" in steps
        assert steps[-1].startswith(f"demo floor: table {len(floor.tables)} of "
                                    f"{len(floor.tables)}")
    finally:
        floor.close()
        floor.store.close()
        floor.accounts.close()


@pytest.mark.parametrize("given", [None, "4"])
def test_numpys_blas_starts_one_thread_unless_the_operator_says(
        given: str | None, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """No command does linear algebra: the BLAS's thread per core, started and spinning at
    NumPy's import, is left out (``cli.main.BLAS_THREADS``) unless the operator sets it."""
    from dicetable.cli.main import BLAS_THREADS, main

    if given is None:
        monkeypatch.delenv(BLAS_THREADS, raising=False)
    else:
        monkeypatch.setenv(BLAS_THREADS, given)
    monkeypatch.setattr(sys, "argv", ["dicetable", "odds", "pa-craps", "--json"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 0
    assert json.loads(capsys.readouterr().out)
    assert os.environ[BLAS_THREADS] == (given or "1")


class _Ended(Exception):
    pass


def test_main_in_process_ends_with_systemexit_and_only_the_program_ends_at_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``main`` called by a process that goes on (this test) never ends that process, even
    with no other thread alive; the ``dicetable`` program (``script``) ends at once after a
    fast-path command (``cli.main._end``)."""
    import threading

    from dicetable.cli import main as cli_main

    ended: list[int] = []

    def end_now(code: int) -> None:
        ended.append(code)
        raise _Ended

    monkeypatch.setattr(threading, "active_count", lambda: 1)  # as in a one-thread process
    monkeypatch.setattr(os, "_exit", end_now)
    monkeypatch.setattr(sys, "argv", ["dicetable", "odds", "pa-craps", "--json"])
    with pytest.raises(SystemExit) as done:
        cli_main.main()
    assert done.value.code == 0
    assert ended == []
    assert json.loads(capsys.readouterr().out)
    with pytest.raises(_Ended):
        cli_main.script()
    assert ended == [0]
    assert json.loads(capsys.readouterr().out)
