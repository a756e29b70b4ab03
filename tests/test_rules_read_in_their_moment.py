"""Rules the probe once did not reach (issue 10, 'every rule value is read'): each is read in
the moment it decides, or the pack is refused for naming what its game does not have."""

from __future__ import annotations

import dataclasses

import pytest

from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games.packs import PRESETS, load_preset, validate_pack
from dicetable.rules.model import RulePack
from dicetable.rules.schema import SPECS
from dicetable.table import Table
from dicetable.table import commands as t

from .rule_probe import moot


def _with(pack: RulePack, **values: object) -> RulePack:
    rules = dict(pack.rules)
    for key, value in values.items():
        rule_id = key.replace("__", ".")
        rules[rule_id] = dataclasses.replace(rules[rule_id], value=value)
    return RulePack(pack.id, pack.name, rules, pack.base)


@pytest.mark.parametrize("preset", PRESETS)
def test_table_positions_a_seat_past_the_last_position_does_not_exist(preset: str) -> None:
    pack = load_preset(preset)
    last = int(pack.value("table.positions"))
    table = Table.open(pack, "t", mode="bare")
    table.join("ann", last)
    with pytest.raises(InvalidInput) as refused:
        table.join("ben", last + 1)
    assert refused.value.rule == "table.positions"
    assert "ben" not in table.state.players
    wider = Table.open(_with(pack, table__positions=last + 1), "t", mode="bare")
    wider.join("ben", last + 1)
    assert wider.state.players["ben"].seat == last + 1


@pytest.mark.parametrize("preset", ["pa-craps", "in-craps"])
def test_dice_never_unattended_the_last_who_may_handle_the_dice_stays(preset: str) -> None:
    """205 CMR 146.46(6)(a) / 68 IAC 14-3-5(b): with dice at the table, the last person who
    may handle them (authority.dice: the boxperson) is not relieved; a house pack without
    the rule lets them go."""
    for attended in (True, False):
        pack = _with(load_preset(preset), dice__never_unattended=attended)
        table = Table.open(pack, "t", mode="live", actor="fl", role=Role.FLOORPERSON,
                           staff={"bx": Role.BOXPERSON, "sp": Role.STICKPERSON})
        table.execute(t.BringDice(actor="bx", role=Role.BOXPERSON,
                                  serials=("S1", "S2", "S3", "S4", "S5"), witness="fl"))
        relieve = t.RelieveStaff(actor="fl", role=Role.FLOORPERSON, person="bx",
                                 staff_role=Role.BOXPERSON)
        if attended:
            with pytest.raises(ProcedureViolation) as refused:
                table.execute(relieve)
            assert refused.value.rule == "dice.never_unattended"
            assert table.procedure.holds("bx", Role.BOXPERSON)
        else:
            table.execute(relieve)
            assert not table.procedure.holds("bx", Role.BOXPERSON)


def test_shooter_first_offer_a_mini_craps_table_counts_from_its_dealer() -> None:
    pack = load_preset("pa-mini-craps")
    for other in ("left-of-boxperson", "left-of-stickperson"):
        problems = validate_pack(_with(pack, shooter__first_offer=other).rules)
        assert [p for p, _ in problems] == ["shooter.first_offer"]


def test_winning_stays_up_names_only_families_the_game_has() -> None:
    pack = load_preset("pa-props-and-hops")
    problems = validate_pack(_with(pack, winning__stays_up=["place"]).rules)
    assert [p for p, _ in problems] == ["winning.stays_up"]


def test_read_when_a_flat_odds_multiple_is_read_only_under_flat_odds() -> None:
    assert SPECS["odds.limit.multiple"].when == ("odds.limit.mode", "flat")
    assert SPECS["paytable.horn.single"].when == ("paytable.horn.form", "single")


def test_payout_unit_is_moot_only_where_every_payout_is_whole() -> None:
    """The probe excuses payout.unit / payout.inexact only where it checks the reason."""
    assert moot(load_preset("pa-props-and-hops"), "payout.unit")
    for preset in ("pa-craps", "pa-mini-craps", "in-craps"):
        assert moot(load_preset(preset), "payout.unit") is None
        assert moot(load_preset(preset), "payout.inexact") is None


def test_rules_show_says_when_a_rule_is_read_only_under_another() -> None:
    import json

    from typer.testing import CliRunner

    from dicetable.cli.main import app

    out = CliRunner().invoke(app, ["rules", "show", "pa-craps", "--json"])
    assert out.exit_code == 0
    rules = json.loads(out.stdout)["rules"]
    assert rules["odds.limit.multiple"]["read_when"] == {"odds.limit.mode": "flat"}
