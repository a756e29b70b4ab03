"""A wager compiled to a table: (wager state, roll) -> what happens to it.

The live engine, the exact-odds engine and the simulator all read these tables
(DESIGN.md lesson 7), so what a mathematician computes is what the table pays.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from fractions import Fraction

from dicetable.core.dice import Roll

LEAVES = -1
"""``next_state`` of a step after which the stake is no longer on the layout."""


class Outcome(IntEnum):
    """What one roll does to one wager."""

    STAYS = 0
    """Not decided. The wager may progress internally (a point set, a number made)."""
    WIN = 1
    """Decided in the player's favour; ``payout`` is the net win per unit staked."""
    LOSE = 2
    """Decided against the player. ``payout`` is -1, or above -1 when part is returned."""
    PUSH = 3
    """Decided as a standoff: the stake is returned, nothing won or lost."""
    MOVES = 4
    """Not decided; the wager travels to a number on the layout (come and don't come)."""


@dataclass(frozen=True, slots=True)
class Step:
    outcome: Outcome
    payout: Fraction
    """Net result per unit staked: > 0 won, 0 returned, < 0 lost (-1 the whole stake)."""
    next_state: int
    """State after the roll, or ``LEAVES``. A win that keeps its state 'stays up'."""

    @property
    def decided(self) -> bool:
        return self.outcome in (Outcome.WIN, Outcome.LOSE, Outcome.PUSH)

    @property
    def stays_up(self) -> bool:
        """A decided wager whose stake stays on the layout (a winning place bet)."""
        return self.decided and self.next_state != LEAVES


@dataclass(frozen=True)
class CompiledWager:
    """One wager's behaviour under one rule pack."""

    code: str
    name: str
    family: str
    states: tuple[str, ...]
    steps: tuple[tuple[Step, ...], ...]
    """``steps[state][roll.index]``."""
    start: Mapping[int | None, int]
    """Table point (None on the come-out) -> the state a new wager starts in.

    A point missing here means the wager cannot be made in that phase.
    """
    payout_rules: tuple[str, ...]
    """The rule ids its payouts are read from, for citations."""
    parts: int = 1
    """Equal parts the stake is split into (Horn 4, Horn High and World 5, C&E 2)."""
    one_roll: bool = False
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)
    _from: dict[int, frozenset[Fraction]] = field(init=False, repr=False, compare=False)
    """``payouts_from``, worked out once per state (it walks every step it can reach)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {name: i for i, name in enumerate(self.states)})
        object.__setattr__(self, "_from", {})
        assert len(self.steps) == len(self.states)
        assert all(len(row) == 36 for row in self.steps)

    def step(self, state: int, roll: Roll) -> Step:
        return self.steps[state][roll.index]

    def state_index(self, name: str) -> int:
        return self._index[name]

    def placeable(self, point: int | None) -> bool:
        return point in self.start

    @functools.cached_property  # asked on every amount check; the table never changes
    def payouts(self) -> frozenset[Fraction]:
        """Every net payout this wager can make on a win."""
        return frozenset(s.payout for row in self.steps for s in row if s.outcome is Outcome.WIN)

    def payouts_from(self, state: int) -> frozenset[Fraction]:
        """The net payouts a wager standing in ``state`` can still make on a win.

        Odds on the 4 are paid at 2 to 1 only; checking them against 6 to 5 (the price on
        the 5) would refuse amounts the 4 pays exactly.
        """
        known = self._from.get(state)
        if known is None:  # asked on every amount check; the wager never changes
            known = self._from[state] = self._payouts_from(state)
        return known

    def _payouts_from(self, state: int) -> frozenset[Fraction]:
        seen, todo, out = {state}, [state], set()
        while todo:
            for step in self.steps[todo.pop()]:
                if step.outcome is Outcome.WIN:
                    out.add(step.payout)
                if step.next_state != LEAVES and step.next_state not in seen:
                    seen.add(step.next_state)
                    todo.append(step.next_state)
        return frozenset(out)
