"""The chi-square, runs and serial-correlation tests, and the sample sizes of
spec/standards.md §3.2 (all seeded: the same numbers on every run)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dicetable.fairness.sequential import loaded
from dicetable.fairness.stats import (
    chi_square_faces,
    chi_square_pairs,
    chi_square_totals,
    face_counts,
    rolls_needed,
    runs_test,
    serial_correlation,
    serial_pairs,
)

FAIR = [1 / 6] * 6


def faces(probs: list[float], n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).choice(np.arange(1, 7), size=n, p=probs)


def test_chi_square_agrees_with_scipy() -> None:
    counts = face_counts(faces(FAIR, 6000, 1))
    ours = chi_square_faces(counts)
    theirs = stats.chisquare(counts)
    assert ours.statistic == pytest.approx(float(theirs.statistic))
    assert ours.p_value == pytest.approx(float(theirs.pvalue))
    assert ours.df == 5


@pytest.mark.parametrize(("probs", "alpha", "power", "expected"), [
    # spec/standards.md §3.2, one die, chi-square df 5
    ([1 / 6 - .05, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6 + .05], 0.05, 0.8, 428),
    ([1 / 6 - .05, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6 + .05], 0.01, 0.9, 735),
    ([1 / 6 - .05, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6 + .05], 0.01, 0.99, 1117),
    ([2 / 18, 3 / 18, 3 / 18, 3 / 18, 3 / 18, 4 / 18], 0.01, 0.9, 595),
    ([0.16, 0.16, 0.16, 0.16, 0.16, 0.20], 0.01, 0.9, 2754),
    ([1 / 6 - .02, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6 + .02], 0.01, 0.9, 4590),
])
def test_rolls_needed_reproduces_the_standards_table(probs: list[float], alpha: float,
                                                     power: float, expected: int) -> None:
    assert rolls_needed(probs, alpha, power) == expected


def test_chi_square_finds_a_five_point_load_in_the_predicted_rolls() -> None:
    # 1,117 rolls give power 0.99 at alpha 0.01 against face 6 +5, face 1 -5 points
    probs = [1 / 6 - .05, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6 + .05]
    found = sum(not chi_square_faces(face_counts(faces(probs, 1117, seed))).passed()
                for seed in range(300))
    assert found / 300 >= 0.97
    fair_rejected = sum(not chi_square_faces(face_counts(faces(FAIR, 1117, seed))).passed()
                        for seed in range(300))
    assert fair_rejected / 300 <= 0.03          # 1% expected


def test_pair_chi_square_catches_dice_that_follow_each_other() -> None:
    rng = np.random.default_rng(5)
    first = faces(FAIR, 20_000, 6)
    second = faces(FAIR, 20_000, 7)
    copy = rng.random(20_000) < 0.05                    # the second die copies the first
    second = np.where(copy, first, second)
    assert chi_square_faces(face_counts(second)).passed()   # each die alone looks fair
    assert not chi_square_pairs(first, second).passed()
    assert not serial_correlation(first, second).passed()


def test_totals_chi_square_uses_the_ways_of_each_total() -> None:
    first, second = faces(FAIR, 36_000, 8), faces(FAIR, 36_000, 9)
    assert chi_square_totals(first, second).passed()
    assert chi_square_totals(first, second).df == 10


def test_runs_and_serial_tests_catch_a_sticky_stream() -> None:
    rng = np.random.default_rng(10)
    f = faces(FAIR, 50_000, 11)
    sticky = f.copy()
    repeat = rng.random(len(f)) < 0.1
    for i in np.flatnonzero(repeat[1:]) + 1:             # 10% of faces repeat the last one
        sticky[i] = sticky[i - 1]
    assert runs_test(f).passed()
    assert serial_correlation(f).passed()
    assert not runs_test(sticky).passed()
    assert not serial_correlation(sticky).passed()
    assert not serial_pairs(sticky).passed()


def test_loaded_helper_keeps_probabilities_summing_to_one() -> None:
    assert sum(loaded(6, 0.05)) == pytest.approx(1)
    assert loaded(6, 0.05)[5] == pytest.approx(1 / 6 + 0.05)
