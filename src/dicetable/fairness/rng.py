"""Certify the electronic tables' RNG: the battery on millions of CSPRNG rolls.

``CsprngDice`` draws each face with ``secrets.randbelow(6) + 1``. CPython implements that
as rejection sampling on the OS generator: read one byte from ``os.urandom``, keep its top
three bits (0..7), and try again while the value is 6 or 7. ``csprng_faces`` does exactly
that, in bulk: it reads the bytes in large blocks and applies the same shift and the same
rejection with NumPy. Given the same bytes it returns the same faces as ``randbelow`` (a
test checks this), so certifying the bulk draw certifies the scaling the table uses,
without ten million Python calls. ``engine_rolls`` takes the table's own path, roll by
roll, for smaller runs.

>>> faces_from_bytes(bytes([0b000_00000, 0b110_00000, 0b101_11111]))
array([1, 6], dtype=uint8)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dicetable.core.dice_sources import CsprngDice
from dicetable.fairness.stats import (
    TestResult,
    chi_square_faces,
    chi_square_pairs,
    chi_square_totals,
    face_counts,
    runs_test,
    serial_correlation,
    serial_pairs,
)

ByteSource = Callable[[int], bytes]
Faces = npt.NDArray[np.uint8]


def faces_from_bytes(data: bytes) -> Faces:
    """Faces 1..6 from random bytes, by ``randbelow(6)``'s rule: top 3 bits, reject 6 and 7."""
    top3 = np.frombuffer(data, dtype=np.uint8) >> 5
    kept: Faces = (top3[top3 < 6] + 1).astype(np.uint8)
    return kept


def csprng_faces(n: int, randbytes: ByteSource = os.urandom, block: int = 1 << 22) -> Faces:
    """``n`` faces from the OS CSPRNG, scaled exactly as ``secrets.randbelow(6) + 1``."""
    out = np.empty(n, dtype=np.uint8)
    filled = 0
    while filled < n:
        # 3 of 4 bytes are kept on average; ask for a little more than needed
        want = min(block, int((n - filled) * 4 / 3) + 64)
        faces = faces_from_bytes(randbytes(want))
        take = min(len(faces), n - filled)
        out[filled:filled + take] = faces[:take]
        filled += take
    return out


def csprng_rolls(n: int, randbytes: ByteSource = os.urandom) -> tuple[Faces, Faces]:
    """``n`` rolls: first and second die, drawn in the order ``CsprngDice.next_roll`` draws."""
    faces = csprng_faces(2 * n, randbytes)
    return faces[0::2], faces[1::2]


def engine_rolls(n: int) -> tuple[Faces, Faces]:
    """``n`` rolls through the table's own ``CsprngDice.next_roll`` (slow: one call a roll)."""
    dice = CsprngDice()
    first = np.empty(n, np.uint8)
    second = np.empty(n, np.uint8)
    for i in range(n):
        roll = dice.next_roll()
        first[i], second[i] = roll.first, roll.second
    return first, second


def battery(first: Faces, second: Faces) -> list[TestResult]:
    """Chi-square, runs and serial-correlation tests on a stream of rolls."""
    return [
        chi_square_faces(face_counts(first), "chi-square faces, first die"),
        chi_square_faces(face_counts(second), "chi-square faces, second die"),
        chi_square_pairs(first, second, "chi-square 36 outcomes"),
        chi_square_totals(first, second, "chi-square totals 2-12"),
        runs_test(first, "runs (low/high), first die"),
        runs_test(second, "runs (low/high), second die"),
        serial_correlation(first, name="serial correlation lag 1, first die"),
        serial_correlation(second, name="serial correlation lag 1, second die"),
        serial_correlation(first, second, name="correlation first vs second die"),
        serial_pairs(first, "serial pairs, first die"),
        serial_pairs(second, "serial pairs, second die"),
    ]


@dataclass(frozen=True)
class Certification:
    source: str
    rolls: int
    seconds: float
    results: tuple[TestResult, ...]
    alpha: float = 0.01

    @property
    def passed(self) -> bool:
        return all(r.passed(self.alpha) for r in self.results)

    @property
    def false_failure_rate(self) -> float:
        """How often a perfect RNG fails at least one test (the tests are nearly independent)."""
        return 1 - (1 - self.alpha) ** len(self.results)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "rolls": self.rolls, "seconds": round(self.seconds, 3),
                "confidence": 1 - self.alpha, "passed": self.passed,
                "false_failure_rate": round(self.false_failure_rate, 4),
                "tests": [r.to_dict(self.alpha) for r in self.results]}


def certify(rolls: int = 10_000_000, source: str = "bulk", alpha: float = 0.01,
            randbytes: ByteSource = os.urandom) -> Certification:
    """Draw ``rolls`` rolls from the CSPRNG (``bulk`` or ``engine``) and run the battery."""
    if rolls < 100:
        raise ValueError("certify at least 100 rolls")
    start = time.perf_counter()
    if source == "bulk":
        first, second = csprng_rolls(rolls, randbytes)
        label = "CSPRNG bulk (os.urandom, randbelow(6) scaling)"
    elif source == "engine":
        first, second = engine_rolls(rolls)
        label = "CsprngDice.next_roll (secrets.randbelow)"
    else:
        raise ValueError(f"unknown source {source!r}: bulk or engine")
    results = tuple(battery(first, second))
    return Certification(label, rolls, time.perf_counter() - start, results, alpha)
