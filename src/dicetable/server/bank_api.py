"""The pit's books over HTTP: each table's bank (``/api/bank/...``), every step one of the
catalogue's verbs (``POST /api/bank/{table}/{verb}`` with ``{"fields": {...}}``), the shift
and gaming-day report with win and hold, and the money-conservation check.

Mounted by ``create_app`` through ``install``; the floor's own modules are not changed."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query, Request
from pydantic import BaseModel, Field

from dicetable.application.accounts import Account, Kind
from dicetable.bank.catalogue import VERBS
from dicetable.core.errors import RoleNotPermitted
from dicetable.server.bank_floor import banks_of
from dicetable.server.floor import Floor
from dicetable.server.session_reads import Identify

DAY = Annotated[str | None, Query(max_length=10, pattern=r"^\d{4}-\d{2}-\d{2}$")]


FLOAT = Annotated[str, Query(max_length=400)]


FieldText = Annotated[str, Field(max_length=200)]
"""A step's text field at most (a name, a serial, a reason; a bank step's longest is a note)."""


class Step(BaseModel):
    fields: dict[str, FieldText | int | bool] = Field(default_factory=dict, max_length=20)


def _staff(who: Account) -> None:
    if who.kind is not Kind.STAFF:
        raise RoleNotPermitted("the pit's books are for staff", rule="authority.staff")


def install(app: FastAPI, floor: Floor, account: Identify) -> None:
    banks = banks_of(floor)
    api = APIRouter(prefix="/api/bank", tags=["pit"])

    @api.get("")
    def overview(request: Request, day: DAY = None) -> dict[str, Any]:
        """Every table's bank: status, expected inventory, the conservation check, and the
        gaming day's win and hold (per table and in all)."""
        who = account(request)
        _staff(who)
        out = banks.summaries(day)
        out["me"] = {"name": who.username,
                     "roles": [r.value for r in banks.roles_of(who.username, None)]}
        out["roster"] = {k: v.value for k, v in sorted(banks.roster.items())}
        out["without_bank"] = sorted(t for t in floor.tables if t not in banks.banks)
        out["register"] = banks.register()
        return out

    @api.get("/verbs")
    def verbs(request: Request) -> list[dict[str, Any]]:
        """The bank's steps and their fields (the catalogue the CLI and scripts share)."""
        _staff(account(request))
        return [{"verb": v.name, "help": v.help,
                 "fields": [{"key": f.key, "kind": f.kind, "help": f.help,
                             "required": f.required} for f in v.fields]}
                for v in VERBS.values()]

    @api.get("/notices")
    def notices(request: Request) -> list[dict[str, Any]]:
        """The notices this account must receive (a count's discrepancy, a hold outside its
        band), newest first, with who has acknowledged each: acknowledge one with
        ``POST /api/bank/{table}/acknowledge`` ``{"fields": {"notice": N}}``."""
        who = account(request)
        _staff(who)
        return banks.notices_for(who)

    @api.get("/{table_id}")
    def detail(table_id: str, request: Request) -> dict[str, Any]:
        """One table's bank: inventory, last count, movements since, slips, discrepancies
        and the conservation check."""
        _staff(account(request))
        return banks.detail(table_id)

    @api.get("/{table_id}/report")
    def report(table_id: str, request: Request, day: DAY = None,
               float_yesterday: FLOAT = "", float_today: FLOAT = "") -> dict[str, Any]:
        """The table's gaming-day report: opener, fills, credits, closer, drop, win and hold
        (601a.9(c), the inferred terms labelled), counts, discrepancies, shifts; in Indiana,
        with the chip floats (``2500:300000,...``), the table receipts of 68 IAC 15-5-3."""
        _staff(account(request))
        return banks.report(table_id, day, float_yesterday=float_yesterday,
                            float_today=float_today)

    @api.get("/{table_id}/slip/{kind}/{number}")
    def slip(table_id: str, kind: str, number: int, request: Request) -> dict[str, Any]:
        """One slip as a printable document: ``fill`` or ``credit`` by its serial in the
        casino's series, ``inventory`` (a Table Inventory Slip) by its number here."""
        _staff(account(request))
        return banks.slip(table_id, kind, number)

    @api.post("/{table_id}/{verb}")
    async def step(table_id: str, verb: str, body: Step, request: Request) -> dict[str, Any]:
        """One bank step; a refusal is a 4xx naming the rule and its citation."""
        who = await account.awaited(request)
        _staff(who)
        events = await asyncio.to_thread(banks.step, table_id, who, verb, body.fields)
        return {"events": [{"kind": e.kind, "seq": e.seq, "rule": e.rule} for e in events],
                "bank": await asyncio.to_thread(banks.detail, table_id)}

    app.include_router(api)
