"""Money, odds, dice and dice sources (DESIGN.md lessons 5 and 6)."""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dicetable.core.dice import ALL_ROLLS, COMBINATIONS, WAYS, Roll
from dicetable.core.dice_sources import (
    CsprngDice,
    ManualEntry,
    ScriptedDice,
    SeededDice,
    SourceKind,
)
from dicetable.core.errors import DicetableError, InvalidInput, ProcedureViolation
from dicetable.core.money import (
    CommissionRounding,
    Odds,
    OddsBasis,
    Rounding,
    commission,
    commissions,
    format_cents,
    parse_money,
    percent,
    round_amount,
)


@pytest.mark.parametrize(("text", "cents"), [("0", 0), ("5", 500), ("5.5", 550),
                                             ("$1234.56", 123456), ("-2.05", -205)])
def test_money_parses_to_integer_cents(text: str, cents: int) -> None:
    assert parse_money(text) == cents
    assert isinstance(parse_money(text), int)


@pytest.mark.parametrize("text", ["", "abc", "1.234", "1e3", "$", "1,000", "nan", "0.1.1"])
def test_money_rejects_anything_but_dollars_and_cents(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_money(text)


def test_money_formats_dollars() -> None:
    assert format_cents(0) == "$0.00"
    assert format_cents(-5) == "-$0.05"
    assert format_cents(100_000_00) == "$100,000.00"


def test_odds_to_and_for() -> None:
    assert Odds.parse("7 to 6").net == Fraction(7, 6)
    assert Odds.parse("30 for 1").net == 29
    assert Odds.parse("9:5") == Odds(9, 5, OddsBasis.TO)
    assert str(Odds.parse("8 for 1")) == "8 for 1"
    for bad in ("seven to six", "7 to 0", "1 for 2", "-1 to 1"):
        with pytest.raises(InvalidInput):
            Odds.parse(bad)


def test_percent_is_exact() -> None:
    assert percent("5%") == Fraction(1, 20)
    assert percent("4.5%") == Fraction(9, 200)
    with pytest.raises(InvalidInput):
        percent("five")


def test_rounding_rules_are_named() -> None:
    amount = Fraction(3500, 6)  # $5 at 7 to 6
    assert round_amount(amount, 25, Rounding.DOWN) == 575
    assert round_amount(amount, 25, Rounding.UP) == 600
    assert round_amount(amount, 25, Rounding.CENT) == 583
    assert round_amount(Fraction(700), 25, Rounding.REFUSE) == 700
    with pytest.raises(InvalidInput):
        round_amount(amount, 25, Rounding.REFUSE)


@pytest.mark.parametrize(("base", "expected"), [(1000, 100), (2000, 100), (3900, 100),
                                                (4000, 200), (5900, 200), (10000, 500)])
def test_commission_five_percent_floored_to_dollar_with_dollar_minimum(base: int,
                                                                      expected: int) -> None:
    # spec/standards.md §5.2: $1 on $20-$39, $2 on $40-$59, still $1 on a $10 buy.
    assert commission(base, Fraction(1, 20), 100, 100,
                      CommissionRounding.FLOOR_TO_UNIT) == expected


@given(base=st.one_of(st.integers(0, 10**9), st.fractions(0, 10**7, max_denominator=36)),
       rate=st.fractions(0, 1, max_denominator=1000), unit=st.sampled_from([1, 5, 25, 100, 500]),
       minimum=st.integers(0, 500), rounding=st.sampled_from(list(CommissionRounding)))
def test_commission_is_the_exact_amount_rounded(base: int | Fraction, rate: Fraction, unit: int,
                                                minimum: int, rounding: CommissionRounding
                                                ) -> None:
    """Worked out in integers, the commission is what the exact rational amount gives."""
    exact = Fraction(base) * rate
    expected = {CommissionRounding.EXACT_CENTS: math.floor(exact),
                CommissionRounding.FLOOR_TO_UNIT: math.floor(exact / unit) * unit,
                CommissionRounding.CEIL_TO_UNIT: math.ceil(exact / unit) * unit}[rounding]
    got = commission(base, rate, unit, minimum, rounding)
    assert got == max(expected, minimum)
    assert type(got) is int


@given(bases=st.lists(st.integers(0, 10**9), max_size=20),
       per=st.one_of(st.just(1), st.fractions(0, 10, max_denominator=36)),
       rate=st.fractions(0, 1, max_denominator=1000), unit=st.sampled_from([1, 5, 25, 100, 500]),
       minimum=st.integers(0, 500), rounding=st.sampled_from(list(CommissionRounding)))
def test_a_ladders_commissions_are_each_rungs_commission(
        bases: list[int], per: int | Fraction, rate: Fraction, unit: int, minimum: int,
        rounding: CommissionRounding) -> None:
    """``commissions`` (a ladder's every rung at once) is each rung's exact commission,
    rounded, as ``commission`` gives it: the stakes the controls post are the ones the engine
    charges."""
    def exact(base: int) -> int:
        amount = Fraction(base) * per * rate
        rounded = {CommissionRounding.EXACT_CENTS: math.floor(amount),
                   CommissionRounding.FLOOR_TO_UNIT: math.floor(amount / unit) * unit,
                   CommissionRounding.CEIL_TO_UNIT: math.ceil(amount / unit) * unit}[rounding]
        return max(rounded, minimum)

    got = commissions(bases, per, rate, unit, minimum, rounding)
    assert got == [exact(b) for b in bases]
    assert got == [commission(b * per, rate, unit, minimum, rounding) for b in bases]
    assert all(type(c) is int for c in got)


def test_commission_other_roundings() -> None:
    assert commission(2500, Fraction(1, 20), 100, 0, CommissionRounding.CEIL_TO_UNIT) == 200
    assert commission(2500, Fraction(1, 20), 100, 0, CommissionRounding.EXACT_CENTS) == 125


def test_roll_notation_round_trips() -> None:
    for roll in ALL_ROLLS:
        assert Roll.parse(str(roll)) == roll
    assert Roll.parse(" 6 , 1 ") == Roll(6, 1)
    for bad in ("7-1", "0-3", "34", "3-4-5", "a-b"):
        with pytest.raises(InvalidInput):
            Roll.parse(bad)
    with pytest.raises(InvalidInput):
        Roll(7, 1)


def test_thirty_six_outcomes_and_ways() -> None:
    assert len(set(ALL_ROLLS)) == 36
    assert [r.index for r in ALL_ROLLS] == list(range(36))
    assert WAYS == {2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 6, 8: 5, 9: 4, 10: 3, 11: 2, 12: 1}
    assert len(COMBINATIONS) == 21
    assert sum(1 for r in ALL_ROLLS if r.is_hard) == 6


def test_hard_and_easy() -> None:
    assert Roll(3, 3).is_hard
    assert not Roll(2, 4).is_hard
    assert Roll(4, 2).combination == (2, 4)


def test_errors_are_value_errors_naming_rule_and_citation() -> None:
    e = ProcedureViolation("late", rule="r.x", citation="58 Pa. Code § 668a.2(a)")
    assert isinstance(e, ValueError)
    assert isinstance(e, DicetableError)
    assert "r.x" in str(e)
    assert "668a.2(a)" in str(e)


def test_csprng_uses_secrets_randbelow_never_modulo(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def fake(n: int) -> int:
        calls.append(n)
        return 5

    monkeypatch.setattr(secrets, "randbelow", fake)
    assert CsprngDice().next_roll() == Roll(6, 6)
    assert calls == [6, 6]  # one unbiased draw in 0..5 per die


def test_csprng_covers_every_face() -> None:
    dice = CsprngDice()
    faces = {f for _ in range(400) for f in (lambda r: (r.first, r.second))(dice.next_roll())}
    assert faces == {1, 2, 3, 4, 5, 6}
    assert dice.kind is SourceKind.CSPRNG


def test_seeded_dice_are_reproducible_and_script_runs_out() -> None:
    assert [SeededDice(1).next_roll() for _ in range(3)] == \
        [SeededDice(1).next_roll() for _ in range(3)]
    a = SeededDice(9)
    seq_a = [a.next_roll() for _ in range(20)]
    b = SeededDice(9)
    assert seq_a == [b.next_roll() for _ in range(20)]
    script = ScriptedDice(["1-1"])
    assert script.next_roll() == Roll(1, 1)
    assert script.remaining == 0
    with pytest.raises(InvalidInput):
        script.next_roll()


def test_manual_entry_needs_an_entry() -> None:
    manual = ManualEntry()
    with pytest.raises(ProcedureViolation):
        manual.next_roll()
    manual.enter("4-3")
    assert manual.next_roll() == Roll(4, 3)
