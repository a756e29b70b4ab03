"""The permission matrix, exhaustively: every (role, command, game, jurisdiction).

Expectations come from the packs' cited ``authority.*`` rules (spec/regulations.md §6 for the
regulation entries), checked through the live engine; a refused command changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from dicetable.core.clock import FixedClock
from dicetable.core.dice import Roll
from dicetable.core.errors import RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.rules.loader import PRESETS, load_preset
from dicetable.table import Table
from dicetable.table import commands as t
from dicetable.table.procedure import ACTION_RULE, AUTOMATABLE, authorize

STAFF = [r for r in Role if r not in (Role.PLAYER, Role.SYSTEM)]


def actor_for(role: Role) -> str:
    return "pat" if role is Role.PLAYER else "auto" if role is Role.SYSTEM else f"x-{role.value}"


def sample(cls: type[g.Command], actor: str, role: Role) -> g.Command:
    kw: dict[str, Any] = {"actor": actor, "role": role}
    extra: dict[type[g.Command], dict[str, Any]] = {
        g.JoinTable: {"player": actor if role is Role.PLAYER else "newcomer", "seat": 7},
        g.LeaveTable: {"player": "pat"},
        g.BuyChips: {"player": "pat", "amount": 100},
        g.CashOut: {"player": "pat", "amount": 100},
        g.PlaceBet: {"player": "pat", "wager": "field", "amount": 100},
        g.ChangeBet: {"bet": "b1", "amount": 200},
        g.RemoveBet: {"bet": "b1"},
        g.SetWorking: {"bet": "b1", "working": False},
        g.RecordRoll: {"roll": Roll(3, 4)},
        g.CallNoRoll: {"grounds": ("improper-throw",)},
        g.OpenTable: {"table": "x", "pack": load_preset("pa-craps"), "mode": "live"},
        t.AssignStaff: {"person": "newbie", "staff_role": Role.DEALER},
        t.RelieveStaff: {"person": "x-dealer", "staff_role": Role.DEALER},
        t.BringDice: {"serials": ("N1", "N2"), "witness": "x-dealer"},
        t.RemoveDice: {"serials": ("D1",)},
        t.OfferDice: {"patron": "pat", "serials": ("D1", "D2", "D3", "D4", "D5")},
        t.SelectDice: {"serials": ("D1", "D2")},
        t.RemoveShooter: {"ground": "unreasonable-delay"},
        t.OfferShaker: {"player": "pat"},
        t.PlayerShake: {"times": 3},
    }
    return cls(**kw, **extra.get(cls, {}))


def live_table(preset: str, mode: str = "live") -> Table:
    table = Table.open(preset, "m", mode=mode, clock=FixedClock(), actor="x-floorperson")
    for role in STAFF:
        if role is not Role.FLOORPERSON:
            table.assign(actor_for(role), role, actor="x-floorperson", role=Role.FLOORPERSON)
    table.join("pat", 1)
    return table


COMMANDS = sorted(ACTION_RULE, key=lambda c: c.__name__)


def refused(table: Table, command: g.Command) -> RoleNotPermitted | None:
    try:
        authorize(table.state, command)
    except RoleNotPermitted as e:
        return e
    return None


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("mode", ["live", "electronic"])
def test_every_role_command_game_and_jurisdiction(preset: str, mode: str) -> None:
    table = live_table(preset, mode)
    pack = table.pack
    checked = 0
    for cls in COMMANDS:
        rule = ACTION_RULE[cls]
        listed = {Role(r) for r in pack.get(rule, [])}
        if mode == "electronic" and rule in AUTOMATABLE:
            listed.add(Role.SYSTEM)
        for role in Role:
            command = sample(cls, actor_for(role), role)
            if isinstance(command, g.OpenTable):
                listed = set(command.pack.roles("authority.open_table"))
            refusal = refused(table, command)
            assert (refusal is None) == (role in listed), (preset, mode, cls.__name__, role)
            assert refusal is None or refusal.rule, (cls.__name__, role)
            checked += 1
    assert checked == len(COMMANDS) * len(Role)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_refusal_by_role_changes_nothing(preset: str) -> None:
    table = live_table(preset)
    before = table.state.snapshot()
    refused = 0
    for cls in COMMANDS:
        for role in Role:
            command = sample(cls, actor_for(role), role)
            if role in table.pack.roles(ACTION_RULE[cls]):
                continue
            with pytest.raises(RoleNotPermitted):
                table.execute(command)
            refused += 1
    assert refused > 100
    assert table.state.snapshot() == before


def test_staff_must_be_assigned_to_the_role_they_claim() -> None:
    table = live_table("pa-craps")
    with pytest.raises(RoleNotPermitted, match="not assigned"):
        table.execute(g.CallNoRoll(actor="x-dealer", role=Role.STICKPERSON,
                                   grounds=("improper-throw",)))


def test_system_acts_only_at_an_electronic_table() -> None:
    live = live_table("pa-craps")
    with pytest.raises(RoleNotPermitted):
        live.execute(g.RecordRoll(actor="auto", role=Role.SYSTEM, roll=Roll(3, 4)))
    live.execute(t.Tick(actor="auto", role=Role.SYSTEM))  # the clock's tick is the system's
    with pytest.raises(RoleNotPermitted):
        live.execute(t.Tick(actor="x-dealer", role=Role.DEALER))


# Regulation entries of spec §6, spelled out (the exhaustive test above reads the packs).
SECTION_6 = [
    ("pa-craps", g.CallNoRoll, {Role.BOXPERSON, Role.STICKPERSON}, "623a.8(e)(1)"),
    ("pa-mini-craps", g.CallNoRoll, {Role.DEALER, Role.STICKPERSON, Role.FLOORPERSON},
     "623a.8(e)(2)"),
    ("in-craps", g.CallNoRoll, {Role.STICKPERSON}, "10-4-4(c)"),
    ("in-craps", t.OfferDice, {Role.STICKPERSON}, "10-4-3(b)"),
    ("in-craps", t.RemoveShooter, {Role.STICKPERSON, Role.BOXPERSON}, "10-4-3(d)(2)"),
    ("pa-props-and-hops", t.BringDice, {Role.FLOORPERSON}, "585.3(d)"),
    ("pa-props-and-hops", g.CloseBetting, {Role.DEALER}, "585.3(e)"),
    ("pa-props-and-hops", t.ShakeShaker, {Role.DEALER}, "585.3(c)-(f)"),
    ("pa-props-and-hops", t.PlayerShake, {Role.PLAYER}, "585.3(e)"),
    ("pa-props-and-hops", g.RecordRoll, {Role.DEALER}, "585.3(f)-(g)"),
    ("pa-props-and-hops", g.CollectLosers, {Role.DEALER}, "585.3(h)"),
]


@pytest.mark.parametrize(("preset", "cls", "roles", "section"), SECTION_6)
def test_spec_section_6_roles(preset: str, cls: type[g.Command], roles: set[Role],
                              section: str) -> None:
    pack = load_preset(preset)
    rule = ACTION_RULE[cls]
    assert pack.roles(rule) == roles
    assert section in pack.rule(rule).citation
    assert pack.rule(rule).status.value == "regulation"
