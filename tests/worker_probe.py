"""Run on a cluster worker: what it has imported. Imports nothing itself, so that asking does
not change the answer."""

from __future__ import annotations

import sys

DOMAIN = ("dicetable.rules", "dicetable.games", "dicetable.wagers", "dicetable.odds",
          "dicetable.sim.strategy", "dicetable.sim.automaton", "typer", "rich")


def loaded() -> list[str]:
    return sorted(m for m in sys.modules if m.startswith(DOMAIN))
