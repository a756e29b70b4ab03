"""SD ARSD 20:18:33:07 (``noroll.window``, other-jurisdiction in every preset): a no roll is
called on the roll just thrown, before anyone acts on its result. Once the first settlement
chore is recorded the roll stands, and a call is refused with the rule and its citation,
changing nothing: a no roll is never a second chance."""

from __future__ import annotations

import pytest

from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games.packs import PRESETS, load_preset
from dicetable.table import Table
from tests.conftest import funded


def _thrown(preset: str) -> tuple[Table, cmd.CallNoRoll]:
    """A table by hand (no chore automated) with a roll just thrown, and a lawful call."""
    pack = load_preset(preset)
    t = funded(preset, seated=True, automations=())
    if pack.game == "props-and-hops":
        t.bet("alice", "any7", 100)
        t.no_more_bets()
    else:
        t.bet("alice", "pass", 1000)
    t.roll("3-4")
    caller = Role(sorted(pack.roles("noroll.callers"))[0])
    ground = sorted(pack.get("noroll.grounds", []) or pack.get("noroll.automatic", []))[0]
    return t, cmd.CallNoRoll(actor="caller", role=caller, grounds=(ground,))


@pytest.mark.parametrize("preset", PRESETS)
def test_sd_20_18_33_07_the_window_is_a_cited_rule_of_every_preset(preset: str) -> None:
    rule = load_preset(preset).rule("noroll.window")
    assert rule.value == "before-settlement"
    assert rule.status == "other-jurisdiction"
    assert "20:18:33:07" in rule.citation


@pytest.mark.parametrize("preset", PRESETS)
def test_sd_20_18_33_07_a_call_before_settlement_is_taken(preset: str) -> None:
    t, call = _thrown(preset)
    assert t.can(call)
    assert next(e.kind for e in t.execute(call)) == "NoRollCalled"


@pytest.mark.parametrize("preset", PRESETS)
def test_sd_20_18_33_07_a_call_after_the_window_is_refused_with_its_citation(
        preset: str) -> None:
    t, call = _thrown(preset)
    t.execute(cmd.CollectLosers(actor="dealer", role=Role.DEALER))
    before = (len(t.log), t.state.phase, t.balance("alice"))
    assert not t.can(call)
    with pytest.raises(ProcedureViolation) as refused:
        t.execute(call)
    assert refused.value.rule == "noroll.window"
    assert refused.value.citation == load_preset(preset).cite("noroll.window")
    assert "20:18:33:07" in refused.value.citation
    assert "the roll stands" in str(refused.value)
    assert (len(t.log), t.state.phase, t.balance("alice")) == before


@pytest.mark.parametrize("preset", PRESETS)
def test_sd_20_18_33_07_no_call_without_a_roll_just_thrown(preset: str) -> None:
    t, call = _thrown(preset)
    t.settle()
    with pytest.raises(ProcedureViolation, match="no roll just thrown") as refused:
        t.execute(call)
    assert refused.value.citation == load_preset(preset).cite("noroll.window")
