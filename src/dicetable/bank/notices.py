"""Who must receive a bank notice (a count's discrepancy, a hold outside its band): the
names in the pack's ``discrepancy.notify`` turned into roles, and whether a copy is owed to
the regulator (465a.37(f) with its stand-ins COMAR 36.05.03.03F(1), N.J.A.C. 13:69D-1.21(e)).

>>> from dicetable.bank.rules import load_bank_pack
>>> roles, regulator = recipients(load_bank_pack("pa"), ("floorperson+", "security", "regulator"))
>>> sorted(r.value for r in roles)[:3], regulator
(['assistant-shift-manager', 'floorperson', 'pit-boss'], True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from dicetable.core.roles import Role

REGULATOR = "regulator"
REGULATOR_DESK = frozenset({Role.REVENUE_AUDITOR, Role.TABLE_GAMES_MANAGER})
"""The regulator's compliance representative has no account on a floor: the regulator's copy
waits in the outbox of accounting and table games management, who send it."""


class _Pack(Protocol):
    def expand(self, names: Iterable[str]) -> frozenset[Role]: ...


def recipients(pack: _Pack, notified: Iterable[str]) -> tuple[frozenset[Role], bool]:
    """(the roles told at once, whether the regulator gets a copy)."""
    names = list(notified)
    return pack.expand(n for n in names if n != REGULATOR), REGULATOR in names


def receives(pack: _Pack, notified: Iterable[str], roles: Iterable[Role]) -> str:
    """How an account holding ``roles`` receives the notice: "" (it does not), "told" (it is
    one of the people told at once) or "regulator-copy" (it files the regulator's copy)."""
    told, regulator = recipients(pack, notified)
    held = set(roles)
    if held & told:
        return "told"
    if regulator and held & REGULATOR_DESK:
        return "regulator-copy"
    return ""
