"""The console's buttons whose command needs more than who presses them: each is lit exactly
when the engine would take that command now from the member of staff looking at it (the
engine's ``can``; the probe changes nothing)."""

from __future__ import annotations

from collections.abc import Callable

from dicetable.core.dice import Roll
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.rules.model import THROW_FACTS
from dicetable.table import Table
from dicetable.table import commands as tcmd
from dicetable.table.procedure import next_shaker_holder, offer_order, procedure

PROBE_ROLL = Roll.parse("2-3")
"""Any valid faces: whether a throw may be recorded does not depend on what it shows."""


def console_probes(table: Table, actor: str,
                   role_for: Callable[[type[g.Command]], Role]) -> dict[str, bool]:
    """``call-no-roll`` (and for each ground ``call-no-roll:GROUND``, on the record, and
    ``call-no-roll-seen:GROUND``, seen by the caller), ``record-roll``, ``offer-dice``,
    ``offer-shaker``, ``remove-shooter``, ``remove-dice``, ``return-wagers``,
    ``pass-shaker``, and for each seated player ``sell-chips:PLAYER`` and
    ``cash-out:PLAYER``: may ``actor``?"""

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
    def no_roll_on(ground: str, seen: bool) -> Callable[[Role], g.Command | None]:
        observed = (ground,) if seen and ground in THROW_FACTS else ()
        return lambda role: g.CallNoRoll(actor=actor, role=role, grounds=(ground,),
                                         observed=observed)

    # each ground as the recorded throw carries it, and as the caller saw it (the
    # console's "I saw it"): the button is lit for the grounds ticked
    calls = {f"call-no-roll:{x}": can(g.CallNoRoll, no_roll_on(x, False)) for x in grounds}
    calls |= {f"call-no-roll-seen:{x}": can(g.CallNoRoll, no_roll_on(x, True))
              for x in grounds}
    out = {
        "call-no-roll": any(calls.values()), **calls,
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
    out.update(_chores_and_dice(table, actor, can))
    return out


PROBE_BUY = 100
"""One dollar: whether chips may be sold to a player does not depend on how many."""


def _chores_and_dice(table: Table, actor: str,
                     can: Callable[[type[g.Command], Callable[[Role], g.Command | None]], bool]
                     ) -> dict[str, bool]:
    """The console's other buttons, each probed with the very command it would send: the
    first listed ground for removing the shooter, the first die at the table, the chores
    (which take nothing), and cash-out of the player's whole balance."""
    state = table.state
    out: dict[str, bool] = {
        "return-wagers": can(g.ReturnWagers, lambda role: g.ReturnWagers(actor=actor,
                                                                         role=role)),
    }
    if state.mode != "live":
        return out
    p = procedure(state)
    grounds = [str(x) for x in state.rules().get("shooter.removal_grounds", None) or []]
    out["remove-shooter"] = bool(grounds) and can(tcmd.RemoveShooter, lambda role: (
        tcmd.RemoveShooter(actor=actor, role=role, ground=grounds[0])))
    dice = sorted(p.dice)
    out["remove-dice"] = bool(dice) and can(tcmd.RemoveDice, lambda role: (
        tcmd.RemoveDice(actor=actor, role=role, serials=(dice[0],))))
    if state.variant.has_shaker:
        out["pass-shaker"] = can(tcmd.PassShaker, lambda role: tcmd.PassShaker(
            actor=actor, role=role))
    for name, player in sorted(state.players.items()):
        out[f"sell-chips:{name}"] = can(g.BuyChips, _chips(g.BuyChips, actor, name, PROBE_BUY))
        out[f"cash-out:{name}"] = player.balance > 0 and can(
            g.CashOut, _chips(g.CashOut, actor, name, player.balance))
    return out


def _chips(kind: type[g.BuyChips] | type[g.CashOut], actor: str, player: str, amount: int
           ) -> Callable[[Role], g.Command | None]:
    return lambda role: kind(actor=actor, role=role, player=player, amount=amount)
