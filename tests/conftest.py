"""Shared fixtures: presets, and tables with funded players on an injected clock."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from dicetable.core.clock import FixedClock
from dicetable.games.packs import load_preset
from dicetable.rules.model import RulePack
from dicetable.table import Table
from dicetable.table.table import Automation
from tests import profiles, shared_adapters
from tests.demo_floor import CHEAP_HASHER, record_creation_order

profiles.register()
shared_adapters.install()  # create_app's route adapters: built once per test process


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="the thorough (nightly) run: Hypothesis's thorough profile, "
                          f"{profiles.THOROUGH_FACTOR}x the examples, and the tests marked "
                          "'thorough' (also DICETABLE_THOROUGH=1)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--slow", default=False):
        profiles.set_thorough(True)


LONGEST_FIRST = (
    "tests/ops/test_operators_guide.py",
    "tests/ops/test_restore_drill.py",
    "tests/ops/test_serve_upgrades.py",
    "tests/server/test_schemathesis.py",
    "tests/test_rules_submission.py",
    "tests/server/test_exactly_once.py",
    "tests/store/test_crash.py",
)
"""Modules whose tests each take a minute or more (servers started and stopped, a PDF drawn):
collected first, so that the parallel run (``-n``, which hands tests out in collection order)
starts them at once instead of finishing on one of them while the other workers wait. Whole
modules move, in their own order, so their module-scoped fixtures are still built once."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
    if profiles.thorough():
        return
    skip = pytest.mark.skip(reason="thorough (nightly) run only: pytest --slow; its lean twin "
                                   "checks the same property in every run")
    for item in items:
        if "thorough" in item.keywords:
            item.add_marker(skip)

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


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo floor (on the system clock), built once per test process; each test that
    changes it works on its own copy (``copy_demo_db``)."""
    from dicetable.server.main import build_floor

    path = tmp_path_factory.mktemp("demo") / "floor.db"
    built, credentials = build_floor(path, hasher=CHEAP_HASHER)
    assert credentials
    record_creation_order(path, list(built.tables))
    built.close()
    built.store.close()
    built.accounts.close()
    return path

