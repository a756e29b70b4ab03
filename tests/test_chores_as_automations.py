"""Dealer automation as configuration (issue 10): returning a no roll's wagers and passing the
shaker are chores like the settlement's. The rule says what happens (``noroll.effect``,
``shaker.passes_on``); the table's automations say who does it: a live table's dealer, or the
table itself where it automates them. Old scripts and logs keep doing both at once."""

from __future__ import annotations

import pytest

from dicetable.application.scripts import run_script
from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.table import Table
from dicetable.table.script_export import export_script
from dicetable.table.table import Automation, automations_for

_PH = """dicetable-script {version}
pack pa-props-and-hops
table ph-1
clock 2026-03-01T18:00:00+00:00
opener fran floorperson
staff dee dealer
{automations}seat 1 amy 100
seat 2 bea 100

fran floorperson bring-dice P1 P2 witness=dee
dee dealer shake
amy player bet any7 5
dee dealer no-more-bets
dee dealer offer-shaker amy
amy player player-shake 3
amy player return-shaker
dee dealer uncover
dee dealer roll {faces}
"""


def _run(body: str, version: int = 3, faces: str = "5-2", automations: str = "") -> Table:
    result = run_script(_PH.format(version=version, faces=faces, automations=automations)
                        + body)
    assert result.ok, result.failure
    assert result.table is not None
    return result.table


def test_automations_the_modes_own_set() -> None:
    assert automations_for("live") == frozenset()
    assert {Automation.RETURN_WAGERS, Automation.PASS_SHAKER} <= automations_for("bare")
    assert automations_for("electronic") == frozenset(Automation)


def test_shaker_passes_on_a_live_dealer_passes_the_shaker_after_the_round() -> None:
    """585.3(j): on a 7 the shaker goes to the next player; at a live table, the dealer's
    chore, done in its turn after the settlement (``settle``) or by ``pass-shaker``."""
    table = _run("dee dealer collect\ndee dealer pay\ndee dealer complete-round\n")
    assert table.procedure.shaker_holder == "amy"  # not passed yet
    assert table.procedure.pass_due
    kinds = [e.kind for e in table.do("pass-shaker")]
    assert kinds == ["ShakerPassed"]
    assert table.procedure.shaker_holder == "bea"
    with pytest.raises(ProcedureViolation) as again:
        table.do("pass-shaker")
    assert again.value.rule == "shaker.passes_on"


def test_shaker_passes_on_the_shaker_is_not_offered_before_it_is_passed() -> None:
    table = _run("dee dealer collect\ndee dealer pay\ndee dealer complete-round\n"
                 "dee dealer shake\nbea player bet any7 5\ndee dealer no-more-bets\n")
    with pytest.raises(ProcedureViolation) as refused:
        table.do("offer-shaker", player="bea")
    assert refused.value.rule == "shaker.passes_on"


def test_shaker_passes_on_a_dealers_pass_is_exported_as_pass_shaker_and_replays() -> None:
    """585.3(j): a log holding the dealer's own pass of the shaker exports to a script (its
    ``pass-shaker`` line) that replays to the same table."""
    table = _run("dee dealer collect\ndee dealer pay\ndee dealer complete-round\n"
                 "dee dealer pass-shaker\n")
    script = export_script(table.log)
    assert "dee dealer pass-shaker" in script
    replayed = run_script(script)
    assert replayed.ok, replayed.failure
    assert replayed.table is not None
    assert replayed.table.procedure.shaker_holder == "bea"
    assert replayed.table.state.seq == table.state.seq


def test_shaker_passes_on_settle_passes_it_in_its_turn() -> None:
    table = _run("dee dealer settle\nexpect shaker bea\n")
    assert not table.procedure.pass_due


def test_shaker_passes_on_a_live_table_that_automates_the_pass_passes_at_once() -> None:
    table = _run("dee dealer collect\ndee dealer pay\ndee dealer complete-round\n"
                 "expect shaker bea\n", automations="automations pass-shaker\n")
    assert Automation.PASS_SHAKER in table.automations


def test_noroll_effect_a_live_dealer_returns_the_wagers_by_command() -> None:
    table = _run("expect balance amy 95\ndee dealer return-wagers\nexpect balance amy 100\n",
                 faces="6-5 die-fell-out")
    assert not table.state.returns_due


def test_a_format_2_script_returns_and_passes_at_once_as_it_was_written() -> None:
    returned = _run("expect balance amy 100\n", version=2, faces="6-5 die-fell-out")
    assert {Automation.RETURN_WAGERS, Automation.PASS_SHAKER} <= returned.automations
    passed = _run("dee dealer settle\nexpect shaker bea\n", version=2)
    assert not passed.procedure.pass_due


def test_a_format_2_script_may_not_write_the_format_3_verbs() -> None:
    from dicetable.table.script import ScriptSyntaxError

    with pytest.raises(ScriptSyntaxError, match="dicetable-script 3"):
        run_script(_PH.format(version=2, faces="6-5 die-fell-out", automations="")
                   + "dee dealer return-wagers\n")


def test_noroll_effect_a_house_pack_returning_wagers_at_live_craps_leaves_it_to_the_dealer(
) -> None:
    """A house pack flips ``noroll.effect`` at Craps: at a live table the dealer returns the
    wagers (the rule says what, the automations who); nothing moves before."""
    from dicetable.core.roles import Role
    from dicetable.games.packs import derive_pack, load_preset

    house = derive_pack(load_preset("pa-craps"), "returns", {"noroll.effect": "wagers-returned"})
    t = Table.open(house, "c", mode="live", actor="fran",
                   staff={"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER})
    t.join("ann", 1)
    t.buy_in("ann", 100_00)
    t.bring_dice("A1", "A2", "A3", "A4", "A5")
    t.bet("ann", "pass", 10_00)
    t.new_shooter("ann")
    events = t.roll("3-4", facts=("die-off-table",))
    assert [e.kind for e in events] == ["DiceRolled", "NoRollCalled"]
    assert t.state.returns_due
    with pytest.raises(ProcedureViolation) as refused:
        t.bet("ann", "field", 5_00)
    assert refused.value.rule == "noroll.effect"
    assert [e.kind for e in t.settle()] == ["WagersReturned"]
    assert t.log[-1].actor == "dee"
    assert t.balance("ann") == 100_00


def test_shaker_first_to_a_round_with_nobody_seated_is_refused_before_anything_is_done() -> None:
    """585.3(e): the shaker goes to the first seated player; with nobody seated, a round is
    refused naming that rule, and betting is not closed on the way."""
    table = Table.open("pa-props-and-hops", "ph-2", mode="live", actor="fran",
                       staff={"dee": Role.DEALER})
    table.bring_dice("P1", "P2", witness="dee")
    before = table.state.seq
    with pytest.raises(ProcedureViolation) as refused:
        table.shaker_round("5-2")
    assert refused.value.rule == "shaker.first_to"
    assert table.state.seq == before
