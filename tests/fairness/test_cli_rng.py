"""``dicetable rng-test``: the battery on the CSPRNG, statistic, p-value and verdict per test."""

from __future__ import annotations

import inspect
import json

from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.cli.rng import rng_test

runner = CliRunner()


def test_rng_test_prints_every_test_with_statistic_p_value_and_verdict() -> None:
    result = runner.invoke(app, ["rng-test", "--rolls", "100000", "--json"])
    assert result.exit_code in (0, 1)             # a perfect generator fails ~10% of runs
    data = json.loads(result.output)
    assert data["rolls"] == 100_000
    assert data["confidence"] == 0.99
    assert len(data["tests"]) == 11
    for test in data["tests"]:
        assert {"test", "statistic", "p_value", "passed"} <= set(test)
    assert result.exit_code == (0 if data["passed"] else 1)
    text = runner.invoke(app, ["rng-test", "--rolls", "20000"], terminal_width=160).output
    assert "chi-square faces, first die" in text
    assert "20,000 rolls" in text


def test_rng_test_defaults_to_ten_million_rolls() -> None:
    default = inspect.signature(rng_test).parameters["rolls"].default
    assert default.default == 10_000_000


def test_rng_test_refuses_a_bad_source() -> None:
    result = runner.invoke(app, ["rng-test", "--rolls", "1000", "--source", "dice"])
    assert result.exit_code == 2
