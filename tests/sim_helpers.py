"""Shared helpers for the simulator tests: run a strategy on given dice, one lane."""

from __future__ import annotations

from typing import Any

import numpy as np

from dicetable.core.dice import Roll
from dicetable.sim.automaton import compile_strategy
from dicetable.sim.engine import LaneResult, Limits, ScriptedDice, run_lanes
from dicetable.sim.strategy import strategy_from_data


def rolls(text: str) -> np.ndarray[Any, np.dtype[np.uint8]]:
    return np.array([Roll.parse(r).index for r in text.split()], dtype=np.uint8)


def lane(data: dict[str, Any], dice: str | np.ndarray[Any, Any],
         limits: Limits | None = None) -> LaneResult:
    """One session of ``data`` on the given dice (``limits``: betting rolls = the dice)."""
    seq = rolls(dice) if isinstance(dice, str) else dice
    compiled = compile_strategy(strategy_from_data(data))
    return run_lanes(compiled.kernel(), ScriptedDice(seq), 1, limits or Limits(len(seq)),
                     trace=1)


def path(data: dict[str, Any], dice: str) -> list[int]:
    """The session's net result (cents) after each roll of ``dice``.

    The last roll is the one the session stops on, so it includes the wind-down (bets taken
    down, commissions paid in advance refunded).
    """
    trace: list[int] = lane(data, dice).trace[0].tolist()
    return trace
