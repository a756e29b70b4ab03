"""58 Pa. Code 585.3(b)(1) / 668a.3(b)(1): dice in a Props & Hops shaker stay on a table at most
24 hours; at Craps the same 24 hours is a cited stand-in (PA 661a.4(d) by analogy, N.J.A.C.
13:69E-1.16(b)). One rule value, the game pack's ``dice.max_hours``, is read by the table and
by custody alike: change it and both change (tests/test_every_rule_is_read.py style)."""

from __future__ import annotations

import pytest

from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.custody.rules import SCHEMA, dice_limit
from dicetable.games.packs import derive_pack, load_preset
from dicetable.rules.model import RulePack
from dicetable.table import Table
from dicetable.table.procedure import dice_limit as table_limit
from tests.custody.scenario import in_play


def _table(pack: RulePack, hours_later: float) -> tuple[Table, list[str]]:
    """A live table on ``pack`` with custody's dice, ``hours_later`` after they were issued:
    what refuses a roll now (the table's own check, custody's check with the table's limit)."""
    led, clock, dice = in_play("pa", 5, "craps-1")
    table = Table.open(pack, "craps-1", mode="live", clock=clock, actor="fran",
                       staff={"sam": Role.STICKPERSON, "bo": Role.BOXPERSON,
                              "dee": Role.DEALER}, dice_registry=led)
    table.bring_dice(*dice)
    table.join("alice", 9)
    table.buy_in("alice", 100_00)
    table.bet("alice", "pass", 10_00)
    table.new_shooter("alice")
    clock.advance(seconds=int(hours_later * 3600))
    refusals = []
    try:
        table.roll("3-4")
    except ProcedureViolation as e:
        refusals.append(f"table: {e.rule}")
    try:
        led.check_dice_in_play("craps-1", dice, table_limit(table.state))
    except ProcedureViolation as e:
        refusals.append(f"custody: {e.rule}")
    return table, refusals


def test_the_custody_packs_have_no_time_limit_of_their_own() -> None:
    assert not [rid for rid in SCHEMA if "max_hours" in rid]


def test_pa_585_3_b_1_the_props_and_hops_limit_is_the_game_packs_regulation() -> None:
    pack = load_preset("pa-props-and-hops")
    assert pack.value("dice.max_hours") == 24
    assert dice_limit("PA", "props-and-hops") == (24, pack.cite("dice.max_hours"))
    assert "585.3(b)(1)" in pack.cite("dice.max_hours")
    assert "[regulation]" in pack.cite("dice.max_hours")


@pytest.mark.parametrize("hours", [12, 48])
def test_changing_dice_max_hours_changes_the_table_and_custody(hours: int) -> None:
    base = load_preset("pa-craps")
    house = derive_pack(base, "river-house", {"dice.max_hours": hours})
    assert "[other-jurisdiction]" in base.cite("dice.max_hours")
    for pack in (base, house):
        limit = pack.value("dice.max_hours")
        _, at_the_limit = _table(pack, limit)
        assert at_the_limit == [], pack.id          # exactly the limit is not over it
        _, past_it = _table(pack, limit + 1 / 3600)
        assert past_it == ["table: dice.max_hours", "custody: dice.max_hours"], pack.id
    # Between the two values the preset and the house pack disagree, in both places at once.
    between = min(24, hours) + 1
    _, preset_says = _table(base, between)
    _, house_says = _table(house, between)
    assert (preset_says == []) != (house_says == [])
