"""``dicetable simulate`` keeps a prepared strategy on disk under a digest (``sim.prepared``):
the second run of the same file reads it instead of checking and compiling the strategy
again, and prints exactly what the first printed; a changed file is prepared afresh. What a
run imports is counted, never how long it takes (bench/cli_startup.py, bench/sim_bench.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "strategies"
PROBE = """
import json, sys
from dicetable.cli.main import app
try:
    app(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
COMPILER = ("dicetable.rules", "dicetable.games", "dicetable.wagers", "dicetable.odds",
            "dicetable.sim.strategy", "dicetable.sim.automaton", "rich")


def simulate(cache: Path, strategy: Path, *more: str) -> tuple[dict[str, object], set[str]]:
    env = dict(os.environ, DICETABLE_CACHE=str(cache))
    done = subprocess.run([sys.executable, "-c", PROBE, "simulate", "--strategy", str(strategy),
                           "--rolls", "20000", "--seed", "7", "--json", *more],
                          capture_output=True, text=True, check=True, env=env)
    report = json.loads(done.stdout)
    for timing in ("seconds", "rolls_per_second"):
        report.pop(timing, None)
    return report, set(json.loads(done.stderr.strip().splitlines()[-1]))


def loaded(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == c or m.startswith(c + ".") for c in COMPILER))


def test_a_prepared_strategy_is_read_from_the_cache_with_the_same_report(
        tmp_path: Path) -> None:
    strategy = tmp_path / "iron-cross.toml"
    shutil.copyfile(EXAMPLES / "iron-cross.toml", strategy)
    cache = tmp_path / "cache"
    first, cold = simulate(cache, strategy)
    assert loaded(cold), "a first run checks and compiles the strategy"
    assert len(list(cache.glob("*.prepared"))) == 1
    second, warm = simulate(cache, strategy)
    assert second == first
    assert loaded(warm) == [], f"a cached run imported {loaded(warm)}"


def test_a_changed_strategy_or_setting_is_prepared_afresh(tmp_path: Path) -> None:
    strategy = tmp_path / "pass.json"
    data = json.loads((EXAMPLES / "pass-2x-odds.json").read_text())
    strategy.write_text(json.dumps(data))
    cache = tmp_path / "cache"
    before, _ = simulate(cache, strategy)
    data["name"] = "renamed"
    strategy.write_text(json.dumps(data))
    after, modules = simulate(cache, strategy)
    assert loaded(modules), "an edited file is checked again"
    assert after["strategy"] == "renamed" != before["strategy"]
    _, modules = simulate(cache, strategy, "--session-rolls", "50")
    assert loaded(modules), "another --session-rolls is another entry"
    assert len(list(cache.glob("*.prepared"))) == 3


def test_a_strategy_with_a_bad_pack_is_refused_every_time(tmp_path: Path) -> None:
    strategy = tmp_path / "bad.json"
    strategy.write_text(json.dumps({"pack": "no-such-pack", "bets": [{"wager": "pass",
                                                                      "amount": 10}]}))
    env = dict(os.environ, DICETABLE_CACHE=str(tmp_path / "cache"))
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "dicetable.cli.main", "simulate",
                               "--strategy", str(strategy), "--rolls", "100"],
                              capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 2
        assert "no-such-pack" in done.stderr
    assert not list((tmp_path / "cache").glob("*.prepared"))


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    strategy = EXAMPLES / "pass-2x-odds.json"
    _, first = simulate(Path("off"), strategy)
    _, second = simulate(Path("off"), strategy)
    assert loaded(first) and loaded(second)
