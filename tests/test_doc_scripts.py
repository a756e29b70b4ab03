"""Every table script in ``docs/table-scripts.md`` runs, to its end, with every expectation met.

The scenarios are extracted from the page (each fenced block that starts with
``dicetable-script``) and named after the section heading above them, so a regulator's
scenario per seed section — 585.3, 623a.8, 10-4-3, 10-4-4 — is a test named after it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dicetable.application.scripts import run_script
from dicetable.custody.events import TamperEnvelopeSealed

DOC = Path(__file__).parent.parent / "docs" / "table-scripts.md"


def scenarios() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    heading = "intro"
    for part in re.split(r"(^#+ [^\n]*$|^```\n.*?^```$)", text, flags=re.M | re.S):
        if part.startswith("#"):
            heading = part
        elif part.startswith("```\ndicetable-script"):
            m = re.search(r"(58 Pa\. Code § |68 IAC )([\w.-]+)", heading)
            name = ("pa_" if m.group(1).startswith("58") else "in_") + \
                m.group(2).replace(".", "_").replace("-", "_") if m else "intro"
            found[name] = part.removeprefix("```\n").removesuffix("```")
    return found


SCENARIOS = scenarios()


def test_every_seed_section_has_a_documented_scenario() -> None:
    assert {"pa_585_3", "pa_623a_8", "in_10_4_3", "in_10_4_4"} <= set(SCENARIOS)


@pytest.mark.parametrize("section", sorted(SCENARIOS))
def test_documented_scenario_runs(section: str) -> None:
    result = run_script(SCENARIOS[section], DOC.parent)
    assert result.ok, f"{section}: {result.failure}"
    assert result.table is not None
    assert result.table.state.conserved()


def test_pa_585_3_the_documented_scenario_walks_dice_through_custody_and_back() -> None:
    result = run_script(SCENARIOS["pa_585_3"], DOC.parent)
    assert result.custody is not None
    kinds = [e.kind for e in result.custody.log]
    assert kinds.index("DiceIssuedToTable") < kinds.index("DiceCancelled")
    assert "DiceOverdue" in kinds


def test_in_10_4_3_the_documented_scenario_seals_a_tampered_die_for_the_agent() -> None:
    result = run_script(SCENARIOS["in_10_4_3"], DOC.parent)
    assert result.custody is not None
    sealed = [e for e in result.custody.log if isinstance(e, TamperEnvelopeSealed)]
    assert [p.name for p in sealed[0].table_staff] == ["fran", "stu", "bo", "dee"]
