"""The pit's integrity-fault routes: list the open faults, clear a table's (``integrity``)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from dicetable.application.integrity import CLEARERS
from dicetable.core.errors import RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.server.floor import Floor
from dicetable.server.session_reads import Identify


class ClearFault(BaseModel):
    reason: str = Field(min_length=1, max_length=200)


def router(account: Identify) -> APIRouter:
    """The pit's fault routes (mounted by ``create_app``, which gives the session's account)."""
    api = APIRouter(tags=["pit"])

    @api.get("/api/faults")
    def faults(request: Request) -> list[dict[str, Any]]:
        """Open integrity faults (tables and streams), for the pit console."""
        floor: Floor = request.app.state.floor
        who = account(request)
        _supervisor(floor, who.username)
        return list(floor.faults.open.values())

    @api.post("/api/tables/{table_id}/fault/clear")
    async def clear(table_id: str, body: ClearFault, request: Request) -> dict[str, Any]:
        """Clear a table's integrity fault once the whole log verifies again - the chain,
        the checkpoints, the adjudication, the head this server last saw (recorded); else
        409 naming what still fails."""
        floor: Floor = request.app.state.floor
        who = await account.awaited(request)
        role = _supervisor(floor, who.username)
        await asyncio.to_thread(floor.clear_fault, table_id, who.username, role, body.reason)
        return {"status": f"{table_id} cleared", "faults": list(floor.faults.open.values())}

    return api


def _supervisor(floor: Floor, username: str) -> Role:
    for info in floor.tables.values():
        held: set[Role] = set(info.table.procedure.staff.get(username, set()))
        for role in sorted(held & CLEARERS):
            return role
    raise RoleNotPermitted("only a pit boss or shift manager handles integrity faults",
                           rule="integrity.clear", citation="spec/standards.md SEC-5 "
                                                            "[industry-default]")
