"""Benchmarks cannot rot: every module of ``bench/`` is a benchmark that ``bench.quick_all``
(run by ``.ci/run``) starts in its ``--quick`` mode, or a part the benchmarks use. Whether
each runs is CI's run of them; here, that none is forgotten and each offers ``--quick``."""

from __future__ import annotations

from pathlib import Path

from bench.quick_all import BENCHMARKS, PARTS

BENCH = Path(__file__).resolve().parent.parent / "bench"


def test_every_bench_module_is_run_quick_or_is_a_part() -> None:
    modules = {p.stem for p in BENCH.glob("*.py") if p.stem != "__init__"}
    assert modules - set(BENCHMARKS) - set(PARTS) == set(), "list it in bench/quick_all.py"
    assert set(BENCHMARKS) & set(PARTS) == set()


def test_every_listed_benchmark_offers_quick() -> None:
    # its own option, or the command line of the side-by-side benchmarks, which has it
    assert '"--quick"' in (BENCH / "side_by_side.py").read_text()
    missing = [name for name in BENCHMARKS if (BENCH / f"{name}.py").exists()
               and '"--quick"' not in (text := (BENCH / f"{name}.py").read_text())
               and "side_by_side.main(" not in text]
    assert missing == []


def test_ci_runs_the_quick_benchmarks_after_the_tests_and_fails_on_them() -> None:
    ci = (BENCH.parent / ".ci" / "run").read_text()
    after = ci.split("== pytest")[1]
    assert ".venv/bin/python -m bench.quick_all || bench_rc=$?" in after
    assert ci.rstrip().endswith('exit "$bench_rc"')


def test_ci_runs_the_static_checks_beside_the_benchmarks_and_fails_on_them() -> None:
    ci = (BENCH.parent / ".ci" / "run").read_text()
    started = ci.split("== pytest")[1].split("bench.quick_all")[0]
    for check in (".venv/bin/ruff check", ".venv/bin/mypy", ".venv/bin/lint-imports",
                  "tools/check_private_names.py", "tools/check_import_cycles.py"):
        assert check in started, check
    assert 'wait "$checks_pid" || checks_rc=$?' in ci
    assert '[ "$checks_rc" -eq 0 ] || exit "$checks_rc"' in ci
