"""The hot command route answered without the framework's per-request machinery.

A bet is the request a full table sends most, and FastAPI's routing, dependency injection
(the session lookup on the thread pool) and response encoding were most of its cost.
``FastRoute`` is a plain ASGI middleware, the innermost of the server's own: every request
reaches it through the same load shedding, forwarding, body limit, origin check and
idempotency layers as any other. For a matching ``POST`` it does what the route does, with
the route's own pieces, and no rule of its own:

- the session, as ``Accounts.session`` gives it (remembered: ``server.session_cache``;
  a miss is read on a worker thread, never on the event loop);
- the body, validated by the route's own request model;
- the command, built by the route's own builder and queued through the same ``act``;
- a refusal answered by the app's own refusal handler.

Whatever it cannot take as it comes - no valid session, a body the model refuses, a media
type other than JSON - it hands, untouched, to the framework's route, so every refusal of bad
input or of an unauthorised caller is the framework's own answer: there is one implementation
of each rule, and the two paths cannot disagree.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dicetable.core.errors import DicetableError
from dicetable.server.accounts import Account, Accounts
from dicetable.server.idempotency import token_of
from dicetable.server.limits import read_body, replaying

Act = Callable[[str, Account, BaseModel], Awaitable[dict[str, Any]]]
"""Queue the route's command for (table, caller, validated body); the reply after the commit."""
Refusal = Callable[[Exception], Response | None]
"""The app's answer to an exception the route raised (None: not one it answers)."""

def _json(kind: bytes) -> bool:
    """Is ``kind`` (a Content-Type) JSON: ``application/json`` or ``application/...+json``,
    parameters after ``;`` aside? Scanned once, not matched by a pattern that backtracks."""
    media = kind.partition(b";")[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/")
                                             and media.endswith(b"+json"))


class FastRoute:
    def __init__(self, app: ASGIApp, *, path: str, model: type[BaseModel], act: Act,
                 accounts: Accounts, cookie: str, refusal: Refusal) -> None:
        self.app = app
        self.path = re.compile(path)
        self.model = model
        self.act = act
        self.accounts = accounts
        self.cookie = cookie
        self.refusal = refusal
        self.taken = 0
        self.passed = 0
        """Requests answered here, and handed to the framework's route (tests count them)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = self.path.match(scope["path"]) if scope["type"] == "http" \
            and scope["method"] == "POST" else None
        if match is None:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        body = await read_body(receive)  # already bounded by the body limit outside
        taken = await self._take(headers, body)
        if taken is None:  # the framework's route answers it, refusal and all
            self.passed += 1
            await self.app(scope, replaying(body, receive), send)
            return
        self.taken += 1
        who, data = taken
        try:
            reply = await self.act(match.group(1), who, data)
        except Exception as exc:
            response = self.refusal(exc)
            if response is None:
                raise
        else:
            response = JSONResponse(reply)
        await response(scope, receive, send)

    async def _take(self, headers: dict[bytes, bytes], body: bytes
                    ) -> tuple[Account, BaseModel] | None:
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
            data = self.model.model_validate(json.loads(body))
        except Exception:  # not JSON, or the model refuses it: the route says how
            return None
        return who, data
