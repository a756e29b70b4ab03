"""Self-check: for every wager, the simulated edge lies within its confidence interval of the
exact edge -- both read the same compiled tables (DESIGN.md lesson 7).

All the wagers of a pack are on the layout at once, on the same dice, at a fixed seed; the
interval is wide (z = 4.5, for about 100 wagers at once) but 2 million rolls give it power: a
place 6 paid at even money (9.1% instead of 1.5%) or a field paying 3 to 1 on the 12 would fail.
"""

from __future__ import annotations

import pytest

from dicetable.games.packs import compile_pack, derive_pack, load_preset
from dicetable.sim.automaton import compile_strategy
from dicetable.sim.report import build_report
from dicetable.sim.runner import plan_rolls, run
from dicetable.sim.selfcheck import every_wager
from dicetable.sim.strategy import strategy_from_data

Z = 4.5


@pytest.mark.parametrize(("pack_name", "rolls"), [("pa-craps", 2_000_000),
                                                  ("pa-props-and-hops", 2_000_000)])
def test_every_wager_simulated_edge_matches_the_exact_edge(pack_name: str, rolls: int) -> None:
    pack = load_preset(pack_name)
    compiled = compile_strategy(every_wager(pack))
    report = build_report(compiled, run(compiled, plan_rolls(rolls), seed=20260501), "rolls")
    assert {w.wager for w in report.wagers} >= set(compile_pack(pack)) - {"odds:take"}
    for w in report.wagers:
        assert w.exact_edge is not None
        assert w.decisions > 1000, w.label
        assert abs(w.edge - float(w.exact_edge)) <= Z * w.edge_se, (
            f"{w.label}: simulated {w.edge:.5f} vs exact {float(w.exact_edge):.5f} "
            f"(se {w.edge_se:.5f})")
    # Money is conserved: what the wagers moved is what the sessions ended with.
    assert sum(w.net for w in report.wagers) == report.total_net


def test_the_other_craps_presets_share_pa_craps_tables() -> None:
    """Mini-Craps and Indiana Craps pay as pa-craps does, so the check above covers them."""
    base = compile_pack(load_preset("pa-craps"))
    for name in ("pa-mini-craps", "in-craps"):
        other = compile_pack(load_preset(name))
        assert set(other) == set(base)
        for code, wager in other.items():
            assert wager.steps == base[code].steps, (name, code)


def test_a_wrong_payout_would_be_caught() -> None:
    """Power: a place 6 paid at even money sits far outside the exact 1/66's interval."""
    wrong = derive_pack(load_preset("pa-craps"), "even-money-6", {"paytable.place.6": "1 to 1"})
    strategy = strategy_from_data({"bets": [{"wager": "place6", "amount": 12}]}, pack=wrong)
    compiled = compile_strategy(strategy)
    report = build_report(compiled, run(compiled, plan_rolls(2_000_000), seed=1), "rolls")
    place6 = report.wagers[0]
    assert abs(place6.edge - 1 / 66) > Z * place6.edge_se
    assert abs(place6.edge - 1 / 11) <= Z * place6.edge_se  # what 1 to 1 really gives
