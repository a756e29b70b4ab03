"""Expectations of table-script format version 2 (and ``expect alert`` of every version).

Who is offered the dice, who holds the shaker and how, whether and how the last roll was
voided (automatically or by whose call, on which grounds), rule-cited alerts of the table and
of custody, and where a die is in custody.
"""

from __future__ import annotations

import re

from dicetable.custody import events as cev
from dicetable.custody.model import DieState
from dicetable.games import events as gev
from dicetable.table import events as tev
from dicetable.table.script_v2 import Runner, ScriptTable, syntax_error


# -- expectations ------------------------------------------------------------------------------
def _kebab(kind: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", kind).lower()


CUSTODY_ALERTS = {cev.DiceOverdue: "dice-overdue", cev.InventoryOverdue: "inventory-overdue",
                  cev.InventoryDiscrepancyReported: "inventory-discrepancy",
                  cev.FairnessAlertRaised: "fairness-alert"}
"""The name each custody alert goes by in ``expect alert``."""


def alerts(runner: Runner) -> list[tuple[str, str]]:
    """Every alert raised so far, table and custody: (name, rule citation)."""
    found: list[tuple[str, str]] = []
    if runner.table is not None:
        found += [(e.name, e.rule) for e in runner.table.log if isinstance(e, tev.AlertRaised)]
    if runner.ext.custody is not None:
        found += [(CUSTODY_ALERTS.get(type(e), _kebab(e.kind)), e.rule)
                  for e in runner.ext.custody.log if e.alert]
    return found


def _voided(table: ScriptTable) -> gev.NoRollCalled | None:
    """The call or automatic void of the last roll, unless it was overturned since."""
    for e in reversed(table.log):
        if isinstance(e, tev.NoRollOverturned):
            return None
        if isinstance(e, gev.NoRollCalled):
            return e
        if isinstance(e, gev.DiceRolled):
            return None
    return None


def _expect_void(table: ScriptTable, args: list[str]) -> str | None:
    call = _voided(table)
    how = args[0]
    if how == "no":
        return None if call is None else f"the last roll was voided ({_show_void(call)})"
    if how not in ("automatic", "called"):
        raise syntax_error("expect void no | automatic [GROUND...] | called BY [GROUND...]")
    if call is None:
        return "the last roll was not voided"
    rest = args[1:]
    if how == "automatic":
        if not call.automatic:
            return f"the last roll was voided by a call ({_show_void(call)})"
    else:
        if call.automatic:
            return f"the last roll was voided automatically ({_show_void(call)})"
        if not rest:
            raise syntax_error("expect void called BY [GROUND...]")
        by, rest = rest[0], rest[1:]
        if call.actor != by:
            return f"the void was called by {call.actor}/{call.role.value}, not {by}"
    grounds, opts = [w for w in rest if "=" not in w], dict(w.split("=", 1) for w in rest
                                                             if "=" in w)
    if grounds and set(grounds) != set(call.grounds):
        return f"the grounds were {', '.join(call.grounds)}"
    seen = opts.get("observed")
    if seen is not None and set(seen.split(",")) - {""} != set(call.observed):
        return f"the facts observed with the call were {', '.join(call.observed) or 'none'}"
    return None


def _show_void(call: gev.NoRollCalled) -> str:
    how = "automatically" if call.automatic else f"called by {call.actor}"
    return f"{how} on {', '.join(call.grounds)}"


def _shaker_with(table: ScriptTable) -> str:
    p = table.procedure
    if p.shaker == "empty":
        return "none"
    return (p.shaker_holder or "none") if p.shaker == "offered" else "dealer"


def _shaker_state(table: ScriptTable) -> str:
    p = table.procedure
    return "lid-off" if p.lid_off else p.shaker


EXPECTATIONS = ("offered", "shaker-with", "shaker-state", "void", "alert", "no-alert", "die")
"""Expectations this module answers (``alert`` in every version; the rest from version 2)."""


def expect(runner: Runner, what: str, args: list[str]) -> str | None:
    """None when the expectation holds, else what differs."""
    table = runner.table
    assert table is not None
    if what != "alert":
        runner.ext.needs_v2(f"'expect {what}'")
    if what in ("alert", "no-alert"):
        name, cite = args[0], " ".join(args[1:])
        raised = alerts(runner)
        hits = [rule for n, rule in raised if n == name and cite in rule]
        if what == "no-alert":
            return None if not hits else f"{name} was raised ({hits[0]})"
        if hits:
            return None
        listing = "; ".join(f"{n} [{rule}]" for n, rule in raised) or "none"
        return f"no alert {name}{' citing ' + cite if cite else ''}; alerts: {listing}"
    if what == "offered":
        want = None if args[0] == "none" else args[0]
        got = table.procedure.offer_to
        return None if got == want else f"the dice are offered to {got or 'nobody'}"
    if what == "shaker-with":
        got = _shaker_with(table)
        return None if got == args[0] else f"the shaker is with {got}"
    if what == "shaker-state":
        got = _shaker_state(table)
        return None if got == args[0] else f"the shaker is {got}"
    if what == "void":
        return _expect_void(table, args)
    if what == "die":
        ledger = runner.ext.custody
        if ledger is None:
            raise syntax_error("'expect die' needs a 'custody' header line")
        record = ledger.state.dice.get(args[0])
        try:
            want_state = DieState(args[1])
        except ValueError:
            raise syntax_error(f"a die's state is one of {', '.join(s.value for s in DieState)}") \
                from None
        got = record.state.value if record else "not on record"
        return None if record is not None and record.state is want_state \
            else f"die {args[0]} is {got}"
    raise syntax_error(f"unknown expectation {what!r}")


