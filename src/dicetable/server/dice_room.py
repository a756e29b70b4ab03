"""The dice room console's API: every custody step as a catalogued command, and the logs.

``/api/dice-room/{site}/{step}`` takes one custody step (``STEPS``: receive, keys, store,
issue for the gaming day, inspect, issue to a table, remove, deliver an envelope, transfer to
the cancellation room, cancel, the physical inventory, the transport notice and its proof of
receipt). The actor is the logged-in account; its custody role and licence come from the
site's staff list (``FloorCustody.roster``), never from the request; the other people present
are named by their accounts. Each step is decided by the custody ledger against the site's
custody rules; a refusal comes back as ``{"error", "message", "rule", "citation"}`` and
changes nothing. The pit report (every die in the building) and the pit, cancellation-room
and inventory logs are read at ``/api/dice-room/{site}/report`` and ``.../logs/{name}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Request
from pydantic import BaseModel, Field

from dicetable.core.errors import InvalidInput, RoleNotPermitted
from dicetable.custody import commands as c
from dicetable.custody import reports
from dicetable.custody.model import (
    MAX_MEASUREMENT,
    MAX_SERIAL,
    Box,
    BoxInspection,
    CancelMethod,
    Check,
    DieCheck,
    Finding,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
    expand_serials,
    parse_inches,
)
from dicetable.custody.transport import FileTransportNotice, Party, ProveReceipt
from dicetable.server.accounts import Account, Kind
from dicetable.server.custody_floor import FloorCustody
from dicetable.server.floor import Floor

Text = Annotated[str, Field(max_length=200)]
SerialText = Annotated[str, Field(max_length=20 * MAX_SERIAL)]
"""One item of a list of serials: serials and ranges, comma-separated (each part at most
``MAX_SERIAL`` characters, refused before it is parsed)."""
Serials = Annotated[list[SerialText], Field(min_length=1, max_length=500)]
Names = Annotated[list[Text], Field(default_factory=list, max_length=10)]


# -- request bodies -------------------------------------------------------------------------------
class Present(BaseModel):
    present: Names
    """The accounts of the other people present (security, surveillance...)."""


class BoxIn(BaseModel):
    box: Text
    serials: Serials
    seal_intact: bool = True


class FindingIn(BaseModel):
    serial: Text
    problem: Text
    tampering: bool = False


class ReceiveIn(Present):
    shipment: Text
    manufacturer: Text
    address: Text = ""
    phone: Text = ""
    boxes: list[BoxIn] = Field(min_length=1, max_length=50)
    findings: list[FindingIn] = Field(default_factory=list, max_length=500)
    delivery_witness: Text = ""


class KeyIn(BaseModel):
    key: Key


class DiceIn(Present):
    dice: Serials
    area: Text = "dice-storage"


class DayIn(Present):
    dice: Serials
    gaming_day: str | None = Field(None, max_length=10)


class CheckIn(BaseModel):
    serial: Text
    measurements: list[Annotated[str, Field(max_length=MAX_MEASUREMENT)]] = Field(
        min_length=1, max_length=3)
    failed: list[Check] = Field(default_factory=list, max_length=len(Check))


class InspectIn(Present):
    checks: list[CheckIn] = Field(min_length=1, max_length=500)
    tools: list[Text] = Field(default_factory=list, max_length=10)
    under_surveillance: bool = False


class IssueIn(BaseModel):
    dice: Serials
    table: Text
    received_by: Text
    shaker: bool = False


class RemoveIn(Present):
    dice: Serials
    reason: RemovalReason
    signs: Text = ""
    table_staff: Names
    envelope: Text = ""
    detail: Text = ""


class DeliverIn(BaseModel):
    envelope: Text
    agent: Text


class TransferIn(BaseModel):
    dice: Serials
    accepted_by: Text


class CancelIn(Present):
    dice: Serials
    method: CancelMethod
    hole_in: str | None = Field(None, max_length=10)
    approval: Text = ""


class PartyIn(BaseModel):
    name: Text = ""
    address: Text = ""
    phone: Text = ""

    def party(self) -> Party:
        return Party(self.name, self.address, self.phone)


class NoticeIn(BaseModel):
    notice: Text
    supplier: PartyIn
    method: Text = ""
    carriers: list[PartyIn] = Field(default_factory=list, max_length=10)
    recipient: PartyIn
    responsible_supplier: Text = ""
    responsible_carrier: Text = ""
    responsible_recipient: Text = ""
    quantity: int = Field(0, ge=0, le=10**6)
    description: Text = ""
    delivery_at: Text = ""
    notified_at: str | None = Field(None, max_length=40)


class ProofIn(BaseModel):
    notice: Text
    shipment: Text
    requested_by: Text


class CountIn(Present):
    counted: list[SerialText] = Field(default_factory=list, max_length=5000)


# -- the catalogue ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One dice-room step: the custody command it gives, and how a request builds it."""

    name: str
    command: type[c.CustodyCommand]
    body: type[BaseModel]
    build: Callable[[Any, dict[str, Any], Roster], c.CustodyCommand]
    summary: str


class Roster:
    """The site's staff list: who an account is in custody (role and licence)."""

    def __init__(self, custody: FloorCustody) -> None:
        self.custody = custody

    def person(self, username: str) -> Person:
        p = self.custody.roster.get(username.strip())
        if p is None:
            raise InvalidInput(f"{username!r} is not on the site's staff list",
                               rule="custody.person")
        return p

    def people(self, usernames: list[str]) -> tuple[Person, ...]:
        return tuple(self.person(u) for u in usernames)


MAX_DICE = 5000
"""The most dice one request may name, ranges expanded (a shipment is a few hundred)."""


def _serials(items: list[str]) -> tuple[str, ...]:
    if sum(len(i) for i in items) > 20 * MAX_DICE:
        raise InvalidInput("too many serials in one step", rule="custody.serials")
    out: list[str] = []
    for item in items:
        out.extend(expand_serials([item]))
        if len(out) > MAX_DICE:
            raise InvalidInput(f"one step names at most {MAX_DICE} dice", rule="custody.serials")
    return tuple(out)


def _receive(b: ReceiveIn, who: dict[str, Any], r: Roster) -> c.CustodyCommand:
    boxes = tuple(Box(x.box, _serials(x.serials), x.seal_intact) for x in b.boxes)
    where = {s: x.box for x in boxes for s in x.serials}
    found: dict[str, list[Finding]] = {x.box: [] for x in boxes if not x.seal_intact}
    for f in b.findings:
        if f.serial not in where:
            raise InvalidInput(f"{f.serial!r} is in none of the boxes", rule="custody.serials")
        found.setdefault(where[f.serial], []).append(Finding(f.serial, f.problem, f.tampering))
    return c.ReceiveShipment(**who, shipment=b.shipment,
                             manufacturer=Manufacturer(b.manufacturer, b.address, b.phone),
                             boxes=boxes, delivery_witness=b.delivery_witness,
                             opened=tuple(BoxInspection(k, tuple(v)) for k, v in found.items()))


def _inspect(b: InspectIn, who: dict[str, Any], r: Roster) -> c.CustodyCommand:
    checks = tuple(DieCheck(x.serial, tuple(parse_inches(m) for m in x.measurements),
                            tuple(k for k in Check if k not in x.failed)) for x in b.checks)
    return c.InspectDice(**who, checks=checks, tools=tuple(b.tools),
                         under_surveillance=b.under_surveillance)


def _issue(b: IssueIn, who: dict[str, Any], r: Roster) -> c.CustodyCommand:
    return c.IssueToTable(**who, dice=_serials(b.dice), table=b.table,
                          game="props-and-hops" if b.shaker else "craps",
                          mode=PlayMode.SHAKER if b.shaker else PlayMode.TABLE,
                          received_by=r.person(b.received_by))


def _remove(b: RemoveIn, who: dict[str, Any], r: Roster) -> c.CustodyCommand:
    return c.RemoveDice(**who, dice=_serials(b.dice), reason=b.reason, signs=b.signs,
                        table_staff=r.people(b.table_staff), envelope=b.envelope,
                        detail=b.detail)


def _cancel(b: CancelIn, who: dict[str, Any], r: Roster) -> c.CustodyCommand:
    hole = parse_inches(b.hole_in) if b.hole_in else None
    return c.CancelDice(**who, dice=_serials(b.dice), method=b.method, hole_in=hole,
                        approval=b.approval)


def _day(b: DayIn, who: dict[str, Any], r: Roster) -> c.CustodyCommand:
    return c.IssueForGamingDay(**who, dice=_serials(b.dice),
                               gaming_day=b.gaming_day or r.custody.clock.now().date()
                               .isoformat())


STEPS: dict[str, Step] = {s.name: s for s in [
    Step("receive", c.ReceiveShipment, ReceiveIn, _receive,
         "Receive a shipment: two people, every box's seal checked, failed boxes opened"),
    Step("key-draw", c.DrawKey, KeyIn,
         lambda b, who, r: c.DrawKey(**who, key=b.key), "Draw one of the two storage keys"),
    Step("key-return", c.ReturnKey, KeyIn,
         lambda b, who, r: c.ReturnKey(**who, key=b.key), "Return a storage key"),
    Step("store", c.StoreDice, DiceIn,
         lambda b, who, r: c.StoreDice(**who, dice=_serials(b.dice), area=b.area),
         "Put received dice in the locked storage area (both key holders)"),
    Step("issue-day", c.IssueForGamingDay, DayIn, _day,
         "Take the gaming day's dice out of storage (security present)"),
    Step("return-storage", c.ReturnToStorage, DiceIn,
         lambda b, who, r: c.ReturnToStorage(**who, dice=_serials(b.dice), area=b.area),
         "Put issued dice that never reached a table back in storage"),
    Step("inspect", c.InspectDice, InspectIn, _inspect,
         "Inspect dice before play, with the three measurements of each"),
    Step("issue-table", c.IssueToTable, IssueIn, _issue,
         "Issue inspected dice to a table (or load a shaker)"),
    Step("remove", c.RemoveDice, RemoveIn, _remove,
         "Remove dice from play or stock (tampering: sealed envelope for the agent)"),
    Step("deliver", c.DeliverEnvelope, DeliverIn,
         lambda b, who, r: c.DeliverEnvelope(**who, envelope=b.envelope, agent=b.agent),
         "Hand a tamper envelope to the enforcement agent"),
    Step("transfer", c.TransferToCancellation, TransferIn,
         lambda b, who, r: c.TransferToCancellation(**who, dice=_serials(b.dice),
                                                    accepted_by=r.person(b.accepted_by)),
         "Sign removed dice over to the cancellation room"),
    Step("cancel", c.CancelDice, CancelIn, _cancel,
         "Cancel dice (a hole, shredding or an approved method) under surveillance"),
    Step("inventory", c.TakePhysicalInventory, CountIn,
         lambda b, who, r: c.TakePhysicalInventory(**who, counted=_serials(b.counted)
                                                   if b.counted else ()),
         "Take the quarterly physical inventory"),
    Step("transport-notice", FileTransportNotice, NoticeIn,
         lambda b, who, r: FileTransportNotice(
             **who, notice=b.notice, supplier=b.supplier.party(), method=b.method,
             carriers=tuple(p.party() for p in b.carriers), recipient=b.recipient.party(),
             responsible_supplier=b.responsible_supplier,
             responsible_carrier=b.responsible_carrier,
             responsible_recipient=b.responsible_recipient, quantity=b.quantity,
             description=b.description, delivery_at=b.delivery_at,
             notified_at=b.notified_at or ""),
         "Record the written transport notice, at least ten days ahead (IN 14-3-10(a))"),
    Step("receipt-proof", ProveReceipt, ProofIn,
         lambda b, who, r: ProveReceipt(**who, notice=b.notice, shipment=b.shipment,
                                        requested_by=b.requested_by),
         "Prove receipt of a shipment on request (IN 14-3-10(b))"),
]}
"""Every dice-room step; the routes are derived from it."""


def register_step(step: Step) -> None:
    """Add a step to the catalogue (before the app is built)."""
    STEPS[step.name] = step


# -- the routes ------------------------------------------------------------------------------------
def install(app: FastAPI, custody: FloorCustody,
            account: Callable[[Request], Account]) -> None:
    """Add the dice room's routes to ``app``."""
    roster = Roster(custody)
    router = APIRouter(prefix="/api/dice-room", tags=["dice room"])

    def staff(who: Account) -> Person:
        if who.kind is not Kind.STAFF:
            raise RoleNotPermitted("the dice room is for the site's staff",
                                   rule="custody.staff")
        return roster.person(who.username)

    def people(who: Account, present: list[str]) -> dict[str, Any]:
        me = staff(who)
        return {"actor": me.name, "role": me.role, "licence": me.licence,
                "witnesses": roster.people(present)}

    @router.get("")
    def overview(request: Request) -> dict[str, Any]:
        me = staff(account(request))
        return {"me": {"name": me.name, "role": me.role.value, "licence": me.licence},
                "roster": [{"name": p.name, "role": p.role.value, "licence": p.licence}
                           for p in custody.roster.values()],
                "sites": [{"site": s, "jurisdiction": d.ledger.pack.jurisdiction,
                           "pack": d.ledger.pack.id} for s, d in sorted(custody.sites.items())],
                "steps": [{"name": s.name, "command": s.command.__name__,
                           "summary": s.summary} for s in STEPS.values()]}

    @router.get("/{site}/report")
    def report(site: str, request: Request) -> dict[str, Any]:
        staff(account(request))
        durable = custody.site(site)
        with durable.lock:
            durable.refresh()
            data = reports.pit_report(durable.ledger.state, durable.ledger.log)
        data["open_alerts"] = custody.open_alerts(site)
        return data

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

    for step in STEPS.values():
        _route(router, custody, step, people, roster, account)
    app.include_router(router)


def _route(router: APIRouter, custody: FloorCustody, step: Step,
           people: Callable[[Account, list[str]], dict[str, Any]], roster: Roster,
           account: Callable[[Request], Account]) -> None:
    body_type = step.body

    async def endpoint(site: str, request: Request) -> dict[str, Any]:
        who = account(request)
        people(who, [])  # the dice room's staff only, before the body is parsed at all
        body = body_type.model_validate(await request.json())
        present = list(getattr(body, "present", []))

        def work() -> dict[str, Any]:
            command = step.build(body, people(who, present), roster)
            durable = custody.site(site)
            events = durable.execute(command)
            return {"events": [{"seq": e.seq, "type": e.kind, "at": e.at, "rule": e.rule,
                                "alert": e.alert, "summary": reports.describe(e)}
                               for e in events]}

        return await asyncio.to_thread(work)

    endpoint.__name__ = "dice_room_" + step.name.replace("-", "_")
    endpoint.__doc__ = f"{step.summary} ({step.command.__name__})."
    router.post(f"/{{site}}/{step.name}", openapi_extra={"requestBody": {
        "content": {"application/json": {"schema": body_type.model_json_schema()}}}}
    )(endpoint)



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
