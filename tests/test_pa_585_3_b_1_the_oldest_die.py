"""58 Pa. Code 585.3(b)(1) / 668a.3(b)(1): dice placed in the shaker may not remain on a table
for more than 24 hours. When one die of a pair is replaced, the clock of the other goes on: the
limit counts from the oldest die at the table, never from the newest."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dicetable.core.clock import FixedClock
from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody.model import PlayMode, RemovalReason
from dicetable.table import Table
from dicetable.table import commands as tcmd
from dicetable.table.procedure import expired
from tests.custody.scenario import (
    FLO,
    PAT,
    START,
    as_,
    inspect,
    new_ledger,
    serials,
    stock,
    to_table,
)

TICK = tcmd.Tick(actor="clock", role=Role.SYSTEM)
T0 = START.isoformat()


def _at(hours: float, seconds: int = 0) -> str:
    return (START + timedelta(hours=hours, seconds=seconds)).isoformat()


def test_pa_585_3_b_1_the_limit_counts_from_the_oldest_die_of_the_pair() -> None:
    pair = {"P1": T0, "P2": _at(20)}            # P2 replaced its partner's mate at 20 hours
    assert not expired(pair, 24, _at(24))
    assert expired(pair, 24, _at(24, 1))         # P1's 24 hours are up; P2 is only at 4
    assert not expired({"P2": _at(20)}, 24, _at(24, 1))


def test_pa_661a_4_d_one_die_replaced_at_a_craps_table_the_clock_keeps_the_oldest() -> None:
    """The table's own clock (PA Craps: 661a.4(d) by analogy, a stand-in): replacing one die
    does not restart the clock for the dice still in play."""
    clock = FixedClock(START)
    table = Table.open("pa-craps", "craps-1", mode="live", clock=clock, actor="fl",
                       role=Role.FLOORPERSON, staff={"bo": Role.BOXPERSON})
    table.bring_dice("A1", "A2", "A3", "A4", "A5", actor="bo", role=Role.BOXPERSON)
    clock.advance(hours=20)
    table.remove_dice("A1", reason="damaged", actor="bo", role=Role.BOXPERSON)
    table.bring_dice("N1", actor="bo", role=Role.BOXPERSON)
    clock.advance(hours=4)
    assert table.execute(TICK) == []             # A2-A5: exactly 24 hours
    clock.advance(seconds=1)
    alert = table.execute(TICK)
    assert [e.kind for e in alert] == ["AlertRaised"]
    assert table.blocked()
    assert "661a.4(d)" in alert[0].rule
    # Only when every die of the first set is gone does play resume.
    table.remove_dice("A2", "A3", "A4", actor="bo", role=Role.BOXPERSON)
    assert table.blocked()
    events = table.remove_dice("A5", actor="bo", role=Role.BOXPERSON)
    assert "PlayUnblocked" in [e.kind for e in events]


def test_pa_668a_3_b_1_a_replaced_die_does_not_restart_its_partners_clock() -> None:
    """The custody ledger, shaker dice: one die of the pair removed and replaced at 20 hours;
    at 24 hours and a second, the die that stayed is overdue and the table may not play it."""
    led, clock = new_ledger("pa")
    dice = serials("D", 3)
    stock(led, dice)
    inspect(led, dice, FLO)
    to_table(led, dice[:2], "props-1", PlayMode.SHAKER)
    clock.advance(hours=20)
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.FLAWED))
    to_table(led, dice[2:], "props-1", PlayMode.SHAKER)
    clock.advance(hours=4)
    led.check_dice_in_play("props-1", (dice[1], dice[2]))
    clock.advance(seconds=1)
    with pytest.raises(ProcedureViolation) as refused:
        led.check_dice_in_play("props-1", (dice[1], dice[2]))
    assert refused.value.rule == "dice.max_hours"
    assert dice[1] in str(refused.value)
    assert dice[2] not in str(refused.value)
    overdue = led.execute(cmd.CheckDeadlines(actor="sweep", role=Role.SYSTEM))
    assert [e.kind for e in overdue] == ["DiceOverdue"]
    assert "585.3(b)(1)" in overdue[0].rule

