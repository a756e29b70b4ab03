"""A strategy ready to simulate, as plain data.

Checking a strategy against its rule pack and compiling its tables needs the rules, the
games and the exact odds - most of a short run's time is importing them. What a run and its
report need of the result is small and plain: the kernel's arrays, the labels, the exact
edges (``dicetable simulate`` keeps it in its disk cache, ``cli.disk_cache``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

from dicetable.sim.kernel import Kernel
from dicetable.sim.session import SessionSpec


class Prepared(NamedTuple):
    """What a simulation and its report need of a compiled strategy (a named tuple, as the
    kernel's components: ``sim.kernel``; it is never sent to a cluster, its kernel is)."""

    name: str
    pack: str
    labels: tuple[str, ...]
    codes: tuple[str, ...]
    exact_edges: tuple[Fraction | None, ...]
    """Each label's exact house edge (None where there is no single one)."""
    opening_cost: int
    """Cash the first bets take: stakes plus commissions paid up front."""
    tables: Kernel
    session: SessionSpec

    def kernel(self) -> Kernel:
        return self.tables
