"""A lay bet's commission taken when it wins (``commission.lay.when`` 'on-win'): 5% of the
win, not of the stake (Québec CQLR c S-13.1, r. 3, s. 95.17(3); spec/standards.md §5.2),
rounded down to whole dollars with a $1 minimum, taken from the win, to the cent, at every
preset that offers a lay bet. Nothing is taken when the lay loses."""

from __future__ import annotations

import pytest

from dicetable.core.dice import Roll
from dicetable.games.packs import PRESETS, derive_pack, load_preset
from tests.test_wager_payouts import settle_one

LAYING = [p for p in PRESETS if load_preset(p).offers("lay4")]

# (wager, stake, win at true odds, commission): 5% of the win, whole dollars, $1 at least.
CASES = [("lay4", 40_00, 20_00, 1_00), ("lay6", 60_00, 50_00, 2_00),
         ("lay10", 200_00, 100_00, 5_00), ("lay5", 15_00, 10_00, 1_00),
         ("lay9", 90_00, 60_00, 3_00)]


def test_every_craps_preset_offers_the_lay() -> None:
    assert sorted(LAYING) == ["in-craps", "pa-craps", "pa-mini-craps"]


@pytest.mark.parametrize("preset", LAYING)
@pytest.mark.parametrize(("code", "stake", "win", "vig"), CASES)
def test_qc_95_17_3_lay_commission_on_the_win_is_paid_from_the_win(
        preset: str, code: str, stake: int, win: int, vig: int) -> None:
    house = derive_pack(load_preset(preset), f"{preset}-vig-on-win",
                        {"commission.lay.when": "on-win"})
    net, _ = settle_one(house, code, Roll(3, 4), stake)
    assert net == -stake + win - vig          # the stake stays up; the win is paid less the vig
    point = int(code.removeprefix("lay"))
    losing = Roll(point // 2, point - point // 2) if point // 2 <= 6 else Roll(4, 6)
    assert losing.total == point
    net, _ = settle_one(house, code, losing, stake)
    assert net == -stake                      # a losing lay pays no commission


@pytest.mark.parametrize("preset", LAYING)
def test_qc_95_17_3_up_front_lay_commission_is_taken_when_the_bet_is_made(preset: str) -> None:
    net, _ = settle_one(load_preset(preset), "lay6", Roll(3, 4), 60_00)
    # paid on placing ($2 of the $50 win), and again for its next decision as it stays up
    assert net == -60_00 - 2_00 + 50_00 - 2_00
