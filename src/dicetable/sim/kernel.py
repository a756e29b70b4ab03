"""A compiled strategy as plain NumPy arrays: what a simulator worker needs, and nothing else.

This module imports NumPy alone, so a worker process (local, Dask or Ray) that unpickles a
``Kernel`` never loads the rule packs, the wagers or the strategy model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:  # numpy.typing and these aliases are for the type checker only
    from numpy.typing import NDArray

    I32 = NDArray[np.int32]
    I64 = NDArray[np.int64]

NET, HANDLE, DECISIONS, WINS, PUSHES = range(5)
FIELDS = ("net", "handle", "decisions", "wins", "pushes")
"""What each transition adds up per label: money won or lost (commission included), money
put up on the decisions, decisions, wins, pushes."""


class FlatComponent(NamedTuple):
    """One component's tables. (A named tuple, as ``Part``: a frozen dataclass compiles its
    methods' source when its module loads, four times a named tuple's CPU.)"""

    rows: int
    """States x 36: the offset of the 'stop now' rows."""
    next36: I32
    """Next state x 36, so the next row is ``next36[row] + roll``."""
    delta: I64
    settled: I64
    need: I64
    """Cash a lane must have before the roll to carry on: the layout it will have after it,
    less what the roll brings in."""
    start36: int
    empty36: int


class Part(NamedTuple):
    """One bet inside a component, for the accounting after a run."""

    acc: I64
    """(2, own states, 36, labels, fields): what each row moves, per label."""
    mapping: I32
    """Component state -> this bet's own state."""
    first_label: int


@dataclass(frozen=True)
class Kernel:
    """A strategy as plain NumPy arrays: everything a worker needs, nothing else (picklable:
    no rule pack, no Python model; put once into a Ray or Dask cluster, sent with each shard
    to a local worker). Not a tuple: Dask goes through a tuple handed to a task item by item
    (looking for its own references), where this goes as one object."""

    components: tuple[FlatComponent, ...]
    parts: tuple[tuple[Part, ...], ...]
    labels: tuple[str, ...]
    initial_net: int
    initial_acc: I64


__all__ = ["DECISIONS", "FIELDS", "HANDLE", "NET", "PUSHES", "WINS", "FlatComponent", "Kernel",
           "Part"]
