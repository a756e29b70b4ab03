"""Player ratings on the floor (``dicetable.ratings``): the pit sees every rated player's exact
theo beside the industry formula's; a player sees only their own.

Each table's log is folded once and then only its new events (the fold keeps its place).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from dicetable.application.accounts import Account, Kind
from dicetable.bank.rules import PRESETS, BankPack, load_bank_pack
from dicetable.core.errors import RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.ratings.fold import Rating, RatingsFold
from dicetable.ratings.formula import GamingDay, IndustryFormula, site_day
from dicetable.ratings.report import report
from dicetable.server.floor import Floor
from dicetable.server.session_reads import Identify

RATERS = frozenset({Role.FLOORPERSON, Role.PIT_BOSS, Role.ASSISTANT_SHIFT_MANAGER,
                    Role.SHIFT_MANAGER, Role.TABLE_GAMES_MANAGER})
"""Who rates players: the floorperson and the ranks above (industry-default)."""
RATERS_CITATION = "spec/table-bank.md §8 (ratings entered by pit supervisors) [industry-default]"


class Folds:
    """One ratings fold per table, brought up to the table's stored head when asked."""

    def __init__(self) -> None:
        self._folds: dict[str, RatingsFold] = {}
        self._lock = threading.Lock()

    def ratings(self, floor: Floor, table_id: str, formula: IndustryFormula,
                day: GamingDay | None) -> list[Rating]:
        with self._lock:
            fold = self._folds.get(table_id)
            if fold is None or floor.store.head(table_id).seq < fold.seq:
                fold = self._folds[table_id] = RatingsFold()  # new, or its log was replaced
            fold.feed_all(floor.store.table_events(table_id, after=fold.seq))
            return fold.ratings(formula, day)


def router(account: Identify) -> APIRouter:
    """The ratings route (mounted by ``create_app``, which gives the session's account)."""
    api = APIRouter(tags=["pit"])
    folds = Folds()

    @api.get("/api/ratings")
    async def ratings(
            request: Request,
            table: Annotated[str | None, Query(max_length=64)] = None,
            day: Annotated[str | None, Query(max_length=10)] = None,
            decisions_per_hour: Annotated[int | None, Query(ge=1, le=10_000)] = None,
            edge: Annotated[str | None, Query(max_length=20)] = None) -> dict[str, Any]:
        """Every session's rating: time played, average bet, the exact theo of each wager
        made and the industry formula's theo (average bet x decisions per hour x hours x
        one edge: the site pack's ``ratings.industry.*`` values unless given here). ``day``:
        the sessions started in that gaming day, the bank's site gaming day (its time zone
        and start, the same day the pit's books count). Staff: a floorperson or above; a
        player: their own sessions only."""
        floor: Floor = request.app.state.floor
        who = await account.awaited(request)
        mine_only = _viewer(floor, who)
        tables = sorted(floor.tables) if table is None else [floor.get(table).table.id]
        sites = {t: site_pack(floor, t) for t in tables}
        first = sites[tables[0]] if tables else load_bank_pack("pa")
        formulas = {t: IndustryFormula.of_site(p.rules, decisions_per_hour, edge)
                    for t, p in sites.items()}
        days = {t: None if day is None else site_day(p, day) for t, p in sites.items()}

        def rate() -> list[Rating]:
            out: list[Rating] = []
            for table_id in tables:
                out += folds.ratings(floor, table_id, formulas[table_id], days[table_id])
            return out

        rows = await asyncio.to_thread(rate)
        if mine_only:
            rows = [r for r in rows if r.player == who.username]
        return report(rows, IndustryFormula.of_site(first.rules, decisions_per_hour, edge),
                      None if day is None else site_day(first, day))

    return api


def site_pack(floor: Floor, table_id: str) -> BankPack:
    """The site pack of the table's jurisdiction (its gaming day, its rating values)."""
    jurisdiction = floor.get(table_id).table.pack.jurisdiction.lower()
    return load_bank_pack(jurisdiction if jurisdiction in PRESETS else "pa")


def _viewer(floor: Floor, who: Account) -> bool:
    """True when ``who`` may see only their own ratings (a player); refuses other staff."""
    if who.kind is Kind.PLAYER:
        return True
    for table_id in floor.tables:
        if set(floor.roles_at(who, table_id)) & RATERS:
            return False
    raise RoleNotPermitted("player ratings are for the floorperson and above",
                           rule="ratings.viewers", citation=RATERS_CITATION)
