"""Exactly-once commands: the ``Idempotency-Key`` header (spec/standards.md RES-5).

A client names each mutating request (POST, PATCH, PUT, DELETE) with a key of its own
choosing and sends the same key when it retries. Per account and key:

- the first request runs; its answer (status and body, refusals included) is kept;
- a retry with the same key gets that answer again, and the command is not run again;
  a key reused for a *different* request is refused (422, ``idempotency.reuse``);
- the same key while the first is still running waits for it;
- across a crash: the key travels with the command to the store and is committed in the same
  transaction as its events (``store.requests``), so a retry after a restart that finds no
  kept answer but a committed command rebuilds the answer from the log - never runs it twice.

Login and logout are not commands and are not kept (a kept answer would hold a session
token). A key is 1-128 visible ASCII characters.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from starlette.types import Message, Scope, Send

from dicetable.core.errors import StaleVersion
from dicetable.server.integrity import FAULT_CITATION
from dicetable.store import request_stream
from dicetable.store.base import EventStore, RequestRecord, request_in_progress
from dicetable.store.chain import decode_body

HEADER = b"idempotency-key"
MUTATING = frozenset({"POST", "PATCH", "PUT", "DELETE"})
EXEMPT = ("/api/login", "/api/logout")
_KEY = re.compile(r"^[\x21-\x7e]{1,128}$")

Who = Callable[[str | None], str | None]
"""The account name behind a session token (None: no valid session)."""
Recover = Callable[[RequestRecord, str], Awaitable[tuple[int, bytes]]]
"""Rebuild the answer of a committed request (its record, the account) from the log."""
Applied = Callable[[str], RequestRecord | None]


KEEP_HOURS = 24
"""How long an answer is kept to be replayed (industry-default). Older retries are still
never applied twice: the command's record in the store rebuilds their answer."""


class Answers:
    """Kept answers, as ``RequestRecorded`` events of the account's ``requests:NAME`` stream
    in the one store (so they survive a restart and are chained like everything else); the
    store's request index finds each in one read."""

    def __init__(self, store: EventStore, *, now: str | None = None,
                 faulted: Callable[[str], bool] = lambda stream: False) -> None:
        self.store = store
        self.now = now
        self.faulted = faulted
        """Whether a stream is under an integrity fault: no answer is replayed from it."""
        """Answers kept longer than ``KEEP_HOURS`` before this are not replayed."""

    def get(self, scope: str) -> tuple[str, int, str] | None:
        found = self.store.request_record(request_stream.index_key(scope))
        if found is None:
            return None
        for row in self.store.records(found.table, after=found.first_seq - 1,
                                      until=found.first_seq):
            event = decode_body(row.body)
            if not isinstance(event, request_stream.RequestRecorded) or event.scope != scope:
                return None
            if self.now is not None and datetime.fromisoformat(event.at) < \
                    datetime.fromisoformat(self.now) - timedelta(hours=KEEP_HOURS):
                return None
            return event.fingerprint, event.status, event.body
        return None

    def put(self, scope: str, fingerprint: str, status: int, body: str, at: str) -> None:
        account = scope.partition(":")[0]
        stream = f"{request_stream.KIND}:{account}"
        for _ in range(50):  # the account's other requests, here or elsewhere: after them
            if self.get(scope) is not None:
                return  # kept already (a duplicate in another process got there first)
            head = self.store.head(stream).seq
            try:
                self.store.append(stream, [request_stream.RequestRecorded(
                    account=account, seq=head + 1, at=at, scope=scope,
                    fingerprint=fingerprint, status=status, body=body)], expected=head,
                    request=request_stream.index_key(scope))
                return
            except StaleVersion:
                continue


def _json(status: int, data: dict[str, Any], replayed: bool = False) -> list[Message]:
    body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if replayed:
        headers.append((b"idempotent-replayed", b"true"))
    return [{"type": "http.response.start", "status": status, "headers": headers},
            {"type": "http.response.body", "body": body}]


def token_of(headers: dict[bytes, bytes], cookie: str) -> str | None:
    """The session token a request carries: ``Authorization: Bearer``, else the cookie."""
    auth = headers.get(b"authorization", b"").decode("latin-1")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name == cookie:
            return value
    return None


Then = Callable[[Send], Awaitable[None]]
"""Run the request (its body already read) answering through the ``Send`` given."""


class Keeper:
    """Exactly-once commands, asked by ``server.door`` for a request that carries the header,
    with its body already read (bounded) and its headers parsed once."""

    def __init__(self, *, answers: Answers, who: Who, applied: Applied, recover: Recover,
                 cookie: str, now: Callable[[], str]) -> None:
        self.answers = answers
        self.who = who
        self.applied = applied
        self.recover = recover
        self.cookie = cookie
        self.now = now
        self._running: dict[str, asyncio.Lock] = {}

    @staticmethod
    def applies(scope: Scope) -> bool:
        """Is this request one whose key is kept (a command, not a login or logout)?"""
        return scope.get("method") in MUTATING \
            and not str(scope.get("path", "")).startswith(EXEMPT)

    async def handle(self, scope: Scope, headers: dict[bytes, bytes], body: bytes, *,
                     answer: Send, then: Then) -> None:
        key = headers[HEADER].decode("latin-1")
        if not _KEY.match(key):
            for m in _json(422, {"error": "InvalidInput", "message": "an Idempotency-Key is "
                                 "1-128 visible ASCII characters", "rule": "idempotency.key",
                                 "citation": ""}):
                await answer(m)
            return
        account = await asyncio.to_thread(self.who, token_of(headers, self.cookie))
        if account is None:  # the app refuses it (401); nothing to keep
            await then(answer)
            return
        fingerprint = hashlib.sha256(
            f"{scope['method']} {scope['path']} {scope.get('query_string', b'')!r}".encode()
            + b"\n" + body).hexdigest()
        request_scope = f"{account}:{key}"
        lock = self._running.setdefault(request_scope, asyncio.Lock())
        try:
            async with lock:  # a concurrent duplicate waits for the first, then its answer
                await self._once(answer, then, fingerprint, request_scope, account)
        finally:
            if not lock.locked():  # a later duplicate finds the kept answer
                self._running.pop(request_scope, None)

    async def _once(self, send: Send, then: Then, fingerprint: str, request_scope: str,
                    account: str) -> None:
        stream = f"{request_stream.KIND}:{account}"
        if self.answers.faulted(stream):  # a kept answer there may be a forged one
            for m in _json(423, {"error": "TableFaulted", "message": f"{stream} is locked: "
                                 "its log failed verification; keyed requests are refused "
                                 "until a pit boss clears the fault",
                                 "rule": "integrity.fault", "citation": FAULT_CITATION}):
                await send(m)
            return
        kept = await asyncio.to_thread(self.answers.get, request_scope)
        if kept is not None:
            if kept[0] != fingerprint:
                for m in _json(422, {"error": "InvalidInput", "message": "this "
                                     "Idempotency-Key was used for a different request",
                                     "rule": "idempotency.reuse", "citation": ""}):
                    await send(m)
                return
            for m in _json(kept[1], json.loads(kept[2]), replayed=True):
                await send(m)
            return
        record = await asyncio.to_thread(self.applied, request_scope)
        if record is not None:  # committed before a crash, its answer never kept
            status, data = await self.recover(record, account)
            await asyncio.to_thread(self.answers.put, request_scope, fingerprint, status,
                                    data.decode(), self.now())
            for m in _json(status, json.loads(data), replayed=True):
                await send(m)
            return
        status_box: list[int] = []
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_box.append(int(message["status"]))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        with request_in_progress(request_scope):
            await then(capture)
        status = status_box[0] if status_box else 500
        text = b"".join(chunks)
        if status < 500:
            try:
                json.loads(text)
            except ValueError:
                return
            await asyncio.to_thread(self.answers.put, request_scope, fingerprint, status,
                                    text.decode(), self.now())


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """Declare the optional ``Idempotency-Key`` header on every mutating operation."""
    header = {"name": "Idempotency-Key", "in": "header", "required": False,
              "description": "Your id for this command: a retry with the same id gets the "
                             "original answer and is never applied twice",
              "schema": {"type": "string", "minLength": 1, "maxLength": 128,
                         "pattern": "^[\\x21-\\x7e]+$"}}
    for path, item in schema.get("paths", {}).items():
        if path.startswith(EXEMPT):
            continue
        for method, op in item.items():
            if method.upper() in MUTATING:
                params = op.setdefault("parameters", [])
                if not any(p.get("name") == "Idempotency-Key" for p in params):
                    params.append(header)
    return schema
