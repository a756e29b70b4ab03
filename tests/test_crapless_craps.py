"""Crapless Craps, a house game (industry default): every total but 7 is a point, so a come-out
2, 3, 11 or 12 becomes the point and only 7 wins the come-out; no Don't bets; Place 2/12 pay
11 to 2, Place 3/11 pay 11 to 4, Buy and odds pay true odds (6 to 1 on 2/12, 3 to 1 on 3/11).

Its edges are the published ones (Wizard of Odds, "Crapless Craps": pass line 5.38%, place 2
and 12 7.14%, place 3 and 11 6.25%), and the three readers of the compiled tables agree: the
exact engine, the NumPy simulator and the live table.
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.dice import ALL_ROLLS
from dicetable.core.errors import IllegalWager, RulePackInvalid
from dicetable.games.catalogue import variant_of
from dicetable.games.packs import compile_pack, derive_pack, load_preset
from dicetable.odds.exact import wager_odds
from dicetable.rules.model import Status
from dicetable.sim.automaton import compile_strategy
from dicetable.sim.report import build_report
from dicetable.sim.runner import plan_rolls, run
from dicetable.sim.strategy import strategy_from_data
from dicetable.table import Table
from tests.sim_helpers import lane

WIZARD = "Wizard of Odds, Crapless Craps"
PACK = "crapless-craps"
runner = CliRunner()

EDGES = [
    # pass: 1 - 2 * (6/36 + sum over the ten points of P(n)^2 / (P(n) + 1/6)) = 373/6930
    ("pass", F(373, 6930), WIZARD + " (5.38%)"),
    ("come", F(373, 6930), WIZARD + " (5.38%)"),
    ("place2", F(1, 14), WIZARD + " (11 to 2: 7.14%)"),
    ("place12", F(1, 14), WIZARD + " (11 to 2: 7.14%)"),
    ("place3", F(1, 16), WIZARD + " (11 to 4: 6.25%)"),
    ("place11", F(1, 16), WIZARD + " (11 to 4: 6.25%)"),
    ("place4", F(1, 15), WIZARD + " (9 to 5)"),
    ("place5", F(1, 25), WIZARD + " (7 to 5)"),
    ("place6", F(1, 66), WIZARD + " (7 to 6)"),
    ("buy2", F(1, 21), "5% commission up front on a true-odds bet"),
    ("buy3", F(1, 21), "5% commission up front on a true-odds bet"),
    ("field", F(1, 18), "the Field is Craps' own (2 to 1 on 2 and 12)"),
]


@pytest.mark.parametrize(("code", "edge", "source"), EDGES)
def test_crapless_published_house_edge(code: str, edge: F, source: str) -> None:
    assert wager_odds(load_preset(PACK), code).house_edge == edge, source


def test_crapless_pass_line_is_5_38_percent() -> None:
    edge = wager_odds(load_preset(PACK), "pass").house_edge
    assert round(float(edge) * 100, 2) == 5.38
    assert wager_odds(load_preset("pa-craps"), "pass").house_edge == F(7, 495)  # 1.41%


def test_crapless_odds_pay_true_odds_on_every_point() -> None:
    pack = load_preset(PACK)
    for point in (2, 3, 4, 5, 6, 8, 9, 10, 11, 12):
        assert wager_odds(pack, "odds:take", f"on {point}").house_edge == 0, point


def test_crapless_every_total_but_seven_is_a_point() -> None:
    assert variant_of(PACK).points == (2, 3, 4, 5, 6, 8, 9, 10, 11, 12)
    line = compile_pack(load_preset(PACK))["pass"]
    for roll in ALL_ROLLS:
        step = line.step(0, roll)
        if roll.total == 7:
            assert step.decided, roll
        else:
            assert line.states[step.next_state] == f"point {roll.total}", roll


@pytest.mark.parametrize("faces", ["1-1", "1-2", "5-6", "6-6"])
def test_crapless_a_come_out_2_3_11_12_establishes_the_point(faces: str) -> None:
    table = Table.open(PACK, "crapless-1")
    table.join("ann")
    table.buy_in("ann", 100_00)
    table.bet("ann", "pass", 10_00)
    table.roll(faces)
    table.settle()
    total = sum(int(f) for f in faces.split("-"))
    point: int | None = table.point
    assert point == total
    assert table.balance("ann") == 90_00                    # neither won nor lost
    bet = next(iter(table.state.bets.values()))
    assert table.state.compiled["pass"].states[bet.state] == f"point {total}"
    table.roll(faces)                                       # the point made: even money
    table.settle()
    point = table.point
    assert point is None
    assert table.balance("ann") == 110_00


def test_crapless_offers_no_dont_bets() -> None:
    pack = load_preset(PACK)
    assert not {c for c in pack.menu if c.startswith(("dont", "lay", "lose", "put"))}
    assert "odds:lay" not in compile_pack(pack)
    table = Table.open(PACK, "crapless-1")
    table.join("ann")
    table.buy_in("ann", 100_00)
    for code in ("dontpass", "dontcome", "lay4"):
        with pytest.raises(IllegalWager):
            table.bet("ann", code, 10_00)
    # A house pack cannot put them back: the game has none.
    with pytest.raises(RulePackInvalid) as info:
        derive_pack(pack, "with-dont", {"menu.line": ["pass", "dontpass", "come"]})
    assert ("menu.line", "'dontpass' is not a Crapless Craps wager") in info.value.problems
    # Nor Place 2 at an ordinary Craps table, where 2 is not a point.
    with pytest.raises(RulePackInvalid) as info:
        derive_pack(load_preset("pa-craps"), "place-two", {"menu.place": ["place2"]})
    assert info.value.problems[0][0] == "menu.place"


def test_crapless_is_a_house_game_with_no_regulation_text() -> None:
    pack = load_preset(PACK)
    assert pack.rule("game").status is Status.INDUSTRY_DEFAULT
    assert not [r.id for r in pack if r.status is Status.REGULATION]
    with pytest.raises(RulePackInvalid, match="odds.limit.mode"):
        derive_pack(pack, "345", {"odds.limit.mode": "345x"})


STRATEGY: dict[str, Any] = {"pack": PACK, "bets": [
    {"wager": "pass", "amount": 10, "odds": 3},
    {"wager": "come", "amount": 10},
    {"wager": "place2", "amount": 10},
    {"wager": "place3", "amount": 12},
    {"wager": "place11", "amount": 12},
    {"wager": "place12", "amount": 10},
    {"wager": "buy2", "amount": 20},
    {"wager": "buy12", "amount": 20},
]}


def test_crapless_simulated_edges_match_the_exact_edges() -> None:
    """The NumPy simulator and the exact engine read the same compiled tables."""
    compiled = compile_strategy(strategy_from_data(STRATEGY))
    report = build_report(compiled, run(compiled, plan_rolls(1_000_000), seed=20260501),
                          "rolls")
    assert {w.wager for w in report.wagers} >= {"pass", "come", "place2", "place12", "buy2"}
    for w in report.wagers:
        assert w.exact_edge is not None
        assert w.decisions > 1000, w.label
        assert abs(w.edge - float(w.exact_edge)) <= 4.5 * w.edge_se, (
            f"{w.label}: simulated {w.edge:.5f} vs exact {float(w.exact_edge):.5f}")
    assert sum(w.net for w in report.wagers) == report.total_net


def test_crapless_live_table_pays_what_the_simulator_pays() -> None:
    """The same dice through the live engine and the simulator, to the cent."""
    dice = np.random.default_rng(20240501).integers(0, 36, size=800).astype(np.uint8)
    data = {"pack": PACK, "bets": [{"wager": "pass", "amount": 10, "odds": 3},
                                   {"wager": "place2", "amount": 10},
                                   {"wager": "place11", "amount": 12}]}
    simulated = lane(data, dice).trace[0].tolist()[:-1]
    table = Table.open(PACK, "diff")
    table.join("p")
    table.buy_in("p", 10_000_000)
    start = table.balance("p")
    out = []
    for d in dice.tolist():
        mine = {b.wager for b in table.state.bets.values() if b.player == "p"}
        for code, amount in (("pass", 10_00), ("place2", 10_00), ("place11", 12_00)):
            if code not in mine and table.state.compiled[code].placeable(table.point):
                table.bet("p", code, amount)
        line = next((b for b in table.state.bets.values() if b.wager == "pass"), None)
        if line is not None and table.point is not None \
                and not any(b.base == line.id for b in table.state.bets.values()):
            table.odds("p", line.id, 3 * line.amount)
        on_table = sum(b.amount for b in table.state.bets.values() if b.player == "p")
        out.append(table.balance("p") + on_table - start)
        table.roll(str(ALL_ROLLS[d]))
        table.settle()
    assert simulated == out[1:]


def test_crapless_through_the_cli() -> None:
    rows = json.loads(runner.invoke(app, ["odds", PACK, "--json"]).output)
    by_code = {r["wager"]: r for r in rows}
    assert by_code["pass"]["house_edge"] == "373/6930"
    assert "dontpass" not in by_code
    shown = runner.invoke(app, ["rules", "show", PACK])
    assert shown.exit_code == 0, shown.output
    assert "crapless-craps" in shown.output
    assert "industry-default" in shown.output
