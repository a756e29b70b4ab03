"""Separation of duties (spec/standards.md SEC-5): who may assign whom, and who may not play.

The permission matrix (``authority``) says which roles may give a command; this module adds
what the matrix cannot express, read from the pack's ``duties.*`` rules:

- ``duties.no_self``: nobody assigns or relieves themselves;
- ``duties.rank`` with ``duties.assign_below_own``: a supervisor assigns or relieves only roles
  ranked below the role they act in (a floorperson cannot make anyone, herself least of all,
  a pit boss);
- ``duties.staff_no_wager``: a person working the table may not join it, buy chips or wager
  there, and a player at the table is not assigned to work it;
- ``duties.two_person``: dice brought to the table are witnessed by a second, distinct person
  working it (a house rule at Craps; at Props & Hops the regulation itself names the witness,
  the dealer, and the procedure checks it).

The opening roster (the staff named when the table is opened, before anything else happens)
comes from the shift's schedule and is not ranked against the opener; ``no_self`` and
``staff_no_wager`` still hold for it. A pack without these rules gets the safe defaults.
A refusal raises ``RoleNotPermitted`` naming the rule and its citation, and changes nothing.
"""

from __future__ import annotations

from dicetable.core.errors import RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.games.state import TableState
from dicetable.rules.model import RulePack
from dicetable.table import commands as tcmd
from dicetable.table.procedure_state import procedure

DEFAULT_RANK = (Role.DEALER, Role.STICKPERSON, Role.BOXPERSON, Role.FLOORPERSON,
                Role.PIT_BOSS, Role.SHIFT_MANAGER)
"""``duties.rank`` when a pack does not say (lowest first)."""

_PLAYS = (gcmd.JoinTable, gcmd.BuyChips, gcmd.PlaceBet)


def rank(pack: RulePack | None) -> tuple[Role, ...]:
    if pack is None or "duties.rank" not in pack:
        return DEFAULT_RANK
    return tuple(Role(r) for r in pack.value("duties.rank"))


def may_assign(pack: RulePack | None, actor_role: Role, target_role: Role) -> bool:
    """Whether someone acting as ``actor_role`` may assign or relieve a ``target_role``
    (the ranking half of the rule; the matrix and ``no_self`` are checked besides)."""
    if pack is not None and not pack.flag("duties.assign_below_own", True):
        return True
    order = rank(pack)
    if actor_role not in order or target_role not in order:
        return False
    return order.index(target_role) < order.index(actor_role)


def _flag(pack: RulePack | None, rule: str) -> bool:
    return True if pack is None else pack.flag(rule, True)


def _cite(pack: RulePack | None, rule: str) -> str:
    return pack.cite(rule) if pack is not None else ""


def _opening_roster(state: TableState, c: gcmd.Command) -> bool:
    """The opener naming the roster: only the opening and its staff assignments so far."""
    p = procedure(state)
    return c.actor == p.opener and not state.players \
        and state.seq == 1 + sum(len(roles) for roles in p.staff.values())


def check(state: TableState, command: gcmd.Command) -> None:
    """Raise ``RoleNotPermitted`` when ``command`` breaks a separation of duties."""
    pack = state.pack
    if isinstance(command, tcmd.AssignStaff | tcmd.RelieveStaff):
        _staff_change(state, pack, command)
    elif isinstance(command, _PLAYS):
        _plays(state, pack, command.player, command)
    elif isinstance(command, tcmd.BringDice):
        _witness(state, pack, command)


def _staff_change(state: TableState, pack: RulePack | None,
                  c: tcmd.AssignStaff | tcmd.RelieveStaff) -> None:
    verb = "assign" if isinstance(c, tcmd.AssignStaff) else "relieve"
    if c.person == c.actor and _flag(pack, "duties.no_self"):
        raise RoleNotPermitted(f"{c.actor} may not {verb} themselves ({c.staff_role})",
                               rule="duties.no_self", citation=_cite(pack, "duties.no_self"))
    if isinstance(c, tcmd.AssignStaff) and c.person in state.players \
            and _flag(pack, "duties.staff_no_wager"):
        raise RoleNotPermitted(f"{c.person} plays at this table and may not work it",
                               rule="duties.staff_no_wager",
                               citation=_cite(pack, "duties.staff_no_wager"))
    if c.role is Role.SYSTEM or (isinstance(c, tcmd.AssignStaff) and _opening_roster(state, c)):
        return
    if not may_assign(pack, c.role, c.staff_role):
        raise RoleNotPermitted(f"a {c.role} may not {verb} a {c.staff_role}: only a role "
                               "ranked above it may", rule="duties.rank",
                               citation=_cite(pack, "duties.rank"))


def _plays(state: TableState, pack: RulePack | None, player: str,
           c: gcmd.Command) -> None:
    if not _flag(pack, "duties.staff_no_wager"):
        return
    working = procedure(state).staff.get(player)
    if working:
        roles = ", ".join(sorted(r.value for r in working))
        raise RoleNotPermitted(f"{player} works this table ({roles}) and may not "
                               f"{type(c).__name__} here", rule="duties.staff_no_wager",
                               citation=_cite(pack, "duties.staff_no_wager"))


def _witness(state: TableState, pack: RulePack | None, c: tcmd.BringDice) -> None:
    if state.variant.has_shaker:
        # 58 Pa. Code 585.3(d) / 668a.3(d) name the witness themselves: the floorperson loads
        # the shaker in the presence of the dealer. The procedure holds that regulation
        # (``authority.dice``), and a house rule must not answer in its place.
        return
    # A pack stored before the rule existed (an old table's log) ran without it: replaying
    # that log must not refuse what it then allowed (tests/fixtures/v1_tables.db).
    needs = "dice" in (pack.get("duties.two_person", []) if pack is not None else ["dice"])
    if not needs:
        return
    if c.witness is not None and c.witness == c.actor:
        raise RoleNotPermitted(f"{c.actor} may not witness their own dice",
                               rule="duties.two_person",
                               citation=_cite(pack, "duties.two_person"))
    if c.witness is None or not procedure(state).staff.get(c.witness):
        raise RoleNotPermitted("dice come to the table before a second person working it: "
                               "name the witness", rule="duties.two_person",
                               citation=_cite(pack, "duties.two_person"))
