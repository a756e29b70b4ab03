"""The CLI keeps what it works out the same way every time on disk under a digest
(``cli.disk_cache``): ``dicetable simulate`` a prepared strategy, ``dicetable odds PRESET`` its
report. The second run reads it instead of working it out again and prints exactly what the
first printed; a changed file or setting is worked out afresh. What a run imports is counted,
never how long it takes (bench/cli_startup.py, bench/sim_bench.py)."""

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
    assert len(list(cache.glob("strategy-*.pickle"))) == 1
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
    assert len(list(cache.glob("strategy-*.pickle"))) == 3


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
    assert not list((tmp_path / "cache").glob("*.pickle"))


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    strategy = EXAMPLES / "pass-2x-odds.json"
    _, first = simulate(Path("off"), strategy)
    _, second = simulate(Path("off"), strategy)
    assert loaded(first)
    assert loaded(second)


def odds(cache: Path, *args: str) -> tuple[str, set[str]]:
    env = dict(os.environ, DICETABLE_CACHE=str(cache))
    done = subprocess.run([sys.executable, "-c", PROBE, "odds", *args], capture_output=True,
                          text=True, check=True, env=env)
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_a_presets_odds_are_read_from_the_cache_with_the_same_report(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _, cold = odds(cache, "pa-props-and-hops", "--csv")
    assert "dicetable.odds.exact" in cold  # worked out the first time
    for args, printer in ((["pa-props-and-hops", "--json"], False),
                          (["pa-props-and-hops"], True)):
        cached, warm = odds(cache, *args)
        uncached, _ = odds(Path("off"), *args)
        assert cached == uncached
        rich = sorted(m for m in warm if m == "rich" or m.startswith("rich."))
        assert loaded(warm) == (rich if printer else []), "the table alone needs Rich"
    assert len(list(cache.glob("odds-*.pickle"))) == 1


def test_a_house_pack_file_is_not_cached(tmp_path: Path) -> None:
    pack = tmp_path / "house.json"
    pack.write_text(json.dumps({"id": "house", "base": "pa-craps", "rules": {}}))
    cache = tmp_path / "cache"
    env = dict(os.environ, DICETABLE_CACHE=str(cache))
    subprocess.run([sys.executable, "-m", "dicetable.cli.main", "odds", str(pack), "--json"],
                   capture_output=True, text=True, env=env, check=False)
    assert not list(cache.glob("odds-*.pickle"))
