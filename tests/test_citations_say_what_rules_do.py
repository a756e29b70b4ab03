"""Every citation names a section that, in spec/, says what the rule does.

The table of sections and their subjects is ``tests/fixtures/citation_subjects.toml`` (read by
``tests/citations.py``). Three sources are held against it: every rule of every preset pack and
custody pack; every refusal of the permission matrix (every role, command, game, jurisdiction
and mode); every refusal the rule probe's sessions meet.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from dicetable.core.errors import DicetableError, ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games.packs import PRESETS, load_preset
from dicetable.table import Table
from dicetable.table import commands as t
from dicetable.table.procedure import authorize

from . import rule_probe
from .citations import sections, table
from .test_permission_matrix import COMMANDS, actor_for, live_table, sample

CUSTODY_PACKS = sorted((Path(__file__).parents[1] / "src" / "dicetable" / "custody" / "packs")
                       .glob("*.json"))
STATUSES = ("regulation", "other-jurisdiction", "industry-default")


def _split(citation: str) -> tuple[str, str]:
    """'text [status]' -> (text, status)."""
    for status in STATUSES:
        if citation.endswith(f" [{status}]"):
            return citation.removesuffix(f" [{status}]"), status
    return citation, ""


@pytest.mark.parametrize("preset", PRESETS)
def test_every_rule_of_a_preset_cites_a_section_that_says_what_it_does(preset: str) -> None:
    problems = [p for rule in load_preset(preset)
                for p in table().problems(rule.id, rule.citation, rule.status.value)]
    assert problems == []


@pytest.mark.parametrize("path", CUSTODY_PACKS, ids=lambda p: p.stem)
def test_every_custody_rule_cites_a_section_that_says_what_it_does(path: Path) -> None:
    rules = json.loads(path.read_text(encoding="utf-8"))["rules"]
    problems = [p for rule_id, rule in rules.items()
                for p in table().problems(rule_id, rule["citation"], rule["status"],
                                          custody=True)]
    assert problems == []


def test_the_table_reads_each_form_a_citation_takes() -> None:
    assert sections("58 Pa. Code § 585.3(c)-(f), (i) (the dealer)") == [
        "PA 585.3(c)", "PA 585.3(d)", "PA 585.3(e)", "PA 585.3(f)", "PA 585.3(i)"]
    assert sections("68 IAC 14-3-8(a)(5),(b)(4),(b)(8)") == [
        "IN 14-3-8(a)(5)", "IN 14-3-8(b)(4)", "IN 14-3-8(b)(8)"]
    assert sections("68 IAC 14-3-8(b)(4),(8) name the person") == [
        "IN 14-3-8(b)(4)", "IN 14-3-8(b)(8)"]
    assert sections("COMAR 36.05.03.01(C)(8)-(9) (MD); France art. 55-7") == [
        "MD COMAR 36.05.03.01(C)(8)", "MD COMAR 36.05.03.01(C)(9)", "FR 55-7"]
    assert sections("Québec CQLR c S-13.1, r. 3, s. 95.17(1)-(2)") == [
        "QC 95.17(1)", "QC 95.17(2)"]
    assert sections("industry practice: seats at a Props & Hops table") == []


def test_a_citation_that_names_the_wrong_section_is_caught() -> None:
    # The defects this test was written for: a second person at the shaker cited to the
    # storage-room locks, and self-assignment cited to the opening counts and fills.
    assert table().problems("duties.two_person", "58 Pa. Code 603a.13(c)", "industry-default")
    assert table().problems("duties.no_self", "58 Pa. Code 465a.37-465a.38", "industry-default")
    assert table().problems("shooter.line_bet", "68 IAC 10-4-3(c)", "regulation") == []
    assert table().problems("noroll.grounds", "68 IAC 10-4-3(c)", "regulation")
    # A text not held is never the basis of a rule presented as regulation.
    assert table().problems("dice.max_hours", "58 Pa. Code § 623a.7", "regulation")
    # A stand-in is never presented as PA or IN regulation.
    assert table().problems("menu.field", "N.J.A.C. 13:69F-13.2(a)2", "regulation")


def test_every_listed_mention_is_still_made() -> None:
    """A mention (a section named to say what it does not provide) that no pack makes any
    more leaves the table, so the exceptions cannot quietly grow."""
    cited: list[tuple[str, str]] = [(r.id, k) for p in PRESETS for r in load_preset(p)
                                    for k in sections(r.citation)]
    for path in CUSTODY_PACKS:
        for rule_id, rule in json.loads(path.read_text(encoding="utf-8"))["rules"].items():
            cited += [(rule_id, k) for k in sections(rule["citation"])]
    for rule, section in table().mentions:
        assert any(table().mentioned(r, k) for r, k in cited if k == section), (rule, section)


def _refusal_problems(refusals: Sequence[DicetableError | rule_probe.Refusal]) -> list[str]:
    out: list[str] = []
    for e in refusals:
        if not e.citation:
            continue
        text, status = _split(e.citation)
        if e.rule.startswith("authority.") and e.rule not in table().topics:
            out.append(f"{e.rule}: no subject in the table")
            continue
        said = e.text if isinstance(e, rule_probe.Refusal) else str(e)
        out += [f"{said}: {p}" for p in table().problems(e.rule, text, status or "regulation")]
    return out


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("mode", ["live", "electronic"])
def test_every_refusal_of_the_permission_matrix_cites_what_refuses(preset: str,
                                                                   mode: str) -> None:
    live = live_table(preset, mode)
    refusals: list[DicetableError] = []
    for cls in COMMANDS:
        for role in Role:
            try:
                authorize(live.state, sample(cls, actor_for(role), role))
            except DicetableError as e:
                refusals.append(e)
    assert len(refusals) > 50
    assert _refusal_problems(refusals) == []


@pytest.mark.parametrize("preset", PRESETS)
def test_every_refusal_the_rule_probe_meets_cites_what_refuses(preset: str) -> None:
    """The probe's walks of the preset (the fingerprint the rule tests compare with, made
    once per test process) keep each refusal's rule, citation and text."""
    met = rule_probe.refusals(rule_probe.base((preset, None), load_preset(preset)))
    assert any(r.citation for r in met)
    assert _refusal_problems(met) == []


# -- the refusals the lab found citing the wrong text --------------------------------------------


def _props_and_hops() -> Table:
    return Table.open("pa-props-and-hops", "ph", mode="live", actor="pb",
                      role=Role.PIT_BOSS, staff={"fl": Role.FLOORPERSON, "dee": Role.DEALER})


def test_pa_585_3_d_the_floorperson_is_not_her_own_witness_at_the_shaker() -> None:
    """585.3(d) / 668a.3(d): the floorperson loads the shaker in the presence of the dealer.
    Naming herself as witness is refused under that regulation, not under a house rule."""
    table_ = _props_and_hops()
    before = table_.state.snapshot()
    with pytest.raises(ProcedureViolation) as refused:
        table_.execute(t.BringDice(actor="fl", role=Role.FLOORPERSON, serials=("P1", "P2"),
                                   witness="fl"))
    assert refused.value.rule == "authority.dice"
    assert "585.3(d)" in refused.value.citation
    assert "668a.3(d)" in refused.value.citation
    assert refused.value.citation.endswith("[regulation]")
    assert table_.state.snapshot() == before
    # Also when she holds the dealer's role herself: the dealer's presence is another's.
    table_.assign("fl", Role.DEALER, actor="pb", role=Role.PIT_BOSS)
    with pytest.raises(ProcedureViolation, match="another person") as again:
        table_.execute(t.BringDice(actor="fl", role=Role.FLOORPERSON, serials=("P1", "P2"),
                                   witness="fl"))
    assert "585.3(d)" in again.value.citation
    table_.execute(t.BringDice(actor="fl", role=Role.FLOORPERSON, serials=("P1", "P2"),
                               witness="dee"))


def test_pa_585_3_d_a_witness_other_than_the_dealer_is_refused_under_the_regulation() -> None:
    table_ = _props_and_hops()
    with pytest.raises(ProcedureViolation) as refused:
        table_.execute(t.BringDice(actor="fl", role=Role.FLOORPERSON, serials=("P1", "P2"),
                                   witness="stranger"))
    assert refused.value.rule == "authority.dice"
    assert "585.3(d)" in refused.value.citation


def test_sec_5_self_assignment_cites_the_segregation_standard_as_industry_default() -> None:
    for preset in PRESETS:
        rule = load_preset(preset).rule("duties.no_self")
        assert "SEC-5" in rule.citation
        assert "465a" not in rule.citation
        assert rule.status.value == "industry-default"
        table_ = Table.open(preset, "d", mode="live", actor="x", role=Role.FLOORPERSON)
        with pytest.raises(RoleNotPermitted) as refused:
            table_.assign("x", Role.PIT_BOSS, actor="x", role=Role.FLOORPERSON)
        assert refused.value.rule == "duties.no_self"
        assert "SEC-5" in refused.value.citation
        assert refused.value.citation.endswith("[industry-default]")
