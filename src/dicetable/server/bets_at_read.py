"""Bets placed and taken down in the callback that read them: no ASGI task, scope, or send.

A full table's players mostly place bets and take them down, and once ``server.door`` had
taken the framework's routing off a bet, most of what was left was the ASGI machinery around
it: a task created per request, the scope and the layers' ``send`` wrappers, the coroutines
resumed when the answer came, uvicorn's response writer. ``RefusingHttp`` reads a command's
body whole before admitting it; an admitted command for one of the routes here
(``ReadRoute``: ``POST bets``, ``DELETE bets/{bet}``) is then offered to ``BetsAtRead.take``,
and one taken is queued on its table's pipeline at once, its answer written to the connection
by a callback on its future.

A command is taken only when every check the door would make has nothing to do for it, and
each check is the door's own: the named proxies' headers applied (``Door.proxies``), no
``Idempotency-Key`` (``Keeper``), a table this process decides (``owners``), an origin that
``origin_refused`` lets pass, a session the server remembers (found once, by the load gate
that counted the command in flight), and a body the route's own model validates (none, for
a route without one). Anything else is left to the door untouched,
so every refusal of bad input or of a caller is still the framework's route's own and the two
paths cannot disagree. What a taken command does is the route's: its builder and queue
(``ReadRoute.queue``), the app's refusal handler, counted by the ``Observer`` as the door's
answers are.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson
from pydantic import BaseModel

from dicetable.application.accounts import Account
from dicetable.application.pipeline import Settled
from dicetable.server.door import Door, json_media, origin_refused, validated
from dicetable.server.owners import DECIDED_BY, FORWARDED

BETS_STATE = "dicetable.bets_at_read"
"""The ASGI lifespan state's key for the server's ``BetsAtRead`` (``refusing_http`` reads it)."""
PREFIX = "/api/tables/"
"""Where a table's command routes begin (``/api/tables/{table_id}/<route's path>``)."""

Headers = list[tuple[bytes, bytes]]
Reply = Callable[[int, Headers, bytes], None]
"""Write an answer: its status, its own headers (content-type among them, not its length),
its body."""

_FORWARDED = FORWARDED.encode()
_DECIDED_BY = DECIDED_BY.encode()
_JSON = (b"content-type", b"application/json")
_FAILED = b"Internal Server Error"

log = logging.getLogger(__name__)


class Queue(Protocol):
    """Queue a route's command(s) for a caller, its validated body (None: the route has no
    body) and its path's fields; ``answer`` is settled after the commit."""

    def __call__(self, table_id: str, who: Account, body: BaseModel | None,
                 params: dict[str, str], *, with_view: bool, answer: Settled) -> None: ...


class Counted(Protocol):
    """The observer's count of an answer to a command of route ``kind`` (its path's
    template, ``bets/{bet}``: ``observe.Observer.answered``)."""

    def __call__(self, scope: dict[str, Any], kind: str, table: str, status: int,
                 body: bytes, seconds: float) -> None: ...


@dataclass(frozen=True)
class ReadRoute:
    """A catalogue route answered at read: ``METHOD /api/tables/{table_id}/<path>``.

    >>> r = ReadRoute("DELETE", "bets/{bet}", None, lambda *a, **k: None)
    >>> r.params(["bets", "b-7"]), r.params(["bets", ""]), r.params(["chips", "b-7"])
    ({'bet': 'b-7'}, None, None)
    """

    method: str
    path: str
    model: type[BaseModel] | None
    """The route's request model (None: it takes no body)."""
    queue: Queue

    @property
    def key(self) -> tuple[str, str, int]:
        parts = self._parts
        return self.method, parts[0], len(parts)

    @functools.cached_property
    def _parts(self) -> tuple[str, ...]:
        """The path's parts (split once: ``params`` is asked for every command)."""
        return tuple(self.path.split("/"))

    def params(self, parts: list[str]) -> dict[str, str] | None:
        """The path's fields, where ``parts`` (the path after the table, split at ``/``)
        are this route's; else None."""
        found: dict[str, str] = {}
        for want, part in zip(self._parts, parts, strict=True):
            if want.startswith("{"):
                if not part:
                    return None
                found[want[1:-1]] = part
            elif want != part:
                return None
        return found


@dataclass(eq=False, kw_only=True)
class BetsAtRead:
    """The commands the protocol may answer itself (see the module's text)."""

    door: Door
    routes: tuple[ReadRoute, ...]
    counted: Counted
    done: Callable[[], None]
    """A command admitted and counted in flight is answered (``Admission.done``)."""
    taken: int = field(default=0, init=False)
    """Commands answered here (tests count them)."""

    def __post_init__(self) -> None:
        self._routes = {r.key: r for r in self.routes}
        self._queued: list[_Command] = []

    def take(self, scope: dict[str, Any], headers: dict[bytes, bytes], body: bytes,
             who: Account, reply: Reply) -> bool:
        """Take the admitted command whose ``scope`` (``method``, ``path``, ``scheme``,
        ``client``), ``headers`` and ``body`` the protocol read, and answer it through
        ``reply``; False: left to the door, nothing done. ``who``: the account behind its
        session, as the server remembers it (the load gate's ``caller``, which counted the
        command in flight under it)."""
        path: str = scope["path"]
        if not path.startswith(PREFIX):
            return False
        table, *parts = path[len(PREFIX):].split("/")
        route = self._routes.get((scope["method"], parts[0] if parts else "", len(parts)))
        params = None if route is None or not table else route.params(parts)
        if route is None or params is None:
            return False
        door = self.door
        if b"idempotency-key" in headers:
            return False
        if door.proxies is not None:  # on a copy: one left to the door is as it was read
            scope = dict(scope)
            door.proxies.apply(scope, headers)
        extra: Headers = []
        owners = door.split.owners
        if owners is not None:
            if _FORWARDED not in headers and not owners.owns(table):
                return False
            extra.append((_DECIDED_BY, str(os.getpid()).encode()))
        if origin_refused(scope, headers, door.cookie, door.allowed_origins):
            return False
        data = None
        if route.model is not None:
            kind = headers.get(b"content-type")
            if not body or (kind is not None and not json_media(kind)):
                return False
            data = validated(route.model, body)
            if data is None:
                return False
        elif body:
            return False
        self.taken += 1
        if not self._queued:
            asyncio.get_running_loop().call_soon(self._queue)
        self._queued.append(_Command(self, scope, route, table, extra, reply, who, data, params,
                                   b"return=representation" in headers.get(b"prefer", b"")))
        return True

    def _queue(self) -> None:
        """Queue the commands taken since the loop last ran its callbacks, all at once.

        They were read one socket at a time, and the event loop lets the interpreter go
        between one socket's callback and the next: a table's thread, woken by the first,
        would take it alone, and a batch of one pays a whole commit. Queued together here,
        in one callback, each table finds them all in its next batch, as it finds the
        commands of the tasks the loop runs together."""
        queued, self._queued = self._queued, []
        for taken in queued:
            try:
                taken.queue()
            except Exception:  # one answer that could not be written stops no other
                log.exception("a command taken at read could not be answered")

    def _refused(self, exc: BaseException, answered: Reply) -> None:
        """The app's answer to what a command raised; a fault (no refusal for it) is logged
        and answered 500, as uvicorn answers an app that raised."""
        response = self.door.refusal(exc) if isinstance(exc, Exception) else None
        if response is None:
            log.error("Exception in a command answered at read", exc_info=exc)
            answered(500, [(b"content-type", b"text/plain; charset=utf-8")], _FAILED)
            return
        answered(response.status_code, [h for h in response.raw_headers
                                        if h[0] != b"content-length"], bytes(response.body))


class _Command:
    """A command taken at read, from its queueing to its answer written. The table's thread
    settles it on the event loop as it would a future (``pipeline.Settled``), and it writes
    its answer there and then: no future, no callback scheduled for the loop's next turn,
    and one object where closures over the request were several for the collector to
    count."""

    __slots__ = ("at_read", "data", "extra", "finished", "params", "reply", "route", "scope",
                 "started", "table", "who", "with_view")

    def __init__(self, at_read: BetsAtRead, scope: dict[str, Any], route: ReadRoute,
                 table: str, extra: Headers, reply: Reply, who: Account,
                 data: BaseModel | None, params: dict[str, str], with_view: bool) -> None:
        self.at_read, self.scope, self.route, self.table = at_read, scope, route, table
        self.extra, self.reply, self.who, self.data = extra, reply, who, data
        self.params, self.with_view = params, with_view
        self.finished = False
        self.started = time.perf_counter()

    def queue(self) -> None:
        try:
            self.route.queue(self.table, self.who, self.data, self.params,
                             with_view=self.with_view, answer=self)
        except Exception as exc:
            self.finished = True
            self.at_read._refused(exc, self.answered)

    def done(self) -> bool:
        return self.finished

    def set_result(self, result: Any, /) -> None:
        self.finished = True
        try:
            body = orjson.dumps(result, option=orjson.OPT_NON_STR_KEYS)
        except Exception as exc:  # as a future's callback that raised: logged, answered 500
            self.at_read._refused(exc, self.answered)
            return
        self.answered(200, [_JSON], body)

    def set_exception(self, exception: BaseException, /) -> None:
        self.finished = True
        self.at_read._refused(exception, self.answered)

    def answered(self, status: int, own: Headers, content: bytes) -> None:
        try:
            self.reply(status, own + self.extra, content)
        except Exception:  # the connection's; the rest of the batch's answers go out
            log.exception("a command taken at read could not be answered")
        finally:
            at_read = self.at_read
            at_read.done()
            at_read.counted(self.scope, self.route.path, self.table, status, content,
                            time.perf_counter() - self.started)
