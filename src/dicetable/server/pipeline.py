"""The HTTP door's load gate: which table commands are refused for load before they are read.

A table's own queue (``application.pipeline.StreamPipeline``) reports its load; this module
turns that into a ``503`` with ``Retry-After`` at the door, before anything else is spent on
the request. Load is shed here and nowhere else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from dicetable.application.pipeline import RETRY_AFTER_S, Busy, StreamPipeline
from dicetable.server.limits import MAX_BODY
from dicetable.server.shedding import Admission, Impatience


class _Piped(Protocol):
    @property
    def pipeline(self) -> StreamPipeline | None: ...


class TableHost(Protocol):
    """What the gate reads of the floor: each table's pipeline."""

    @property
    def tables(self) -> Mapping[str, _Piped]: ...


_TABLE_PATH = re.compile(r"^/api/tables/([^/]+)/")
COMMAND_METHODS = frozenset(("POST", "PATCH", "DELETE"))
"""The HTTP methods of a table's commands (every other method only reads)."""


GATE_STATE = "dicetable.load_gate"
"""The ASGI lifespan state's key for the server's ``LoadGate`` (``refusing_http`` reads it)."""


class LoadGate:
    """Which commands are refused for load: one for a table whose queue is full, or one that
    would wait too long behind the commands already in the server (``server.shedding``).
    Asked by ``ShedLoad`` and, as a request is read, by ``refusing_http.RefusingHttp``."""

    def __init__(self, floor: TableHost, admission: Admission | None = None,
                 impatience: Impatience | None = None,
                 known: Callable[[dict[bytes, bytes]], bool] | None = None) -> None:
        self.floor = floor
        self.admission = admission or Admission()
        self.impatience = impatience or Impatience()
        """Clients refused for load lately (their next 503s held, ``refusing_http``)."""
        self.known = known or (lambda headers: True)
        """Does a request (its headers) carry a session this server knows, without reading
        the database? Only such a command counts in flight: a client without a session
        cannot fill the server's capacity and so refuse the others'."""

    def pipeline(self, method: str, path: str) -> StreamPipeline | None:
        """The pipeline a command for ``path`` would queue on (None: not a table command)."""
        if method not in COMMAND_METHODS:
            return None
        match = _TABLE_PATH.match(path)
        info = self.floor.tables.get(match.group(1)) if match else None
        return info.pipeline if info is not None else None

    def refusal_at(self, pipeline: StreamPipeline) -> bytes | None:
        """The 503's body for a command that would queue on ``pipeline``, arriving now, or
        None when it is not refused for load (a refusal is counted)."""
        if pipeline.overloaded():
            pipeline.stats.busy += 1
            return TABLE_BUSY
        return SERVER_BUSY if self.admission.refuse() else None

    def admit_at(self, pipeline: StreamPipeline, *, count: bool = True) -> bytes | None:
        """``refusal_at``, and a command not refused is counted in flight at once when
        ``count`` (its ``Admission.done`` is the caller's), so that the next request read
        sees it. Asked once the command's body has arrived whole, never at its headers."""
        body = self.refusal_at(pipeline)
        if body is None and count:
            self.admission.enter()
        return body


ADMITTED = "dicetable.admitted"
"""Scope key set by ``refusing_http.RefusingHttp`` on a command it admitted as it was read,
its body whole: True when counted in flight, False when not (no session known), so that
``ShedLoad`` does not decide it again."""


class ShedLoad:
    """ASGI middleware, outermost: a command ``LoadGate`` refuses gets ``503`` and
    ``Retry-After`` before anything else is spent on it (no session lookup), so that
    refusing the excess stays cheap under overload. One not refused at once has its body
    read (bounded) before it is admitted and counted in flight until answered - and counted
    only if it carries a session this server knows: a body that never comes holds nothing
    but its own connection. Served by ``refusing_http.RefusingHttp``, most of the excess is
    refused before it reaches here, as it is read, and the admitted come here decided."""

    def __init__(self, app: Any, gate: LoadGate, most: int = MAX_BODY) -> None:
        self.app = app
        self.gate = gate
        self.admission = gate.admission
        self.most = most
        """Body bytes read before admission at most (past them the body limit answers)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if ADMITTED in scope:  # decided by the protocol (counted out below if counted)
            counted = bool(scope[ADMITTED])
        else:
            pipeline = self.gate.pipeline(scope["method"], scope["path"]) \
                if scope["type"] == "http" else None
            if pipeline is None:
                await self.app(scope, receive, send)
                return
            body = self.gate.refusal_at(pipeline)
            if body is not None:
                await _busy(send, body)
                return
            whole, receive = await _read_first(receive, self.most)
            counted = whole and self.gate.known(dict(scope.get("headers") or []))
            body = self.gate.admit_at(pipeline, count=counted)
            if body is not None:
                await _busy(send, body)
                return
        try:
            await self.app(scope, receive, send)
        finally:
            if counted:
                self.admission.done()


async def _read_first(receive: Any, most: int) -> tuple[bool, Any]:
    """Read a request's body before it is admitted: (whether it came whole within ``most``
    bytes, a ``receive`` that hands the app what was read, then the rest)."""
    chunks: list[Any] = []
    size = 0
    whole = False
    while size <= most:
        message = await receive()
        chunks.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            whole = size <= most
            break

    async def replay() -> Any:
        return chunks.pop(0) if chunks else await receive()

    return whole, replay


def _busy_body(message: str) -> bytes:
    """A 503's body: a ``Busy`` refusal's own shape, serialised once (refusing stays cheap)."""
    return json.dumps(Busy(message).to_dict(), separators=(",", ":")).encode()


TABLE_BUSY = _busy_body("the table has too many commands waiting; retry shortly")
SERVER_BUSY = _busy_body("the server is answering all it can; retry shortly")
"""The 503s' bodies: the table's own queue is full, or the server's (whichever layer
refuses: ``refusing_http`` writes them too)."""
RETRY_AFTER = str(RETRY_AFTER_S).encode()


async def _busy(send: Any, body: bytes) -> None:
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"retry-after", RETRY_AFTER),
        (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
