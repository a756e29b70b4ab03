"""Custody rule packs: every rule cited with a status; stand-ins never pass for PA/IN text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.custody.rules import SCHEMA, derive_custody_pack, load_custody_pack
from dicetable.rules.model import Status

OWN_TEXT = {"pa": "58 Pa. Code", "in": "68 IAC"}


@pytest.mark.parametrize("jurisdiction", ["pa", "in"])
def test_every_custody_rule_has_a_value_a_citation_and_a_status(jurisdiction: str) -> None:
    pack = load_custody_pack(jurisdiction)
    assert set(pack.rules) == set(SCHEMA)
    for rule in pack:
        assert rule.citation.strip()
        assert isinstance(rule.status, Status)


@pytest.mark.parametrize("jurisdiction", ["pa", "in"])
def test_regulation_status_only_for_the_jurisdictions_own_text(jurisdiction: str) -> None:
    pack = load_custody_pack(jurisdiction)
    for rule in pack:
        if rule.status is Status.REGULATION:
            assert rule.citation.startswith(OWN_TEXT[jurisdiction]), rule
            assert "standing in" not in rule.citation
            assert "by analogy" not in rule.citation


def test_pa_603a_13_unknown_provisions_are_stand_ins() -> None:
    pa = load_custody_pack("pa")
    for rule_id in ("inspection.roles", "dice.size.minimum_in", "cancellation.min_hole_in",
                    "inventory.interval_months", "removal.tamper_roles"):
        assert pa.rule(rule_id).status is not Status.REGULATION, rule_id
    for rule_id in ("receipt.roles", "storage.keys", "storage.source_only", "issue.day_roles",
                    "play.shaker_loader"):
        assert pa.rule(rule_id).status is Status.REGULATION, rule_id


def test_a_house_pack_changes_stand_ins_only(tmp_path: Path) -> None:
    pa = load_custody_pack("pa")
    house = derive_custody_pack(pa, "river", {"inventory.interval_months": 2,
                                              "storage.areas": ["vault-a", "vault-b"]})
    assert house.number("inventory.interval_months") == 2
    assert "house rule of river" in house.rule("inventory.interval_months").citation
    with pytest.raises(RulePackInvalid) as info:
        derive_custody_pack(pa, "bad", {"storage.keys": {}, "inventory.interval_months": 0,
                                        "no.such.rule": 1})
    assert {p[0] for p in info.value.problems} == {"storage.keys", "inventory.interval_months",
                                                   "no.such.rule"}
    with pytest.raises(RulePackInvalid):
        derive_custody_pack(pa, "liar", {"inventory.interval_months": {
            "value": 8, "citation": "made up", "status": "regulation"}})
    path = tmp_path / "house.json"
    path.write_text(json.dumps({"id": "river", "extends": "pa",
                                "overrides": {"inventory.interval_months": 2}}))
    assert load_custody_pack(path).number("inventory.interval_months") == 2
    with pytest.raises(InvalidInput):
        load_custody_pack("nowhere")
