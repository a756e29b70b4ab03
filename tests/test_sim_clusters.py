"""Real Dask and Ray clusters (started once per module, two workers each): the totals are those
of the single-process run for the same seed, and the workers load only the simulator."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from dicetable.sim.automaton import CompiledStrategy, compile_strategy
from dicetable.sim.runner import RunResult, plan_sessions, run
from dicetable.sim.strategy import strategy_from_data
from tests.worker_probe import loaded

# One pytest worker starts the Dask and the Ray cluster once (module fixtures) and no two
# local Ray clusters run side by side.
pytestmark = pytest.mark.xdist_group("clusters")

IRON_CROSS: dict[str, Any] = {"name": "Iron Cross", "bankroll": "$500",
                              "session": {"max_rolls": 60, "stop_loss": "$300"}, "bets": [
    {"wager": "pass", "amount": 5, "odds": 2},
    {"wager": "place5", "amount": 10, "when": "point-on", "skip_point": True},
    {"wager": "place6", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "place8", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "field", "amount": 5, "when": "point-on"}]}


@cache
def compiled() -> CompiledStrategy:
    return compile_strategy(strategy_from_data(IRON_CROSS))


def plans() -> Any:
    return plan_sessions(4 * 4096 + 100, compiled().strategy.session)  # five shards


@cache
def local() -> RunResult:
    return run(compiled(), plans(), seed=2024)


def same_as_local(other: RunResult) -> None:
    ref = local()
    assert np.array_equal(other.final_net, ref.final_net)
    assert np.array_equal(other.groups, ref.groups)
    assert np.array_equal(other.reason, ref.reason)
    assert other.rolls_thrown == ref.rolls_thrown


# -- Dask ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_cluster() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster


def test_dask_local_cluster_of_two_workers_gives_the_local_totals(dask_cluster: Any) -> None:
    client_type: Any = pytest.importorskip("dask.distributed").Client
    other = run(compiled(), plans(), seed=2024, engine="dask",
                address=dask_cluster.scheduler_address)
    same_as_local(other)
    with client_type(dask_cluster.scheduler_address) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        imported = client.run(loaded)
    assert len(imported) == 2
    assert all(mods == [] for mods in imported.values()), imported


def test_cli_simulate_on_a_dask_scheduler(dask_cluster: Any, tmp_path: Any) -> None:
    from dicetable.cli.main import app

    path = tmp_path / "s.json"
    path.write_text('{"bets": [{"wager": "pass", "amount": 10, "odds": 2}]}')
    args = ["simulate", "--strategy", str(path), "--rolls", "200000", "--seed", "5", "--json"]
    here = CliRunner().invoke(app, args)
    there = CliRunner().invoke(app, [*args, "--engine", "dask", "--scheduler",
                                     dask_cluster.scheduler_address])
    assert here.exit_code == 0, here.output
    assert there.exit_code == 0, there.output
    import json

    a, b = json.loads(here.stdout), json.loads(there.stdout)
    assert a["total_net_cents"] == b["total_net_cents"]
    assert a["wagers"] == b["wagers"]
    assert b["engine"] == "dask"


# -- Ray ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    for attempt in range(3):  # Ray gives its node a fixed 30 s to start: a loaded machine
        try:                  # may need another try (a guard; what is checked is the same)
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            break
        except Exception as e:
            ray.shutdown()
            if "timed out during startup" not in str(e) or attempt == 2:
                raise
    try:
        yield ray
    finally:
        ray.shutdown()


def test_ray_local_gives_the_local_totals(ray_local: Any) -> None:
    other = run(compiled(), plans(), seed=2024, engine="ray")
    same_as_local(other)
    imported = ray_local.get([ray_local.remote(loaded).remote() for _ in range(2)])
    assert all(mods == [] for mods in imported), imported


def test_an_address_needs_a_cluster_engine() -> None:
    from dicetable.core.errors import InvalidInput

    with pytest.raises(InvalidInput) as e:
        run(compiled(), plans(), seed=1, address="tcp://127.0.0.1:1")
    assert e.value.rule == "sim.engine"


def test_cli_simulate_on_ray_and_misplaced_addresses(ray_local: Any, tmp_path: Any) -> None:
    import json

    from dicetable.cli.main import app

    path = tmp_path / "s.json"
    path.write_text('{"bets": [{"wager": "place6", "amount": 12}]}')
    args = ["simulate", "--strategy", str(path), "--rolls", "100000", "--seed", "3", "--json"]
    here = CliRunner().invoke(app, args)
    there = CliRunner().invoke(app, [*args, "--engine", "ray"])
    assert here.exit_code == 0, here.output
    assert there.exit_code == 0, there.output
    assert json.loads(here.stdout)["wagers"] == json.loads(there.stdout)["wagers"]
    wrong = CliRunner().invoke(app, [*args, "--engine", "ray", "--scheduler", "tcp://x:1"])
    assert wrong.exit_code == 2
    assert "--scheduler" in wrong.output
    wrong = CliRunner().invoke(app, [*args, "--engine", "dask", "--address", "x:1"])
    assert wrong.exit_code == 2
    assert "--scheduler" in wrong.output
