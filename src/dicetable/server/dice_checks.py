"""Whether the dice a console names would be taken, asked before anything is sent: the
dealer's "Bring dice" and the pit's "Remove expired dice" are lit on the answer.

``GET /api/tables/{table}/dice/check?serials=A1,A2&action=bring`` (or ``action=remove``)
decides the very command the button would send, for the caller in the role it would be sent
in, and changes nothing: bringing dice asks the custody ledger (through the table's dice
registry) whether custody issued them to this table and they are within their time limit.
The answer is ``{"ok", "action", "serials"}`` and, when refused, the refusal's ``message``,
``rule`` and ``citation``, the same the command would meet on submit.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query, Request

from dicetable.application.accounts import Account
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.server.floor import Floor
from dicetable.server.session_reads import Identify
from dicetable.table import commands as tcmd

MAX_SERIALS = 12
"""As many dice as the dice route takes at once."""
MAX_SERIAL = 64


def parse_serials(text: str) -> tuple[str, ...]:
    """Serials as typed or scanned: separated by commas, spaces or new lines.

    >>> parse_serials(" A1, A2  A3\\n")
    ('A1', 'A2', 'A3')
    """
    serials = tuple(s for s in re.split(r"[\s,]+", text) if s)
    if len(serials) > MAX_SERIALS or any(len(s) > MAX_SERIAL for s in serials):
        raise InvalidInput(f"at most {MAX_SERIALS} serials of {MAX_SERIAL} characters each",
                           rule="dice.serials")
    return serials


def check_dice(floor: Floor, table_id: str, who: Account, action: str,
               serials: tuple[str, ...]) -> dict[str, Any]:
    """The engine's answer to bringing (or removing) ``serials`` at ``table_id`` by ``who``."""
    kind: type[tcmd.BringDice] | type[tcmd.RemoveDice] = \
        tcmd.BringDice if action == "bring" else tcmd.RemoveDice
    info = floor.get(table_id)
    out: dict[str, Any] = {"ok": False, "action": action, "serials": list(serials)}
    try:
        role = floor.role_for(who, table_id, kind)
        with info.lock:
            floor.catch_up(table_id)
            info.table.verify(kind(actor=who.username, role=role, serials=serials))
    except DicetableError as refusal:
        out.update(message=refusal.message, rule=refusal.rule, citation=refusal.citation)
        return out
    out["ok"] = True
    return out


def install(app: FastAPI, floor: Floor, account: Identify) -> None:
    """Add the dice check route to ``app``."""

    @app.get("/api/tables/{table_id}/dice/check", tags=["tables"])
    def dice_check(table_id: str, request: Request,
                   serials: Annotated[str, Query(max_length=1000)] = "",
                   action: Literal["bring", "remove"] = "bring") -> dict[str, Any]:
        """Would the table take these dice (or their removal) from the caller now?"""
        return check_dice(floor, table_id, account(request), action, parse_serials(serials))
