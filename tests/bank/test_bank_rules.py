"""Every table-bank rule carries its citation and status; a stand-in is never presented as PA
or IN text; the rules submission lists them; a house pack changes only stand-ins."""

from __future__ import annotations

import pytest

from dicetable.bank.rules import PRESETS, derive_bank_pack, load_bank_pack
from dicetable.core.errors import RulePackInvalid
from dicetable.odds.submission import submission_html
from dicetable.rules.loader import load_preset
from dicetable.rules.model import Status

STAND_INS = ("COMAR", "N.J.A.C.", "NYCRR", "LAC ", "Nevada", "OAC ", "spec/standards.md",
             "industry practice")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_bank_rule_is_cited_and_no_stand_in_is_presented_as_regulation(name: str) -> None:
    pack = load_bank_pack(name)
    home = "58 Pa. Code" if name == "pa" else "68 IAC"
    for rule in pack:
        assert rule.citation, rule.id
        assert rule.status in Status, rule.id
        if rule.status is Status.REGULATION:
            assert rule.citation.startswith(home) or home in rule.citation.split(";")[0], rule.id
            assert not any(rule.citation.startswith(s) for s in STAND_INS), rule.id
        if any(rule.citation.startswith(s) for s in STAND_INS):
            assert rule.status is not Status.REGULATION, rule.id
        if "not held" in rule.citation or "not read" in rule.citation:
            assert rule.status is not Status.REGULATION, rule.id


def test_the_nj_thresholds_are_rule_values_of_another_jurisdiction() -> None:
    pa = load_bank_pack("pa")
    for rid, cents in (("discrepancy.written_report_over", 25_00),
                       ("discrepancy.regulator_copy_at", 100_00)):
        assert pa.number(rid) == cents
        assert pa.rule(rid).status is Status.OTHER_JURISDICTION
    house = derive_bank_pack(pa, "house", {"discrepancy.regulator_copy_at": 50_00})
    assert house.number("discrepancy.regulator_copy_at") == 50_00
    with pytest.raises(RulePackInvalid):
        derive_bank_pack(pa, "house", {"drop.included": ["currency"]})  # 601a.9(c)(3) text


@pytest.mark.parametrize(("preset", "bank"), [("pa-craps", "pa"), ("in-craps", "in")])
def test_the_rules_submission_lists_every_bank_rule(preset: str, bank: str) -> None:
    html = submission_html(load_preset(preset))
    pack = load_bank_pack(bank)
    assert f'data-bank-digest="{pack.digest}"' in html
    for rule in pack:
        assert f'data-rule="{rule.id}"' in html
