"""The rules submission of each table's pack, served to the pit console (one document per
pack digest, worked out once: the exact odds of every wager take a moment)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from dicetable.core.errors import RoleNotPermitted
from dicetable.odds.submission import submission_html
from dicetable.server.accounts import Account, Kind
from dicetable.server.floor import Floor

_CACHE: dict[str, str] = {}
_LOCK = threading.Lock()


def document_for(floor: Floor, table_id: str) -> str:
    pack = floor.get(table_id).table.pack
    with _LOCK:
        html = _CACHE.get(pack.digest)
    if html is None:
        html = submission_html(pack)
        with _LOCK:
            _CACHE[pack.digest] = html
    return html


def install(app: FastAPI, floor: Floor, account: Callable[[Request], Account]) -> None:
    @app.get("/api/tables/{table_id}/rules-submission", tags=["pit"],
             response_class=HTMLResponse)
    def rules_submission(table_id: str, request: Request) -> HTMLResponse:
        """The rules submission of the pack this table runs (its digest is the table's)."""
        who = account(request)
        if who.kind is not Kind.STAFF:
            raise RoleNotPermitted("the rules submission is for staff", rule="authority.staff")
        return HTMLResponse(document_for(floor, table_id))
