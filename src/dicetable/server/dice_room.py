"""The dice room console's API: every custody step as a catalogued command, and the logs.

``/api/dice-room/{site}/{step}`` takes one custody step: a route for each step of the custody
catalogue (``dicetable.custody.catalogue``: receive, keys, store, issue for the gaming day,
inspect, issue to a table, remove, deliver an envelope, transfer to the cancellation room,
cancel, the physical count, the transport notice and its proof of receipt), under its
canonical name and its older ones, with the body the catalogue's fields declare (every
string bounded). The actor is the logged-in account; its custody role and licence come from
the site's staff list (``FloorCustody.roster``), never from the request; the other people
present are named by their accounts. A role the step's rule never lists is refused before
the body is read; the custody ledger decides the rest against the site's custody rules. A
refusal comes back as ``{"error", "message", "rule", "citation"}`` and changes nothing. The
pit report (every die in the building) and the pit, cancellation-room and inventory logs are
read at ``/api/dice-room/{site}/report`` and ``.../logs/{name}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Request
from pydantic import BaseModel, Field, create_model

from dicetable.application.accounts import Account
from dicetable.application.accounts import Kind as AccountKind
from dicetable.application.service import Acted, Acting, Application
from dicetable.bank.rules import site_gaming_day
from dicetable.core.errors import DicetableError, InvalidInput, RoleNotPermitted
from dicetable.custody import reports
from dicetable.custody.catalogue import CATALOGUE, Entry, Kind, Part
from dicetable.custody.catalogue import Context as CustodyContext
from dicetable.custody.catalogue import Field as CustodyField
from dicetable.custody.events import CustodyEvent
from dicetable.custody.model import Person
from dicetable.server.custody_floor import FloorCustody
from dicetable.server.dice_room_guide import step_guide
from dicetable.server.floor import Floor
from dicetable.server.session_reads import Identify
from dicetable.store.base import name_of
from dicetable.store.custody import custody_stream


# -- request bodies, from the custody catalogue ----------------------------------------------------
def _text(max_length: int) -> Any:
    return Annotated[str, Field(max_length=max_length)]


def _part_type(p: Part) -> tuple[Any, Any]:
    required = p.required
    if p.kind is Kind.FLAG:
        return bool, (... if required else p.default)
    if p.kind in (Kind.SERIALS, Kind.TEXTS):
        item = p.choices if p.choices is not None else _text(p.max_length)
        limits = Field(min_length=1, max_length=p.max_items) if required else \
            Field(default_factory=list, max_length=p.max_items)
        return list[item], limits  # type: ignore[valid-type]
    return _text(p.max_length), (... if required else p.default)


_MODELS: dict[str, type[BaseModel]] = {}


def _record_model(entry: Entry, f: CustodyField) -> type[BaseModel]:
    name = f"{f.record}In"
    if name not in _MODELS:
        spec: dict[str, Any] = {p.name: _part_type(p) for p in f.parts}
        _MODELS[name] = create_model(name, **spec)
    return _MODELS[name]


def _body_field(entry: Entry, f: CustodyField) -> tuple[Any, Any]:
    default = f.body_default
    if f.kind in (Kind.TEXTS, Kind.SERIALS, Kind.PEOPLE, Kind.RECORDS):
        item = _record_model(entry, f) if f.kind is Kind.RECORDS else _text(f.max_length)
        if f.required:
            return list[item], Field(min_length=1, max_length=f.max_items,  # type: ignore
                                     description=f.help)
        return list[item], Field(default_factory=lambda d=default: list(d or ()),  # type: ignore
                                 max_length=f.max_items, description=f.help)
    if f.kind is Kind.RECORD:
        kind: Any = _record_model(entry, f)
    elif f.kind is Kind.FLAG:
        kind = bool
    elif f.kind is Kind.INT:
        kind = Annotated[int, Field(ge=0, le=10**6)]
    elif f.kind is Kind.CHOICE:
        kind = f.choices
    else:
        kind = _text(f.max_length)
    if f.required if f.json_required is None else f.json_required:
        return kind, Field(..., description=f.help)
    if default is None:
        return kind | None, Field(None, description=f.help)
    return kind, Field(default, description=f.help)


def body_model(entry: Entry) -> type[BaseModel]:
    """The request body of a step's route: the catalogue's fields, their bounds and defaults."""
    name = "".join(w.title() for w in entry.name.split("-")) + "In"
    spec: dict[str, Any] = {f.json_key: _body_field(entry, f) for f in entry.all_fields
                            if f.json_key}
    model: type[BaseModel] = create_model(name, **spec)
    return model


class Roster(CustodyContext):
    """The site's staff list: who an account is in custody (role and licence)."""

    def __init__(self, custody: FloorCustody) -> None:
        self.custody = custody

    def person(self, username: str) -> Person:
        p = self.custody.roster.get(username.strip())
        if p is None:
            raise InvalidInput(f"{username!r} is not on the site's staff list",
                               rule="custody.person")
        return p

    def today(self) -> str:
        """The site's gaming day in its own time zone (not the UTC date), as the pit's books
        count it: a PA site at 23:58 EST is still on today's gaming day."""
        jurisdictions = sorted(str(site.ledger.state.pack.jurisdiction)
                               for site in self.custody.sites.values()
                               if site.ledger.state.pack is not None)
        return site_gaming_day(jurisdictions[0] if jurisdictions else "PA",
                               self.custody.clock.now())


# -- the routes ------------------------------------------------------------------------------------
def install(app: FastAPI, custody: FloorCustody,
            account: Identify,
            application: Application[Any] | None = None) -> None:
    """Add the dice room's routes to ``app``; each step is taken through ``application``'s
    one way in (the floor's; by default one over ``custody``'s sites alone)."""
    roster = Roster(custody)
    taker = application if application is not None else Application[Any](
        holders=lambda stream: custody.site(name_of(stream)))
    router = APIRouter(prefix="/api/dice-room", tags=["dice room"])

    def staff(who: Account) -> Person:
        if who.kind is not AccountKind.STAFF:
            raise RoleNotPermitted("the dice room is for the site's staff",
                                   rule="custody.staff")
        return roster.person(who.username)

    @router.get("")
    def overview(request: Request) -> dict[str, Any]:
        me = staff(account(request))
        return {"me": {"name": me.name, "role": me.role.value, "licence": me.licence},
                "roster": [{"name": p.name, "role": p.role.value, "licence": p.licence}
                           for p in custody.roster.values()],
                "sites": [{"site": s, "jurisdiction": d.ledger.pack.jurisdiction,
                           "pack": d.ledger.pack.id, "zone": str(d.ledger.pack.time_zone),
                           "guide": step_guide(d.ledger.pack)}
                          for s, d in sorted(custody.sites.items())],
                # each table's jurisdiction: the page opens at the site of the tables its
                # user works (a PA pit boss sees the PA site first)
                "tables": dict(sorted(custody.table_jurisdiction.items())),
                "steps": [{"name": e.name, "command": e.command.__name__, "summary": e.help,
                           "aliases": list(e.aliases)} for e in CATALOGUE if e.route]}

    @router.get("/{site}/report")
    def report(site: str, request: Request) -> dict[str, Any]:
        staff(account(request))
        durable = custody.site(site)
        with durable.lock:
            durable.refresh()
            data = reports.pit_report(durable.ledger.state, durable.ledger.log)
            # the site's last step, whoever took it: every open page shows it
            last = durable.ledger.log[-1] if durable.ledger.log else None
        data["open_alerts"] = custody.open_alerts(site)
        data["last"] = None if last is None else {
            "seq": last.seq, "type": last.kind, "at": last.at, "actor": last.actor,
            "rule": last.rule, "alert": last.alert, "summary": reports.describe(last)}
        return data

    @router.get("/{site}/head")
    def head(site: str, request: Request) -> dict[str, Any]:
        """How many steps the site's log holds: an open page looks here, cheaply, to know
        when to read the report again."""
        staff(account(request))
        durable = custody.site(site)
        with durable.lock:
            durable.refresh()
            return {"events": len(durable.ledger.log)}

    @router.get("/{site}/logs/{name}")
    def logs(site: str, name: str, request: Request) -> Any:
        staff(account(request))
        durable = custody.site(site)
        makers: dict[str, Callable[..., Any]] = {
            "pit": reports.pit_log, "cancellation": reports.cancellation_log,
            "inventory": reports.inventory_record}
        if name not in makers:
            raise InvalidInput(f"no log {name!r} (logs: {', '.join(makers)})",
                               rule="api.request")
        with durable.lock:
            durable.refresh()
            return makers[name](durable.ledger.state, durable.ledger.log)

    @router.get("/{site}/rules")
    def rules(site: str, request: Request) -> dict[str, Any]:
        staff(account(request))
        return custody.site(site).ledger.pack.to_dict()

    for entry in CATALOGUE:
        for path in entry.route_paths:
            _route(router, custody, entry, path, staff, roster, account, taker)
    app.include_router(router)


def _route(router: APIRouter, custody: FloorCustody, entry: Entry, path: str,
           staff: Callable[[Account], Person], roster: Roster,
           account: Identify, taker: Application[Any]) -> None:
    body_type = body_model(entry)
    keys = {f.json_key: f.name for f in entry.all_fields if f.json_key}

    async def step(site: str, request: Request, me: Person) -> tuple[Person, dict[str, Any]]:
        pack = custody.site(site).ledger.pack
        if not CATALOGUE.allowed(entry, me.role, pack):  # before the body is read
            rule = entry.authority or "custody.staff"
            raise RoleNotPermitted(f"a {me.role} may not {entry.name.replace('-', ' ')}",
                                   rule=rule, citation=pack.cite(rule)
                                   if entry.authority else "")
        body = body_type.model_validate(await request.json())
        return me, {keys[k]: v for k, v in body.model_dump().items()}

    async def endpoint(site: str, request: Request) -> dict[str, Any]:
        me, values = await step(site, request, staff(await account.awaited(request)))

        def work() -> dict[str, Any]:
            command = entry.make(me.name, me.role, me.licence, values, roster)
            answer = taker.submit(custody_stream(site), Acted(Acting(me.name, me.role),
                                                              command))
            assert answer is not None
            events: list[CustodyEvent] = answer.result()
            return {"events": [{"seq": e.seq, "type": e.kind, "at": e.at, "rule": e.rule,
                                "alert": e.alert, "summary": reports.describe(e)}
                               for e in events]}

        return await asyncio.to_thread(work)

    async def check(site: str, request: Request) -> dict[str, Any]:
        """The same step decided and not taken: ``{"ok"}``, or the refusal the step would
        meet (``message``, ``rule``, ``citation``). A page lights its button on it."""
        # who asks is never an answer: signed out stays 401
        me = staff(await account.awaited(request))
        try:
            me, values = await step(site, request, me)
        except DicetableError as refusal:
            return {"ok": False, **refusal.to_dict()}

        def work() -> dict[str, Any]:
            try:
                command = entry.make(me.name, me.role, me.licence, values, roster)
                durable = custody.site(site)
                with durable.lock:
                    durable.refresh()
                    durable.ledger.verify(command)
            except DicetableError as refusal:
                return {"ok": False, **refusal.to_dict()}
            return {"ok": True}

        return await asyncio.to_thread(work)

    endpoint.__name__ = "dice_room_" + path.replace("-", "_")
    alias = f" (the older name of {entry.name})" if path != entry.name else ""
    endpoint.__doc__ = f"{entry.help}{alias} ({entry.command.__name__})."
    router.post(f"/{{site}}/{path}", openapi_extra={"requestBody": {
        "content": {"application/json": {"schema": body_type.model_json_schema()}}}}
    )(endpoint)
    check.__name__ = endpoint.__name__ + "_check"
    check.__doc__ = f"Would this step be taken now? ({entry.command.__name__}, decided, not taken)."
    router.post(f"/{{site}}/{path}/check", openapi_extra={"requestBody": {
        "content": {"application/json": {"schema": body_type.model_json_schema()}}}}
    )(check)


def pit_custody(floor: Floor) -> dict[str, Any]:
    """What the pit console shows of custody: open alerts, and dice that left a table and
    wait for the pit to record their removal."""
    held: dict[str, list[str]] = {}
    for table_id, info in floor.tables.items():
        if info.table.mode != "bare":
            held[table_id] = list(info.table.procedure.dice)
    return {"alerts": floor.custody.open_alerts(),
            "awaiting_removal": floor.custody.awaiting_removal(held),
            "sites": sorted(floor.custody.sites)}
