"""A call of "no roll" held against the throw it voids.

Every ground the regulations list for declaring a roll invalid is a condition of the throw:
"if one (1) or both dice come to rest on the rail" (68 IAC 10-4-4(c)(5)), "come to rest in the
dice cup ... or on one of the rails" (58 Pa. Code 623a.8(c)(4)), "if one die comes to rest on
top of the other" (585.3(g)). The call is valid when that condition occurred, so the record
must show it. dicetable decides, the same way for PA and IN:

- a ground that is a physical fact (``die-on-rail``, ``die-in-bowl`` ...) is accepted when the
  recorded throw carries that fact, or when the call itself records it as *observed*: then the
  log shows who saw it (the caller, the NoRollCalled event's actor);
- a ground the record contradicts is refused, observed or not: the uppermost face was
  indeterminable although both faces were read and the recorder noted no doubt; a patron
  other than the shooter threw, although the recorded thrower is the shooter; no line bet,
  although the shooter has one;
- judgements that are not physical facts (``cheating``, ``improper-throw``) need no fact;
  who may make them is the pack's ``noroll.improper_callers``.

Refusals name ``noroll.grounds`` and its citation: the list of grounds is where the text says
each one is a condition of the throw.
"""

from __future__ import annotations

from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.games.state import TableState
from dicetable.rules.model import THROW_FACTS, expand_facts

LINE_BETS = ("pass", "dontpass")


def held_against_throw(state: TableState, c: gcmd.CallNoRoll,
                       thrown: gev.DiceRolled | None, shooter: str | None) -> None:
    """Raise unless every ground of ``c`` is on the record of ``thrown`` (or observed by the
    caller), and none is contradicted by it; ``shooter`` is the table's shooter now."""
    if thrown is None:
        return
    pack = state.rules()
    cite = pack.cite("noroll.grounds")
    unknown = [f for f in c.observed if f not in THROW_FACTS]
    if unknown:
        raise InvalidInput(f"unknown throw facts: {', '.join(unknown)}", rule="throw.facts")
    recorded = expand_facts(thrown.facts)
    seen = expand_facts(c.observed)
    throw = str(thrown.roll) if thrown.roll is not None else "unreadable"
    for ground in dict.fromkeys((*c.grounds, *c.observed)):
        if ground in recorded:
            continue                    # the recorder put it on the record with the throw
        contradiction = _contradicted(state, ground, thrown, shooter)
        if contradiction:
            raise ProcedureViolation(f"{ground}: the recorded throw contradicts it "
                                     f"({contradiction})", rule="noroll.grounds",
                                     citation=cite)
    for ground in c.grounds:
        if ground in THROW_FACTS and ground not in recorded and ground not in seen:
            facts = ", ".join(thrown.facts) or "no physical facts"
            raise ProcedureViolation(
                f"{ground}: the recorded throw ({throw}, {facts}) does not show it; a call "
                f"on it records what was seen (observed={ground})", rule="noroll.grounds",
                citation=cite)


def _contradicted(state: TableState, ground: str, thrown: gev.DiceRolled,
                  shooter: str | None) -> str:
    """What in the record contradicts ``ground``; empty when nothing does."""
    if ground == "top-face-indeterminable" and thrown.roll is not None:
        return f"both uppermost faces were read: {thrown.roll}"
    if ground == "thrown-by-non-shooter" and thrown.thrower is not None \
            and thrown.thrower == shooter:
        return f"the recorded thrower is the shooter, {shooter}"
    if ground == "no-line-bet" and shooter is not None \
            and any(b.wager in LINE_BETS for b in state.bets_of(shooter)):
        return f"the shooter {shooter} has a pass or don't pass bet"
    return ""
