"""58 Pa. Code 585.3(d) / 668a.3(d): 'prior to the commencement of play' and after each round,
the dealer shakes the covered shaker. Is taking wagers part of 'play'?

The held text does not define 'play' (668a.1, definitions, is not held). Read with 668a.2(c)
(a player who has wagered stays seated until the round of play is finished: the wager is
within the round) and 585.3(i) (the dealer's shake closes each round), the wagers of a round
follow the dealer's shake. That is a reading, so it is a rule value,
``wagering.after_dealer_shake`` (industry-default, configurable): true in the preset; a house
whose approved rules say otherwise sets it false. After 'no more bets' the regulation itself
(668a.2(a), wagers before the shake) answers, whatever the value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.application.scripts import run_script
from dicetable.cli.main import app
from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games.packs import derive_pack, load_preset
from dicetable.rules.model import RulePack
from dicetable.table import Table


def _loaded(pack: RulePack | str = "pa-props-and-hops") -> Table:
    table = Table.open(pack, "ph", mode="live", actor="fran", role=Role.FLOORPERSON,
                       staff={"dee": Role.DEALER})
    table.join("amy", 1)
    table.buy_in("amy", 100_00, actor="dee", role=Role.DEALER)
    table.bring_dice("P1", "P2", witness="dee", actor="fran", role=Role.FLOORPERSON)
    return table


def test_pa_585_3_d_no_wager_before_the_dealers_opening_shake() -> None:
    table = _loaded()
    rule = table.pack.rule("wagering.after_dealer_shake")
    assert rule.value is True
    assert rule.status.value == "industry-default"
    before = table.state.snapshot()
    with pytest.raises(ProcedureViolation) as refused:
        table.bet("amy", "any7", 1_00)
    assert refused.value.rule == "wagering.after_dealer_shake"
    assert "585.3(d)" in refused.value.citation
    assert "668a.3(d)" in refused.value.citation
    assert refused.value.citation.endswith("[industry-default]")
    assert table.state.snapshot() == before
    assert table.placeable_codes("amy", ["any7", "field"]) == []      # the controls agree
    table.shake(actor="dee", role=Role.DEALER)
    assert table.placeable_codes("amy", ["any7", "field"]) == ["any7", "field"]
    table.bet("amy", "any7", 1_00)


def test_pa_585_3_d_a_house_reading_wagers_as_before_play_takes_them_before_the_shake() -> None:
    house = derive_pack(load_preset("pa-props-and-hops"), "house-bets-first",
                        {"wagering.after_dealer_shake": False})
    table = _loaded(house)
    table.bet("amy", "any7", 1_00)                                   # accepted
    assert [b.wager for b in table.state.bets_of("amy")] == ["any7"]


def test_pa_668a_2_a_after_no_more_bets_the_regulation_is_named() -> None:
    table = _loaded()
    table.shake(actor="dee", role=Role.DEALER)
    table.no_more_bets(actor="dee", role=Role.DEALER)
    with pytest.raises(ProcedureViolation) as refused:
        table.bet("amy", "any7", 1_00)
    assert refused.value.rule == "wagering.before_shake"
    assert refused.value.citation == "58 Pa. Code § 668a.2(a) [regulation]"


ROUNDS = """dicetable-script 1
pack pa-props-and-hops
opener fran floorperson
staff dee dealer
seat 1 amy 100
fran floorperson bring-dice P1 P2 witness=dee
amy player bet any7 1 ! ProcedureViolation wagering.after_dealer_shake
dee dealer shake
amy player bet any7 1
dee dealer no-more-bets
dee dealer offer-shaker amy
amy player player-shake 3
amy player return-shaker
dee dealer uncover
dee dealer roll 2-3
dee dealer settle
amy player bet any7 1 ! ProcedureViolation wagering.after_dealer_shake
dee dealer shake
amy player bet any7 1
expect balance amy 98
"""


def test_pa_585_3_d_i_each_rounds_wagers_follow_the_dealers_shake() -> None:
    result = run_script(ROUNDS)
    assert result.ok, str(result.failure)


def test_pa_585_3_d_through_dicetable_replay(tmp_path: Path) -> None:
    path = tmp_path / "ph.dts"
    path.write_text(ROUNDS)
    out = CliRunner().invoke(app, ["replay", str(path)])
    assert out.exit_code == 0, out.output
    assert "balances: amy $98.00" in out.output
