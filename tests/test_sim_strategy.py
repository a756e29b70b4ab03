"""Strategy files: what they may say, and the clear, typed refusals when they break a rule."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from dicetable.core.errors import IllegalWager, InvalidInput
from dicetable.sim.strategy import load_strategy, strategy_from_data

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "strategies"


def one(bet: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"pack": "pa-craps", "bets": [bet], **top}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.*")), ids=lambda p: p.name)
def test_example_strategies_load(path: Path) -> None:
    strategy = load_strategy(path)
    assert strategy.bets
    assert strategy.pack.id == "pa-craps"


def test_money_is_a_string_or_whole_dollars_never_a_float() -> None:
    assert strategy_from_data(one({"wager": "pass", "amount": "$12"})).bets[0].amounts == (1200,)
    assert strategy_from_data(one({"wager": "pass", "amount": 12})).bets[0].amounts == (1200,)
    with pytest.raises(InvalidInput) as e:
        strategy_from_data(one({"wager": "pass", "amount": 12.5}))
    assert e.value.rule == "money.format"


def test_press_and_odds_forms() -> None:
    s = strategy_from_data(one({"wager": "place6", "amount": 6, "press": {"by": 6, "max": 24}}))
    assert s.bets[0].amounts == (600, 1200, 1800, 2400)
    odds = strategy_from_data(one({"wager": "pass", "amount": 10, "odds": "max"})).bets[0]
    assert odds.odds_multiples[4] == 3
    assert odds.odds_multiples[6] == 5
    lay = strategy_from_data(one({"wager": "dontpass", "amount": 10, "odds": "max"})).bets[0]
    assert set(lay.odds_multiples.values()) == {Fraction(6)}
    per_point = strategy_from_data(one({"wager": "pass", "amount": 10,
                                        "odds": {"4": 1, "6": 2}})).bets[0]
    assert per_point.odds_amount(0, 6) == 2000
    assert per_point.odds_amount(0, 5) == 0


def test_pa_payout_inexact_refuses_an_unpayable_amount() -> None:
    with pytest.raises(IllegalWager) as e:
        strategy_from_data(one({"wager": "place6", "amount": 5}))
    assert e.value.rule == "payout.inexact"
    assert "bets[0] (place6)" in str(e.value)


def test_limits_unit_and_equal_parts() -> None:
    with pytest.raises(IllegalWager) as e:
        strategy_from_data(one({"wager": "pass", "amount": "$2"}))
    assert e.value.rule == "limits.default"
    with pytest.raises(IllegalWager) as e:
        strategy_from_data(one({"wager": "horn", "amount": 5}))
    assert "4 equal parts" in str(e.value)
    with pytest.raises(IllegalWager):
        strategy_from_data(one({"wager": "pass", "amount": "$5.50"}))


def test_odds_limits_and_where_odds_may_stand() -> None:
    with pytest.raises(IllegalWager) as e:
        strategy_from_data(one({"wager": "pass", "amount": 10, "odds": 4}))
    assert e.value.rule == "odds.limit.mode"  # 4x is over 3x on the 4 and 10
    with pytest.raises(IllegalWager) as e:
        strategy_from_data(one({"wager": "place6", "amount": 12, "odds": 1}))
    assert e.value.rule == "wagers.odds"
    with pytest.raises(IllegalWager) as e:  # $2 odds on the 6 would pay $2.40
        strategy_from_data(one({"wager": "pass", "amount": "$6", "odds": "1/3"}))
    assert e.value.rule == "payout.inexact"
    with pytest.raises(IllegalWager) as e:  # a third of $5 is not whole cents
        strategy_from_data(one({"wager": "pass", "amount": "$5", "odds": "1/3"}))
    assert e.value.rule == "odds.limit.multiple"


def test_a_wager_off_the_menu_is_refused() -> None:
    with pytest.raises(IllegalWager) as e:
        strategy_from_data({"pack": "pa-props-and-hops",
                            "bets": [{"wager": "pass", "amount": 5}]})
    assert e.value.rule == "menu.line"


def test_calling_a_bet_on_needs_a_toggleable_wager() -> None:
    assert strategy_from_data(one({"wager": "place6", "amount": 12,
                                   "working": True})).bets[0].working is True
    with pytest.raises(IllegalWager) as e:
        strategy_from_data(one({"wager": "field", "amount": 5, "working": True}))
    assert e.value.rule == "working.player_may_toggle"


def test_fire_and_bonus_follow_their_placement_rules() -> None:
    with pytest.raises(IllegalWager) as e:
        strategy_from_data(one({"wager": "fire", "amount": 1, "when": "point-on"}))
    assert e.value.rule == "fire.placement"


@pytest.mark.parametrize("bad", [
    {"wager": "pass"},                                        # no amount
    {"wager": "odds", "amount": 5},                           # odds go with their line bet
    {"wager": "nope", "amount": 5},
    {"wager": "pass", "amount": 5, "colour": "red"},          # unknown field
    {"wager": "field", "amount": 5, "skip_point": True},      # not a box number
    {"wager": "place6", "amount": 12, "when": "sometimes"},
    {"wager": "come", "amounts": [5, 10]},                    # come bets are flat
    {"wager": "pass", "amount": 5, "max_bets": 2},            # only come / don't come
])
def test_malformed_bets_are_invalid_input(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        strategy_from_data(one(bad))


def test_session_and_file_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        strategy_from_data(one({"wager": "pass", "amount": 5}, session={"max_rolls": 0}))
    with pytest.raises(InvalidInput):
        strategy_from_data({"bets": []})
    broken = tmp_path / "broken.toml"
    broken.write_text("bets = [", encoding="utf-8")
    with pytest.raises(InvalidInput) as e:
        load_strategy(broken)
    assert "not valid toml" in str(e.value).lower()
    with pytest.raises(InvalidInput):
        load_strategy(tmp_path / "missing.json")


def test_house_pack_path_is_relative_to_the_strategy(tmp_path: Path) -> None:
    (tmp_path / "house.json").write_text(
        '{"id": "house", "extends": "pa-craps", "overrides": {"odds.limit.mode": "flat",'
        ' "odds.limit.multiple": 10}}', encoding="utf-8")
    (tmp_path / "s.json").write_text(
        '{"pack": "house.json", "bets": [{"wager": "pass", "amount": 10, "odds": 10}]}',
        encoding="utf-8")
    strategy = load_strategy(tmp_path / "s.json")
    assert strategy.pack.id == "house"
    assert strategy.bets[0].odds_multiples[6] == 10
