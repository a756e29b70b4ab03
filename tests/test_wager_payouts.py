"""Every payout of every wager and paytable option, to the cent, through the live engine.

The oracle below is written independently of the compiled tables, from the values the presets
cite: Appendix A of spec/regulations.md and spec/model-regulations.md §9 (N.J.A.C. 13:69F-13.6(b),
Arrêté du 14 mai 2007 art. 55-8, Québec s. 95.17, Colorado 30-2306 as reported).
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from dicetable.core.dice import ALL_ROLLS, Roll
from dicetable.core.errors import IllegalWager
from dicetable.games import events as ev
from dicetable.rules.loader import derive_pack, load_preset
from dicetable.rules.model import RulePack, family_of
from tests.conftest import funded

PLACE = {4: F(9, 5), 5: F(7, 5), 6: F(7, 6), 8: F(7, 6), 9: F(7, 5), 10: F(9, 5)}
LOSE = {4: F(5, 11), 5: F(5, 8), 6: F(4, 5), 8: F(4, 5), 9: F(5, 8), 10: F(5, 11)}
TRUE = {4: F(2), 5: F(3, 2), 6: F(6, 5), 8: F(6, 5), 9: F(3, 2), 10: F(2)}
LAY = {n: 1 / v for n, v in TRUE.items()}
HARD = {4: F(7), 6: F(9), 8: F(9), 10: F(7)}
SINGLE = {2: F(30), 3: F(15), 11: F(15), 12: F(30)}

STAKE = {  # cents: amounts the refuse-if-inexact rule accepts (NJ 13:69F-13.6(b)1)
    "place4": 500, "place10": 500, "place5": 500, "place9": 500, "place6": 600, "place8": 600,
    "lose4": 1100, "lose10": 1100, "lose5": 800, "lose9": 800, "lose6": 500, "lose8": 500,
    "buy4": 2000, "buy10": 2000, "buy5": 2000, "buy9": 2000, "buy6": 2000, "buy8": 2000,
    "lay4": 4000, "lay10": 4000, "lay5": 3000, "lay9": 3000, "lay6": 2400, "lay8": 2400,
    "big6": 500, "big8": 500, "horn": 400, "world": 500, "ce": 200,
    "hornhigh2": 500, "hornhigh3": 500, "hornhigh11": 500, "hornhigh12": 500,
}


def oracle(code: str, roll: Roll, field12: F = F(2)) -> F | None:
    """Net result per unit staked, or None when the roll does not decide the wager."""
    t = roll.total
    fam = family_of(code)
    n = int("".join(c for c in code if c.isdigit()) or 0)
    if fam in ("place", "buy", "big"):
        pay = {"place": PLACE, "buy": TRUE}.get(fam, {6: F(1), 8: F(1)})[n]
        return pay if t == n else F(-1) if t == 7 else None
    if fam in ("lose", "lay"):
        return (LOSE if fam == "lose" else LAY)[n] if t == 7 else F(-1) if t == n else None
    if fam == "hard":
        if t == n and roll.is_pair:
            return HARD[n]
        return F(-1) if t in (7, n) else None
    if code == "field":
        return {2: F(2), 12: field12}.get(t, F(1)) if t in (2, 3, 4, 9, 10, 11, 12) else F(-1)
    if fam == "hop":
        a, b = (int(x) for x in code[3:].split("-"))
        return (F(30) if a == b else F(15)) if roll.combination == (a, b) else F(-1)
    if fam == "double":
        return F(30) if roll.is_pair and 2 * roll.first == n else F(-1)
    singles = {"any7": ({7}, F(4)), "anycraps": ({2, 3, 12}, F(7)), "two": ({2}, F(30)),
               "three": ({3}, F(15)), "eleven": ({11}, F(15)), "twelve": ({12}, F(30))}
    if code in singles:
        totals, pay = singles[code]
        return pay if t in totals else F(-1)
    if code == "anydouble":
        return F(4) if roll.is_pair else F(-1)
    if code == "horn":  # a quarter on each of 2, 3, 11, 12
        return (SINGLE[t] - 3) / 4 if t in SINGLE else F(-1)
    if code.startswith("hornhigh"):
        units = {2: 1, 3: 1, 11: 1, 12: 1}
        units[n] = 2
        return (units[t] * SINGLE[t] - (5 - units[t])) / 5 if t in SINGLE else F(-1)
    if code == "world":  # a fifth each on 2, 3, 11, 12 and any 7
        return (SINGLE[t] - 4) / 5 if t in SINGLE else F(0) if t == 7 else F(-1)
    if code == "ce":  # half on any craps (7 to 1), half on 11 (15 to 1)
        return F(3) if t in (2, 3, 12) else F(7) if t == 11 else F(-1)
    raise KeyError(code)


def settle_one(pack: RulePack | str, code: str, roll: Roll, stake: int) -> tuple[int, ev.Event]:
    """Place one wager (working on the come-out) and settle one roll; the player's net."""
    table = funded(pack, ("p",), seated=True)
    before = table.balance("p")
    fam = family_of(code)
    working = True if fam in ("place", "buy", "lay", "lose", "hard") else None
    table.bet("p", code, stake, working=working)
    if table.state.game == "props-and-hops":
        table.no_more_bets()
    events = table.roll(roll) + table.settle()
    assert table.state.conserved()
    return table.balance("p") - before, events[-1]


CRAPS_CODES = [c for c in load_preset("pa-craps").menu_in_order
               if family_of(c) not in ("line", "odds", "put", "fire", "bonus")]


@pytest.mark.parametrize("code", CRAPS_CODES)
def test_craps_wager_pays_to_the_cent_on_every_roll(code: str) -> None:
    pack = load_preset("pa-craps")
    stake = STAKE.get(code, 100)
    for roll in ALL_ROLLS:
        net, _ = settle_one(pack, code, roll, stake)
        expected = oracle(code, roll)
        fee = 0
        if code.startswith("buy"):
            fee = 100  # 5% of $20 up front (Québec s. 95.17(2)), floored to $1, $1 minimum
        elif code.startswith("lay"):
            fee = 100  # 5% of the $20 win up front (Québec s. 95.17(3))
        if expected is None:
            assert net == -stake - fee, (code, str(roll))
        elif expected > 0 and family_of(code) in ("place", "buy", "lay", "lose", "big", "hard"):
            # a winner stays up; its win is paid (and an up-front commission renewed from it)
            assert net == int(stake * expected) - stake - fee - fee, (code, str(roll))
        else:
            assert net == int(stake * expected) - fee, (code, str(roll))


PH_CODES = list(load_preset("pa-props-and-hops").menu_in_order)


@pytest.mark.parametrize("code", PH_CODES)
def test_pa_668a_2_props_and_hops_wager_pays_to_the_cent(code: str) -> None:
    for roll in ALL_ROLLS:
        net, last = settle_one("pa-props-and-hops", code, roll, 100)
        expected = oracle(code, roll)
        assert expected is not None
        assert net == int(100 * expected), (code, str(roll))
        assert isinstance(last, ev.RoundCompleted)


@pytest.mark.parametrize(("n", "wins"), [(2, "1-1"), (4, "2-2"), (6, "3-3"), (8, "4-4"),
                                          (10, "5-5"), (12, "6-6")])
def test_pa_668a_2_d_hardway_doubles_win_only_on_their_pair(n: int, wins: str) -> None:
    # 668a.2(d)(1)-(6); TV-46..TV-51: Four the Hardway loses on 1-3, Eight on 5-3.
    for roll in ALL_ROLLS:
        net, _ = settle_one("pa-props-and-hops", f"double{n}", roll, 100)
        assert (net > 0) == (roll == Roll.parse(wins)), str(roll)
        if roll.total == n and not roll.is_pair:
            assert net == -100


def test_field_twelve_pays_three_to_one_as_a_house_option() -> None:
    house = derive_pack(load_preset("pa-craps"), "h", {"paytable.field.12": "3 to 1"})
    assert settle_one(house, "field", Roll(6, 6), 100)[0] == 300
    assert settle_one(house, "field", Roll(1, 1), 100)[0] == 200
    assert settle_one(load_preset("pa-craps"), "field", Roll(6, 6), 100)[0] == 200


def test_horn_as_a_single_bet_france_55_8_b_8() -> None:
    house = derive_pack(load_preset("pa-craps"), "h", {"paytable.horn.form": "single"})
    for roll, net in (("1-1", 400), ("1-2", 400), ("5-6", 400), ("6-6", 400), ("3-4", -100)):
        assert settle_one(house, "horn", Roll.parse(roll), 100)[0] == net


def test_hop_paytable_option() -> None:
    house = derive_pack(load_preset("pa-craps"), "h", {"paytable.hop.nonpair": "16 to 1"})
    assert settle_one(house, "hop1-2", Roll(2, 1), 100)[0] == 1600


def test_buy_commission_on_win_only() -> None:
    # PA 623a.5(g)(3) reportedly allows the buy commission on a win only (Appendix A item 2).
    house = derive_pack(load_preset("pa-craps"), "h", {"commission.buy.when": "on-win"})
    net, _ = settle_one(house, "buy4", Roll(2, 2), 2000)
    assert net == 4000 - 100 - 2000   # wins $40, pays $1 from it, the $20 stays up
    net, _ = settle_one(house, "buy4", Roll(3, 4), 2000)
    assert net == -2000               # no commission when it loses


def test_lay_commission_is_on_the_win() -> None:
    # spec/standards.md §5.2: lay $40 on 4 wins $20; the vig is $1.
    net, _ = settle_one(load_preset("pa-craps"), "lay4", Roll(3, 4), 4000)
    # the $40 stays up; the $20 win is paid less the vig renewed for its next decision
    assert net == -4000 - 100 + 2000 - 100


def test_unpayable_amount_is_refused_or_rounded_per_the_named_rule() -> None:
    pack = load_preset("pa-craps")
    table = funded(pack)
    with pytest.raises(IllegalWager, match="payout.inexact"):
        table.bet("alice", "place6", 500, working=True)
    assert table.state.bets == {}
    down = derive_pack(pack, "d", {"payout.inexact": "round-down", "payout.unit": 100})
    net, _ = settle_one(down, "place6", Roll(3, 3), 500)
    assert net == 500 - 500  # $5.83 paid as $5.00; the $5 stake stays up on the layout
    up = derive_pack(pack, "u", {"payout.inexact": "round-up", "payout.unit": 100})
    assert settle_one(up, "place6", Roll(3, 3), 500)[0] == 600 - 500  # paid as $6.00


def test_rounding_is_recorded_as_its_own_ledger_line() -> None:
    down = derive_pack(load_preset("pa-craps"), "d", {"payout.inexact": "round-down",
                                                       "payout.unit": 100})
    table = funded(down)
    table.bet("alice", "place6", 500, working=True)
    events = table.roll("3-3") + table.settle()
    (paid,) = [e for e in events if isinstance(e, ev.WinnersPaid)]
    assert paid.items[0].win == 500
    assert paid.items[0].rounding == -83
