"""The sequential monitor: a loaded die raises an alert in about the rolls the statistics
predict; a fair die raises false alarms at the documented rate (seeded, deterministic)."""

from __future__ import annotations

import numpy as np
import pytest

from dicetable.fairness.sequential import (
    CusumDesign,
    DieCusum,
    FaceSprt,
    Verdict,
    first_alarms,
    loaded,
    sprt_asn,
)

FAIR = [1 / 6] * 6
LOADED = loaded(6, 0.05)          # face 6 at 1/6 + 0.05: "biased by 5 points on one face"


def test_loaded_die_alerts_in_about_440_rolls() -> None:
    # spec/standards.md §3.2: CUSUM delta 0.05, h 4.6 -> ARL about 440 rolls when loaded
    alarms = first_alarms(LOADED, chains=600, max_rolls=6000, seed=7)
    assert (alarms > 0).all()
    mean = float(alarms.mean())
    assert 390 <= mean <= 500, mean
    assert float(np.median(alarms)) < mean            # a long right tail, as run lengths have


def test_fair_die_false_alarms_about_every_2300_rolls_with_six_face_cusums() -> None:
    alarms = first_alarms(FAIR, chains=300, max_rolls=40_000, seed=11)
    assert (alarms > 0).all()
    mean = float(alarms.mean())
    assert 1900 <= mean <= 2800, mean


def test_fair_die_one_face_cusum_false_alarms_about_every_13000_rolls() -> None:
    # spec/standards.md §3.2 says about 14,000; 1,000-4,000 Monte Carlo chains there
    alarms = first_alarms(FAIR, chains=300, max_rolls=120_000, seed=13, faces=(6,))
    assert (alarms > 0).mean() > 0.99
    mean = float(alarms[alarms > 0].mean())
    assert 10_500 <= mean <= 16_500, mean


def test_raising_h_cuts_false_alarms_and_slows_detection() -> None:
    strict = CusumDesign(h=6.5)
    loaded_mean = float(first_alarms(LOADED, 400, 8000, strict, seed=17).mean())
    assert 600 <= loaded_mean <= 760, loaded_mean
    fair = first_alarms(FAIR, 150, 20_000, strict, seed=19)
    assert (fair < 0).mean() > 0.2           # most fair dice run 20,000 rolls with no alarm


def test_die_cusum_alarms_once_then_starts_again() -> None:
    cusum = DieCusum()
    alarms = [a for _ in range(40) for a in cusum.update(6)]
    up = CusumDesign().up
    per_alarm = int(np.ceil(CusumDesign().h / up))   # 18 sixes in a row reach h = 4.6
    assert [face for face, _ in alarms] == [6] * (40 // per_alarm)
    assert all(v >= 4.6 for _, v in alarms)
    assert cusum.s[0] == 0.0


def test_sprt_decides_in_about_walds_average_sample_numbers() -> None:
    fair_asn, loaded_asn = sprt_asn(1 / 6, 1 / 6 + 0.05)
    assert round(fair_asn) == 575            # spec/standards.md §3.2
    assert round(loaded_asn) == 538
    rng = np.random.default_rng(23)

    def run(probs: list[float]) -> tuple[Verdict, int]:
        sprt = FaceSprt(6)
        while True:
            verdict = sprt.update(int(rng.choice(6, p=probs)) + 1)
            if verdict is not Verdict.CONTINUE:
                return verdict, sprt.n

    loaded_runs = [run(LOADED) for _ in range(150)]
    fair_runs = [run(FAIR) for _ in range(150)]
    assert sum(v is Verdict.LOADED for v, _ in loaded_runs) >= 145
    assert sum(v is Verdict.FAIR for v, _ in fair_runs) >= 145
    assert float(np.mean([n for _, n in loaded_runs])) == pytest.approx(loaded_asn, rel=0.2)
    assert float(np.mean([n for _, n in fair_runs])) == pytest.approx(fair_asn, rel=0.2)
