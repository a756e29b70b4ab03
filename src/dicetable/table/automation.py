"""Dealer automation as configuration (DESIGN.md lesson 3; pokerkit's automations).

A table has a set of automations. A live table automates none: the dealer collects, pays and
moves the puck, returns the wagers a no roll gives back and passes the shaker on, the
stickperson calls 'no more bets' and records the throw. The rules say *what* each chore
does (``settlement.order``, ``noroll.effect``, ``shaker.passes_on``); the automations say
*who* does it, and when. A bare table (the
engine for mathematicians and tests) automates the chores. An electronic table automates them
all, with a betting timer and a CSPRNG roll. Whoever performs a chore, a dealer asking or an
automation, the same command goes through the same engine: ``chores_left`` is the one place
that says which chore comes next.

>>> sorted(a.value for a in automations_for("bare"))
['collect-losers', 'complete-roll', 'pass-shaker', 'pay-winners', 'return-wagers']
>>> automations_for("live")
frozenset()
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import StrEnum

from dicetable.core.errors import InvalidInput
from dicetable.games import commands as cmd
from dicetable.games.state import Phase, TableState
from dicetable.rules.model import RulePack
from dicetable.table import commands as tcmd
from dicetable.table.procedure_state import KEY, procedure


class Automation(StrEnum):
    """What a table may do by itself."""

    COLLECT_LOSERS = "collect-losers"
    """Collect the losing wagers after a roll."""
    PAY_WINNERS = "pay-winners"
    """Pay the winning wagers."""
    COMPLETE_ROLL = "complete-roll"
    """The last chore: move the puck (Craps) or complete the round (Props & Hops)."""
    RETURN_WAGERS = "return-wagers"
    """Return the wagers after a no roll that gives them back (``noroll.effect``)."""
    PASS_SHAKER = "pass-shaker"
    """Pass the shaker to the next player after a round on ``shaker.passes_on``."""
    BETTING_TIMER = "betting-timer"
    """Close betting when the betting time is up (electronic tables)."""
    CSPRNG_ROLL = "csprng-roll"
    """Roll the dice by CSPRNG once betting is closed (electronic tables)."""


CHORES = (Automation.COLLECT_LOSERS, Automation.PAY_WINNERS, Automation.COMPLETE_ROLL)
"""The settlement chores, in the order ``settlement.order`` gives them."""
AROUND_THE_ROLL = (Automation.RETURN_WAGERS, Automation.PASS_SHAKER)
"""The chores a no roll or a round's total leaves (before table-script format 3 and event
schema ``TableOpened`` v3, every table did them at once)."""

_BY_MODE = {
    "live": frozenset[Automation](),
    "bare": frozenset(CHORES + AROUND_THE_ROLL),
    "electronic": frozenset(Automation),
}

BETTING_SECONDS = 20
"""An electronic table's default betting time (the floor may set another)."""


def automations_for(mode: str, pack: RulePack | None = None) -> frozenset[Automation]:
    """The automations a table in ``mode`` runs with; a pack that settles by itself
    (``settlement.automatic``) adds the chores at any table."""
    found = _BY_MODE.get(mode)
    if found is None:
        raise InvalidInput(f"no table mode {mode!r} (live, electronic or bare)",
                           rule="table.mode")
    if pack is not None and pack.flag("settlement.automatic"):
        found = found | frozenset(CHORES + AROUND_THE_ROLL)
    return found


def parse_automations(names: Iterable[str]) -> frozenset[Automation]:
    out = set()
    for name in names:
        try:
            out.add(Automation(name))
        except ValueError:
            raise InvalidInput(f"no automation {name!r} ({', '.join(a.value for a in Automation)})",
                               rule="table.automations") from None
    return frozenset(out)


def chores_left(state: TableState) -> list[tuple[Automation, type[cmd.Command]]]:
    """The dealer's chores still to do, in order: a no roll's wagers to return, the
    settlement of the roll on the table, the shaker to pass on."""
    if state.returns_due:
        return [(Automation.RETURN_WAGERS, cmd.ReturnWagers)]
    out: list[tuple[Automation, type[cmd.Command]]] = []
    pending = state.pending
    if state.phase is Phase.SETTLING and pending is not None:
        steps = ((Automation.COLLECT_LOSERS, cmd.CollectLosers),
                 (Automation.PAY_WINNERS, cmd.PayWinners),
                 (Automation.COMPLETE_ROLL, state.variant.final_chore))
        out += steps[pending.step:]
    if KEY in state.extra and procedure(state).pass_due:
        out.append((Automation.PASS_SHAKER, tcmd.PassShaker))
    return out


def settle_commands(state: TableState, actor: str, role: object) -> Iterator[cmd.Command]:
    """A dealer's 'settle': each chore due, given by ``actor`` in ``role``, asked for once the
    one before it is done (a round's completion can make the shaker's pass due), until none
    is left. The one settle: ``Table.settle``, the script's ``settle`` and the route's."""
    while due := chores_left(state):
        yield due[0][1](actor=actor, role=role)  # type: ignore[arg-type]
