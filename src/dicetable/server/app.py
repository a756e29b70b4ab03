"""The ASGI app: REST for commands and queries, WebSocket push, the pages.

Requests only map to engine commands (``Floor``); no game rule lives here. Refusals come back
as structured JSON naming the rule and its citation, with a 4xx status, never a 5xx.

Routes derived from the command catalogue (``dicetable.table.catalogue``).

``POST /api/tables/{id}/commands`` takes any catalogued command by name, with its fields as
JSON; each readable route the catalogue declares (``CATALOGUE.routes``: a path, a method, the
command or commands it gives, its body's fields and their limits) is registered here, its
request model built from those declarations so OpenAPI documents it. ``POST .../settle`` gives
the dealer's chores now due (``dicetable.table.table.settle_commands``). The role a
command is given in comes from the account's assignment at the table, never from the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import inspect
import json
import logging
import os
import types
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request, Response, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, create_model
from starlette.types import ASGIApp

from dicetable.application.accounts import (
    Account,
    AccountLocked,
    Kind,
    NotAuthenticated,
    TooManyAttempts,
)
from dicetable.application.integrity import TableFaulted
from dicetable.application.pipeline import Busy, Settled
from dicetable.core.dice import Roll
from dicetable.core.errors import (
    DicetableError,
    IllegalWager,
    InvalidInput,
    ProcedureViolation,
    RoleNotPermitted,
    StaleVersion,
)
from dicetable.core.events import type_hints
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.catalogue import MAX_ITEM_TEXT, MAX_ITEMS, MAX_TEXT, Entry, Route
from dicetable.games.catalogue import Field as CatalogueField
from dicetable.server import (
    bank_api,
    dice_checks,
    dice_room,
    faults_api,
    notice_push,
    observe,
    offline_docs,
    pages,
    player_money,
    ratings_api,
    rules_sheet,
    submission,
)
from dicetable.server import door as idempotency
from dicetable.server.bank_floor import banks_of
from dicetable.server.bets_at_read import BETS_STATE, BetsAtRead, ReadRoute
from dicetable.server.collector_pauses import CollectorPauses
from dicetable.server.connections import GUARD_STATE, ConnectionGuard
from dicetable.server.door import (
    GATE_STATE,
    NEVER,
    WANT_VIEW,
    Admission,
    BetRoute,
    Door,
    FailureLimiter,
    Impatience,
    LoadGate,
    Proxies,
    collect_when_quiet,
    watch_lag,
)
from dicetable.server.floor import ADVANCE, Floor, Given, NotFound
from dicetable.server.limits import (
    MAX_SEQ,
    document_errors,
    install_error_shape,
)
from dicetable.server.owners import DECIDED_BY, Split
from dicetable.server.scheduler import FloorScheduler, run_clock
from dicetable.server.session_reads import Identify, RequestSessions, SessionReads
from dicetable.server.socket_sessions import SESSION_ENDED, OpenSocket, OpenSockets
from dicetable.server.views import Caller, round_for
from dicetable.store.audit import verify_table
from dicetable.store.base import kind_of
from dicetable.store.recall import recall_rounds
from dicetable.table import Table
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.commands import AssignStaff, RelieveStaff
from dicetable.table.procedure import ACTION_RULE
from dicetable.table.table import chores_left, settle_commands

Build = Callable[[str, Role], g.Command | Iterable[g.Command]]
Act = Callable[[str, Account, type[g.Command], Build], Awaitable[dict[str, Any]]]
TableOf = Callable[[str], Table]
_ABSENT = object()
"""A body field the request's model does not carry."""

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


def install(app: FastAPI, act: Act, session: Identify, table_of: TableOf) -> None:
    """Add the generic command route, the catalogue's readable routes and ``settle``."""

    @app.post("/api/tables/{table_id}/commands", tags=["commands"])
    async def command(table_id: str, body: CommandIn, request: Request) -> dict[str, Any]:
        """Give any catalogued command: ``{"command": NAME, "fields": {...}}``
        (``GET /api/commands`` lists them)."""
        who = await session.awaited(request)
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
        who = await session.awaited(request)

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
            shapes.append(list[Annotated[str, Field(max_length=MAX_ITEM_TEXT)]])
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


def _body_fields(route: Route, entries: list[Entry]) -> tuple[CatalogueField, ...]:
    if route.body is not None:
        return route.body
    # the command's own fields
    return tuple(CatalogueField(name) for e in entries for name in e.fields)


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
        info = Field(*default, description=f.description or None,
                             examples=list(f.examples) or None, **limits)
        spec[f.key] = (shape, info)
    name = "".join(p.title() for p in route.commands[0].split("-")) + "In"
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="ignore"),
                                          __module__=PUBLISHED_UNDER, **spec)
    return model


PUBLISHED_UNDER = "dicetable.server.commands_api"  # follow-moves: keep
"""The module the catalogue's request models were published under: OpenAPI names a schema
whose name another shares by its module (``dicetable__server__commands_api__CashOutIn``), and
clients generated from the document know it by that name."""


@dataclasses.dataclass(frozen=True)
class Declared:
    """A readable route as its declaration makes it: the request model and what a request
    gives. The framework's route and the bet fast paths (``server.door``,
    ``server.bets_at_read``) all answer through ``order``, so there is one implementation
    of each."""

    route: Route
    entries: tuple[Entry, ...]
    model: type[BaseModel] | None
    fields: tuple[CatalogueField, ...]

    async def give(self, act: Act, table_id: str, who: Account, body: BaseModel | None,
                   params: dict[str, Any]) -> dict[str, Any]:
        """Queue the command(s) a request with ``body`` and path ``params`` gives."""
        return await act(table_id, who, *self.order(who, body, params))

    @functools.cached_property
    def _keys(self) -> tuple[tuple[str, str, bool], ...]:
        """Each body field's command field, its key in the body, and whether it is optional:
        read per request, so the properties behind them are read once."""
        return tuple((f.name, f.key, f.optional) for f in self.fields)

    @functools.cached_property
    def _plain(self) -> bool:
        """Does the request model hold only texts, numbers, booleans and nulls? Then its
        dump is its own fields' values as they are, and ``order`` reads them unconverted.

        >>> declared("bets")._plain
        True
        """
        plain = {str, int, bool, type(None)}
        return self.model is not None and all(
            set(typing.get_args(f.annotation) or (f.annotation,)) <= plain
            for f in self.model.model_fields.values())

    @functools.cached_property
    def _owned(self) -> tuple[tuple[Entry, frozenset[str]], ...]:
        """Each entry with the body fields that are its own (which a body must carry for
        the entry to be chosen, where the route gives several)."""
        return tuple((e, frozenset(f.name for f in self.fields if f.name in e.fields))
                     for e in self.entries)

    def order(self, who: Account, body: BaseModel | None, params: dict[str, Any]
              ) -> tuple[type[g.Command], Build]:
        """The command type a request with ``body`` and path ``params`` gives, and what
        builds its command(s) for an actor and role (``InvalidInput`` when it names none)."""
        given = {} if body is None else body.__dict__ if self._plain \
            else body.model_dump(exclude_unset=False)
        data = {name: value for name, key, optional in self._keys
                if (value := given.get(key, _ABSENT)) is not _ABSENT
                and (value is not None or not optional)}
        data |= params  # the path's own fields (``bets/{bet}``)
        for name in self.route.from_caller:
            if data.get(name) is None:
                data[name] = who.username  # a player acts for themselves
        owned = self._owned
        chosen = [e for e, own in owned if len(owned) == 1 or not own.isdisjoint(data)]
        if not chosen:
            raise InvalidInput(f"give {' or '.join(f.key for f in self.fields)}",
                               rule="api.request")
        return chosen[0].command, _Ordered(chosen, data)


class _Ordered:
    """What a request orders, built for an actor and role when it is decided: the chosen
    entries' command(s) from its fields (one object per request, where closures over it were
    several for the collector to count while it waited)."""

    __slots__ = ("chosen", "data")

    def __init__(self, chosen: list[Entry], data: dict[str, Any]) -> None:
        self.chosen, self.data = chosen, data

    def __call__(self, actor: str, role: Role) -> g.Command | list[g.Command]:
        data = self.data
        built = [e.from_json(actor, role, {k: v for k, v in data.items() if k in e.field_set})
                 for e in self.chosen]
        return built[0] if len(built) == 1 else built


@functools.cache
def declared(path: str, method: str = "POST") -> Declared:
    """The catalogue's route at ``path`` (``bets``), built once: one model object per route."""
    route = next((r for r in CATALOGUE.routes if r.path == path and r.method == method), None)
    if route is None:
        raise KeyError(f"{method} {path}")
    entries = tuple(CATALOGUE.named(n) for n in route.commands)
    return Declared(route, entries, _model(route, list(entries)),
                    _body_fields(route, list(entries)))


def _route(app: FastAPI, act: Act, session: Identify, route: Route) -> None:
    spec = declared(route.path, route.method)
    entries, model = spec.entries, spec.model

    async def endpoint(request: Request, **params: Any) -> dict[str, Any]:
        who = await session.awaited(request)
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


log = logging.getLogger(__name__)

COOKIE = "dicetable_session"
ELECTRONIC_TICK_S = 0.5
"""How often an electronic table is given the time."""
GC_THRESHOLDS = (5_000, 4, 2_000)
"""The collector's thresholds while serving (Python's own: 700, 10, 10). A full table holds
tens of thousands of live objects (seats, wagers, the round's events); with Python's
thresholds the collector would scan all of them every few seconds, pausing every table each
time. So a full scan waits for a quiet moment (``door.collect_when_quiet``: the third
threshold stands for when one is due, 2,000 collections of the second generation, about as
many allocations as before). The first two bound each pause, which stops every answer, 503s
included (``collector_pauses``): a young collection scans what 5,000 allocations left alive
(a few milliseconds), and the second generation holds the survivors of at most four young
collections when it is scanned. At (20,000, 20) it held twenty's, and under the bench's 2x
overload one such scan took 160 ms."""
STATUS: dict[type[DicetableError], int] = {
    NotAuthenticated: 401, RoleNotPermitted: 403, NotFound: 404, AccountLocked: 423,
    TableFaulted: 423, TooManyAttempts: 429,
    StaleVersion: 409, ProcedureViolation: 409, IllegalWager: 422, InvalidInput: 422,
    Busy: 503,
}


def status_of(error: DicetableError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 400


def refusal(exc: Exception) -> JSONResponse | None:
    """The answer to a refused command (a ``DicetableError``, or a ``ValueError`` a command's
    fields raised); None for anything else. One function for every route and the fast path."""
    if isinstance(exc, DicetableError):
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, Busy) else None
        return JSONResponse(exc.to_dict(), status_code=status_of(exc), headers=headers)
    if isinstance(exc, ValueError):
        return JSONResponse({"error": "InvalidInput", "message": str(exc),
                             "rule": "api.request", "citation": ""}, status_code=422)
    return None


# -- request bodies -----------------------------------------------------------------------------
class Login(BaseModel):
    username: str = Field(max_length=64)
    password: str = Field(max_length=256)


async def session_account(request: Request) -> Account:
    """The account behind the request's session (cookie, or ``Authorization: Bearer``),
    found on the event loop: a remembered one at once, any other read on a worker thread
    (``session_reads``), never on the loop."""
    sessions: Identify = request.app.state.sessions
    return await sessions.awaited(request)


def session_token(request: Request) -> str | None:
    """The session token a request carries: ``Authorization: Bearer``, else the cookie."""
    return _bearer(request) or request.cookies.get(COOKIE)


Me = Annotated[Account, Depends(session_account)]


# -- the app ------------------------------------------------------------------------------------
def _static_dir() -> Path:
    return Path(str(resources.files("dicetable.server") / "static"))


def create_app(floor: Floor, *, electronic_loop: bool = True,
               clock_seconds: float | None = 60.0, verify_seconds: float = 60.0,
               allowed_origins: frozenset[str] = frozenset(),
               login_limiter: FailureLimiter | None = None, fast_path: bool = True,
               admission: Admission | None = None,
               impatience: Impatience | None = None,
               connections: ConnectionGuard | None = None,
               proxies: Proxies | None = None) -> FastAPI:
    """The app; with ``clock_seconds`` the floor's scheduler ticks that often; every
    ``verify_seconds`` all streams are verified again; ``fast_path`` answers bets as the
    protocol reads them (``server.bets_at_read``) and at the door (``door.BetRoute``) (off:
    only through the framework's route, for comparison);
    ``admission`` sets the load shedding's limits and ``impatience`` how long a client
    refused for load waits for its next 503 (``server.door``); ``connections`` bounds
    the open connections and their read deadlines (``server.connections``); ``proxies``
    are those whose ``X-Forwarded-For``/``-Proto`` are honoured (``security.Proxies``)."""
    hub = floor.hub
    limiter = login_limiter or FailureLimiter()
    scheduler = FloorScheduler(floor)

    split = Split()
    admission = admission or Admission()
    connections = connections or ConnectionGuard()

    def caller(headers: dict[bytes, bytes]) -> Account | None:
        token = idempotency.token_of(headers, COOKIE)
        return floor.accounts.remembered(token) if token else None

    gate = LoadGate(floor, admission, impatience, caller)
    reads = SessionReads(floor.accounts)
    sessions = RequestSessions(reads, session_token)
    """Who sends each request: remembered, or read off the event loop."""
    readiness = observe.Readiness(verify_every=verify_seconds)
    readiness.verified()  # the floor verified every stream before it was handed here
    sockets = OpenSockets(floor.accounts)
    """Open WebSockets by session: a lock (logout, expiry, a faulted account) closes them."""
    pauses = CollectorPauses()
    """The collector's pauses while serving (``/api/floor/load``, ``/metrics``)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        hub.bind(asyncio.get_running_loop())
        sockets.bind(asyncio.get_running_loop())
        gc.freeze()  # the floor as loaded: never scanned again by the collector
        thresholds = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLDS[:2], NEVER)  # full collections: when quiet
        pauses.install()
        if Split.wanted(floor.store):  # several processes on PostgreSQL: split the tables
            await asyncio.to_thread(split.start, app, floor.store, sorted(floor.tables))
        tasks = [asyncio.create_task(watch_lag(admission)),
                 asyncio.create_task(collect_when_quiet(admission, GC_THRESHOLDS[2]))]
        if electronic_loop:
            for table_id, info in floor.tables.items():
                if info.table.mode == "electronic":
                    tasks.append(asyncio.create_task(_electronic(floor, table_id)))
        if clock_seconds:
            tasks.append(asyncio.create_task(run_clock(scheduler, clock_seconds)))
        if verify_seconds > 0:
            tasks.append(asyncio.create_task(_verify_loop(floor, verify_seconds, readiness)))
        tasks.append(asyncio.create_task(sockets.sweep()))
        # the protocol refuses the excess as it is read, and bounds the connections
        yield {GATE_STATE: gate, GUARD_STATE: connections, BETS_STATE: at_read}
        readiness.draining = True
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.to_thread(split.stop)
        sockets.close()
        pauses.remove()
        gc.set_threshold(*thresholds)

    app = Served(title="dicetable", version="0.1.0", lifespan=lifespan,
                  docs_url=None, redoc_url=None,
                  # No OpenTelemetry here: the framework would otherwise ask, on every
                  # request, whether a tracer or meter is configured.
                  telemetry={"tracing": False, "metrics": False, "logs": False},
                  description="Casino dice tables run as the PA and IN regulations write them. "
                              "Every refusal names its rule and citation.")
    app.state.floor = floor
    app.state.hub = hub
    app.state.scheduler = scheduler
    app.state.limiter = limiter
    app.state.admission = admission
    app.state.gate = gate
    app.state.connections = connections
    app.state.sockets = sockets
    app.state.sessions = sessions
    install_error_shape(app)
    plain_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = idempotency.document(document_errors(plain_openapi()))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.include_router(faults_api.router(sessions))
    app.include_router(ratings_api.router(sessions))
    app.include_router(player_money.router(sessions))
    app.include_router(player_money.cage_router(sessions))
    app.include_router(rules_sheet.router(sessions))
    offline_docs.install(app)

    async def recover(record: Any, username: str) -> tuple[int, bytes]:
        """The answer of a command committed before a crash, rebuilt from its log."""
        who = floor.accounts.get(username)
        assert who is not None
        events = await asyncio.to_thread(lambda: [
            e for e in floor.store.table_events(record.table, after=record.first_seq - 1)
            if e.seq <= record.last_seq])
        view = await asyncio.to_thread(floor.view, record.table, who)
        me = view.get("me")
        # The same shape as a command's own reply (events, balance, seq), and the view.
        body = {"events": floor.events_for(record.table, who, events),
                "balance": me["balance"] if isinstance(me, dict) else None,
                "seq": record.last_seq, "view": view}
        return 200, json.dumps(body).encode()

    async def account_of(token: str | None) -> str | None:
        try:
            return (await reads(token)).username
        except DicetableError:
            return None

    def queue(table_id: str, who: Account, command_type: type[g.Command], build: Build, *,
              with_view: bool, answer: Settled) -> None:
        # Queued on the table's pipeline; ``answer`` settled after the commit that holds it
        # (a full queue refuses at once: Busy, 503).
        if issubclass(command_type, AssignStaff):
            build = _only_staff_accounts(floor, table_id, build)
        if issubclass(command_type, AssignStaff | RelieveStaff):
            build = banks_of(floor).guard_staff(table_id, build)
        if issubclass(command_type, g.BuyChips | g.PlaceBet):
            build = banks_of(floor).guard_chips(table_id, build)
        floor.submit(table_id, Given(who, build, command_type), with_view=with_view,
                     waiter=(asyncio.get_running_loop(), answer))

    async def act(table_id: str, who: Account, command_type: type[g.Command],
                  build: Build) -> dict[str, Any]:
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        queue(table_id, who, command_type, build, with_view=WANT_VIEW.get(), answer=answer)
        try:
            return await answer
        finally:
            # A refusal raised here holds this frame in its traceback, and the frame held
            # the future that holds the refusal: a cycle left to the collector.
            del answer

    bets = declared("bets")  # the catalogue's bet route, model and all
    assert bets.model is not None

    async def bet(table_id: str, who: Account, body: BaseModel) -> dict[str, Any]:
        return await bets.give(act, table_id, who, body, {})

    # One layer at the door: proxy headers, admission, the body limit, ownership, Prefer,
    # the origin check, exactly-once commands and the bet route, in one pass.
    answers = idempotency.Answers(floor.store, now=floor.clock.now().isoformat(),
                                  faulted=lambda stream: stream in floor.faults.open)
    keeper = idempotency.Keeper(answers=answers, who=account_of,
                                applied=floor.store.request_record, recover=recover,
                                cookie=COOKIE, now=lambda: floor.clock.now().isoformat())
    bet_route = BetRoute(prefix="/api/tables/", suffix="/bets", model=bets.model, act=bet,
                         sessions=reads, cookie=COOKIE) if fast_path else None
    door = Door(app.framework, gate=gate, split=split, cookie=COOKIE,
                allowed_origins=allowed_origins, proxies=proxies or None, keeper=keeper,
                bet=bet_route, refusal=refusal, sessions=reads)
    app.state.door = door
    app.state.readiness = readiness

    def load_figures() -> dict[str, Any]:
        return observe.figures(floor, admission, gate, connections, readiness, pauses)

    # Outside the door: health, readiness and metrics are never shed and need no session.
    kinds = observe.CommandKinds(lambda: [getattr(r, "path", "") for r in app.routes],
                                 commands=frozenset(e.name for e in CATALOGUE))
    app.door = observer = observe.Observer(door, floor=floor, readiness=readiness,
                                           meters=observe.Meters(), figures=load_figures,
                                           kinds=kinds)

    def read_route(path: str, method: str) -> ReadRoute:
        spec = declared(path, method)

        def queue_it(table_id: str, who: Account, body: BaseModel | None,
                     params: dict[str, str], *, with_view: bool, answer: Settled) -> None:
            queue(table_id, who, *spec.order(who, body, dict(params)), with_view=with_view,
                  answer=answer)

        return ReadRoute(method, path, spec.model, queue_it)

    # An admitted bet, or a bet taken down, that the door has nothing to check for:
    # answered as the protocol reads it.
    at_read = BetsAtRead(door=door, routes=(read_route("bets", "POST"),
                                            read_route("bets/{bet}", "DELETE")),
                         counted=observer.answered, done=admission.done) if fast_path else None
    app.state.at_read = at_read

    # A refusal of the domain, or a bad value it raised: the same answer, naming the rule.
    app.add_exception_handler(DicetableError, _refused)
    app.add_exception_handler(ValueError, _refused)

    @app.get("/api/floor/owners", tags=["tables"])
    def owners(who: Me) -> dict[str, Any]:
        """Which tables this server process decides (several processes on PostgreSQL; staff)."""
        _pit(floor, who)
        mine = split.owners.owned() if split.owners is not None else sorted(floor.tables)
        return {"pid": os.getpid(), "owns": mine, "split": split.owners is not None,
                "header": DECIDED_BY}

    @app.get("/api/floor/load", tags=["tables"])
    def load(who: Me) -> dict[str, Any]:
        """How loaded this server process is, and what it has refused for load (staff); the
        same figures ``/metrics`` exports."""
        _pit(floor, who)
        return load_figures()

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                             for e in exc.errors())
        return JSONResponse({"error": "InvalidInput", "message": problems,
                             "rule": "api.request", "citation": ""}, status_code=422)

    # -- accounts ---------------------------------------------------------------------------
    @app.post("/api/login", tags=["accounts"])
    def login(body: Login, request: Request, response: Response) -> dict[str, Any]:
        client = request.client.host if request.client else "-"
        limiter.check(client)
        floor.faults.refuse(f"account:{body.username}")  # an account whose stream failed
        try:
            token = floor.accounts.login(body.username, body.password, client=client)
        except (NotAuthenticated, AccountLocked):
            limiter.failed(client)
            raise
        who = floor.accounts.session(token)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
        return {"token": token, "account": _account(floor, who)}

    @app.post("/api/logout", tags=["accounts"])
    def logout(request: Request, response: Response, who: Me) -> dict[str, str]:
        token = session_token(request) or ""
        floor.accounts.logout(token)
        response.delete_cookie(COOKIE)
        return {"status": "logged out"}

    @app.get("/api/me", tags=["accounts"])
    def me(who: Me) -> dict[str, Any]:
        return _account(floor, who)

    @app.post("/api/accounts/{username}/unlock", tags=["accounts"])
    def unlock(username: str, who: Me) -> dict[str, str]:
        supervisors = {Role.PIT_BOSS, Role.SHIFT_MANAGER}
        held = {r for tid in floor.tables for r in floor.roles_at(who, tid)} & supervisors \
            if who.kind is Kind.STAFF else set()
        if not held:
            raise RoleNotPermitted("only a pit boss unlocks an account",
                                   rule="accounts.unlock")
        floor.accounts.unlock(username, by=who.username, role=sorted(held)[0].value)
        return {"status": f"{username} unlocked"}

    # -- tables -----------------------------------------------------------------------------
    @app.get("/api/tables", tags=["tables"])
    def tables(who: Me) -> list[dict[str, Any]]:
        return [{"table": s["table"], "name": s["name"], "game": s["game"],
                 "pack": s["pack"], "mode": s["mode"], "phase": s["phase"],
                 "point": s["point"], "my_roles": [r.value for r in
                                                   floor.roles_at(who, s["table"])]}
                for s in floor.summaries()]

    @app.get("/api/tables/{table_id}", tags=["tables"])
    def table(table_id: str, who: Me) -> Response:
        return Response(floor.view_text(table_id, who), media_type="application/json")

    @app.get("/api/tables/{table_id}/events", tags=["tables"])
    def events(table_id: str, who: Me,
               after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0) -> list[dict[str, Any]]:
        floor.get(table_id)
        return floor.events_for(table_id, who,
                                list(floor.store.table_events(table_id, after=after)))

    @app.get("/api/tables/{table_id}/recall", tags=["tables"])
    def recall(table_id: str, who: Me,
               rounds: Annotated[int, Query(ge=1, le=100)] = 10) -> list[dict[str, Any]]:
        floor.get(table_id)
        caller = Caller(who.username, who.kind is Kind.STAFF)
        return [round_for(caller, r.to_dict())
                for r in recall_rounds(floor.store, table_id, rounds)]

    @app.get("/api/tables/{table_id}/controls", tags=["tables"])
    def controls(table_id: str, who: Me,
                 player: Annotated[str | None, Query(max_length=64)] = None) -> dict[str, Any]:
        """What the caller may do now for ``player`` (staff booking a called bet), each
        answer the engine's own ``can``."""
        return floor.controls(table_id, who, player or who.username)

    @app.get("/api/tables/{table_id}/audit", tags=["pit"])
    def audit(table_id: str, who: Me) -> dict[str, Any]:
        _pit(floor, who)
        floor.get(table_id)
        return verify_table(floor.store, table_id).to_dict()

    @app.get("/api/pit", tags=["pit"])
    def pit(who: Me) -> dict[str, Any]:
        _pit(floor, who)
        return {"tables": floor.summaries(), "faults": list(floor.faults.open.values()),
                "accounts": [{"username": a.username, "kind": a.kind.value,
                              "locked_until": a.locked_until}
                             for a in floor.accounts.all()],
                "custody": dice_room.pit_custody(floor),
                # the page stamps every figure and counts the dice's hours from this, never
                # from the browser's own clock
                "now": floor.clock.now().isoformat()}

    # -- commands: the generic route, every readable route the catalogue declares, settle ----
    install(app, act, sessions, lambda table_id: floor.get(table_id).table)

    # -- live push --------------------------------------------------------------------------
    async def admit(ws: WebSocket, table_id: str | None) -> tuple[Account, OpenSocket] | None:
        """Accept a push socket for a live session at an existing table (None: a member of
        staff's, for no one table), and open it among the session's sockets (closed when the
        session ends: a lock); None when refused (the socket is closed with the reason). A
        query that names a token is answered by that token alone, never the cookie."""
        params = ws.query_params
        token = params["token"] if "token" in params else ws.cookies.get(COOKIE)
        try:
            who = await reads(token)  # off the loop: a restart's viewers reconnect at once
            if table_id is not None:
                floor.get(table_id)
            elif who.kind is not Kind.STAFF:
                raise RoleNotPermitted("the floor's notices are for staff",
                                       rule="authority.staff")
        except DicetableError as e:
            code = SESSION_ENDED if isinstance(e, NotAuthenticated) else \
                4403 if isinstance(e, RoleNotPermitted) else 4404
            await ws.close(code=code,
                           reason=e.message[:120])
            return None
        assert token is not None
        await ws.accept()
        return who, sockets.open(who.username, token)

    @app.websocket("/ws/tables/{table_id}")
    async def push(ws: WebSocket, table_id: str,
                   after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0) -> None:
        if (admitted := await admit(ws, table_id)) is None:
            return
        who, sock = admitted
        feed = await asyncio.to_thread(floor.subscribe, table_id, who, after)
        try:
            await ws.send_text(feed.hello)
            pusher = asyncio.create_task(feed.pump(ws))
            ending = asyncio.create_task(sock.ended.wait())
            # The browser sends nothing; listening notices a closed connection at once,
            # not at the next batch (an idle handler would otherwise hold up shutdown).
            listening = asyncio.create_task(notice_push.until_disconnect(ws))
            try:
                await asyncio.wait({ending, listening}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (pusher, ending, listening):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect,
                                             RuntimeError):
                        await task
            if sock.ended.is_set():
                feed.close()
                await ws.close(code=SESSION_ENDED,
                               reason=f"the session has ended: {sock.why}"[:120])
        except (WebSocketDisconnect, RuntimeError):  # gone, or closed for being too slow
            pass
        finally:
            sockets.leave(sock)
            feed.close()

    @app.websocket("/ws/tables/{table_id}/money")
    async def money_push(ws: WebSocket, table_id: str) -> None:
        """``{"type": "money"}`` whenever the table's seat requests or the caller's wallet
        change: the page then reads ``/money`` again, polling only while this is shut."""
        if (admitted := await admit(ws, table_id)) is None:
            return
        who, sock = admitted
        watched = {f"seat-requests:{table_id}", f"wallet:{who.username}"}
        try:
            await notice_push.tell_changes(ws, sock, floor.store, watched.__contains__,
                                           {"type": "money", "table": table_id})
        finally:
            sockets.leave(sock)

    @app.websocket("/ws/floor")
    async def floor_push(ws: WebSocket,
                         kinds: Annotated[str, Query(max_length=64)] = "bank") -> None:
        """For staff: ``{"type": "floor"}`` whenever a stream of one of ``kinds``
        (``notice_push.FLOOR_KINDS``: the pit's books, their slip serials, the dice's
        custody) changes: the pit's books and the dice room read again at once, not at their
        next poll."""
        followed = notice_push.floor_kinds(kinds)
        if followed is None:
            await ws.close(code=4400, reason=f"kinds: any of {sorted(notice_push.FLOOR_KINDS)}")
            return
        if (admitted := await admit(ws, None)) is None:
            return
        _, sock = admitted
        try:
            await notice_push.tell_changes(ws, sock, floor.store,
                                           lambda stream: kind_of(stream) in followed,
                                           {"type": "floor", "kinds": sorted(followed)})
        finally:
            sockets.leave(sock)

    # -- pages ------------------------------------------------------------------------------
    static = _static_dir()
    if static.exists():
        app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> Response:
        return FileResponse(static / "index.html") if (static / "index.html").exists() \
            else RedirectResponse("/docs")

    dice_room.install(app, floor.custody, sessions, floor)
    dice_checks.install(app, floor, sessions)
    bank_api.install(app, floor, sessions)
    submission.install(app, floor, sessions)
    pages.install(app)

    return app


class Served(FastAPI):
    """The app behind its door: every request passes ``door.Door`` once, which answers it or
    hands it to the framework (``framework``); the lifespan goes to the framework directly."""

    door: ASGIApp | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        door = self.door
        if door is None or scope["type"] == "lifespan":
            await super().__call__(scope, receive, send)
        else:
            await door(scope, receive, send)

    async def framework(self, scope: Any, receive: Any, send: Any) -> None:
        await super().__call__(scope, receive, send)


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    response = refusal(exc)
    assert response is not None
    return response


def _bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    return auth[7:].strip() if auth.lower().startswith("bearer ") else None


def _account(floor: Floor, who: Account) -> dict[str, Any]:
    return {"username": who.username, "kind": who.kind.value, "display": who.display,
            "tables": {tid: [r.value for r in floor.roles_at(who, tid)]
                       for tid in floor.tables if floor.roles_at(who, tid)}}


def _only_staff_accounts(floor: Floor, table_id: str,
                         build: Callable[[str, Role], g.Command | Iterable[g.Command]]
                         ) -> Callable[[str, Role], g.Command | Iterable[g.Command]]:
    """``build``, refusing the assignment of anyone who has no staff account on this floor:
    a person assigned through the server must be able to log in as staff to do the work.
    Asked only of a role the pack lets assign staff: any other is refused by the table
    first, naming its rule (the role is checked before anything else)."""
    rule = ACTION_RULE.get(AssignStaff)

    def checked(actor: str, role: Role) -> g.Command | Iterable[g.Command]:
        built = build(actor, role)
        if rule is not None and role not in floor.get(table_id).table.pack.roles(rule):
            return built
        built = [built] if isinstance(built, g.Command) else list(built)
        for command in built:
            if isinstance(command, AssignStaff):
                account = floor.accounts.get(command.person)
                if account is None or account.kind is not Kind.STAFF:
                    raise InvalidInput(
                        f"{command.person!r} has no staff account on this floor: only an "
                        "existing staff account can be assigned to a table",
                        rule="authority.staff_account")
        return built

    return checked


def _pit(floor: Floor, who: Account) -> None:
    if who.kind is not Kind.STAFF or not any(floor.roles_at(who, tid) for tid in floor.tables):
        raise RoleNotPermitted("the pit console is for staff assigned on the floor",
                               rule="authority.staff")


async def _verify_loop(floor: Floor, every: float, readiness: observe.Readiness) -> None:
    """Verify every stream again every ``every`` seconds (MEM-2: checked continually)."""
    while True:
        await asyncio.sleep(every)
        try:
            faulted = await asyncio.to_thread(floor.verify_all)
        except Exception:  # a check that cannot run is logged, the loop goes on
            log.exception("periodic verification failed to run")
            continue
        readiness.verified()
        for table_id in faulted:
            log.error("table %s faulted on periodic verification", table_id)


async def _electronic(floor: Floor, table_id: str) -> None:
    """An electronic table's clock: the server only supplies time; the table's automations
    (betting timer, CSPRNG roll, settlement) decide what happens."""
    while True:
        await asyncio.sleep(ELECTRONIC_TICK_S)
        try:
            await asyncio.wrap_future(floor.submit(table_id, ADVANCE))
        except DicetableError as e:  # e.g. blocked play: wait for staff, keep the loop alive
            log.warning("electronic table %s: %s", table_id, e)
