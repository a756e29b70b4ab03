"""The shooter's line bet, at the offer, at the selection and at every throw.

- IN 68 IAC 10-4-3(b) (mandatory): the stickperson offers the dice by position, first to the
  patron immediately to the boxperson's left, then clockwise. The offer is not held back for
  want of a bet: the patron offered may place one and accept, or decline.
- IN 10-4-3(c) (mandatory): a patron may serve as shooter only with a pass or don't pass bet on
  the table: checked when the patron accepts (selects the dice) and at every throw, so a
  shooter whose pass bet was paid and returned throws again only after placing another.
- IN 10-4-4(c)(6) (discretionary): the stickperson *may* declare invalid a roll thrown without
  one; the mandatory (c) refuses that throw before it is made.
- PA 58 Pa. Code 623a.8(a) (mandatory): once the dice are selected the shooter places a Pass or
  Don't Pass bet before throwing: not at the offer or the selection, at every throw.

Through the engine, and through ``dicetable replay`` (a table script, as a user runs one).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.table import Table
from dicetable.table.procedure import offer_order

runner = CliRunner()
STAFF = {"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER}


def _table(preset: str) -> Table:
    table = Table.open(preset, "t", mode="live", actor="fran", role=Role.FLOORPERSON,
                       staff=STAFF)
    for seat, name in ((1, "ann"), (2, "ben")):
        table.join(name, seat)
        table.buy_in(name, 100_00, actor="dee", role=Role.DEALER)
    table.bring_dice("D1", "D2", "D3", "D4", "D5", actor="bo", role=Role.BOXPERSON)
    return table


def _refused_throw(table: Table, faces: str, section: str) -> None:
    before = table.state.snapshot()
    with pytest.raises(ProcedureViolation) as refused:
        table.roll(faces, actor="sam", role=Role.STICKPERSON)
    assert refused.value.rule == "shooter.line_bet"
    assert section in refused.value.citation
    assert refused.value.citation.endswith("[regulation]")
    assert table.state.snapshot() == before


def test_in_10_4_3_b_the_offer_goes_by_position_whatever_the_bets() -> None:
    table = _table("in-craps")
    with pytest.raises(ProcedureViolation, match="first_offer|ann"):
        table.offer_dice("ben", actor="sam", role=Role.STICKPERSON)   # ann comes first
    table.offer_dice("ann", actor="sam", role=Role.STICKPERSON)       # no bet yet: offered


def test_in_10_4_3_c_a_patron_without_a_line_bet_may_not_accept_the_dice() -> None:
    table = _table("in-craps")
    table.offer_dice("ann", actor="sam", role=Role.STICKPERSON)
    with pytest.raises(ProcedureViolation) as refused:
        table.select_dice("D1", "D2", actor="ann", role=Role.PLAYER)
    assert refused.value.rule == "shooter.line_bet"
    assert "68 IAC 10-4-3(c)" in refused.value.citation
    table.bet("ann", "pass", 10_00)
    table.select_dice("D1", "D2", actor="ann", role=Role.PLAYER)
    assert table.shooter == "ann"


def test_in_10_4_3_c_after_the_pass_bet_is_paid_and_returned_the_next_throw_needs_another() -> None:
    table = _table("in-craps")
    table.bet("ann", "pass", 10_00)
    table.offer_dice("ann", actor="sam", role=Role.STICKPERSON)
    table.select_dice("D1", "D2", actor="ann", role=Role.PLAYER)
    table.roll("4-3", actor="sam", role=Role.STICKPERSON)               # come-out 7: pass wins
    table.settle()
    assert table.shooter == "ann"                                      # 10-4-3(d)(1): keeps them
    assert not [b for b in table.state.bets_of("ann") if b.wager in ("pass", "dontpass")]
    _refused_throw(table, "3-3", "68 IAC 10-4-3(c)")
    table.bet("ann", "dontpass", 10_00)
    assert table.roll("3-3", actor="sam", role=Role.STICKPERSON)[0].kind == "DiceRolled"


def test_pa_623a_8_a_the_line_bet_comes_after_the_selection_and_before_every_throw() -> None:
    table = _table("pa-craps")
    shooter = offer_order(table.state)[0]
    table.offer_dice(shooter, actor="sam", role=Role.STICKPERSON)
    table.select_dice("D1", "D2", actor=shooter, role=Role.PLAYER)  # no bet needed to select
    _refused_throw(table, "4-3", "58 Pa. Code § 623a.8(a)")
    table.bet(shooter, "pass", 10_00)
    table.roll("4-3", actor="sam", role=Role.STICKPERSON)
    table.settle()
    assert table.shooter == shooter
    assert not [b for b in table.state.bets_of(shooter) if b.wager in ("pass", "dontpass")]
    _refused_throw(table, "3-3", "58 Pa. Code § 623a.8(a)")
    table.bet(shooter, "dontpass", 10_00)
    assert table.roll("3-3", actor="sam", role=Role.STICKPERSON)[0].kind == "DiceRolled"


IN_SCRIPT = """dicetable-script 1
pack in-craps
opener fran floorperson
staff sam stickperson
staff bo boxperson
staff dee dealer
seat 1 ann 500
seat 2 ben 300
bo boxperson bring-dice I1 I2 I3 I4 I5
sam stickperson offer-dice ann
ann player select-dice I1 I2 ! ProcedureViolation shooter.line_bet
ann player bet pass 10
ann player select-dice I1 I2
sam stickperson roll 4-3
dee dealer settle
expect shooter ann
sam stickperson roll 3-3 ! ProcedureViolation shooter.line_bet
ann player bet dontpass 10
sam stickperson roll 3-3
dee dealer settle
expect point 6
"""

PA_SCRIPT = """dicetable-script 1
pack pa-craps
opener fran floorperson
staff sam stickperson
staff bo boxperson
staff dee dealer
seat 9 alice 500
bo boxperson bring-dice A1 A2 A3 A4 A5
sam stickperson offer-dice alice
alice player select-dice A1 A2
sam stickperson roll 4-3 ! ProcedureViolation shooter.line_bet
alice player bet pass 10
sam stickperson roll 4-3
dee dealer settle
expect shooter alice
sam stickperson roll 3-3 ! ProcedureViolation shooter.line_bet
alice player bet pass 10
sam stickperson roll 3-3
dee dealer settle
expect point 6
"""


@pytest.mark.parametrize(("name", "script"), [("in_10_4_3_c", IN_SCRIPT),
                                              ("pa_623a_8_a", PA_SCRIPT)])
def test_the_line_bet_at_every_throw_through_dicetable_replay(name: str, script: str,
                                                              tmp_path: Path) -> None:
    path = tmp_path / f"{name}.dts"
    path.write_text(script)
    out = runner.invoke(app, ["replay", str(path)])
    assert out.exit_code == 0, out.output
    broken = script.replace("ann player bet dontpass 10\n", "").replace(
        "alice player bet pass 10\nsam stickperson roll 3-3\n", "sam stickperson roll 3-3\n")
    path.write_text(broken)
    assert runner.invoke(app, ["replay", str(path)]).exit_code != 0   # the script can fail
