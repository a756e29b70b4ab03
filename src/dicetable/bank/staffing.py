"""Staffing minimums and a floorperson's span of tables (58 Pa. Code § 465a.35(b)-(c)).

A stickperson is one of the three Craps dealers ((b)(3): "one of them acting as stickperson").

>>> from dicetable.bank.rules import load_bank_pack
>>> pa = load_bank_pack("pa")
>>> D, S, B = Role.DEALER, Role.STICKPERSON, Role.BOXPERSON
>>> check_crew(pa, "craps", [D, D, S, B])
>>> check_crew(pa, "craps", [D, S, B])
Traceback (most recent call last):
...
dicetable.core.errors.ProcedureViolation: a Craps table opens with 3 dealers (one as ...
>>> check_span(pa, [("craps", [D, D, S, B])] * 4)
Traceback (most recent call last):
...
dicetable.core.errors.ProcedureViolation: a floorperson may supervise 3 Craps tables; ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games.catalogue import variant_of


class _Pack(Protocol):
    def value(self, rule_id: str) -> object: ...

    def cite(self, rule_id: str) -> str: ...


CRAPS, MINI = "staffing.craps", "staffing.mini_craps"


def _rule(game: str) -> str:
    return variant_of(game).staffing_rule
def _counts(roles: Sequence[Role]) -> tuple[int, int, int]:
    sticks = sum(r is Role.STICKPERSON for r in roles)
    dealers = sum(r is Role.DEALER for r in roles) + sticks
    return dealers, sticks, sum(r is Role.BOXPERSON for r in roles)


def check_crew(pack: _Pack, game: str, roles: Sequence[Role]) -> None:
    """The crew a game needs while it runs (465a.35(b))."""
    rule = _rule(game)
    if not rule:
        return
    name = "a Craps table" if rule == CRAPS else "a Mini-Craps table"
    need = pack.value(rule)
    assert isinstance(need, dict)
    dealers, sticks, boxes = _counts(roles)
    if dealers < need["dealers"] or sticks < need["stickpersons"] \
            or boxes < need["boxpersons"]:
        wanted = f"{need['dealers']} dealer{'s' if need['dealers'] != 1 else ''}"
        if need["stickpersons"]:
            wanted += " (one as stickperson)"
        if need["boxpersons"]:
            wanted += f" and {need['boxpersons']} boxperson"
        raise ProcedureViolation(
            f"{name} opens with {wanted}; it has {dealers} dealer{'s' if dealers != 1 else ''}"
            f" ({sticks} as stickperson) and {boxes} boxperson{'s' if boxes != 1 else ''}",
            rule=rule, citation=pack.cite(rule))


def check_span(pack: _Pack, tables: Sequence[tuple[str, Sequence[Role]]]) -> None:
    """One floorperson's tables (465a.35(c)(5)-(8)): up to three Craps tables; or one Craps
    table and two other banking tables; one Mini-Craps table dealt by a dealer alone, or two
    with a dealer and a stickperson each."""
    span = pack.value("staffing.floor_span")
    assert isinstance(span, dict)
    craps = sum(_rule(g) == CRAPS for g, _ in tables)
    minis = [roles for g, roles in tables if _rule(g) == MINI]
    others = len(tables) - craps - len(minis)
    problem = ""
    if minis:
        alone = any(Role.STICKPERSON not in roles for roles in minis)
        limit = span["mini_craps_dealer_only"] if alone else span["mini_craps_with_stickperson"]
        if len(tables) > limit:
            problem = (f"a floorperson supervising Mini-Craps "
                       f"{'dealt by a dealer alone' if alone else 'with a stickperson'} may "
                       f"have {limit} such table{'s' if limit != 1 else ''}; this span has "
                       f"{len(tables)} tables")
    elif others and craps:
        if craps > 1 or others > span["craps_with_others"]:
            problem = (f"a floorperson may supervise one Craps table and "
                       f"{span['craps_with_others']} other banking tables; this span has "
                       f"{craps} Craps and {others} other")
    elif craps > span["craps"]:
        problem = (f"a floorperson may supervise {span['craps']} Craps tables; this span has "
                   f"{craps}")
    if problem:
        raise ProcedureViolation(problem, rule="staffing.floor_span",
                                 citation=pack.cite("staffing.floor_span"))
