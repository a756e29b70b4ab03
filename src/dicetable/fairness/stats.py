"""The test battery: chi-square goodness of fit, runs and serial correlation.

The same functions judge a physical die (its recorded faces) and certify the electronic
tables' RNG (spec/standards.md RNG-2: chi-square, runs, serial correlation at 99%).
Each returns a ``TestResult`` with its statistic and p-value; ``passed(alpha)`` applies the
confidence level.

>>> r = chi_square_faces([100, 100, 100, 100, 100, 100])
>>> r.statistic, r.df, r.p_value, r.passed()
(0.0, 5, 1.0, True)
>>> chi_square_faces([200, 80, 80, 80, 80, 80]).passed()
False
>>> rolls_needed([1/6 - .05, 1/6, 1/6, 1/6, 1/6, 1/6 + .05], alpha=0.01, power=0.9)
735
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import sqrt

import numpy as np
import numpy.typing as npt

from dicetable.core.dice import WAYS

# SciPy is imported by the functions that use it, not here: every server process imports this
# module (the fairness monitor) and scipy.stats is a large part of its start-up, while the
# p-values are first wanted when a die has rolls to judge.

Faces = npt.NDArray[np.integer]
"""An array of die faces, 1 to 6."""

UNIFORM6 = np.full(6, 1 / 6)


@dataclass(frozen=True)
class TestResult:
    """One statistical test: what it tested, its statistic, degrees of freedom and p-value."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    statistic: float
    p_value: float
    n: int
    df: int | None = None
    detail: str = ""

    def passed(self, alpha: float = 0.01) -> bool:
        """Not rejected at significance ``alpha`` (0.01: the 99% confidence level)."""
        return self.p_value >= alpha

    def to_dict(self, alpha: float = 0.01) -> dict[str, object]:
        return {"test": self.name, "statistic": self.statistic, "df": self.df,
                "p_value": self.p_value, "n": self.n, "passed": self.passed(alpha),
                "detail": self.detail}


def chi_square(observed: npt.ArrayLike, probs: npt.ArrayLike, name: str,
                detail: str = "") -> TestResult:
    obs = np.asarray(observed, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    n = int(obs.sum())
    if n == 0:
        return TestResult(name, 0.0, 1.0, 0, len(obs) - 1, "no data")
    expected = n * p
    statistic = float(((obs - expected) ** 2 / expected).sum())
    df = len(obs) - 1
    from scipy import stats

    return TestResult(name, statistic, float(stats.chi2.sf(statistic, df)), n, df, detail)


def face_counts(faces: Faces) -> npt.NDArray[np.int64]:
    """How many times each face 1..6 shows."""
    return np.bincount(np.asarray(faces, dtype=np.int64) - 1, minlength=6)[:6]


def chi_square_faces(counts: Sequence[int] | npt.NDArray[np.int64],
                     name: str = "chi-square faces") -> TestResult:
    """One die's six face counts against a fair die (df 5)."""
    return chi_square(counts, UNIFORM6, name)


def chi_square_pairs(first: Faces, second: Faces,
                     name: str = "chi-square 36 outcomes") -> TestResult:
    """The 36 ordered outcomes of a pair of dice against 1/36 each (df 35).

    Catches a biased die and dice that are not independent of each other.
    """
    cells = (np.asarray(first, np.int64) - 1) * 6 + (np.asarray(second, np.int64) - 1)
    return chi_square(np.bincount(cells, minlength=36), np.full(36, 1 / 36), name)


def chi_square_totals(first: Faces, second: Faces,
                      name: str = "chi-square totals") -> TestResult:
    """The 11 totals 2..12 against the 1:2:...:6:...:1 ways of a fair pair (df 10)."""
    totals = np.asarray(first, np.int64) + np.asarray(second, np.int64)
    probs = np.array([WAYS[t] / 36 for t in range(2, 13)])
    return chi_square(np.bincount(totals - 2, minlength=11), probs, name)


def serial_pairs(faces: Faces, name: str = "serial pairs") -> TestResult:
    """Non-overlapping consecutive pairs of one die's faces: 36 cells, df 35."""
    f = np.asarray(faces, np.int64)
    f = f[: len(f) // 2 * 2]
    return chi_square_pairs(f[0::2], f[1::2], name)


def runs_test(faces: Faces, name: str = "runs") -> TestResult:
    """Wald-Wolfowitz runs of low (1-3) and high (4-6) faces; normal approximation.

    Too few runs means faces clump; too many means they alternate. Two-sided.
    """
    high = np.asarray(faces) >= 4
    n = len(high)
    n1 = int(high.sum())
    n2 = n - n1
    if n1 == 0 or n2 == 0:
        return TestResult(name, float("inf"), 0.0, n, None, "only one kind of face")
    runs = 1 + int(np.count_nonzero(high[1:] != high[:-1]))
    mean = 1 + 2 * n1 * n2 / n
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    z = (runs - mean) / sqrt(var)
    from scipy import stats

    return TestResult(name, z, float(2 * stats.norm.sf(abs(z))), n, None,
                      f"{runs} runs, {mean:.1f} expected")


def serial_correlation(x: Faces, y: Faces | None = None, lag: int = 1,
                       name: str = "serial correlation") -> TestResult:
    """Correlation of a stream with itself ``lag`` steps later (or with ``y``, lag 0).

    For independent draws r is about normal with mean -1/n (0 against another stream) and
    variance 1/n, so z = (r - mean) * sqrt(n). Two-sided.
    """
    a = np.asarray(x, np.float64)
    if y is None:
        a, b = a[:-lag], a[lag:]
        mean0 = -1 / len(a)
    else:
        b = np.asarray(y, np.float64)
        mean0 = 0.0
    n = len(a)
    da, db = a - a.mean(), b - b.mean()
    denom = sqrt(float((da * da).sum()) * float((db * db).sum()))
    r = float((da * db).sum()) / denom if denom else 0.0
    z = (r - mean0) * sqrt(n)
    from scipy import stats

    return TestResult(name, z, float(2 * stats.norm.sf(abs(z))), n, None, f"r = {r:.6f}")


def rolls_needed(probs: Sequence[float], alpha: float = 0.01, power: float = 0.9,
                 p0: Sequence[float] | None = None) -> int:
    """Rolls of one die for the chi-square test to detect ``probs`` (non-central chi-square).

    Reproduces spec/standards.md §3.2: a die with face 6 +5 points and face 1 -5 points is
    found in 735 rolls at alpha 0.01 with power 0.9.
    """
    p = np.asarray(probs, np.float64)
    q = np.asarray(p0 if p0 is not None else np.full(len(p), 1 / len(p)), np.float64)
    df = len(q) - 1
    per_roll = float(((p - q) ** 2 / q).sum())
    if per_roll == 0:
        raise ValueError("a fair die cannot be told from a fair die")
    from scipy import optimize, stats

    critical = float(stats.chi2.ppf(1 - alpha, df))

    def shortfall(n: float) -> float:
        return float(stats.ncx2.sf(critical, df, n * per_roll)) - power

    hi = 10.0
    while shortfall(hi) < 0:
        hi *= 2
    return int(np.ceil(optimize.brentq(shortfall, 1, hi)))
