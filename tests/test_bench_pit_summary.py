"""``bench.load_bench --pit`` ends with (a) with and without the pit side by side: medians over
the rounds, their spread, and the pit's cost as the median of each round's own ratio."""

from __future__ import annotations

from typing import Any

import pytest
from bench.load_bench import A, pit_summary


def _round(rate: float, cpu: float, rate_pit: float, cpu_pit: float) -> dict[str, Any]:
    return {"this": {A: {"per_s": rate, "cpu_ms_per_accepted": cpu}},
            "this+pit": {A: {"per_s": rate_pit, "cpu_ms_per_accepted": cpu_pit}}}


def test_the_pit_summary_gives_medians_spreads_and_per_round_ratios(
        capsys: pytest.CaptureFixture[str]) -> None:
    rounds = [_round(1000, 1.0, 950, 1.02), _round(800, 1.2, 800, 1.26),
              _round(1200, 0.9, 1100, 0.9)]
    pit_summary(rounds, [3.0, 4.5, 2.0])
    out = capsys.readouterr().out
    assert "3 rounds" in out
    assert "load average per round 3.0, 4.5, 2.0" in out
    assert "this      accepted/s median 1000 [800 .. 1200]" in out
    assert "this+pit  accepted/s median 950 [800 .. 1100]" in out
    assert "CPU ms per accepted answer median 1.000 [0.900 .. 1.200]" in out
    # per-round ratios: 5%, 0%, 8.3% fewer accepted/s; 2%, 5%, 0% more CPU per answer
    assert "accepted/s is median +5.0 [+0.0 .. +8.3]% lower" in out
    assert "CPU per accepted answer is median +2.0 [+0.0 .. +5.0]% higher" in out


def test_no_summary_without_both_designs(capsys: pytest.CaptureFixture[str]) -> None:
    pit_summary([{"this": {A: {"per_s": 1.0}}}], [1.0])
    assert capsys.readouterr().out == ""
