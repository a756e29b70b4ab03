"""Every rule value is read (issue 10): for every configurable rule of every preset, a pack
with another legal value behaves differently, or the rule is declared informational.

The probe (``tests/rule_probe.py``) fingerprints a pack by its compiled wagers, its
permission matrix, a fixed walk over the game and seeded sessions in bare and live mode.
"""

from __future__ import annotations

import importlib

import pytest

from dicetable.games.packs import PRESETS, load_preset, validate_pack
from dicetable.rules.model import RulePack
from dicetable.rules.schema import SPECS

from .rule_probe import Fingerprint, base, changed_values, conditioned, derived, moot

NOT_YET_SHOWN: set[str] = {
    "noroll.automatic", "noroll.excluded_grounds", "noroll.grounds", "noroll.improper_callers",
    "shooter.dice_offered", "shooter.line_bet", "throw.line_bet_required"}
"""Rules the probe does not yet show changing behaviour. Each is PA or IN regulation text in
the PA and IN presets (so not configurable there); only the Crapless Craps house pack, which
follows that text by analogy as industry default, makes them configurable, and the probe's
walk does not yet call a no roll on each ground nor throw without a line bet."""

CASES = [(name, rule.id) for name in PRESETS for rule in sorted(load_preset(name),
                                                                  key=lambda r: r.id)
         if rule.configurable]
def _base(preset: str, pack: RulePack, rule_id: str) -> Fingerprint:
    when = SPECS[rule_id].when
    return base((preset, None if when is None else f"{when[0]}={when[1]}"), pack)


def _others(pack: RulePack, rule_id: str) -> tuple[list[object], list[object]]:
    """Other values for the rule: all the probe tries, and those the pack validates with."""
    tried = changed_values(pack.rule(rule_id))
    return tried, [v for v in tried if not validate_pack(derived(pack, rule_id, v).rules)]


def test_every_rule_id_names_the_code_that_reads_it() -> None:
    for rule_id, spec in SPECS.items():
        if spec.informational:
            continue
        module = importlib.import_module(spec.reads)  # the declared reader exists
        assert module.__file__ is not None, rule_id


@pytest.mark.parametrize(("preset", "rule_id"), CASES)
def test_changing_a_configurable_rule_changes_behaviour(preset: str, rule_id: str) -> None:
    spec = SPECS[rule_id]
    if spec.informational:
        return  # cited only; ``rules show`` marks it informational
    pack = conditioned(load_preset(preset), rule_id)  # read only under another rule's value
    assert not validate_pack(pack.rules)
    if moot(pack, rule_id) and rule_id.startswith(("menu.", "limits.")):
        return  # a wager family the game does not have: ``moot`` checks its reason
    tried, others = _others(pack, rule_id)
    if not tried:
        assert "expected one of" in (spec.check(object()) or "")
        assert len((spec.check(object()) or "").split(",")) == 1  # one legal value only
        return
    if not others:
        return  # the schema allows others, but none fits this game (validation says why)
    if rule_id in NOT_YET_SHOWN or moot(pack, rule_id):
        return  # the gap test below watches these; ``moot`` checks its reason
    seen = _base(preset, pack, rule_id).differs(Fingerprint(derived(pack, rule_id, others[0])))
    assert seen is not None, f"{preset}: changing {rule_id} to {others[0]!r} changed nothing"


def test_the_probe_gap_list_holds_only_rules_the_probe_does_not_show() -> None:
    """Once the probe shows one of NOT_YET_SHOWN in every preset, it must leave the list."""
    shown_everywhere = set(NOT_YET_SHOWN)
    for preset in PRESETS:
        for rule_id in NOT_YET_SHOWN:
            raw = load_preset(preset)
            if rule_id not in raw.rules or not raw.rule(rule_id).configurable:
                continue
            pack = conditioned(raw, rule_id)
            _, others = _others(pack, rule_id)
            if not others or _base(preset, pack, rule_id).differs(
                    Fingerprint(derived(pack, rule_id, others[0]))) is None:
                shown_everywhere.discard(rule_id)
    assert not shown_everywhere


def test_rules_show_says_which_code_reads_each_rule_and_which_are_informational() -> None:
    import json

    from typer.testing import CliRunner

    from dicetable.cli.main import app

    out = CliRunner().invoke(app, ["rules", "show", "pa-craps", "--json"])
    assert out.exit_code == 0
    rules = json.loads(out.stdout)["rules"]
    assert rules["settlement.order"]["informational"] is True
    assert rules["noroll.effect"]["read_by"] == "dicetable.games.engine"
    assert all(r["read_by"] or r["informational"] for r in rules.values())
