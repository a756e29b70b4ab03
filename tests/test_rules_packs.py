"""Rule packs: cited data, validated at once, presets and house packs (DESIGN.md lesson 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.games.packs import PRESETS, derive_pack, load_pack, load_preset, pack_from_dict
from dicetable.rules.model import CODES, Status, family_of
from dicetable.rules.schema import SPECS

runner = CliRunner()

# The rules each preset may present as regulation, and the PA/IN sections that back them.
_PA_THROW = {"game": "623a", "jurisdiction": "58 Pa. Code", "table.description": "623a",
             "throw.line_bet_required": "623a.8(a)", "shooter.line_bet": "623a.8(a)",
             "noroll.automatic": "623a.8(b)", "noroll.grounds": "623a.8(c)(1)-(6)",
             "noroll.excluded_grounds": "623a.8(d)", "noroll.improper_callers": "623a.8(c)(6)"}
_PA_MONEY = {"live.buy_in": "603a.10(c)", "live.cash_out": "603a.10(d)",
             "colour_up.value": "465a.36(b)(4)"}
"""The player's money at a live table (``dicetable.table.player_money``): PA text; Indiana's
pack follows it as other-jurisdiction text, the Crapless house game as industry default."""
REGULATION = {
    "pa-craps": _PA_THROW | _PA_MONEY | {"noroll.callers": "623a.8(e)(1)"},
    "pa-mini-craps": _PA_THROW | _PA_MONEY | {"noroll.callers": "623a.8(e)(2)"},
    "in-craps": {
        "game": "10-4", "jurisdiction": "68 IAC", "table.description": "10-4",
        "throw.line_bet_required": "10-4-3(c)", "shooter.line_bet": "10-4-3(c)",
        "noroll.automatic": "10-4-4(b)", "noroll.callers": "10-4-4(c)",
        "noroll.grounds": "10-4-4(c)(1)-(11)", "noroll.excluded_grounds": "10-4-4",
        "noroll.improper_callers": "10-4-4(c)", "authority.offer_dice": "10-4-3(b)",
        "authority.select_dice": "10-4-3(b)", "authority.remove_shooter": "10-4-3(d)(2)",
        "shooter.dice_offered": "10-4-3(a)", "shooter.first_offer": "10-4-3(b)",
        "shooter.next_offer": "10-4-3(e)", "shooter.keeps_dice": "10-4-3(d)(1)",
        "shooter.may_relinquish": "10-4-3(d)", "shooter.removal_grounds": "10-4-3(d)(2)",
        "dice.never_unattended": "14-3-5(b)"},
    "pa-props-and-hops": {
        "game": "668a", "jurisdiction": "58 Pa. Code", "menu.double": "668a.2(d)",
        "wagering.medium": "668a.2(b)", "wagering.seated_only": "668a.2(c)",
        "wagering.before_shake": "668a.2(a)", "wagering.late_bets": "668a.2(a)",
        "noroll.automatic": "585.3(f)-(g)", "noroll.effect": "585.3(f)-(g)",
        "noroll.callers": "585.3(f)-(g)", "noroll.grounds": "585.3(f)-(g)",
        "settlement.order": "585.3(h)", "table.description": "668a",
        "authority.close_betting": "585.3(e)", "authority.dice": "585.3(d)",
        "authority.record_roll": "585.3(f)-(g)", "authority.settle": "585.3(h)",
        "authority.shaker": "585.3(c)-(f), (i)", "authority.shake": "585.3(e)",
        "dice.max_hours": "585.3(b)(1)", "dice.never_unattended": "585.3(c)",
        "shaker.min_shakes": "585.3(e)", "shaker.first_to": "585.3(e)",
        "shaker.passes_on": "585.3(j)"} | _PA_MONEY,
    "crapless-craps": {},  # a house game: every rule industry default, none presented as PA text
}


@pytest.mark.parametrize("name", PRESETS)
def test_every_rule_names_citation_and_status(name: str) -> None:
    pack = load_preset(name)
    for rule in pack:
        assert rule.citation.strip(), rule.id
        assert rule.status in Status
        assert rule.id in SPECS


@pytest.mark.parametrize("name", PRESETS)
def test_only_pa_in_text_is_presented_as_regulation(name: str) -> None:
    pack = load_preset(name)
    regulation = {r.id: r.citation for r in pack if r.status is Status.REGULATION}
    assert set(regulation) == set(REGULATION[name])
    for rule_id, section in REGULATION[name].items():
        assert section in regulation[rule_id]
    for rule in pack:
        if rule.status is not Status.REGULATION:
            assert rule.configurable
            # a stand-in never cites a PA/IN Craps payout section as its authority
            assert "623a.5" not in rule.citation.split("unverified")[0]


def test_pa_623a_8_e_no_roll_callers_differ_between_craps_and_mini_craps() -> None:
    assert load_preset("pa-craps").value("noroll.callers") == ["boxperson", "stickperson"]
    assert load_preset("pa-mini-craps").value("noroll.callers") == \
        ["dealer", "stickperson", "floorperson"]
    assert load_preset("in-craps").value("noroll.callers") == ["stickperson"]


def test_automatic_invalidity_differs_pa_vs_in() -> None:
    # PA 623a.8(b): off table, die on die; IN 10-4-4(b): off table, more than two dice.
    assert set(load_preset("pa-craps").value("noroll.automatic")) == {"die-off-table",
                                                                      "die-on-die"}
    assert set(load_preset("in-craps").value("noroll.automatic")) == {"die-off-table",
                                                                      "more-than-two-dice"}


def test_packs_hold_every_option_the_issue_names(pa: object) -> None:
    pack = load_preset("pa-craps")
    for rule_id in ("paytable.field.2", "paytable.field.12", "paytable.hard.4", "paytable.any7",
                    "paytable.hop.pair", "paytable.fire", "paytable.allsmall",
                    "paytable.alltall", "paytable.makeemall", "odds.limit.mode",
                    "odds.limit.multiple", "commission.buy.rate", "commission.buy.when",
                    "commission.buy.rounding", "commission.buy.unit", "commission.buy.minimum",
                    "commission.lay.when", "limits.default", "working.comeout.place",
                    "working.comeout.buy", "working.comeout.hard", "working.comeout.lay",
                    "working.player_may_toggle", "removal.line_after_point",
                    "removal.dont_after_point", "payout.inexact", "payout.unit"):
        assert rule_id in pack, rule_id
    menu = pack.menu
    for code in ("pass", "dontpass", "come", "dontcome", "odds", "put6", "place4", "lose10",
                 "buy4", "lay10", "big6", "big8", "field", "hard4", "any7", "anycraps", "two",
                 "three", "eleven", "twelve", "horn", "hornhigh12", "world", "ce", "fire",
                 "allsmall", "alltall", "makeemall"):
        assert code in menu, code
    assert sum(1 for c in menu if family_of(c) == "hop") == 21


def test_props_and_hops_menu() -> None:
    pack = load_preset("pa-props-and-hops")
    assert {f"double{n}" for n in (2, 4, 6, 8, 10, 12)} <= pack.menu
    assert pack.rule("menu.double").status is Status.REGULATION
    easy = {c for c in pack.menu if family_of(c) == "hop"}
    assert len(easy) == 15
    assert all(c[3] != c[5] for c in easy)
    assert {"field", "any7", "anydouble", "anycraps"} <= pack.menu
    for code in easy | {"field", "any7", "anydouble", "anycraps"}:
        assert pack.rule(f"menu.{family_of(code)}").status is Status.INDUSTRY_DEFAULT
    assert not {c for c in pack.menu if family_of(c) in ("line", "place", "fire")}


def test_house_pack_overrides_configurable_rules(pa: object) -> None:
    base = load_preset("pa-craps")
    house = derive_pack(base, "river", {"paytable.field.12": "3 to 1",
                                        "odds.limit.mode": "flat", "odds.limit.multiple": 10})
    assert house.value("paytable.field.12") == "3 to 1"
    rule = house.rule("paytable.field.12")
    assert rule.source == "river"
    assert "house rule of river" in rule.citation
    assert rule.status is base.rule("paytable.field.12").status
    assert house.base == "pa-craps"
    assert house.digest != base.digest
    assert base.value("paytable.field.12") == "2 to 1"  # the preset is untouched


def test_validation_reports_every_problem_at_once() -> None:
    base = load_preset("pa-craps")
    with pytest.raises(RulePackInvalid) as info:
        derive_pack(base, "bad", {
            "noroll.callers": ["dealer"],            # regulation: not configurable
            "paytable.place.6": "a lot",             # not odds
            "limits.default": {"minimum": 0, "maximum": 10, "unit": 1},
            "no.such.rule": {"value": 1, "citation": "x", "status": "industry-default"},
            "menu.prop": ["any7", "double4"],        # a Props & Hops wager in a Craps menu
        })
    rules = {rule for rule, _ in info.value.problems}
    assert {"noroll.callers", "paytable.place.6", "limits.default", "no.such.rule",
            "menu.prop"} <= rules


def test_house_pack_cannot_add_regulation_text() -> None:
    with pytest.raises(RulePackInvalid, match="cannot add rules as regulation"):
        derive_pack(load_preset("pa-craps"), "x", {
            "limits.place": {"value": {"minimum": 600, "maximum": 60000, "unit": 600},
                             "citation": "58 Pa. Code 623a.4", "status": "regulation"}})


def test_missing_paytable_for_offered_wager_is_reported() -> None:
    pack = load_preset("pa-props-and-hops")
    with pytest.raises(RulePackInvalid, match="paytable.hop.pair"):
        derive_pack(pack, "x", {"menu.hop": {"value": ["hop1-1", "hop1-2"],
                                             "citation": "house", "status": "industry-default"}})


def test_pack_round_trips_through_its_dict() -> None:
    for name in PRESETS:
        pack = load_preset(name)
        again = pack_from_dict(json.loads(json.dumps(pack.to_dict())))
        assert again.digest == pack.digest


def test_unknown_preset_is_a_clear_error() -> None:
    with pytest.raises(InvalidInput, match="presets"):
        load_pack("nj-craps")


def test_vocabulary_is_unique() -> None:
    assert len(CODES) == len(set(CODES))


def test_cli_rules_list_and_show() -> None:
    out = runner.invoke(app, ["rules", "list"])
    assert out.exit_code == 0
    assert "pa-props-and-hops" in out.output
    out = runner.invoke(app, ["rules", "show", "in-craps", "--json"])
    data = json.loads(out.output)
    assert data["rules"]["noroll.callers"]["status"] == "regulation"
    assert data["rules"]["noroll.callers"]["citation"].startswith("68 IAC 10-4-4(c)")
    assert data["rules"]["paytable.place.6"]["status"] == "other-jurisdiction"
    for rule in data["rules"].values():
        assert {"value", "citation", "status"} <= set(rule)
    out = runner.invoke(app, ["rules", "show", "pa-craps"])
    assert out.exit_code == 0
    assert "regulation" in out.output


def test_cli_rules_validate(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"id": "house", "extends": "pa-craps",
                                "overrides": {"paytable.field.12": "3 to 1"}}))
    out = runner.invoke(app, ["rules", "validate", str(good)])
    assert out.exit_code == 0
    assert "valid" in out.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"id": "house", "extends": "pa-craps", "colour": "red",
                               "overrides": {"noroll.callers": ["dealer"],
                                             "paytable.any7": "lots"}}))
    out = runner.invoke(app, ["rules", "validate", str(bad)])
    assert out.exit_code == 1
    assert "3 problem(s)" in " ".join(out.output.split())  # wrapped where the path is long
    for word in ("colour", "noroll.callers", "paytable.any7"):
        assert word in out.output
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    assert runner.invoke(app, ["rules", "validate", str(garbage)]).exit_code == 2
