"""The server's one ASGI layer: every request passes it once, in one pass, before the framework.

In order, each step reading the headers as parsed once:

1. proxy headers: ``X-Forwarded-For``/``-Proto`` honoured only from a proxy the operator
   named (``security.Proxies``; none by default);
2. admission: a table command that the load gate refuses (its table's queue, or the work
   already in the server, ``server.shedding``) gets 503 and ``Retry-After`` before anything
   else is spent on it; one decided as it was read (``refusing_http``, ``pipeline.ADMITTED``)
   is not decided again;
3. the body limit: a body over ``limits.MAX_BODY`` gets 413, declared or counted as it
   arrives; the body is read once, here, and a command is admitted (counted in flight, if it
   carries a session this server knows) only once it is whole;
4. ownership: with the tables split between processes, a command for a table another process
   owns goes to it (``owners.Forwarder``), and every command's answer names the process that
   decided it (``owners.DECIDED_BY``);
5. ``Prefer: return=representation`` noted for the command's reply (``WANT_VIEW``);
6. the origin check of a cookie-authenticated write (``security.origin_refused``);
7. exactly-once commands (``Idempotency-Key``, ``idempotency.Keeper``);
8. the bet route answered here (``fast_route.BetRoute``), its reply encoded once with orjson;
   every other request, and a bet the fast path cannot take as it comes, goes to the
   framework's own route, whose answers (refusals included) it does not alter.

A WebSocket upgrade gets the proxy headers and the origin check; the lifespan goes straight
to the framework.

The hot command route answered at the door, without the framework's per-request machinery.

A bet is the request a full table sends most, and FastAPI's routing, dependency injection
(the session lookup on the thread pool) and response encoding were most of its cost.
``BetRoute`` is asked by ``server.door`` once the request has passed every check there (load,
body limit, ownership, origin, idempotency). For a ``POST`` to the bet route it does what the
route does, with the route's own pieces, and no rule of its own:

- the session, as ``Accounts.session`` gives it (remembered: ``server.session_cache``;
  a miss is read on a worker thread, never on the event loop);
- the body, validated by the route's own request model;
- the command, built by the route's own builder and queued through the same ``act``;
- a refusal answered by the app's own refusal handler.

Whatever it cannot take as it comes - no valid session, a body the model refuses, a media
type other than JSON - the door hands, untouched, to the framework's route, so every refusal
of bad input or of an unauthorised caller is the framework's own answer: there is one
implementation of each rule, and the two paths cannot disagree.

Transport and request-origin checks, and the per-client limit on failed logins.

- ``origin_refused``: a request that authenticates by the session *cookie* (a browser) and
  changes something must come from this server's own origin: a page elsewhere cannot ride
  the cookie (cross-site request forgery). Requests that carry ``Authorization: Bearer`` are
  not ridden by a browser and pass. A WebSocket upgrade is checked without exception: one
  that names another origin (or that a browser marks cross-site) is refused whatever it
  carries - a ``token`` in its query, a cookie, or neither.
- ``FailureLimiter``: at most ``limit`` failed logins per client in ``window`` seconds;
  more are answered 429 without a password check (the clock is injectable: tests count).
- ``Proxies``: ``X-Forwarded-For``/``-Proto`` honoured only from the proxies named;
- the session cookie is ``Secure`` when the server is reached over TLS
  (``dicetable serve --certfile/--keyfile``).

Exactly-once commands: the ``Idempotency-Key`` header (spec/standards.md RES-5).

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
import contextvars
import hashlib
import ipaddress
import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import orjson
from pydantic import BaseModel
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dicetable.core.errors import DicetableError, StaleVersion
from dicetable.server.accounts import Account, Accounts, TooManyAttempts
from dicetable.server.integrity import FAULT_CITATION
from dicetable.server.limits import MAX_BODY, replaying, too_large_body
from dicetable.server.owners import DECIDED_BY, FORWARDED, Forwarder, Split, table_of
from dicetable.server.shedding import ADMITTED, COMMAND_METHODS, RETRY_AFTER, LoadGate
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


def _messages(status: int, data: dict[str, Any], replayed: bool = False) -> list[Message]:
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
            for m in _messages(422, {"error": "InvalidInput", "message": "an Idempotency-Key is "
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
            for m in _messages(423, {"error": "TableFaulted", "message": f"{stream} is locked: "
                                 "its log failed verification; keyed requests are refused "
                                 "until a pit boss clears the fault",
                                 "rule": "integrity.fault", "citation": FAULT_CITATION}):
                await send(m)
            return
        kept = await asyncio.to_thread(self.answers.get, request_scope)
        if kept is not None:
            if kept[0] != fingerprint:
                for m in _messages(422, {"error": "InvalidInput", "message": "this "
                                     "Idempotency-Key was used for a different request",
                                     "rule": "idempotency.reuse", "citation": ""}):
                    await send(m)
                return
            for m in _messages(kept[1], json.loads(kept[2]), replayed=True):
                await send(m)
            return
        record = await asyncio.to_thread(self.applied, request_scope)
        if record is not None:  # committed before a crash, its answer never kept
            status, data = await self.recover(record, account)
            await asyncio.to_thread(self.answers.put, request_scope, fingerprint, status,
                                    data.decode(), self.now())
            for m in _messages(status, json.loads(data), replayed=True):
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


SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def _origin_of(scope: Scope, headers: dict[bytes, bytes]) -> str:
    host = headers.get(b"host", b"").decode("latin-1")
    scheme = {"https": "https", "wss": "https", "ws": "http"}.get(scope.get("scheme", "http"),
                                                                  "http")
    return f"{scheme}://{host}"


ORIGIN_REFUSED = json.dumps({"error": "RoleNotPermitted", "message": "a cookie-authenticated "
                             "request must come from this server's own pages (Origin)",
                             "rule": "security.origin", "citation": ""}).encode()
"""The 403's body for a cookie-authenticated write from another origin."""

def origin_refused(scope: Scope, headers: dict[bytes, bytes], cookie: str,
                   allowed: frozenset[str] = frozenset()) -> bool:
    """Is this request (``headers`` as parsed once) refused for its origin? A WebSocket upgrade
    from another origin always is; an HTTP write only when it authenticates by the session
    ``cookie`` (a ``Bearer`` token is never ridden by a browser)."""
    if scope["type"] == "websocket":
        return _foreign(scope, headers, allowed)
    if scope.get("method", "GET") in SAFE \
            or headers.get(b"authorization", b"").lower().startswith(b"bearer "):
        return False
    if cookie.encode() + b"=" not in headers.get(b"cookie", b""):
        return False  # not cookie-authenticated: nothing for another site to ride
    return _foreign(scope, headers, allowed)


def _foreign(scope: Scope, headers: dict[bytes, bytes], allowed: frozenset[str]) -> bool:
    """Does the request come from a page of another origin?"""
    origin = headers.get(b"origin")
    if origin is None:
        # Browsers send Origin on every cross-origin write and on WebSocket upgrades;
        # Sec-Fetch-Site tells a cross-site request even when they do not.
        return bool(headers.get(b"sec-fetch-site", b"") == b"cross-site")
    text = origin.decode("latin-1")
    return text != _origin_of(scope, headers) and text not in allowed


class Proxies:
    """The proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are honoured
    (``dicetable serve --forwarded-allow-ips``: addresses or networks; none by default).
    From one of them, the client is the nearest address in ``X-Forwarded-For`` that is not
    itself a named proxy (each proxy appends the peer it saw), and the scheme is the one it
    forwards; from anyone else both headers are ignored.

    >>> scope = {"type": "http", "client": ("10.0.0.5", 4000), "scheme": "http"}
    >>> Proxies("10.0.0.0/24").apply(scope, {b"x-forwarded-for": b"203.0.113.9, 10.0.0.7",
    ...                                      b"x-forwarded-proto": b"https"})
    >>> scope["client"], scope["scheme"]
    (('203.0.113.9', 0), 'https')
    """

    def __init__(self, named: str) -> None:
        self.addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.names: set[str] = set()
        for item in (p.strip() for p in named.split(",")):
            if not item:
                continue
            try:
                if "/" in item:
                    self.networks.append(ipaddress.ip_network(item, strict=False))
                else:
                    self.addresses.add(ipaddress.ip_address(item))
            except ValueError:
                self.names.add(item)  # not an address: a literal (a unix socket's name)

    def __bool__(self) -> bool:
        return bool(self.addresses or self.networks or self.names)

    def trusts(self, host: str | None) -> bool:
        if not host:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return host in self.names
        return address in self.addresses or any(address in net for net in self.networks)

    def apply(self, scope: Scope, headers: dict[bytes, bytes]) -> None:
        """Rewrite ``scope``'s client and scheme as a named proxy forwards them."""
        client = scope.get("client")
        if not self.trusts(client[0] if client else None):
            return
        proto = headers.get(b"x-forwarded-proto")
        if proto is not None:
            scheme = proto.decode("latin-1").strip()
            if scheme in ("http", "https", "ws", "wss"):
                scope["scheme"] = scheme.replace("http", "ws") \
                    if scope["type"] == "websocket" else scheme
        forwarded = headers.get(b"x-forwarded-for")
        if forwarded is None:
            return
        hosts = [h.strip() for h in forwarded.decode("latin-1").split(",")]
        for host in reversed(hosts):
            if not self.trusts(host):
                break
        else:
            host = hosts[0]  # every hop a named proxy: the first is the client
        if host:
            scope["client"] = (host, 0)


class FailureLimiter:
    """Failed logins per client in a sliding window."""

    def __init__(self, limit: int = 10, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str) -> deque[float]:
        now = self.clock()
        seen = self._seen.setdefault(client, deque())
        while seen and seen[0] <= now - self.window:
            seen.popleft()
        if not seen:
            self._seen.pop(client, None)
        return seen

    def check(self, client: str) -> None:
        with self._lock:
            if len(self._recent(client)) >= self.limit:
                raise TooManyAttempts(f"too many failed logins from this client; wait "
                                      f"{int(self.window)} s", rule="accounts.rate_limit")

    def failed(self, client: str) -> None:
        with self._lock:
            self._recent(client)
            self._seen.setdefault(client, deque()).append(self.clock())


Act = Callable[[str, Account, BaseModel], Awaitable[dict[str, Any]]]
"""Queue the route's command for (table, caller, validated body); the reply after the commit."""

def _json(kind: bytes) -> bool:
    """Is ``kind`` (a Content-Type) JSON: ``application/json`` or ``application/...+json``,
    parameters after ``;`` aside? Scanned once, not matched by a pattern that backtracks."""
    media = kind.partition(b";")[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/")
                                             and media.endswith(b"+json"))


class BetRoute:
    def __init__(self, *, prefix: str, suffix: str, model: type[BaseModel], act: Act,
                 accounts: Accounts, cookie: str) -> None:
        self.prefix = prefix
        self.suffix = suffix
        self.model = model
        self.act = act
        self.accounts = accounts
        self.cookie = cookie

    def table(self, path: str) -> str | None:
        """The table of a path ``{prefix}TABLE{suffix}`` (one segment), else None."""
        if not (path.startswith(self.prefix) and path.endswith(self.suffix)):
            return None
        table = path[len(self.prefix):len(path) - len(self.suffix)]
        return table if table and "/" not in table else None

    async def take(self, headers: dict[bytes, bytes], body: bytes
                   ) -> tuple[Account, BaseModel] | None:
        """The caller and the validated body, or None: the framework's route answers it."""
        kind = headers.get(b"content-type")
        if kind is not None and not _json(kind):
            return None
        token = token_of(headers, self.cookie)
        if not token:
            return None
        who = self.accounts.remembered(token)
        if who is None:
            try:
                who = await asyncio.to_thread(self.accounts.session, token)
            except DicetableError:
                return None
        try:
            data = self.model.model_validate_json(body)
        except Exception:  # not JSON, or the model refuses it: the route says how
            return None
        return who, data


log = logging.getLogger(__name__)

WANT_VIEW: contextvars.ContextVar[bool] = contextvars.ContextVar("want_view", default=False)
"""The request asked for the whole view in a command's reply (``Prefer: return=representation``,
RFC 7240); by default a reply holds only the command's events and the caller's balance."""
Refusal = Callable[[Exception], Any]
"""The app's answer (an ASGI response) to an exception a command raised; None: not one."""

_FORWARDED = FORWARDED.encode()
_DECIDED_BY = DECIDED_BY.encode()
_JSON = (b"content-type", b"application/json")


class Door:
    """The one layer in front of the framework (``app``): see the module's text."""

    def __init__(self, app: ASGIApp, *, gate: LoadGate, split: Split, cookie: str,
                 allowed_origins: frozenset[str] = frozenset(),
                 proxies: Proxies | None = None, keeper: Keeper,
                 bet: BetRoute | None, refusal: Refusal, limit: int = MAX_BODY) -> None:
        self.app = app
        self.gate = gate
        self.split = split
        self.cookie = cookie
        self.allowed = allowed_origins
        self.proxies = proxies
        self.keeper = keeper
        self.bet = bet
        self.refusal = refusal
        self.limit = limit
        self.forwarder = Forwarder()
        self.taken = 0
        self.passed = 0
        """Bets answered here, and handed to the framework's route (tests count them)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            headers = dict(scope["headers"])
            if self.proxies is not None:
                self.proxies.apply(scope, headers)
            if origin_refused(scope, headers, self.cookie, self.allowed):
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 4403,
                            "reason": "cross-origin upgrade refused"})
                return
            await self.app(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers: dict[bytes, bytes] = dict(scope["headers"])
        if self.proxies is not None:
            self.proxies.apply(scope, headers)
        method: str = scope["method"]
        gate = self.gate
        pipeline = None
        counted = False
        admitted = scope.get(ADMITTED)
        if admitted is not None:  # decided as it was read, its body whole
            counted = bool(admitted)
        elif method in COMMAND_METHODS:
            pipeline = gate.pipeline(method, scope["path"])
            if pipeline is not None:
                busy = gate.refusal_at(pipeline)
                if busy is not None:
                    await _answer(send, 503, busy, retry=True)
                    return
        body = await self._body(headers, receive)
        if body is None:
            await _answer(send, 413, too_large_body(self.limit), close=True)
            return
        if pipeline is not None:
            counted = gate.known(headers)
            busy = gate.admit_at(pipeline, count=counted)
            if busy is not None:
                await _answer(send, 503, busy, retry=True)
                return
        try:
            await self._admitted(scope, headers, method, body, receive, send)
        finally:
            if counted:
                gate.admission.done()

    async def _body(self, headers: dict[bytes, bytes], receive: Receive) -> bytes | None:
        """The request's whole body, or None when it is over the limit (declared, or counted
        as it arrives: nothing past the limit is kept)."""
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                if int(declared) > self.limit:
                    return None
            except ValueError:
                return None
        message = await receive()
        if message["type"] != "http.request":
            return b""
        body: bytes = message.get("body", b"")
        if not message.get("more_body", False):
            return body if len(body) <= self.limit else None
        chunks, size = [body], len(body)
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _admitted(self, scope: Scope, headers: dict[bytes, bytes], method: str,
                        body: bytes, receive: Receive, send: Send) -> None:
        owners = self.split.owners
        if owners is not None and method in COMMAND_METHODS:
            table = table_of(scope["path"])
            if table is not None and _FORWARDED not in headers and not owners.owns(table):
                url = owners.owner_url(table)
                if url is not None and url != owners.url:
                    try:
                        status, out, content = await self.forwarder.forward(url, scope, body)
                    except Exception:  # the owner is gone: decide here (the store keeps it
                        # safe: a second writer's append is refused as stale)
                        log.warning("owner of %s at %s did not answer; deciding here",
                                    table, url)
                        owners.forget(table)
                    else:
                        await send({"type": "http.response.start", "status": status,
                                    "headers": out})
                        await send({"type": "http.response.body", "body": content})
                        return
            send = _decided_here(send)
        WANT_VIEW.set(b"return=representation" in headers.get(b"prefer", b""))
        if method not in SAFE and origin_refused(scope, headers, self.cookie, self.allowed):
            await _answer(send, 403, ORIGIN_REFUSED)
            return
        if b"idempotency-key" in headers and self.keeper.applies(scope):
            async def then(answer: Send) -> None:
                await self._route(scope, headers, method, body, receive, answer)

            await self.keeper.handle(scope, headers, body, answer=send, then=then)
            return
        await self._route(scope, headers, method, body, receive, send)

    async def _route(self, scope: Scope, headers: dict[bytes, bytes], method: str,
                     body: bytes, receive: Receive, send: Send) -> None:
        bet = self.bet
        table = bet.table(scope["path"]) if bet is not None and method == "POST" else None
        if table is not None and bet is not None:
            taken = await bet.take(headers, body)
            if taken is not None:
                self.taken += 1
                who, data = taken
                try:
                    reply = await bet.act(table, who, data)
                except Exception as exc:
                    response = self.refusal(exc)
                    if response is None:
                        raise
                    await response(scope, receive, send)
                    return
                await _answer(send, 200, orjson.dumps(reply, option=orjson.OPT_NON_STR_KEYS))
                return
            self.passed += 1  # the framework's route answers it, refusal and all
        await self.app(scope, replaying(body, receive), send)


def _decided_here(send: Send) -> Send:
    """``send``, naming this process as the one that decided the command."""
    pid = str(os.getpid()).encode()

    async def marked(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []),
                                               (_DECIDED_BY, pid)]}
        await send(message)

    return marked


async def _answer(send: Send, status: int, body: bytes, *, retry: bool = False,
                  close: bool = False) -> None:
    """A JSON answer written at the door: its bytes encoded once, its headers built here."""
    head = [_JSON, (b"content-length", str(len(body)).encode())]
    if retry:
        head.append((b"retry-after", RETRY_AFTER))
    if close:
        head.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})
