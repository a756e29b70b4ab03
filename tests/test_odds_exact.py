"""Exact odds read from the compiled tables (DESIGN.md lesson 7), against published values.

Reference values carry their source: spec/standards.md §5.4 (buy/lay, [calc] Appendix A) and
the long-known figures for the standard paytables of spec/regulations.md Appendix A.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from dicetable.core.errors import IllegalWager
from dicetable.games.packs import PRESETS, compile_pack, derive_pack, load_preset
from dicetable.odds.exact import pack_odds, wager_odds
from dicetable.odds.layout import LayoutBet, layout_odds, line_with_odds, max_odds
from dicetable.odds.report import pack_report
from dicetable.rules.model import RulePack

F = Fraction


@pytest.fixture(scope="module")
def pa() -> RulePack:
    return load_preset("pa-craps")


# Appendix A paytables (industry-default / other-jurisdiction stand-ins): classic edges.
CLASSIC = {
    "pass": F(7, 495), "dontpass": F(3, 220), "come": F(7, 495), "dontcome": F(3, 220),
    "place4": F(1, 15), "place5": F(1, 25), "place6": F(1, 66), "place8": F(1, 66),
    "lose4": F(1, 33), "lose5": F(1, 40), "lose6": F(1, 55),
    "big6": F(1, 11), "field": F(1, 18), "hard4": F(1, 9), "hard6": F(1, 11),
    "any7": F(1, 6), "anycraps": F(1, 9), "two": F(5, 36), "three": F(1, 9),
    "eleven": F(1, 9), "twelve": F(5, 36), "horn": F(1, 8), "ce": F(1, 9),
    "hop1-1": F(5, 36), "hop1-2": F(1, 9), "allsmall": F(1687, 21736),
    "alltall": F(1687, 21736),
}


@pytest.mark.parametrize(("code", "edge"), sorted(CLASSIC.items()))
def test_appendix_a_classic_house_edges(pa: RulePack, code: str, edge: Fraction) -> None:
    assert wager_odds(pa, code).house_edge == edge


def test_standards_5_4_buy_and_lay_commission_both_ways(pa: RulePack) -> None:
    expected = {  # (up front, on the win) -- spec/standards.md §5.4
        "buy4": (F(1, 21), F(1, 60)), "buy5": (F(1, 21), F(1, 50)), "buy6": (F(1, 21), F(1, 44)),
        "lay4": (F(1, 41), F(1, 60)), "lay5": (F(1, 31), F(1, 50)), "lay6": (F(1, 25), F(1, 44)),
    }
    for code, (front, on_win) in expected.items():
        assert wager_odds(pa, code, commission="up-front").house_edge == front
        assert wager_odds(pa, code, commission="on-win").house_edge == on_win


def test_commission_when_follows_the_house_pack(pa: RulePack) -> None:
    house = derive_pack(pa, "on-win-house", {"commission.buy.when": "on-win"})
    assert wager_odds(house, "buy4").house_edge == F(1, 60)
    assert wager_odds(house, "buy4").commission == "on-win"


def test_house_pack_paytable_changes_the_edge(pa: RulePack) -> None:
    house = derive_pack(pa, "field-3to1", {"paytable.field.12": "3 to 1"})
    assert wager_odds(house, "field").house_edge == F(1, 36)


def test_fire_and_make_em_all_match_published_edges(pa: RulePack) -> None:
    # Fire Bet 24/249/999 to 1: 20.76%; Make 'Em All 175 to 1: 7.46% (Appendix A paytables).
    assert round(float(wager_odds(pa, "fire").house_edge) * 100, 2) == 20.76
    assert round(float(wager_odds(pa, "makeemall").house_edge) * 100, 2) == 7.46


def test_every_wager_of_every_preset_is_a_distribution() -> None:
    for name in PRESETS:
        for w in pack_odds(load_preset(name)):
            assert w.p_win + w.p_lose + w.p_push == 1, (name, w.code)
            assert w.expected_rolls >= 1
            assert w.variance >= 0
            if w.code.startswith("odds:"):
                assert w.house_edge == 0


def test_per_roll_figures(pa: RulePack) -> None:
    w = wager_odds(pa, "pass")
    assert w.expected_rolls == F(557, 165)
    assert w.edge_per_roll == F(7, 495) / F(557, 165)
    assert w.p_resolve_next_roll == F(1, 3)
    assert wager_odds(pa, "dontpass").p_push == F(1, 36)


def test_the_two_solvers_agree_on_every_wager(pa: RulePack) -> None:
    """Forward absorption (one wager) and the backward reward chain (layouts) agree."""
    for w in pack_odds(pa):
        if w.code.startswith("odds:") or w.code in ("makeemall", "fire"):
            continue
        joint = layout_odds(pa, [LayoutBet(w.code)])
        assert joint.house_edge == w.house_edge, w.code
        assert joint.variance == w.variance, w.code
        assert joint.expected_rolls == w.expected_rolls, w.code


def test_line_bets_with_odds_as_combined_bets(pa: RulePack) -> None:
    assert layout_odds(pa, [LayoutBet("pass", odds=F(2))]).house_edge == F(1, 165)
    assert line_with_odds(pa, "pass").house_edge == F(7, 1870)
    assert line_with_odds(pa, "dontpass").house_edge == F(3, 1100)
    assert max_odds(pa, lay=True) == dict.fromkeys((4, 5, 6, 8, 9, 10), F(6))


def test_layout_variance_counts_correlation(pa: RulePack) -> None:
    # Pass and Don't Pass together: they cancel except on the barred 12.
    both = layout_odds(pa, [LayoutBet("pass"), LayoutBet("dontpass")])
    assert both.expected == F(-1, 36)
    assert both.variance == F(1, 36) - F(1, 36) ** 2


def test_working_comeout_place_off_lengthens_table_rolls(pa: RulePack) -> None:
    """working.comeout.place = false: a place bet made on the come-out waits for a point."""
    joint = layout_odds(pa, [LayoutBet("place6")], table=True)
    assert joint.house_edge == F(1, 66)          # the same decision...
    assert joint.expected_rolls == F(1815516, 351461)  # ...over more table rolls than 36/11
    working = derive_pack(pa, "place-works", {"working.comeout.place": True})
    assert layout_odds(working, [LayoutBet("place6")], table=True).expected_rolls == F(36, 11)


def test_working_comeout_come_odds_off_returns_the_odds(pa: RulePack) -> None:
    """working.comeout.come_odds = false: odds behind a come bet come back on a come-out 7."""
    on = derive_pack(pa, "odds-work", {"working.comeout.come_odds": True})
    off_fig = layout_odds(pa, [LayoutBet("come", odds=F(2))], point=6, table=True)
    on_fig = layout_odds(on, [LayoutBet("come", odds=F(2))], point=6, table=True)
    assert on_fig.expected == off_fig.expected == F(-7, 495)  # odds are fair either way
    assert off_fig.variance < on_fig.variance  # returned odds take no risk


def test_layout_refuses_what_the_table_refuses(pa: RulePack) -> None:
    with pytest.raises(IllegalWager) as e:
        layout_odds(pa, [LayoutBet("come")], table=True)
    assert e.value.rule == "menu.line"
    with pytest.raises(IllegalWager):
        layout_odds(pa, [LayoutBet("place6", odds=F(1))])
    with pytest.raises(IllegalWager):
        wager_odds(load_preset("pa-props-and-hops"), "pass")


def test_report_rows_have_exact_and_float_edges() -> None:
    for name in PRESETS:
        rows = pack_report(load_preset(name))
        codes = {r["wager"] for r in rows}
        assert set(compile_pack(load_preset(name))) <= codes
        for row in rows:
            num, den = (int(x) for x in row["house_edge"].split("/"))
            assert abs(num / den * 100 - row["house_edge_pct"]) < 1e-9
