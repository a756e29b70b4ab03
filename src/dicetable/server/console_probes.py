"""The console's buttons whose command needs more than who presses them: each is lit exactly
when the engine would take that command now from the member of staff looking at it (the
engine's ``can``; the probe changes nothing)."""

from __future__ import annotations

from collections.abc import Callable

from dicetable.core.dice import Roll
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.table import Table
from dicetable.table import commands as tcmd
from dicetable.table.procedure_state import next_shaker_holder, offer_order, procedure

PROBE_ROLL = Roll.parse("2-3")
"""Any valid faces: whether a throw may be recorded does not depend on what it shows."""


def console_probes(table: Table, actor: str,
                   role_for: Callable[[type[g.Command]], Role]) -> dict[str, bool]:
    """``call-no-roll``, ``record-roll``, ``offer-dice``, ``offer-shaker``: may ``actor``?"""

    def can(kind: type[g.Command], build: Callable[[Role], g.Command | None]) -> bool:
        try:
            role = role_for(kind)
        except ValueError:  # not assigned to a role that gives it: nothing is offered
            return False
        command = build(role)
        return command is not None and table.can(command)

    state = table.state
    pack = state.rules()
    grounds = [str(x) for x in [*pack.get("noroll.grounds", []),
                                *pack.get("noroll.automatic", [])]]
    def no_roll_on(ground: str) -> Callable[[Role], g.Command | None]:
        return lambda role: g.CallNoRoll(actor=actor, role=role, grounds=(ground,))

    out = {
        "call-no-roll": any(can(g.CallNoRoll, no_roll_on(x)) for x in grounds),
        "record-roll": can(g.RecordRoll, lambda role: g.RecordRoll(
            actor=actor, role=role, roll=PROBE_ROLL)),
    }
    if state.mode == "live" and state.variant.has_shooter:
        order = offer_order(state)
        out["offer-dice"] = bool(order) and can(tcmd.OfferDice, lambda role: tcmd.OfferDice(
            actor=actor, role=role, patron=order[0]))
    if state.mode == "live" and state.variant.has_shaker:
        held = procedure(state).shaker_holder
        nxt = held or next_shaker_holder(state, None, first=True)
        out["offer-shaker"] = nxt is not None and can(tcmd.OfferShaker, lambda role: (
            tcmd.OfferShaker(actor=actor, role=role, player=nxt) if nxt else None))
    return out
