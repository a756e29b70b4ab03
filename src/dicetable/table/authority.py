"""Who may do what: the permission matrix is rule-pack data with citations (spec §6).

Each command maps to an action; the pack's ``authority.<action>`` rule (or, for the no roll,
``noroll.callers``) lists the roles that may give it. The actor must also hold that role at
this table: staff are assigned, players have joined, and ``system`` acts only at an electronic
table. A refusal raises ``RoleNotPermitted`` naming the rule, and changes nothing.
"""

from __future__ import annotations

from dicetable.core.errors import RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.games.engine import owner_of
from dicetable.games.state import TableState
from dicetable.table import commands as tcmd
from dicetable.table import procedure_state
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.procedure_state import procedure

ACTION_RULE: dict[type[gcmd.Command], str] = {
    e.command: e.authority for e in CATALOGUE if e.authority is not None}
"""Every command of the live table and the rule that says who may give it (the catalogue's)."""

AUTOMATABLE = frozenset(e.authority for e in CATALOGUE if e.automatable and e.authority)
"""What an electronic table's own automation (role ``system``) does in place of staff."""

_PLAYER_SUBJECT = (gcmd.JoinTable, gcmd.LeaveTable, gcmd.PlaceBet, gcmd.ChangeBet,
                   gcmd.RemoveBet, gcmd.SetWorking)


def rule_for(command: gcmd.Command) -> str | None:
    """The rule id that lists who may give ``command`` (None: the system's own tick)."""
    return CATALOGUE.of(command).authority


def allowed_roles(state: TableState, command: gcmd.Command) -> frozenset[Role]:
    rule = rule_for(command)
    if rule is None:
        return frozenset({Role.SYSTEM})
    roles = set(state.rules().roles(rule))
    if state.mode == "electronic" and rule in AUTOMATABLE:
        roles.add(Role.SYSTEM)
    return frozenset(roles)


def authorize(state: TableState, command: gcmd.Command) -> None:
    """Raise ``RoleNotPermitted`` unless ``command.role`` may give ``command`` here."""
    rule = rule_for(command)
    role = command.role
    pack = state.pack
    citation = pack.cite(rule) if pack is not None and rule else ""
    if isinstance(command, gcmd.OpenTable):
        if role not in command.pack.roles("authority.open_table"):
            raise RoleNotPermitted(f"a {role} may not open the table",
                                   rule="authority.open_table",
                                   citation=command.pack.cite("authority.open_table"))
        return
    if role not in allowed_roles(state, command):
        what = type(command).__name__
        where = f"{state.game} ({pack.id})" if pack is not None else state.game
        raise RoleNotPermitted(f"a {role} may not {what} at {where}",
                               rule=rule or "authority.system", citation=citation)
    _holds_role(state, command, rule or "authority.system", citation)
    procedure_state.check(state, command)


def _holds_role(state: TableState, command: gcmd.Command, rule: str, citation: str) -> None:
    role, actor = command.role, command.actor
    if role is Role.SYSTEM:
        if state.mode != "electronic" and not isinstance(command, tcmd.Tick):
            raise RoleNotPermitted("only an electronic table acts on its own",
                                   rule=rule, citation=citation)
        return
    if role is Role.PLAYER:
        subject = owner_of(state, command)
        if isinstance(command, gcmd.JoinTable):
            if actor != command.player:
                raise RoleNotPermitted(f"{actor} may not seat {command.player}",
                                       rule=rule, citation=citation)
            return
        if actor not in state.players:
            raise RoleNotPermitted(f"{actor} is not a player at this table", rule=rule,
                                   citation=citation)
        if isinstance(command, _PLAYER_SUBJECT) and subject is not None and subject != actor:
            raise RoleNotPermitted(f"{actor} may not act for {subject}", rule=rule,
                                   citation=citation)
        return
    if not procedure(state).holds(actor, role):
        raise RoleNotPermitted(f"{actor} is not assigned as {role} at this table",
                               rule="authority.staff", citation=state.rules().cite(
                                   "authority.staff"))
