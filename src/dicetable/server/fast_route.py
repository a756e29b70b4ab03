"""The hot command route answered at the door, without the framework's per-request machinery.

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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from dicetable.core.errors import DicetableError
from dicetable.server.accounts import Account, Accounts
from dicetable.server.idempotency import token_of

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
