"""Where a roll comes from. Chance is an explicit, logged input (DESIGN.md lesson 6).

Four sources sit behind one interface; each roll records the source's ``kind``.

>>> ScriptedDice(["3-4", "6-6"]).next_roll()
Roll(first=3, second=4)
>>> a, b = SeededDice(7), SeededDice(7)
>>> [a.next_roll() for _ in range(5)] == [b.next_roll() for _ in range(5)]
True
>>> CsprngDice().next_roll().total in range(2, 13)
True
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from enum import StrEnum
from typing import Protocol

from dicetable.core.dice import Roll
from dicetable.core.errors import InvalidInput, ProcedureViolation


class SourceKind(StrEnum):
    """The kinds of dice source a roll may come from."""

    MANUAL = "manual"
    """Physical dice read and entered by the authorised employee (live table)."""
    CSPRNG = "csprng"
    """The OS cryptographic generator with unbiased scaling (electronic table)."""
    SEEDED = "seeded"
    """A seeded pseudo-random generator (simulation only; never for wagering)."""
    SCRIPT = "script"
    """A fixed list of rolls (tests and table scripts)."""


class DiceSource(Protocol):
    kind: SourceKind

    def next_roll(self) -> Roll: ...


class ManualEntry:
    """A live table: an employee reads the dice and keys the faces in.

    It generates nothing; ``enter`` validates what was read.
    """

    kind = SourceKind.MANUAL

    def __init__(self) -> None:
        self._pending: Roll | None = None

    def enter(self, faces: str | Roll) -> Roll:
        roll = faces if isinstance(faces, Roll) else Roll.parse(faces)
        self._pending = roll
        return roll

    def next_roll(self) -> Roll:
        if self._pending is None:
            raise ProcedureViolation("no roll has been entered by the employee",
                                     rule="dice.manual-entry")
        roll, self._pending = self._pending, None
        return roll


class CsprngDice:
    """Electronic table: ``secrets.randbelow`` draws by rejection sampling, never modulo.

    Unbiased scaling is required by NJAC 13:69E-1.28G(b)(6) and 58 Pa. Code 810a.5
    (spec/standards.md RNG-3, RNG-4).
    """

    kind = SourceKind.CSPRNG

    def next_roll(self) -> Roll:
        return Roll(secrets.randbelow(6) + 1, secrets.randbelow(6) + 1)


class SeededDice:
    """Reproducible dice for simulations and demos. ``randrange`` rejects, never takes modulo."""

    kind = SourceKind.SEEDED

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def next_roll(self) -> Roll:
        return Roll(self._rng.randrange(1, 7), self._rng.randrange(1, 7))


class ScriptedDice:
    """A fixed sequence of rolls, for tests and scripted scenarios."""

    kind = SourceKind.SCRIPT

    def __init__(self, rolls: Iterable[str | Roll]) -> None:
        self._rolls = [r if isinstance(r, Roll) else Roll.parse(r) for r in rolls]
        self._at = 0

    def next_roll(self) -> Roll:
        if self._at >= len(self._rolls):
            raise InvalidInput("the dice script has no more rolls", rule="dice.script")
        roll = self._rolls[self._at]
        self._at += 1
        return roll

    @property
    def remaining(self) -> int:
        return len(self._rolls) - self._at
