"""Combinations the mutation run (docs/mutation-report.md) found no test for, each written as
the section it encodes. A survivor that matters is killed here; the report explains the rest."""

from __future__ import annotations

import pytest

from dicetable.application.scripts import run_script
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.games.packs import PRESETS, load_preset
from tests.conftest import funded

IN = """dicetable-script 1
pack in-craps
opener fran floorperson
staff sam stickperson
staff bo boxperson
staff dee dealer
seat 1 ann 500
seat 2 ben 300
bo boxperson bring-dice I1 I2 I3 I4 I5
ann player bet pass 10
sam stickperson offer-dice ann
ann player select-dice I1 I2
"""


def test_in_10_4_4_c_5_a_recorded_thrower_contradicts_no_other_ground() -> None:
    """The shooter recorded as thrower contradicts only 'thrown by a non-shooter'
    ((c)(2)); a die seen on the rail ((c)(5)) is still a ground."""
    result = run_script(IN + """sam stickperson roll 3-4 thrower=ann
sam stickperson no-roll thrown-by-non-shooter ! ProcedureViolation noroll.grounds
sam stickperson no-roll die-on-rail observed=die-on-rail
expect valid no
""")
    assert result.ok, str(result.failure)


def test_in_10_4_4_c_a_contradicted_ground_is_refused_citing_the_grounds() -> None:
    result = run_script(IN + "sam stickperson roll 3-4 thrower=ann\n")
    assert result.ok
    assert result.table is not None
    table = result.table
    with pytest.raises(ProcedureViolation) as refused:
        table.execute(gcmd.CallNoRoll(actor="sam", role=Role.STICKPERSON,
                                      grounds=("top-face-indeterminable",)))
    assert refused.value.citation == load_preset("in-craps").cite("noroll.grounds")
    assert "both uppermost faces were read: 3-4" in str(refused.value)
    with pytest.raises(ProcedureViolation) as unseen:
        table.execute(gcmd.CallNoRoll(actor="sam", role=Role.STICKPERSON,
                                      grounds=("die-on-rail",)))
    assert "(3-4, no physical facts)" in str(unseen.value)
    with pytest.raises(InvalidInput, match="unknown throw facts: hovering") as unknown:
        table.execute(gcmd.CallNoRoll(actor="sam", role=Role.STICKPERSON,
                                      grounds=("die-on-rail",), observed=("hovering",)))
    assert unknown.value.rule == "throw.facts"


@pytest.mark.parametrize("preset", [p for p in PRESETS if load_preset(p).offers("lay4")])
def test_qc_95_17_3_changing_an_up_front_lay_takes_the_commission_difference(preset: str) -> None:
    table = funded(preset, ("p",), seated=True)
    before = table.balance("p")
    bet = table.bet("p", "lay4", 40_00, working=True)                # $1 on the $20 win
    assert before - table.balance("p") == 40_00 + 1_00
    table.change(bet, 100_00)                                        # $2 on the $50 win
    assert before - table.balance("p") == 100_00 + 2_00
    table.change(bet, 40_00)
    assert before - table.balance("p") == 40_00 + 1_00


def test_pa_585_3_j_the_shaker_goes_to_the_first_seat_when_its_holder_has_left() -> None:
    result = run_script("""dicetable-script 1
pack pa-props-and-hops
opener fran floorperson
staff dee dealer
seat 1 amy 100
seat 2 bea 100
fran floorperson bring-dice P1 P2 witness=dee
dee dealer shake
dee dealer no-more-bets
dee dealer offer-shaker amy
amy player player-shake 3
amy player return-shaker
dee dealer uncover
dee dealer roll 2-3
dee dealer settle
amy player leave amy
dee dealer shake
dee dealer no-more-bets
dee dealer offer-shaker amy ! ProcedureViolation
dee dealer offer-shaker bea
""")
    assert result.ok, str(result.failure)


FIRST_OFFER = """dicetable-script 1
pack {pack}
opener fran floorperson
staff sam stickperson
staff bo boxperson
staff dee dealer
seat 3 low 300
seat 12 high 300
bo boxperson bring-dice D1 D2 D3 D4 D5
sam stickperson offer-dice {wrong} ! ProcedureViolation shooter.first_offer
sam stickperson offer-dice {right}
"""


@pytest.mark.parametrize(("pack", "right", "wrong"), [("in-craps", "low", "high"),
                                                      ("pa-craps", "high", "low")])
def test_in_10_4_3_b_and_pa_661a_4_b_the_first_offer_counts_from_its_own_seat(
        pack: str, right: str, wrong: str) -> None:
    """IN: the patron immediately left of the boxperson (position 1); PA (661a.4(b) by
    analogy): immediately left of the stickperson, past half way round (position 9 of 16)."""
    result = run_script(FIRST_OFFER.format(pack=pack, right=right, wrong=wrong))
    assert result.ok, str(result.failure)
