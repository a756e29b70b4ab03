"""The simulator against other engines on identical dice, to the cent.

* the live table engine (``dicetable.table.Table``): the same compiled tables, three readers
  (DESIGN.md lesson 7) -- the simulator must pay exactly what the table pays;
* crapssim (PyPI), for the strategies both support, where the two rule sets agree: pass line
  with 2x odds, place 6 and 8, Iron Cross (crapssim takes place bets down when the point is off;
  the PA packs keep them up but off on the come-out: the money is the same).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dicetable.core.dice import ALL_ROLLS
from dicetable.table import Table
from tests.sim_helpers import lane

crapssim = pytest.importorskip("crapssim")

ROLLS = 4000
DICE = np.random.default_rng(20240501).integers(0, 36, size=ROLLS).astype(np.uint8)

PASS_2X: dict[str, Any] = {"bets": [{"wager": "pass", "amount": 5, "odds": 2}]}
PLACE_68: dict[str, Any] = {"bets": [
    {"wager": "place6", "amount": 12, "when": "point-on"},
    {"wager": "place8", "amount": 12, "when": "point-on"}]}
IRON_CROSS: dict[str, Any] = {"bets": [
    {"wager": "pass", "amount": 5, "odds": 2},
    {"wager": "place5", "amount": 10, "when": "point-on", "skip_point": True},
    {"wager": "place6", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "place8", "amount": 12, "when": "point-on", "skip_point": True},
    {"wager": "field", "amount": 5, "when": "point-on"}]}


def ours(data: dict[str, Any], dice: np.ndarray[Any, Any]) -> list[int]:
    """Net after each roll; the last roll is left out (it winds the session down)."""
    trace: list[int] = lane(data, dice).trace[0].tolist()
    return trace[:-1]


def crapssim_path(strategy: Any, dice: np.ndarray[Any, Any]) -> list[int]:
    table = crapssim.Table()
    player = table.add_player(bankroll=1e9, strategy=strategy)
    start = player.total_player_cash
    out = []
    for d in dice[:-1].tolist():
        table.fixed_run([(d // 6 + 1, d % 6 + 1)], verbose=False)
        out.append(round((player.total_player_cash - start) * 100))
    return out


def test_crapssim_pass_line_with_2x_odds_to_the_cent() -> None:
    from crapssim.strategy.odds import PassLineOddsMultiplier
    from crapssim.strategy.single_bet import BetPassLine

    assert ours(PASS_2X, DICE) == crapssim_path(BetPassLine(5) + PassLineOddsMultiplier(2), DICE)


def test_crapssim_place_6_and_8_to_the_cent() -> None:
    from crapssim.strategy.single_bet import BetPlace

    strategy = BetPlace({6: 12, 8: 12}, skip_point=False)
    assert ours(PLACE_68, DICE) == crapssim_path(strategy, DICE)


def test_crapssim_iron_cross_to_the_cent() -> None:
    from crapssim.strategy.examples import IronCross

    assert ours(IRON_CROSS, DICE) == crapssim_path(IronCross(5), DICE)


# -- the live table engine --------------------------------------------------------------------

LIVE: dict[str, Any] = {"bets": [
    {"wager": "pass", "amount": 10, "odds": 2},
    {"wager": "place6", "amount": 12, "when": "point-on"},
    {"wager": "place8", "amount": 12, "when": "point-on"},
    {"wager": "buy4", "amount": 20},
    {"wager": "lay10", "amount": 40},
    {"wager": "field", "amount": 5},
    {"wager": "hard8", "amount": 5},
    {"wager": "horn", "amount": 4, "when": "come-out"},
    {"wager": "fire", "amount": 1},
    {"wager": "allsmall", "amount": 1},
]}


def live_path(dice: np.ndarray[Any, Any]) -> list[int]:
    """The live engine, driven by hand the way the strategy says, on the same dice.

    The net is read after each roll and the bets made after it (as the simulator counts a
    commission paid on a new bet with the roll before it).
    """
    table = Table.open("pa-craps", "diff")
    table.join("p")
    table.buy_in("p", 10_000_000)
    start = table.balance("p")
    out = []
    for d in dice.tolist():
        state = table.state
        mine = {b.wager for b in state.bets.values() if b.player == "p"}
        point = table.point
        for spec in LIVE["bets"]:
            code, amount = spec["wager"], spec["amount"] * 100
            when = spec.get("when", "always")
            if code in mine or (when == "point-on" and point is None) \
                    or (when == "come-out" and point is not None):
                continue
            if not state.compiled[code].placeable(point):
                continue
            if code == "fire" and (state.hand_rolls or point is not None):
                continue
            if code == "allsmall" and (state.rolls_since_seven or point is not None):
                continue
            table.bet("p", code, amount)
        state = table.state
        line = next((b for b in state.bets.values() if b.wager == "pass"), None)
        if line is not None and point is not None \
                and not any(b.base == line.id for b in state.bets.values()):
            table.odds("p", line.id, 2 * line.amount)
        on_table = sum(b.amount for b in table.state.bets.values() if b.player == "p")
        out.append(table.balance("p") + on_table - start)
        table.roll(str(ALL_ROLLS[d]))
        table.settle()
    return out[1:]


def test_live_table_engine_pays_what_the_simulator_pays() -> None:
    dice = DICE[:1500]
    assert ours(LIVE, dice) == live_path(dice)
