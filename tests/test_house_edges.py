"""Exact enumeration over the compiled tables reproduces the published house edges.

Each reference value carries its source (DESIGN.md lesson 11).
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from dicetable.games.packs import derive_pack, load_preset
from dicetable.odds.exact import wager_odds
from dicetable.rules.model import RulePack

WIZARD = "Wizard of Odds, craps appendix (standard published edges)"
STANDARDS = "spec/standards.md §5.4 (computed, Appendix A script)"

PUBLISHED = [
    ("pass", F(7, 495), WIZARD),
    ("dontpass", F(3, 220), WIZARD),
    ("come", F(7, 495), WIZARD),
    ("dontcome", F(3, 220), WIZARD),
    ("place6", F(1, 66), WIZARD),
    ("place8", F(1, 66), WIZARD),
    ("place5", F(1, 25), WIZARD),
    ("place4", F(1, 15), WIZARD),
    ("field", F(1, 18), WIZARD + " (2 to 1 on 2 and 12)"),
    ("hard6", F(1, 11), WIZARD + " (9 to 1)"),
    ("hard4", F(1, 9), WIZARD + " (7 to 1)"),
    ("any7", F(1, 6), WIZARD + " (4 to 1)"),
    ("anycraps", F(1, 9), WIZARD + " (7 to 1)"),
    ("buy4", F(1, 21), STANDARDS + " (5% up front)"),
    ("lay4", F(1, 41), STANDARDS + " (5% of the win up front)"),
    ("lay5", F(1, 31), STANDARDS),
    ("lay6", F(1, 25), STANDARDS),
    ("horn", F(1, 8), WIZARD + " (12.5%)"),
    ("world", F(2, 15), WIZARD + " (13.33%)"),
    ("big6", F(1, 11), WIZARD),
    ("hop1-2", F(1, 9), WIZARD + " (15 to 1)"),
    ("hop3-3", F(5, 36), WIZARD + " (30 to 1)"),
]


@pytest.mark.parametrize(("code", "edge", "source"), PUBLISHED)
def test_published_house_edge(code: str, edge: F, source: str) -> None:
    assert wager_odds(load_preset("pa-craps"), code).house_edge == edge, source


def _on_win(pack: RulePack) -> RulePack:
    return derive_pack(pack, "on-win", {"commission.buy.when": "on-win",
                                        "commission.lay.when": "on-win"})


@pytest.mark.parametrize(("code", "edge"), [("buy4", F(1, 60)), ("buy5", F(1, 50)),
                                             ("buy6", F(1, 44)), ("lay4", F(1, 60)),
                                             ("lay5", F(1, 50)), ("lay6", F(1, 44))])
def test_commission_only_on_a_win(code: str, edge: F) -> None:
    # spec/standards.md §5.4: Buy 4 with 5% taken only on a win is 1/60.
    assert wager_odds(_on_win(load_preset("pa-craps")), code).house_edge == edge


def test_odds_pay_true_odds() -> None:
    pack = load_preset("pa-craps")
    for point in (4, 5, 6, 8, 9, 10):
        assert wager_odds(pack, "odds:take", f"on {point}").house_edge == 0
        assert wager_odds(pack, "odds:lay", f"on {point}").house_edge == 0


def test_side_bets_match_their_published_edges() -> None:
    pack = load_preset("pa-craps")
    # Fire Bet 24/249/999 to 1: 20.76% (Wizard of Odds, Fire Bet); Bonus Craps 34/34/175:
    # All Small 7.76%, Make 'Em All 7.46% (Wizard of Odds, Bonus Craps).
    assert round(float(wager_odds(pack, "fire").house_edge) * 100, 2) == 20.76
    assert round(float(wager_odds(pack, "allsmall").house_edge) * 100, 2) == 7.76
    assert round(float(wager_odds(pack, "alltall").house_edge) * 100, 2) == 7.76
    assert round(float(wager_odds(pack, "makeemall").house_edge) * 100, 2) == 7.46


def test_pass_line_figures_beyond_the_edge() -> None:
    odds = wager_odds(load_preset("pa-craps"), "pass")
    assert odds.p_win == F(244, 495)
    assert odds.p_push == 0
    assert odds.expected_rolls == F(557, 165)  # 3.376 rolls per pass-line decision
    assert odds.p_win + odds.p_lose + odds.p_push == 1
    dont = wager_odds(load_preset("pa-craps"), "dontpass")
    assert dont.p_push == F(1, 36)  # bar 12
