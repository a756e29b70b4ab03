"""Separation of duties (spec/standards.md SEC-5; 58 Pa. Code 465a.37-38, 603a.13(c); 68 IAC
15-12-3/-4), exhaustively: every actor role x target role x table x jurisdiction, assigning and
relieving, oneself and another; staff may not play at a table they work."""

from __future__ import annotations

import functools
import itertools

import pytest

from dicetable.core.errors import DicetableError, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.packs import PRESETS, derive_pack, load_preset
from dicetable.table import Table
from dicetable.table import commands as t

STAFF = [r for r in Role if r not in (Role.PLAYER, Role.SYSTEM)]
RANK = ["dealer", "stickperson", "boxperson", "floorperson", "pit-boss", "shift-manager"]
"""The expected order, written independently of the packs."""


def _expected(pack_roles: frozenset[Role], actor: Role, target: Role, self_: bool
              ) -> str | None:
    """The rule that refuses the change, or None when it is allowed."""
    if actor not in pack_roles:
        return "authority.staff"
    if self_:
        return "duties.no_self"
    if actor.value not in RANK or target.value not in RANK \
            or RANK.index(target.value) >= RANK.index(actor.value):
        return "duties.rank"
    return None


def _open(preset: str, actor: Role, extra: dict[str, Role] | None = None) -> Table:
    staff = {"x": actor, **(extra or {})}
    return Table.open(preset, "d1", mode="live", actor="opener", role=Role.FLOORPERSON,
                      staff=staff)


@functools.cache
def _roster(preset: str, actor: Role) -> Table:
    """``x`` acts as ``actor`` and also holds every other role (for relieving oneself);
    ``r-<role>`` holds each role (for relieving another). Only ``decide`` is asked of it, so
    one table serves every case."""
    table = _open(preset, actor, {f"r-{r.value}": r for r in STAFF})
    for role in STAFF:
        if role is not actor:  # still the opening roster: the opener names it
            table.execute(t.AssignStaff(actor="opener", role=Role.FLOORPERSON, person="x",
                                        staff_role=role))
    return table


CASES = list(itertools.product(PRESETS, STAFF))


@pytest.mark.parametrize(("preset", "actor"), CASES, ids=[f"{p}-{a}" for p, a in CASES])
def test_sec_5_assign_and_relieve_matrix(preset: str, actor: Role) -> None:
    """Every target role, oneself and another, assigning and relieving: allowed exactly when
    the matrix lets the actor's role change staff, it is someone else, and the target ranks
    below the actor's role."""
    pack = load_preset(preset)
    assert pack.jurisdiction in ("PA", "IN")
    table = _roster(preset, actor)
    seq = table.state.seq
    for target, self_ in itertools.product(STAFF, (False, True)):
        expected = _expected(pack.roles("authority.staff"), actor, target, self_)
        assign = t.AssignStaff(actor="x", role=actor, person="x" if self_ else "new",
                               staff_role=target)
        relieve = t.RelieveStaff(actor="x", role=actor,
                                 person="x" if self_ else f"r-{target.value}",
                                 staff_role=target)
        for command in (assign, relieve):
            where = (type(command).__name__, target, "self" if self_ else "other")
            if expected is None:
                rule = ""
                try:
                    table.decide(command)
                except DicetableError as e:  # the dice may not be left unattended, ...
                    rule = e.rule
                assert not rule.startswith(("duties.", "authority.")), (where, rule)
                continue
            with pytest.raises(RoleNotPermitted) as refused:
                table.decide(command)
            assert refused.value.rule == expected, (where, refused.value)
            assert refused.value.citation, "every refusal names its citation"
    assert table.state.seq == seq, "deciding changes nothing"


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("role", STAFF)
def test_sec_5_staff_may_not_play_at_a_table_they_work(preset: str, role: Role) -> None:
    table = _open(preset, role, {"dee": Role.DEALER})
    before = table.state.seq
    for command in (g.JoinTable(actor="x", role=Role.PLAYER, player="x"),
                    g.BuyChips(actor="dee", role=Role.DEALER, player="x", amount=100_00),
                    g.PlaceBet(actor="x", role=Role.PLAYER, player="x", wager="pass",
                               amount=10_00)):
        with pytest.raises(RoleNotPermitted) as refused:
            table.execute(command)
        assert refused.value.rule in ("duties.staff_no_wager", "authority.wager",
                                      "authority.chips"), refused.value
    assert table.state.seq == before
    with pytest.raises(RoleNotPermitted, match="staff_no_wager"):
        table.execute(g.JoinTable(actor="x", role=Role.PLAYER, player="x"))


@pytest.mark.parametrize("preset", PRESETS)
def test_sec_5_a_dealer_may_not_sell_chips_to_herself(preset: str) -> None:
    table = _open(preset, Role.FLOORPERSON, {"dee": Role.DEALER})
    with pytest.raises(RoleNotPermitted, match="staff_no_wager"):
        table.execute(g.BuyChips(actor="dee", role=Role.DEALER, player="dee", amount=1))


@pytest.mark.parametrize("preset", PRESETS)
def test_sec_5_a_player_at_the_table_is_not_assigned_to_work_it(preset: str) -> None:
    table = _open(preset, Role.FLOORPERSON)
    table.execute(g.JoinTable(actor="ann", role=Role.PLAYER, player="ann"))
    with pytest.raises(RoleNotPermitted) as refused:
        table.execute(t.AssignStaff(actor="x", role=Role.FLOORPERSON, person="ann",
                                    staff_role=Role.DEALER))
    assert refused.value.rule == "duties.staff_no_wager"


def test_sec_5_staff_at_one_table_may_play_at_another() -> None:
    other = _open("pa-craps", Role.FLOORPERSON, {"dee": Role.DEALER})
    mine = Table.open("pa-craps", "d2", mode="live", actor="opener", staff={"ed": Role.DEALER})
    mine.execute(g.JoinTable(actor="x", role=Role.PLAYER, player="x"))
    assert "x" in mine.state.players
    assert "x" in other.procedure.staff


def test_sec_5_two_person_dice_when_the_house_pack_asks() -> None:
    pack = derive_pack(load_preset("pa-craps"), "house-2p", {"duties.two_person": ["dice"]},
                       "two-person dice")
    table = Table.open(pack, "d3", mode="live", actor="opener",
                       staff={"bo": Role.BOXPERSON, "sam": Role.STICKPERSON})
    for witness in (None, "bo", "stranger"):
        with pytest.raises(RoleNotPermitted) as refused:
            table.execute(t.BringDice(actor="bo", role=Role.BOXPERSON, serials=("A1", "A2"),
                                      witness=witness))
        assert refused.value.rule == "duties.two_person"
    table.execute(t.BringDice(actor="bo", role=Role.BOXPERSON, serials=("A1", "A2"),
                              witness="sam"))


def test_sec_5_a_house_pack_may_allow_equal_rank() -> None:
    pack = derive_pack(load_preset("pa-craps"), "house-flat",
                       {"duties.assign_below_own": False}, "flat")
    table = Table.open(pack, "d4", mode="live", actor="opener", staff={"x": Role.FLOORPERSON})
    table.execute(t.AssignStaff(actor="x", role=Role.FLOORPERSON, person="y",
                                staff_role=Role.PIT_BOSS))
    with pytest.raises(RoleNotPermitted, match="no_self"):
        table.execute(t.AssignStaff(actor="x", role=Role.FLOORPERSON, person="x",
                                    staff_role=Role.PIT_BOSS))
