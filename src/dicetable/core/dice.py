"""Two dice: a roll is its two faces, not just a total.

>>> r = Roll.parse("3-4")
>>> r.total, r.is_pair, str(r)
(7, False, '3-4')
>>> Roll.parse("2-2").is_hard, Roll.parse("1-3").is_hard
(True, False)
>>> len(ALL_ROLLS), sum(WAYS.values())
(36, 36)
>>> WAYS[7], WAYS[2]
(6, 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dicetable.core.errors import InvalidInput

FACES = (1, 2, 3, 4, 5, 6)
POINTS = (4, 5, 6, 8, 9, 10)
"""The box numbers: the totals that can become a point."""

_ROLL = re.compile(r"^\s*([1-6])\s*[-,/ ]\s*([1-6])\s*$")


@dataclass(frozen=True, slots=True, order=True)
class Roll:
    """The uppermost faces of the two dice, in the order read (first die, second die)."""

    first: int
    second: int

    def __post_init__(self) -> None:
        if self.first not in FACES or self.second not in FACES:
            raise InvalidInput(f"a die shows 1 to 6, not {self.first}-{self.second}",
                               rule="dice.faces")

    @classmethod
    def parse(cls, text: str) -> Roll:
        """Read ``3-4`` (also ``3,4``, ``3/4`` or ``3 4``)."""
        # Bounded before it is matched: a roll is a few characters (no long input to scan).
        m = _ROLL.match(text) if len(text) <= 32 else None
        if not m:
            raise InvalidInput(f"not a roll of two dice: {text[:40]!r} (write e.g. '3-4')",
                               rule="dice.notation")
        return cls(int(m.group(1)), int(m.group(2)))

    @property
    def total(self) -> int:
        return self.first + self.second

    @property
    def is_pair(self) -> bool:
        """Both dice show the same face (a 'double')."""
        return self.first == self.second

    @property
    def is_hard(self) -> bool:
        """A hardway: 2-2, 3-3, 4-4 or 5-5 (and, for hops, 1-1 and 6-6)."""
        return self.is_pair

    @property
    def index(self) -> int:
        """Position 0..35 in ``ALL_ROLLS``; compiled wager tables are indexed by it."""
        return (self.first - 1) * 6 + (self.second - 1)

    @property
    def combination(self) -> tuple[int, int]:
        """The unordered pair of faces, low first (how hop bets name a result)."""
        return (min(self.first, self.second), max(self.first, self.second))

    def __str__(self) -> str:
        return f"{self.first}-{self.second}"


ALL_ROLLS: tuple[Roll, ...] = tuple(Roll(a, b) for a in FACES for b in FACES)
"""The 36 equally likely outcomes, in ``Roll.index`` order."""

WAYS: dict[int, int] = {t: sum(1 for r in ALL_ROLLS if r.total == t) for t in range(2, 13)}
"""How many of the 36 outcomes make each total."""

COMBINATIONS: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in FACES for b in FACES if a <= b
)
"""The 21 distinct unordered results: 6 pairs and 15 non-pairs (the hop bets)."""
