"""The parallel run keeps a group's tests on one worker: ``.ci/run`` runs ``pytest -n auto
--dist loadgroup``, and the modules marked ``xdist_group`` rely on it (one local Ray cluster
at a time; a module's floor built once). pytest 9.2 with pytest-xdist 3.8 silently dropped
the marks and sent a group's tests to any worker (``pyproject``: pytest < 9.2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GROUPED = r'''
import os
import pytest

pytestmark = pytest.mark.xdist_group("one")

@pytest.mark.parametrize("n", range(8))
def test_where(n):
    with open(os.environ["WHERE_LOG"], "a") as log:
        log.write(f"{n} {os.environ['PYTEST_XDIST_WORKER']}\n")
'''


def test_a_groups_tests_run_on_one_worker_of_the_parallel_run(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not this project's options
    log = tmp_path / "where.log"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "--dist", "loadgroup",
         "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        # xdist alone: the other plugins installed would only add their imports, thrice
        env={**os.environ, "WHERE_LOG": str(log), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    ran = dict(line.split() for line in log.read_text().splitlines())
    assert sorted(ran) == [str(n) for n in range(8)]
    assert len(set(ran.values())) == 1, ran
