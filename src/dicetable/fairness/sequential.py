"""Sequential tests: watch a die roll by roll and raise an alert when its faces drift.

Each face of each die has a one-sided CUSUM (Page 1954) of the Bernoulli log-likelihood
ratio of "this face shows with probability 1/6 + delta" against "1/6": add
``ln(p1/p0)`` when the face shows, ``ln((1-p1)/(1-p0))`` when it does not, never go below 0,
alert at ``h``. Any bias makes some face come up too often, so six upper CUSUMs per die
catch every load. A Wald SPRT on the same increments gives a fixed verdict (loaded or fair).

Figures for the default design (delta 0.05, h 4.6; spec/standards.md §3.2; checked here by
``bench/fairness_arl.py`` and the tests, NumPy PCG64 seeds, 1,000 chains):

============================  =====================  ===========================
average run length (rolls)    loaded die: face 6     fair die: between false
                              at 1/6+0.05, others    alarms
                              1/6-0.01
============================  =====================  ===========================
one face's CUSUM              ~440-450               ~13,000-14,000
a die (6 CUSUMs)              ~440                   ~2,200-2,400
============================  =====================  ===========================

Six CUSUMs per die share the false alarms, so a fair die alerts about every 2,300 of its
rolls at h = 4.6. Raising h trades detection time for fewer false alarms, roughly
exponentially (per die, same loaded die): h 5.5 -> ~560 / ~5,700; h 6.5 -> ~680 / ~17,000;
h 7.5 -> ~795 / ~43,000. With many tables, set h for an acceptable false-alarm rate per
shift; a false alarm costs a dice change, not a wager.

The SPRT (alpha = beta = 0.01) decides in about 575 rolls on average for a fair die and 538
for the loaded one (Wald's approximation). spec/standards.md §3.2's "575 (delta 0.05),
3,300 (0.02), 12,900 (0.01)" are the fair-die figures; loaded: 538, 3,224, 12,706.

The monitor is a gaff and data-entry alarm, not a precision check: a 1-point bias needs
~18,000 rolls to see (§3.3); physical inspection is the real control.

>>> d = CusumDesign()
>>> round(d.up, 4), round(d.down, 4)
(0.2624, -0.0619)
>>> [round(n) for n in sprt_asn(1/6, 1/6 + 0.05)]     # fair die, loaded die
[575, 538]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from math import log
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # NumPy is imported by the simulation that uses it: every server process
    # imports this module (the fairness monitor), which folds each roll in plain Python
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class CusumDesign:
    """The CUSUM's design: the bias it is tuned to (``delta``) and its alarm level ``h``."""

    delta: float = 0.05
    h: float = 4.6
    p0: float = 1 / 6

    def __post_init__(self) -> None:
        if not 0 < self.delta < 1 - self.p0 or self.h <= 0:
            raise ValueError(f"not a CUSUM design: delta={self.delta}, h={self.h}")

    @property
    def p1(self) -> float:
        return self.p0 + self.delta

    @property
    def up(self) -> float:
        """The increment when the face shows."""
        return log(self.p1 / self.p0)

    @property
    def down(self) -> float:
        """The increment when it does not."""
        return log((1 - self.p1) / (1 - self.p0))

    def describe(self) -> str:
        return f"CUSUM delta={self.delta} h={self.h}"


@dataclass
class DieCusum:
    """Six upper CUSUMs, one per face, for one die."""

    design: CusumDesign = field(default_factory=CusumDesign)
    s: list[float] = field(default_factory=lambda: [0.0] * 6)

    def update(self, face: int) -> list[tuple[int, float]]:
        """Add one roll; return the faces (1..6) whose CUSUM reached h, and its value.

        A face that alarms starts again from 0, so one drift raises one alert, not one a roll.
        """
        up, down, h = self.design.up, self.design.down, self.design.h
        alarms = []
        for i in range(6):
            v = self.s[i] + (up if i == face - 1 else down)
            v = v if v > 0 else 0.0
            if v >= h:
                alarms.append((i + 1, v))
                v = 0.0
            self.s[i] = v
        return alarms


class Verdict(StrEnum):
    """What an SPRT says so far."""

    CONTINUE = "continue"
    """Not enough evidence either way."""
    LOADED = "loaded"
    """The face comes up too often: accept the load at error rate alpha."""
    FAIR = "fair"
    """Consistent with a fair die: accept at error rate beta."""


@dataclass
class FaceSprt:
    """Wald's SPRT for one face: p = p0 against p = p0 + delta."""

    face: int
    design: CusumDesign = field(default_factory=CusumDesign)
    alpha: float = 0.01
    beta: float = 0.01
    llr: float = 0.0
    n: int = 0

    @property
    def upper(self) -> float:
        return log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        return log(self.beta / (1 - self.alpha))

    def update(self, face: int) -> Verdict:
        self.n += 1
        self.llr += self.design.up if face == self.face else self.design.down
        if self.llr >= self.upper:
            return Verdict.LOADED
        if self.llr <= self.lower:
            return Verdict.FAIR
        return Verdict.CONTINUE


def sprt_asn(p0: float, p1: float, alpha: float = 0.01,
             beta: float = 0.01) -> tuple[float, float]:
    """Wald's average sample numbers (rolls) when the die is fair, and when it is loaded.

    Ignores the overshoot past the thresholds, so real runs are a little longer.
    """
    upper, lower = log((1 - beta) / alpha), log(beta / (1 - alpha))
    z1, z0 = log(p1 / p0), log((1 - p1) / (1 - p0))

    def drift(p: float) -> float:
        return p * z1 + (1 - p) * z0

    return ((1 - alpha) * lower + alpha * upper) / drift(p0), \
        (beta * lower + (1 - beta) * upper) / drift(p1)


def first_alarms(probs: Sequence[float], chains: int, max_rolls: int,
                 design: CusumDesign | None = None, seed: int = 0,
                 faces: Sequence[int] = (1, 2, 3, 4, 5, 6)) -> npt.NDArray[np.int64]:
    """Simulate ``chains`` dice with face probabilities ``probs``, each watched by CUSUMs on
    ``faces``; return the roll of each die's first alert (-1 if none by ``max_rolls``).

    Vectorised over the chains; used to check the design's run lengths.
    """
    d = design or CusumDesign()
    import numpy as np

    rng = np.random.default_rng(seed)
    watch = np.asarray(faces, np.int64)[None, :]
    s = np.zeros((chains, watch.shape[1]))
    first = np.full(chains, -1, np.int64)
    alive = np.ones(chains, bool)
    block = 512
    t = 0
    while t < max_rolls and alive.any():
        rolls = rng.choice(np.arange(1, 7), size=(min(block, max_rolls - t), chains), p=probs)
        for row in rolls:
            t += 1
            s = np.maximum(0.0, s + np.where(row[:, None] == watch, d.up, d.down))
            hit = alive & (s >= d.h).any(axis=1)
            first[hit] = t
            alive &= ~hit
            if not alive.any():
                break
    return first


def loaded(face: int = 6, delta: float = 0.05) -> list[float]:
    """Face probabilities of a die with ``face`` at 1/6 + delta, the others sharing the loss."""
    probs = [1 / 6 - delta / 5] * 6
    probs[face - 1] = 1 / 6 + delta
    return probs
