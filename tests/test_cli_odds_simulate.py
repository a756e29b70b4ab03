"""``dicetable odds`` and ``dicetable simulate`` from the command line."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

from typer.testing import CliRunner

from dicetable.cli.main import app

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "strategies"


def test_odds_json_gives_exact_edges_with_floats_beside_them() -> None:
    result = runner.invoke(app, ["odds", "pa-craps", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    by_code = {r["wager"]: r for r in rows if not r["wager"].startswith("odds:")}
    assert by_code["pass"]["house_edge"] == "7/495"
    assert abs(by_code["pass"]["house_edge_pct"] - 1.41414) < 1e-4
    assert Fraction(by_code["place6"]["house_edge"]) == Fraction(1, 66)
    assert by_code["pass+odds"]["house_edge"] == "7/1870"


def test_odds_csv_and_table_and_house_pack(tmp_path: Path) -> None:
    result = runner.invoke(app, ["odds", "pa-props-and-hops", "--csv"])
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert {r["wager"] for r in rows} >= {"field", "double2", "hop1-2"}
    assert runner.invoke(app, ["odds", "in-craps"]).exit_code == 0
    house = tmp_path / "house.json"
    house.write_text('{"id": "h", "extends": "pa-craps", "overrides": '
                     '{"paytable.field.12": "3 to 1"}}', encoding="utf-8")
    rows = json.loads(runner.invoke(app, ["odds", str(house), "--json"]).output)
    assert next(r for r in rows if r["wager"] == "field")["house_edge"] == "1/36"


def test_odds_unknown_pack_is_a_clear_error() -> None:
    result = runner.invoke(app, ["odds", "nowhere-craps"])
    assert result.exit_code == 2
    assert "no preset or file" in result.output


def test_simulate_sessions_json() -> None:
    result = runner.invoke(app, ["simulate", "--strategy", str(EXAMPLES / "iron-cross.toml"),
                                 "--sessions", "3000", "--seed", "7", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["sessions"] == 3000
    assert report["seed"] == 7
    assert sum(report["stopped"].values()) == 3000
    assert {w["label"] for w in report["wagers"]} == {"pass", "pass odds", "place5", "place6",
                                                      "place8", "field"}
    lo, hi = report["house_edge_ci_pct"]
    assert lo < report["house_edge_pct"] < hi
    assert report["final_bankroll_percentiles_cents"]["50"] > 0
    assert len(report["bands"]["rolls"]) == len(report["bands"]["p50"])


def test_simulate_rolls_csv_is_reproducible() -> None:
    args = ["simulate", "--strategy", str(EXAMPLES / "pass-2x-odds.json"), "--rolls",
            "300000", "--seed", "3", "--csv"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert first.output == runner.invoke(app, args).output
    rows = list(csv.DictReader(io.StringIO(first.output)))
    assert [r["label"] for r in rows] == ["pass", "pass odds", "TOTAL"]


def test_simulate_writes_plots(tmp_path: Path) -> None:
    result = runner.invoke(app, ["simulate", "--strategy", str(EXAMPLES / "press-6-8.toml"),
                                 "--sessions", "2000", "--seed", "1", "--plot",
                                 str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    for name in ("bankroll_bands.png", "results.png", "edges.png"):
        png = tmp_path / "plots" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "risk of ruin" in result.output


def test_edge_chart_puts_each_realised_edge_beside_the_exact_one() -> None:
    from dicetable.sim.automaton import compile_strategy
    from dicetable.sim.plots import edge_points
    from dicetable.sim.report import build_report
    from dicetable.sim.runner import plan_rolls, run
    from dicetable.sim.strategy import load_strategy

    compiled = compile_strategy(load_strategy(EXAMPLES / "iron-cross.toml"))
    report = build_report(compiled, run(compiled, plan_rolls(400_000), seed=4), "rolls")
    points = edge_points(report)
    assert [p[0] for p in points] == ["pass", "pass odds", "place5", "place6", "place8",
                                      "field"]
    exact = dict(zip(compiled.labels, (w.exact_edge for w in report.wagers), strict=True))
    for label, edge, half, exact_pct in points:
        assert exact_pct == float(exact[label] or 0) * 100
        assert half > 0
        assert abs(edge - exact_pct) < 5 * half  # a generous check: the chart is of these


def test_simulate_refuses_bad_requests(tmp_path: Path) -> None:
    strategy = str(EXAMPLES / "pass-2x-odds.json")
    both = runner.invoke(app, ["simulate", "--strategy", strategy, "--rolls", "10",
                               "--sessions", "10"])
    assert both.exit_code == 2
    assert "exactly one" in both.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"bets": [{"wager": "place6", "amount": 5}]}', encoding="utf-8")
    refused = runner.invoke(app, ["simulate", "--strategy", str(bad), "--rolls", "10"])
    assert refused.exit_code == 2
    assert "payout.inexact" in refused.output
    missing = runner.invoke(app, ["simulate", "--strategy", strategy, "--rolls", "10",
                                  "--engine", "spark"])
    assert missing.exit_code == 2
    assert "engine" in missing.output
