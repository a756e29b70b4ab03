"""Issue 10, 'one command catalogue': the Table facade's methods are generated from the
catalogue; a command the catalogue lacks, a field its command lacks, or a missing field is
refused naming the rule, and changes nothing."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role
from dicetable.table import Table
from dicetable.table.catalogue import CATALOGUE


def _bare() -> Table:
    t = Table.open("pa-craps", "t", mode="bare")
    t.join("ann")
    t.buy_in("ann", 100_00)
    return t


def test_commands_every_declared_method_gives_its_command() -> None:
    t = _bare()
    bet = t.bet("ann", "pass", 10_00)
    assert t.state.bets[bet].player == "ann"
    events = t.roll("2-2")
    assert events[0].kind == "DiceRolled"
    assert t.point == 4
    assert inspect.signature(Table.bet).parameters["amount"].annotation == "int"


def test_commands_who_gives_it_defaults_to_whom_it_concerns_or_someone_allowed() -> None:
    t = _bare()
    bet = t.bet("ann", "field", 5_00)
    assert (t.log[-1].actor, t.log[-1].role) == ("ann", Role.PLAYER)
    t.remove(bet)  # the bet's owner takes it down
    assert (t.log[-1].actor, t.log[-1].role) == ("ann", Role.PLAYER)
    t.no_more_bets()
    assert t.log[-1].role is Role.DEALER


@pytest.mark.parametrize(("name", "fields", "says"), [
    ("frobnicate", {}, "no command"),
    ("place-bet", {"player": "ann", "wager": "pass", "amount": 500, "colour": "red"},
     "no field colour"),
    ("place-bet", {"player": "ann", "wager": "pass"}, "amount"),
])
def test_commands_a_bad_command_is_refused_and_changes_nothing(
        name: str, fields: dict[str, Any], says: str) -> None:
    t = _bare()
    before = list(t.log)
    with pytest.raises(InvalidInput, match=says) as refused:
        t.do(name, **fields)
    assert refused.value.rule == "commands"
    assert t.log == before


def test_commands_each_method_is_declared_by_its_catalogue_entry() -> None:
    named = {e.method.name: e.name for e in CATALOGUE if e.method is not None}
    assert named["bet"] == "place-bet"
    assert named["buy_in"] == "buy-chips"
    assert named["pass_shaker"] == "pass-shaker"
    for method in named:
        assert callable(getattr(Table, method))
