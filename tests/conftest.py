"""Shared fixtures: presets, and tables with funded players on an injected clock."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from hypothesis import HealthCheck, settings

from dicetable.core.clock import FixedClock
from dicetable.rules.loader import load_preset
from dicetable.rules.model import RulePack
from dicetable.table import Table
from dicetable.table.automation import Automation

settings.register_profile("ci", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], max_examples=60)
settings.load_profile("ci")

TableFactory = Callable[..., Table]


@pytest.fixture
def pa() -> RulePack:
    return load_preset("pa-craps")


@pytest.fixture
def ph() -> RulePack:
    return load_preset("pa-props-and-hops")


def funded(pack: RulePack | str, players: tuple[str, ...] = ("alice", "bob"),
           amount: int = 1_000_00, seated: bool = False,
           automations: Iterable[Automation] | None = None) -> Table:
    """A bare table with funded players; ``automations=()``: the dealer's chores by hand."""
    table = Table.open(pack, "t1", clock=FixedClock(), automations=automations)
    for i, name in enumerate(players, start=1):
        table.join(name, seat=i if seated else None)
        table.buy_in(name, amount)
    return table


@pytest.fixture
def make_table() -> TableFactory:
    return funded
