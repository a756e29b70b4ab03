"""Time at the table: dice that have been out longer than the rules allow."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from dicetable.core.clock import over_limit
from dicetable.games.state import TableState


def expired(dice: Mapping[str, str], max_hours: int, now: str) -> bool:
    """True when the oldest of ``dice`` (serial -> ISO time it arrived) is past ``max_hours``.

    >>> expired({"D1": "2026-01-01T00:00:00+00:00"}, 24, "2026-01-02T00:00:01+00:00")
    True
    >>> expired({"D1": "2026-01-01T00:00:00+00:00"}, 24, "2026-01-02T00:00:00+00:00")
    False
    """
    if not dice or not now:
        return False
    oldest = min(datetime.fromisoformat(t) for t in dice.values())
    return over_limit(oldest, datetime.fromisoformat(now), max_hours)


def dice_limit(state: TableState) -> tuple[int, str]:
    """The table's ``dice.max_hours`` and its citation: the one limit the table and custody
    both judge its dice by (58 Pa. Code 585.3(b)(1) / 668a.3(b)(1) for a Props & Hops
    shaker; cited stand-ins for Craps)."""
    pack = state.rules()
    return int(pack.get("dice.max_hours", 24)), pack.cite("dice.max_hours")


def dice_expired(state: TableState, now: str, dice: Mapping[str, str] | None = None) -> bool:
    """True when any die at the table has been there longer than ``dice.max_hours``.

    58 Pa. Code 585.3(b)(1) for a Props & Hops shaker; cited stand-ins for Craps.
    """
    from dicetable.table.procedure_state import procedure

    if state.pack is None:
        return False
    held = procedure(state).dice if dice is None else dice
    return expired(held, int(state.pack.get("dice.max_hours", 24)), now)
