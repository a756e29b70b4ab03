"""The rules submission of each table's pack, served to the pit console (one document per
pack digest, site, operator and day, worked out once: the exact odds of every wager take a
moment).

The cover names the site whose dice custody serves the table's jurisdiction and the operator
given in ``DICETABLE_OPERATOR``; a name the floor does not know is left for the reader to
complete, never made up."""

from __future__ import annotations

import os
import threading

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from dicetable.application.accounts import Kind
from dicetable.core.errors import RoleNotPermitted
from dicetable.odds.submission import Cover, submission_html
from dicetable.server.floor import Floor
from dicetable.server.session_reads import Identify

_CACHE: dict[tuple[str, Cover], str] = {}
_LOCK = threading.Lock()


def cover_for(floor: Floor, table_id: str) -> Cover:
    """The cover of a table's submission: its site, the operator, the floor clock's date."""
    jurisdiction = str(floor.get(table_id).table.pack.get("jurisdiction", "")).upper()
    site = next((name for name, durable in sorted(floor.custody.sites.items())
                 if durable.ledger.pack.jurisdiction.upper() == jurisdiction), None)
    return Cover(os.environ.get("DICETABLE_OPERATOR") or None, site,
                 floor.clock.now().date())


def document_for(floor: Floor, table_id: str) -> str:
    pack = floor.get(table_id).table.pack
    key = (pack.digest, cover_for(floor, table_id))
    with _LOCK:
        html = _CACHE.get(key)
    if html is None:
        html = submission_html(pack, cover=key[1])
        with _LOCK:
            if len(_CACHE) > 64:  # one entry per pack, site and day: old days go
                _CACHE.clear()
            _CACHE[key] = html
    return html


def install(app: FastAPI, floor: Floor, account: Identify) -> None:
    @app.get("/api/tables/{table_id}/rules-submission", tags=["pit"],
             response_class=HTMLResponse)
    def rules_submission(table_id: str, request: Request) -> HTMLResponse:
        """The rules submission of the pack this table runs (its digest is the table's)."""
        who = account(request)
        if who.kind is not Kind.STAFF:
            raise RoleNotPermitted("the rules submission is for staff", rule="authority.staff")
        return HTMLResponse(document_for(floor, table_id))
