"""Exact session outcomes (``odds.session`` over the simulator's tables): closed forms, every
dice sequence of a short session, and the simulator's interval."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.errors import InvalidInput
from dicetable.sim.automaton import compile_strategy
from dicetable.sim.engine import Limits, ScriptedDice, run_lanes
from dicetable.sim.exact import chain_of, exact_session
from dicetable.sim.strategy import strategy_from_data

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "strategies"
P_PASS = Fraction(244, 495)
ROLLS_PER_PASS_DECISION = Fraction(557, 165)


def compiled(data: dict[str, Any]) -> Any:
    return compile_strategy(strategy_from_data(data))


def test_flat_pass_line_is_the_gamblers_ruin() -> None:
    """$10 on the pass line, $20 to $40: a walk of +-1 unit (p = 244/495) from 2 to 0 or 4."""
    out = exact_session(compiled({"bets": [{"wager": "pass", "amount": 10}]}), 20_00, 40_00,
                        None, 1)
    r = (1 - P_PASS) / P_PASS
    assert out.p_goal == (1 - r ** 2) / (1 - r ** 4)
    assert out.p_ruin == 1 - out.p_goal
    q_minus_p = 1 - 2 * P_PASS
    decisions = 2 / q_minus_p - 4 / q_minus_p * (1 - r ** 2) / (1 - r ** 4)
    assert out.expected_rolls == decisions * ROLLS_PER_PASS_DECISION  # Wald's identity


def test_one_roll_session_lets_the_pass_line_ride_to_its_decision() -> None:
    out = exact_session(compiled({"bets": [{"wager": "pass", "amount": 10}]}), 100_00, 200_00,
                        None, 1)
    assert out.after == {90_00: 1 - P_PASS, 110_00: P_PASS}


def test_stop_loss_is_counted_apart_from_ruin() -> None:
    out = exact_session(compiled({"bets": [{"wager": "pass", "amount": 10}]}), 100_00, 120_00,
                        30_00, 5)
    r = (1 - P_PASS) / P_PASS  # from 3 units up to 5 (goal) or down to 0 (stop-loss at -3)
    assert out.p_goal == (1 - r ** 3) / (1 - r ** 5)
    assert out.p_stop_loss == 1 - out.p_goal
    assert out.p_ruin == 0
    assert sum(out.after.values()) == 1


@pytest.mark.parametrize("bankroll", [11_00, 30_00])
def test_every_dice_sequence_of_a_three_roll_session(bankroll: int) -> None:
    """The bankroll after 3 rolls, against the simulator run once on each of the 36^3 rolls."""
    data = {"bets": [{"wager": "field", "amount": 5},
                     {"wager": "place6", "amount": 6, "when": "point-on"}]}
    c = compiled(data)
    goal = bankroll + 15_00
    exact = exact_session(c, bankroll, goal, 8_00, 3)
    seqs = np.array(np.meshgrid(*[np.arange(36)] * 3, indexing="ij")).reshape(3, -1)
    lanes = seqs.shape[1]
    result = run_lanes(c.kernel(), ScriptedDice(seqs.astype(np.uint8)), lanes,
                       Limits(3, 0, bankroll, goal - bankroll, 8_00), fused=False)
    counts = Counter((result.final_net + bankroll).tolist())
    assert {k: Fraction(v, lanes) for k, v in counts.items()} == exact.after


def test_chain_joins_the_components_of_a_strategy() -> None:
    c = compiled({"bets": [{"wager": "pass", "amount": 10, "odds": 2},
                           {"wager": "place6", "amount": 12, "when": "point-on"},
                           {"wager": "place8", "amount": 12, "when": "point-on"}]})
    chain = chain_of(c)
    assert chain.n >= max(comp.n for comp in c.components)
    out = exact_session(c, 60_00, 90_00, None, 20)
    assert out.p_goal + out.p_ruin == 1
    assert 0 < out.p_goal < 1


def test_flints_dense_solve_equals_the_sparse_elimination(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from dicetable.odds import session
    from dicetable.sim.exact import flint_solver

    dense = flint_solver()
    if dense is None:
        pytest.skip("python-flint is not installed")
    c = compiled({"bets": [{"wager": "pass", "amount": 5, "odds": 1},
                           {"wager": "place6", "amount": 6, "when": "point-on"}]})
    chain = chain_of(c)
    sparse = session.session_odds(chain, 30_00, 50_00, 20_00, 5)
    monkeypatch.setattr(session, "SPARSE_BUDGET", 0)
    flint = session.session_odds(chain, 30_00, 50_00, 20_00, 5, dense)
    assert (sparse.p_goal, sparse.p_stop_loss, sparse.expected_rolls) == (
        flint.p_goal, flint.p_stop_loss, flint.expected_rolls)


def test_bad_sessions_are_refused() -> None:
    c = compiled({"bets": [{"wager": "pass", "amount": 10, "odds": 2}]})
    with pytest.raises(InvalidInput) as e:
        exact_session(c, 200_00, 100_00, None, 10)
    assert e.value.rule == "odds.session"
    with pytest.raises(InvalidInput) as e:
        exact_session(c, 5_00, 100_00, None, 10)
    assert e.value.rule == "sim.bankroll"
    with pytest.raises(InvalidInput):
        exact_session(c, 200_00, 400_00, None, 0)


def test_cli_odds_session_pass_2x_odds_inside_the_simulators_interval() -> None:
    result = CliRunner().invoke(app, [
        "odds", "--session", str(EXAMPLES / "pass-2x-odds.json"), "--bankroll", "200",
        "--goal", "400", "--sessions", "4000", "--seed", "7", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    figures = {f["figure"]: f for f in out["figures"]}
    assert set(figures) == {"reach the goal", "ruin", "expected rolls",
                            "mean bankroll after 200 rolls"}
    goal = figures["reach the goal"]
    assert Fraction(goal["exact"]) + Fraction(figures["ruin"]["exact"]) == 1
    assert all(f["inside"] for f in out["figures"]), out["figures"]
    assert sum(Fraction(v) for v in out["bankroll_after_distribution"].values()) == 1
    assert out["bankroll_cents"] == 200_00
    assert out["goal_cents"] == 400_00
    text = CliRunner().invoke(app, [
        "odds", "--session", str(EXAMPLES / "press-6-8.toml"), "--sessions", "2000",
        "--bankroll", "60", "--goal", "90", "--stop-loss", "30", "--rolls", "30", "--seed", "1"])
    assert text.exit_code == 0, text.output
    assert "reach the goal" in text.output
    assert "stop-loss" in text.output


def test_cli_odds_session_refusals() -> None:
    both = CliRunner().invoke(app, ["odds", "pa-craps", "--session",
                                    str(EXAMPLES / "pass-2x-odds.json")])
    assert both.exit_code == 2
    no_goal = CliRunner().invoke(app, ["odds", "--session", str(EXAMPLES / "pass-2x-odds.json")])
    assert no_goal.exit_code == 2
    assert "--goal" in no_goal.output


def test_a_system_too_big_for_an_exact_solve_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from dicetable.odds import session
    from dicetable.sim import exact

    if exact.flint_solver() is None:
        pytest.skip("python-flint is not installed")
    monkeypatch.setattr(session, "SPARSE_BUDGET", 0)
    monkeypatch.setattr(exact, "DENSE_LIMIT", 10)
    with pytest.raises(InvalidInput) as e:
        exact_session(compiled({"bets": [{"wager": "pass", "amount": 10, "odds": 2}]}),
                      200_00, 400_00, None, 5)
    assert e.value.rule == "odds.session"
    assert "smaller bankroll" in str(e.value)
