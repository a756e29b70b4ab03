"""Refusing the excess as it is read, not after it is scheduled.

Under overload most commands are refused, and ``pipeline.ShedLoad`` refuses them before any
of the app's work; but each still cost the server the ASGI machinery around its 503: a task
created, scheduled behind every request read in the same turn of the event loop, the scope
and the send calls. Under overload a 503 then waits behind every request read in the same
turn between its request being read and its answer being written, and the refusals become
most of the loop's work.

``RefusingHttp`` is uvicorn's own HTTP protocol (``httptools``) asking, as a request's headers
are read, the app's ``pipeline.LoadGate`` whether the command is refused; if it is, the protocol
discards the body as it arrives and writes the same 503 (``Retry-After``) the middleware
would, in the same callback that read the request. No task, no scope for the app, no wait.
Everything not refused - every read, every admitted command, a WebSocket - goes on through
uvicorn unchanged. A command admitted here is counted in flight as it is read and marked
(``pipeline.ADMITTED``), so that ``ShedLoad`` does not decide it twice and counts it out once
answered.

The app hands its gate over in the ASGI lifespan state (``pipeline.GATE_STATE``): a server without
the lifespan (or another protocol) simply leaves refusing to the middleware. A request this
protocol cannot answer on its own - one pipelined behind an answer still being written, one
that asked ``Expect: 100-continue`` - is also left to the middleware.

A client refused for load that sends again at once, ignoring ``Retry-After``, is refused at
most once per ``shedding.RETRY_HOLD``: its next 503 is written that long after its last
(``shedding.Impatience``; the client is its session, else its connection). The 503s of a read
are written once all of it is parsed, so that only the last, with nothing read behind it,
can be held, and the answers keep their order.

Serve with ``uvicorn --http dicetable.server.refusing_http:RefusingHttp`` (``dicetable
serve`` does).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any, Protocol, cast

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from dicetable.server.pipeline import ADMITTED, COMMAND_METHODS, GATE_STATE, RETRY_AFTER
from dicetable.server.shedding import Impatience

_COMMANDS = frozenset(m.encode("ascii") for m in COMMAND_METHODS)
"""``COMMAND_METHODS`` as the parser gives them (a read is passed on before its URL is parsed)."""


class Gate(Protocol):
    impatience: Impatience

    def pipeline(self, method: str, path: str) -> Any: ...
    def admit_at(self, pipeline: Any) -> bytes | None: ...


@dataclass(frozen=True, slots=True)
class _Refusal:
    body: bytes
    keep_alive: bool
    client: bytes
    begun: int
    """Requests begun on the connection when this one was read."""
    logged: tuple[str, str, str, str] | None
    """Client, method, URL and HTTP version, for the access log (None: none kept)."""


class RefusingHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering a request refused for load on its own."""

    _refused: bytes | None = None
    """The 503 body of the request being read, when it is refused here."""
    _refusals: list[_Refusal] | None = None
    """The 503s of the requests read in this ``data_received``, to be written at its end."""
    _begun = 0
    """Requests begun on this connection."""
    _refused_at: float | None = None
    """When this connection's last 503 for load was (to be) written."""

    def on_headers_complete(self) -> None:
        self._refused = self._decide()
        if self._refused is None:
            super().on_headers_complete()

    def _decide(self) -> bytes | None:
        """The 503's body when refused; None when admitted (counted in flight at once and
        marked ``ADMITTED``, so that every request read after it in the same turn of the loop
        sees it: counted only once its task ran, a turn's 500 reads were all admitted here
        and most then refused by the middleware, slowly) or left to the app."""
        gate: Gate | None = self.app_state.get(GATE_STATE)
        method = self.parser.get_method()
        if gate is None or method not in _COMMANDS or self.expect_100_continue \
                or self.parser.should_upgrade() or self.limit_concurrency is not None:
            return None
        if self._answering:
            return None  # pipelined behind an answer not yet written: answers keep their order
        path = httptools.parse_url(self.url).path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        pipeline = gate.pipeline(method.decode("ascii"), self.root_path + path)
        if pipeline is None:
            return None
        body = gate.admit_at(pipeline)
        if body is None:
            cast(dict[str, Any], self.scope)[ADMITTED] = True  # ShedLoad counts it out
        return body

    def on_body(self, body: bytes) -> None:
        if self._refused is None:
            super().on_body(body)

    def on_message_begin(self) -> None:
        self._begun += 1
        super().on_message_begin()

    def data_received(self, data: bytes) -> None:
        # The 503s of the requests read here are written once all of it is read: the last
        # one may then be held (``shedding.Impatience``) when nothing was read behind it.
        self._refusals = []
        try:
            super().data_received(data)
        finally:
            refusals, self._refusals = self._refusals, None
            if refusals:
                self._answer(refusals)

    def on_message_complete(self) -> None:
        body = self._refused
        if body is None:
            super().on_message_complete()
            return
        self._refused = None
        headers = dict(self.headers)
        version = self.parser.get_http_version()
        refusal = _Refusal(
            body, version != "1.0" and self.parser.should_keep_alive(),
            # the client, as the load gate remembers it: its session, else its address
            headers.get(b"authorization") or headers.get(b"cookie")
            or _client(self.client).encode(),
            self._begun, (_client(self.client), self.parser.get_method().decode("ascii"),
                          self.url.decode("ascii", "replace"), version)
            if self.access_log else None)
        self.scope = self.headers = None  # type: ignore[assignment]  # read and answered
        if self._refusals is None:  # not read by data_received (never so in uvicorn)
            self._answer([refusal])
        else:
            self._refusals.append(refusal)

    def handle_websocket_upgrade(self) -> None:
        self._flush()  # the 503s read before the upgrade go first, on HTTP
        super().handle_websocket_upgrade()

    def send_400_response(self, msg: str) -> None:
        self._flush()  # the 503s read before the unreadable request go first
        super().send_400_response(msg)

    def _flush(self) -> None:
        """Before uvicorn leaves this read's HTTP (an upgrade, a 400 and close): the 503s
        read so far, written at once."""
        refusals = self._refusals
        if refusals:
            self._refusals = []
            self._answer(refusals, leaving=True)

    def _answer(self, refusals: list[_Refusal], *, leaving: bool = False) -> None:
        """Write the 503s, each noted as its client's last refusal; the last may be held.
        ``leaving``: this protocol is about to hand the connection over, so none is held and
        no keep-alive is re-armed."""
        impatience = self.app_state[GATE_STATE].impatience
        last = refusals[-1]
        for refusal in refusals:
            at = impatience.refused(refusal.client, self._refused_at)
            self._refused_at = at
            wait = at - impatience.clock()
            if not leaving and wait > 0 and refusal is last and last.begun == self._begun \
                    and last.keep_alive:
                # Held: nothing more is read on this connection until it is written, and
                # nothing was read behind it, so the answers keep their order.
                self.flow.pause_reading()
                self.loop.call_later(wait, self._write, refusal)
                return
            self._write(refusal, complete=not leaving)

    @property
    def _answering(self) -> bool:
        """Is a request's answer being written on this connection now?"""
        return self.cycle is not None and not self.cycle.response_complete

    def _write(self, refusal: _Refusal, *, complete: bool = True) -> None:
        if self.transport.is_closing():
            return
        head: list[bytes] = [b"HTTP/1.1 503 Service Unavailable\r\n"]
        for name, value in self.server_state.default_headers:
            head += [name, b": ", value, b"\r\n"]
        head += [b"content-type: application/json\r\nretry-after: ", RETRY_AFTER,
                 b"\r\ncontent-length: ", str(len(refusal.body)).encode(), b"\r\n"]
        if not refusal.keep_alive:
            head.append(b"connection: close\r\n")
        head += [b"\r\n", refusal.body]
        if refusal.logged:  # the access log shows these 503s as it shows uvicorn's own
            self.access_logger.info('%s - "%s %s HTTP/%s" %d', *refusal.logged, 503)
        self.transport.write(b"".join(head))
        if not refusal.keep_alive:
            self.transport.close()
        if not complete or self._answering:
            # Leaving HTTP, or a request read after this one is being answered (its answer
            # completes the rest: uvicorn's completion would start what is pipelined behind
            # it now): counted, nothing re-armed.
            self.server_state.total_requests += 1
        else:
            self.on_response_complete()  # uvicorn's own: counted, keep-alive re-armed

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # An answered request, with none read behind it, is let go at once rather than held
        # until the connection's next request: under load, 2,000 idle keep-alive connections'
        # last requests (the cycle, its scope and headers, its event) were a third of what
        # every young collection of the garbage collector traversed.
        cycle = self.cycle
        if cycle is not None and cycle.response_complete and not self.pipeline:
            if self.scope is cycle.scope:
                self.scope = self.headers = None  # type: ignore[assignment]
            self.cycle = None  # type: ignore[assignment]


def _client(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "-"
