"""Routes derived from the command catalogue (``dicetable.table.catalogue``).

``POST /api/tables/{id}/commands`` takes any catalogued command by name, with its fields as
JSON; each catalogue entry that names a ``route`` also gets its readable route
(``POST /api/tables/{id}/<route>``), built from the same entry. The role a command is given
in comes from the account's assignment at the table, never from the request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from pydantic import BaseModel, Field

from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.catalogue import Entry
from dicetable.server.accounts import Account, Kind
from dicetable.table.catalogue import CATALOGUE

Act = Callable[[str, Account, type[g.Command], Callable[[str, Role], g.Command]],
               Awaitable[dict[str, Any]]]
Session = Callable[[Request], Account]

NOT_BY_REQUEST = frozenset({g.OpenTable})
"""Commands no request gives: the floor opens tables."""


class CommandIn(BaseModel):
    command: str = Field(max_length=40, examples=["place-bet", "no-more-bets"])
    fields: dict[str, Any] = Field(default_factory=dict, max_length=16,
                                   examples=[{"wager": "pass", "amount": 1000}])


def _build(entry: Entry, who: Account, fields: dict[str, Any]
           ) -> Callable[[str, Role], g.Command]:
    if entry.command in NOT_BY_REQUEST:
        raise InvalidInput(f"{entry.name} is not given through the API", rule="api.request")
    data = dict(fields)
    if "player" in entry.fields and "player" not in data and who.kind is Kind.PLAYER:
        data["player"] = who.username  # a player acts for themselves
    return lambda actor, role: entry.from_json(actor, role, data)


def install(app: FastAPI, act: Act, session: Session) -> None:
    """Add the generic command route and the catalogue's readable per-command routes."""

    @app.post("/api/tables/{table_id}/commands", tags=["commands"])
    async def command(table_id: str, body: CommandIn, request: Request) -> dict[str, Any]:
        """Give any catalogued command: ``{"command": NAME, "fields": {...}}``
        (``GET /api/commands`` lists them)."""
        who = session(request)
        entry = CATALOGUE.named(body.command)
        return await act(table_id, who, entry.command, _build(entry, who, body.fields))

    @app.get("/api/commands", tags=["commands"])
    def commands() -> list[dict[str, Any]]:
        """The command catalogue: name, fields, the rule naming who may give it, help."""
        return [{"command": e.name, "fields": list(e.fields), "authority": e.authority,
                 "verb": e.verb, "route": e.route, "help": e.help}
                for e in CATALOGUE if e.command not in NOT_BY_REQUEST]

    for entry in CATALOGUE:
        if entry.route is not None:
            _route(app, act, session, entry)


def _route(app: FastAPI, act: Act, session: Session, entry: Entry) -> None:
    async def endpoint(table_id: str, request: Request) -> dict[str, Any]:
        who = session(request)
        raw = await request.body()
        fields = await request.json() if raw.strip() else {}
        if not isinstance(fields, dict):
            raise InvalidInput("the body is a JSON object of the command's fields",
                               rule="api.request")
        return await act(table_id, who, entry.command, _build(entry, who, fields))

    endpoint.__name__ = entry.name.replace("-", "_")
    endpoint.__doc__ = entry.help
    app.post(f"/api/tables/{{table_id}}/{entry.route}", tags=list(entry.tags[:1]) or ["commands"],
             name=f"command_{endpoint.__name__}")(endpoint)
