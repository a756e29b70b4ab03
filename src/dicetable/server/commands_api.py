"""Routes derived from the command catalogue (``dicetable.table.catalogue``).

``POST /api/tables/{id}/commands`` takes any catalogued command by name, with its fields as
JSON; each readable route the catalogue declares (``CATALOGUE.routes``: a path, a method, the
command or commands it gives, its body's fields and their limits) is registered here, its
request model built from those declarations so OpenAPI documents it. ``POST .../settle`` gives
the dealer's chores now due (``dicetable.table.table.settle_commands``). The role a
command is given in comes from the account's assignment at the table, never from the request.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator
from fractions import Fraction
from typing import Annotated, Any

from fastapi import FastAPI, Request
from pydantic import BaseModel, ConfigDict, create_model
from pydantic import Field as PydanticField

from dicetable.core.dice import Roll
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.events import type_hints
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.catalogue import MAX_ITEM_TEXT, MAX_ITEMS, MAX_TEXT, Entry, Field, Route
from dicetable.server.accounts import Account, Kind
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.table import Table, chores_left, settle_commands

Build = Callable[[str, Role], g.Command | Iterable[g.Command]]
Act = Callable[[str, Account, type[g.Command], Build], Awaitable[dict[str, Any]]]
Session = Callable[[Request], Account]
TableOf = Callable[[str], Table]

NOT_BY_REQUEST = frozenset({g.OpenTable})
"""Commands no request gives: the floor opens tables."""


class CommandIn(BaseModel):
    command: str = PydanticField(max_length=40, examples=["place-bet", "no-more-bets"])
    fields: dict[str, Any] = PydanticField(default_factory=dict, max_length=16,
                                           examples=[{"wager": "pass", "amount": 1000}])


def _build(entry: Entry, who: Account, fields: dict[str, Any]
           ) -> Callable[[str, Role], g.Command]:
    if entry.command in NOT_BY_REQUEST:
        raise InvalidInput(f"{entry.name} is not given through the API", rule="api.request")
    data = dict(fields)
    if "player" in entry.fields and "player" not in data and who.kind is Kind.PLAYER:
        data["player"] = who.username  # a player acts for themselves
    return lambda actor, role: entry.from_json(actor, role, data)


def install(app: FastAPI, act: Act, session: Session, table_of: TableOf) -> None:
    """Add the generic command route, the catalogue's readable routes and ``settle``."""

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
        routes = {name: r for r in CATALOGUE.routes for name in r.commands}
        return [{"command": e.name, "fields": list(e.fields), "authority": e.authority,
                 "verb": e.verb, "route": routes[e.name].path if e.name in routes else None,
                 "help": e.help}
                for e in CATALOGUE if e.command not in NOT_BY_REQUEST]

    @app.post("/api/tables/{table_id}/settle", tags=["dealer"])
    async def settle(table_id: str, request: Request) -> dict[str, Any]:
        """The dealer's chores now due, in order: a no roll's wagers returned, the losers
        collected, the winners paid, the roll completed, the shaker passed on."""
        who = session(request)

        def chores(a: str, r: Role) -> Iterator[g.Command]:
            state = table_of(table_id).state
            if not chores_left(state):
                raise ProcedureViolation("there is no roll to settle", rule="settlement.order")
            return settle_commands(state, a, r)

        return await act(table_id, who, g.CollectLosers, chores)

    for route in CATALOGUE.routes:
        _route(app, act, session, route)


# -- a readable route from its declaration ------------------------------------------------------
def _json_type(hint: Any) -> Any:
    """The JSON shape of a command field's type (rolls and fractions as text; each text of
    a list at most the catalogue's ``MAX_ITEM_TEXT``)."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    shapes: list[Any] = []
    for option in options:
        if option is type(None):
            shapes.append(type(None))
        elif typing.get_origin(option) is tuple:
            shapes.append(list[Annotated[str, PydanticField(max_length=MAX_ITEM_TEXT)]])
        elif option in (Roll, Fraction):
            shapes.append(str)
        else:
            shapes.append(option)
    return functools.reduce(lambda a, b: a | b, shapes)


def _command_default(entry: Entry, name: str) -> tuple[Any, ...]:
    for f in dataclasses.fields(entry.command):
        if f.name == name:
            if f.default is not dataclasses.MISSING:
                value = f.default
                return (list(value) if isinstance(value, tuple) else value,)
            return ()
    return ()


def _body_fields(route: Route, entries: list[Entry]) -> tuple[Field, ...]:
    if route.body is not None:
        return route.body
    return tuple(Field(name) for e in entries for name in e.fields)  # the command's own fields


def _model(route: Route, entries: list[Entry]) -> type[BaseModel] | None:
    fields = _body_fields(route, entries)
    if not fields:
        return None
    spec: dict[str, Any] = {}
    for f in fields:
        owner = next(e for e in entries if f.name in e.fields)
        shape = _json_type(type_hints(owner.command)[f.name])
        default = f.default or _command_default(owner, f.name)
        if not default and (f.optional or f.name in route.from_caller):
            default, shape = (None,), shape | None
        limits = {k: v for k in ("max_length", "min_length", "gt", "ge", "lt", "le")
                  if (v := getattr(f, k)) is not None}
        if "max_length" not in limits:  # every text and list is bounded (the catalogue's)
            bare = typing.get_args(shape) if isinstance(shape, types.UnionType) else (shape,)
            if str in bare:
                limits["max_length"] = MAX_TEXT
            elif any(typing.get_origin(b) is list for b in bare):
                limits["max_length"] = MAX_ITEMS
        info = PydanticField(*default, description=f.description or None,
                             examples=list(f.examples) or None, **limits)
        spec[f.key] = (shape, info)
    name = "".join(p.title() for p in route.commands[0].split("-")) + "In"
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="ignore"), **spec)
    return model


@dataclasses.dataclass(frozen=True)
class Declared:
    """A readable route as its declaration makes it: the request model and what a request
    gives. The framework's route and the bet fast path (``server.fast_route``) both answer
    through ``give``, so there is one implementation of each."""

    route: Route
    entries: tuple[Entry, ...]
    model: type[BaseModel] | None
    fields: tuple[Field, ...]

    async def give(self, act: Act, table_id: str, who: Account, body: BaseModel | None,
                   params: dict[str, Any]) -> dict[str, Any]:
        """Queue the command(s) a request with ``body`` and path ``params`` gives."""
        fields, route = self.fields, self.route
        given = body.model_dump(exclude_unset=False) if body is not None else {}
        data = {f.name: given[f.key] for f in fields
                if f.key in given and (given[f.key] is not None or not f.optional)}
        data |= params  # the path's own fields (``bets/{bet}``)
        for name in route.from_caller:
            if data.get(name) is None:
                data[name] = who.username  # a player acts for themselves
        entries = self.entries
        chosen = [e for e in entries if len(entries) == 1
                  or any(f.name in data for f in fields if f.name in e.fields)]
        if not chosen:
            raise InvalidInput(f"give {' or '.join(f.key for f in fields)}", rule="api.request")

        def build(actor: str, role: Role) -> list[g.Command]:
            return [e.from_json(actor, role, {k: v for k, v in data.items() if k in e.fields})
                    for e in chosen]

        def one_or_all(actor: str, role: Role) -> g.Command | list[g.Command]:
            built = build(actor, role)
            return built[0] if len(built) == 1 else built

        return await act(table_id, who, chosen[0].command, one_or_all)


@functools.cache
def declared(path: str, method: str = "POST") -> Declared:
    """The catalogue's route at ``path`` (``bets``), built once: one model object per route."""
    route = next((r for r in CATALOGUE.routes if r.path == path and r.method == method), None)
    if route is None:
        raise KeyError(f"{method} {path}")
    entries = tuple(CATALOGUE.named(n) for n in route.commands)
    return Declared(route, entries, _model(route, list(entries)),
                    _body_fields(route, list(entries)))


def _route(app: FastAPI, act: Act, session: Session, route: Route) -> None:
    spec = declared(route.path, route.method)
    entries, model = spec.entries, spec.model

    async def endpoint(request: Request, **params: Any) -> dict[str, Any]:
        who = session(request)
        table_id = params.pop("table_id")
        body = params.pop("body", None)
        return await spec.give(act, table_id, who, body, params)

    parameters = [inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY,
                                    annotation=Request),
                  inspect.Parameter("table_id", inspect.Parameter.KEYWORD_ONLY, annotation=str)]
    parameters += [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=str)
                   for p in route.path_fields]
    if model is not None:
        parameters.append(inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY,
                                            annotation=model | None, default=None))
    endpoint.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    endpoint.__name__ = "_".join(n.replace("-", "_") for n in route.commands)
    endpoint.__doc__ = route.help or entries[0].help
    tag = next((e.tags[0] for e in entries if e.tags), "commands")
    app.add_api_route(f"/api/tables/{{table_id}}/{route.path}", endpoint,
                      methods=[route.method], tags=[tag],
                      name=f"command_{endpoint.__name__}_{route.method.lower()}")
