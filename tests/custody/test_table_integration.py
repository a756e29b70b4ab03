"""A live table asks the custody ledger about its dice: only dice issued to that table come to
it and are thrown (58 Pa. Code 603a.13(b): dice reach tables only from the approved storage;
68 IAC 14-3-7(a): inspected before they are put into play)."""

from __future__ import annotations

import pytest

from dicetable.core.clock import FixedClock
from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.custody.ledger import CustodyLedger
from dicetable.games.packs import derive_pack, load_preset
from dicetable.rules.model import RulePack
from dicetable.table import Table
from tests.custody.scenario import in_play, serials


def live(ledger_and_clock: tuple[CustodyLedger, FixedClock, tuple[str, ...]],
         pack: RulePack | str = "pa-craps") -> Table:
    led, clock, _ = ledger_and_clock
    table = Table.open(pack, "craps-1", mode="live", clock=clock, actor="fran",
                       staff={"sam": Role.STICKPERSON, "bo": Role.BOXPERSON,
                              "dee": Role.DEALER}, dice_registry=led)
    table.join("alice", 9)
    table.buy_in("alice", 100_00)
    return table


def test_pa_603a_13_b_only_dice_issued_to_the_table_come_to_it() -> None:
    setup = in_play("pa", 5, "craps-1")
    table = live(setup)
    with pytest.raises(ProcedureViolation, match="not issued to craps-1"):
        table.bring_dice(*serials("X", 5))
    table.bring_dice(*setup[2])
    assert sorted(table.procedure.dice) == sorted(setup[2])


def test_dice_thrown_are_checked_against_one_time_limit() -> None:
    """The table's ``dice.max_hours`` is the one limit: custody judges the dice thrown at the
    table by it too, so a house pack's 48 hours is not cut short by another value at 24."""
    setup = in_play("pa", 5, "craps-1")
    _led, clock, dice = setup
    table = live(setup, derive_pack(load_preset("pa-craps"), "h", {"dice.max_hours": 48}))
    table.bring_dice(*dice)
    table.bet("alice", "pass", 10_00)
    table.new_shooter("alice")
    table.roll("3-4")
    table.settle()
    table.bet("alice", "pass", 10_00)
    clock.advance(hours=25)
    table.roll("3-4")
    table.settle()
    table.bet("alice", "pass", 10_00)
    clock.advance(hours=23, seconds=1)
    with pytest.raises(ProcedureViolation, match="48") as info:
        table.roll("3-4")
    assert info.value.rule == "dice.max_hours"
    assert table.state.rolls == 2
