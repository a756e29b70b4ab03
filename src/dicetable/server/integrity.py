"""The server checks before it serves (spec/standards.md MEM-2, MEM-3, RES-2, RES-3).

At start-up, before a request is taken, and then periodically, every stream is verified: each
table's keyed chain and recorded head, every other stream (accounts, staff, faults, kept
answers), and the signed checkpoints when a checkpoint file is kept. A table whose log fails
is put in a locked fault state: it is not loaded (a forged balance is never served), a
``FaultRaised`` event goes into the ``faults:floor`` stream, and the pit console lists it.
It stays locked - also across restarts, even once the log verifies again - until a pit boss
or shift manager clears it with an authorised, recorded command, which verifies the log once
more first.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from dicetable.core.errors import (
    DicetableError,
    ProcedureViolation,
    RoleNotPermitted,
    StaleVersion,
)
from dicetable.core.roles import Role
from dicetable.store import fault_stream
from dicetable.store.audit import verify_table
from dicetable.store.base import EventStore

log = logging.getLogger(__name__)

FAULTS = fault_stream.STREAM
"""The stream of fault records (raised and cleared)."""
FAULT_CITATION = ("25 CFR 547.10 (critical memory error: stop play, record a fault event; "
                  "spec/standards.md MEM-3) [other-jurisdiction]")
CLEARERS = frozenset({Role.PIT_BOSS, Role.SHIFT_MANAGER})
"""Who may clear a fault (industry-default: a supervisor above the table)."""


class TableFaulted(DicetableError):
    """The table's log failed verification: locked until an authorised clear."""


class Faults:
    """The open faults: the fold of the store's ``faults:floor`` stream."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._state = fault_stream.FaultState()
        self._catch_up()

    @property
    def open(self) -> dict[str, dict[str, str]]:
        return self._state.open

    def _catch_up(self) -> None:
        for event in self.store.events(FAULTS, after=self._state.seq):
            fault_stream.apply(self._state, event)

    def _record(self, make: Callable[[int], fault_stream.FaultEvent]) -> None:
        for _ in range(50):  # another process recorded a fault meanwhile: fold it, again
            try:
                self.store.append(FAULTS, [make(self._state.seq + 1)],
                                  expected=self._state.seq, request="")
            except StaleVersion:
                self._catch_up()
                continue
            self._catch_up()
            return
        raise StaleVersion("the faults stream is changing too fast", rule="store.sequence")

    def raise_fault(self, table: str, what: str, detail: str, at: str) -> None:
        if table in self.open:
            return
        self._record(lambda seq: fault_stream.FaultRaised(seq=seq, at=at, subject=table,
                                                          what=what, detail=detail))
        log.error("integrity fault on %s: %s - %s", table, what, detail)

    def clear(self, table: str, by: str, role: str, reason: str, at: str) -> None:
        self._record(lambda seq: fault_stream.FaultCleared(seq=seq, at=at, actor=by,
                                                           subject=table, by_role=role,
                                                           reason=reason))

    def refuse(self, table: str) -> None:
        fault = self.open.get(table)
        if fault is not None:
            raise TableFaulted(f"{table} is locked: its log failed verification "
                               f"({fault['what']}: {fault['detail']}); a pit boss must clear "
                               "the fault", rule="integrity.fault", citation=FAULT_CITATION)


def table_problem(store: EventStore, table: str) -> tuple[str, str] | None:
    """(what, detail) of the table's first chain problem, or None when it verifies.

    The table may be in play: an append landing between reading its head and its rows looks
    like rows "added outside the store". Every append moves the head, so a problem found
    while the head stood still is real; one found while it moved is checked again.
    """
    for _ in range(5):
        before = store.head(table)
        report = verify_table(store, table, replay=False)
        if report.ok:
            return None
        if store.head(table) == before:
            break
    p = report.problems[0]
    return p.what, f"seq {p.seq}: {p.detail}"


class ClearFault(BaseModel):
    reason: str = Field(min_length=1, max_length=200)


def router() -> APIRouter:
    """The pit's fault routes (mounted by ``create_app``)."""
    from dicetable.server.app import session_account
    from dicetable.server.floor import Floor

    api = APIRouter(tags=["pit"])

    @api.get("/api/faults")
    def faults(request: Request) -> list[dict[str, Any]]:
        """Open integrity faults (tables and streams), for the pit console."""
        floor: Floor = request.app.state.floor
        who = session_account(request)
        _supervisor(floor, who.username)
        return list(floor.faults.open.values())

    @api.post("/api/tables/{table_id}/fault/clear")
    async def clear(table_id: str, body: ClearFault, request: Request) -> dict[str, Any]:
        """Clear a table's integrity fault once its log verifies again (recorded)."""
        floor: Floor = request.app.state.floor
        who = session_account(request)
        role = _supervisor(floor, who.username)
        await asyncio.to_thread(floor.clear_fault, table_id, who.username, role, body.reason)
        return {"status": f"{table_id} cleared", "faults": list(floor.faults.open.values())}

    return api


def _supervisor(floor: Any, username: str) -> Role:
    for info in floor.tables.values():
        held: set[Role] = set(info.table.procedure.staff.get(username, set()))
        for role in sorted(held & CLEARERS):
            return role
    raise RoleNotPermitted("only a pit boss or shift manager handles integrity faults",
                           rule="integrity.clear", citation="spec/standards.md SEC-5 "
                                                            "[industry-default]")


def still_failing(table: str, problem: tuple[str, str]) -> ProcedureViolation:
    return ProcedureViolation(f"{table} still fails verification ({problem[0]}: {problem[1]}); "
                              "restore its log before clearing", rule="integrity.fault",
                              citation=FAULT_CITATION)
