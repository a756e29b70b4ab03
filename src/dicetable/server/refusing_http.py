"""Refusing the excess as it is read, not after it is scheduled.

Under overload most commands are refused, and the app's door (``server.door``) refuses them
before any of the app's work; but each still cost the server the ASGI machinery around its 503:
a task created, scheduled behind every request read in the same turn of the event loop, the
scope and the send calls. Under overload a 503 then waits behind every request read in the same
turn between its request being read and its answer being written, and the refusals become most
of the loop's work.

``RefusingHttp`` is uvicorn's own HTTP protocol (``httptools``) asking, as a request's headers
are read, the app's ``pipeline.LoadGate`` whether the command is refused; if it is, the protocol
discards the body as it arrives and writes the same 503 (``Retry-After``) the door
would, in the same callback that read the request. No task, no scope for the app, no wait.
Everything not refused - every read, every admitted command, a WebSocket - goes on through
uvicorn unchanged. A command is admitted only once its body has arrived whole: its headers
may be refused at once (the server already full), but a command whose headers are read and
whose body is still coming is held here, outside the app and uncounted, until it is complete
(a client that never finishes holds a connection, bounded by ``server.connections``, not the
floor's capacity). Admitted, it is counted in flight - one whose session this server does not
remember (``LoadGate.known``) among at most ``door.MOST_STRANGERS`` such, so that made-up
tokens cannot crowd out the others - and marked (``pipeline.ADMITTED``), so that the door does
not decide it twice and counts it out once answered.

An admitted bet, or a bet taken down, is then offered to the app's ``BetsAtRead``
(``bets_at_read``, in the lifespan state as ``BETS_STATE``), which answers it without the
ASGI machinery when the door would have nothing to check for it; while it is answered it
stands as the connection's cycle (``_Taken``), so a request read behind it waits in
uvicorn's pipeline and the answers keep their order.

The connections themselves are bounded (``connections.ConnectionGuard``, in the lifespan state
as ``connections.GUARD_STATE``): one past the total or its peer's share is answered 503 and
closed as it is accepted, and a request's headers and body have read deadlines (408 and close).

The app hands its gate over in the ASGI lifespan state (``pipeline.GATE_STATE``): a server without
the lifespan (or another protocol) simply leaves refusing to the door. A request this
protocol cannot answer on its own - one pipelined behind an answer still being written, one
that asked ``Expect: 100-continue`` - is also left to the door.

A connection refused for load that sends again at once, ignoring ``Retry-After``, is refused
at most once per ``door.RESEND_HOLD``: its next 503 is written that long after its last
(``door.Impatience``); with a hold (``door.RETRY_HOLD``: none by default) the same goes for
a client on any of its connections (its session, else its connection). A 503 for load read
within ``door.RETRY_WINDOW`` of the connection's last is counted as a retry
(``Admission.retried``): a client sending again at once, not new work; one read within it
of the connection's last answer of any kind, as ``Admission.at_once``: a client that sends
as soon as it is answered, whose refusal lowers no load. The 503s of a read
are written once all of it is parsed, so that only the last, with nothing read behind it,
can be held, and the answers keep their order.

Serve with ``uvicorn --http dicetable.server.refusing_http:RefusingHttp`` (``dicetable
serve`` does).
"""

from __future__ import annotations

import asyncio
import urllib.parse
from dataclasses import dataclass
from typing import Any, Protocol, cast

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from dicetable.server.bets_at_read import BETS_STATE, BetsAtRead
from dicetable.server.connections import GUARD_STATE, MAX_HEAD, ConnectionGuard
from dicetable.server.door import (
    ADMITTED,
    COMMAND_METHODS,
    GATE_STATE,
    RELAYED_BUSY,
    RETRY_AFTER,
    RETRY_WINDOW,
    SERVER_BUSY,
    Admission,
    Impatience,
)
from dicetable.server.limits import MAX_BODY

_COMMANDS = frozenset(m.encode("ascii") for m in COMMAND_METHODS)
"""``COMMAND_METHODS`` as the parser gives them (a read is passed on before its URL is parsed)."""


class Gate(Protocol):
    impatience: Impatience
    admission: Admission

    def pipeline(self, method: str, path: str) -> Any: ...
    def refusal_at(self, pipeline: Any) -> bytes | None: ...
    def admit_at(self, pipeline: Any, *, stranger: bool = False) -> bytes | None: ...
    def caller(self, headers: dict[bytes, bytes]) -> Any: ...


@dataclass(slots=True)  # not frozen: a frozen one's fields are set one call each, per 503
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
    _answered_at: float | None = None
    """When the connection's last answer was written (``door.Impatience``'s clock)."""
    _relayed_at: float | None = None
    """When the connection's last answer was a 503 for load relayed from the table's owner,
    another process (``door.RELAYED_BUSY``)."""

    _pending: Any = None
    """The pipeline of the command being read, admitted only once its body is whole."""
    _held: list[bytes] | None = None
    """That command's body so far (None: no command is held)."""
    _held_size = 0
    _held_path = ""
    """The path of the command being read (its pipeline's)."""
    _guard: ConnectionGuard | None = None
    """The server's connection bounds, this connection counted in them (None: not counted)."""
    _reading: str | None = None
    """What of a request is being read: "headers", "body", or None (between requests)."""
    _reading_since = 0.0
    _deadline: asyncio.TimerHandle | None = None
    _deadline_at = 0.0
    _shut = False
    """Refused as it was accepted: nothing it sends is read."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        guard: ConnectionGuard | None = self.app_state.get(GUARD_STATE)
        if guard is None:
            return
        if not guard.enter(self._peer):
            # Refused before anything is read: a 503 the client may read, then closed.
            self._write_error(503, b"Service Unavailable", guard.refusal, retry=True)
            self.transport.close()
            self._shut = True
            return
        self._guard = guard
        self._reading, self._reading_since = "headers", self.loop.time()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._let_go()
        super().connection_lost(exc)

    @property
    def _peer(self) -> str | None:
        return self.client[0] if self.client else None

    def _let_go(self) -> None:
        """This connection is no longer read here: its deadline and its count go."""
        self._reading = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.leave(self._peer)

    def _watch(self) -> None:
        """After each read: the deadline of what is still to come, if anything is."""
        guard = self._guard
        if guard is None:
            return
        if self._reading is None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            return
        due = self._reading_since + (guard.header_timeout if self._reading == "headers"
                                     else guard.body_timeout)
        if self._deadline is not None:
            if self._deadline_at == due:
                return
            self._deadline.cancel()
        self._deadline_at = due
        self._deadline = self.loop.call_at(due, self._late)

    def _late(self) -> None:
        """A request's headers or body did not come in time: 408, and the connection closed."""
        self._deadline = None
        guard, what = self._guard, self._reading
        if guard is None or what is None or self.transport.is_closing():
            return
        mine = what == "body" and self._held is None and self._refused is None \
            and self.cycle is not None and not self.cycle.response_complete
        if not mine and self._answering:
            # Read behind an answer still being written: not the client's delay.
            self._reading_since = self.loop.time()
            self._watch()
            return
        seconds = guard.header_timeout if what == "headers" else guard.body_timeout
        body = guard.late(what, seconds)
        if not (mine and self.cycle.response_started):
            self._write_error(408, b"Request Timeout", body)
        if mine:
            self.cycle.keep_alive = False
        self.transport.close()

    def _write_error(self, status: int, phrase: bytes, body: bytes, *,
                     retry: bool = False) -> None:
        self.transport.write(_answer_bytes(status, phrase, self.server_state.default_headers,
                                           body, retry=retry, keep_alive=False))

    def on_headers_complete(self) -> None:
        self._unparsed = 0
        self._reading, self._reading_since = "body", self.loop.time()
        self._refused, pipeline = self._decide()
        if self._refused is None:
            if pipeline is not None:  # admitted (or not) once its body is whole
                self._pending, self._held, self._held_size = pipeline, [], 0
                return
            super().on_headers_complete()

    def _decide(self) -> tuple[bytes | None, Any]:
        """As the headers are read: the 503's body when the server is already full; else
        the pipeline a command would queue on, for its admission once its body is whole
        (None: left to the app - a read, an upgrade, one awaiting 100-continue, ...)."""
        gate: Gate | None = self.app_state.get(GATE_STATE)
        method = self.parser.get_method()
        if gate is None or method not in _COMMANDS or self.expect_100_continue \
                or self.parser.should_upgrade() or self.limit_concurrency is not None:
            return None, None
        if self._answering:
            return None, None  # pipelined behind an answer not yet written: answers keep
            # their order (the door admits it, its body read first)
        path = httptools.parse_url(self.url).path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        self._held_path = self.root_path + path
        pipeline = gate.pipeline(method.decode("ascii"), self._held_path)
        if pipeline is None:
            return None, None
        relayed = self._relayed_at
        if relayed is not None:
            if gate.impatience.clock() - relayed < gate.impatience.resend:
                # Sent again at once after its owner's 503: answered here, held as this
                # server's own would be, not forwarded to be refused again - a client spinning
                # on the owner's 503s had each forwarded, and both processes spent their
                # time on them. (The owner's load is not known here: it is asked again after
                # the hold.) Counted as refused for load, as sent at once (``_answer``).
                gate.admission.refused_unasked()
                return SERVER_BUSY, pipeline
            self._relayed_at = None
        return gate.refusal_at(pipeline), pipeline

    def _admit(self, known: bool) -> bytes | None:
        """The held command's body is whole: refused (the 503's body), or admitted - counted
        in flight at once (a stranger, its session not ``known`` to this server, among the
        few that may be), and marked ``ADMITTED``, so that every request read after it in the
        same turn of the loop sees it and the door does not decide it again."""
        gate: Gate = self.app_state[GATE_STATE]
        body = gate.admit_at(self._pending, stranger=not known)
        if body is None:
            cast(dict[str, Any], self.scope)[ADMITTED] = known
        return body

    def _take_bet(self, headers: dict[bytes, bytes], who: Any) -> bool:
        """The admitted command, whose session the server remembers (``who``, the account
        its admission counted it under), offered to the app's ``BetsAtRead``: taken
        (answered by ``_reply`` once decided), or False, left to uvicorn and the door."""
        bets: BetsAtRead | None = self.app_state.get(BETS_STATE)
        if bets is None:
            return False
        scope = cast(dict[str, Any], self.scope)
        version = self.parser.get_http_version()
        scope["method"] = self.parser.get_method().decode("ascii")
        scope["path"], scope["http_version"] = self._held_path, version
        held = self._held or []
        taken = _Taken(scope, version != "1.0" and self.parser.should_keep_alive())
        earlier, self.cycle = self.cycle, taken  # type: ignore[assignment]  # answering it:
        # a request read behind it waits in uvicorn's pipeline, so the answers keep order
        if not bets.take(scope, headers, b"".join(held), who,
                         lambda status, own, body: self._reply(taken, status, own, body)):
            self.cycle = earlier
            return False
        self._held = self._pending = None
        return True

    def _reply(self, taken: _Taken, status: int, headers: list[tuple[bytes, bytes]],
               body: bytes) -> None:
        """A taken bet's answer, written as uvicorn writes an app's (its default headers
        first); then what was read behind it is started."""
        taken.response_complete = True
        if taken.disconnected or self.transport.is_closing():
            return
        self.transport.write(_taken_answer(status, self.server_state.default_headers,
                                           headers, body, taken.keep_alive))
        if self.access_log:
            scope = taken.scope
            self.access_logger.info('%s - "%s %s HTTP/%s" %d', _client(self.client),
                                    scope["method"], scope["path"], scope["http_version"],
                                    status)
        if not taken.keep_alive:
            self.transport.close()
        self.on_response_complete()

    def _release(self) -> None:
        """Hand the held command to uvicorn as if just read (its body so far with it)."""
        held, self._held, self._pending = self._held, None, None
        super().on_headers_complete()
        if held:
            super().on_body(b"".join(held))

    def on_body(self, body: bytes) -> None:
        held = self._held
        if held is not None:
            held.append(body)
            self._held_size += len(body)
            if self._held_size > MAX_BODY:  # too big to hold: the body limit answers it
                self._release()
            return
        if self._refused is None:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self._reading = None
        if self._held is not None:
            headers = dict(self.headers)
            who = self.app_state[GATE_STATE].caller(headers)  # once: admission, then take
            refused = self._admit(who is not None)
            if refused is None:
                if who is not None and self._take_bet(headers, who):
                    return
                self._release()
                super().on_message_complete()
                return
            self._held = self._pending = None
            self._refused = refused
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

    def on_message_begin(self) -> None:
        self._begun += 1
        self._reading, self._reading_since = "headers", self.loop.time()
        self._head = 0
        super().on_message_begin()

    _head = 0
    """Bytes of the request's line and headers read so far."""
    _unparsed = 0
    """Bytes received since the last request's headers were whole."""

    def on_url(self, url: bytes) -> None:
        self._head += len(url)
        if self._head > MAX_HEAD:  # the parser stops: 400 and closed (uvicorn's own)
            raise ValueError("request line too long")
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head += len(name) + len(value)
        if self._head > MAX_HEAD:
            raise ValueError("request headers too long")
        super().on_header(name, value)

    def data_received(self, data: bytes) -> None:
        # The 503s of the requests read here are written once all of it is read: the last
        # one may then be held (``door.Impatience``) when nothing was read behind it.
        if self._shut:
            return
        if self._reading != "body":
            # Headers still to come: what the parser would buffer for one header, counted
            # as it arrives (a header sent without end is refused, not kept).
            self._unparsed += len(data)
            if self._unparsed > 4 * MAX_HEAD:
                self.send_400_response("Request headers too long.")
                return
        self._refusals = []
        try:
            super().data_received(data)
        finally:
            refusals, self._refusals = self._refusals, None
            if refusals:
                self._answer(refusals)
            self._watch()

    def handle_websocket_upgrade(self) -> None:
        self._flush()  # the 503s read before the upgrade go first, on HTTP
        guard, self._guard = self._guard, None  # still open, now the WebSocket's: counted
        self._let_go()                          # until it closes
        super().handle_websocket_upgrade()
        if guard is not None:
            protocol = self.transport.get_protocol()
            lost = protocol.connection_lost
            peer = self._peer

            def connection_lost(exc: Exception | None) -> None:
                guard.leave(peer)
                lost(exc)

            protocol.connection_lost = connection_lost  # type: ignore[method-assign]

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
        gate = self.app_state[GATE_STATE]
        impatience = gate.impatience
        last = refusals[-1]
        for refusal in refusals:
            if refusal.body == SERVER_BUSY and self._answered_at is not None:
                now = impatience.clock()
                if now - self._answered_at < RETRY_WINDOW:
                    # sent as soon as the last was answered: a client that waits for each
                    # answer, whose refusal lowers no load; after a 503, one spinning
                    gate.admission.sent_at_once(after_503=self._refused_at is not None
                                                and now - self._refused_at < RETRY_WINDOW)
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
        if refusal.logged:  # the access log shows these 503s as it shows uvicorn's own
            self.access_logger.info('%s - "%s %s HTTP/%s" %d', *refusal.logged, 503)
        self.transport.write(_busy_answer(self.server_state.default_headers, refusal.body,
                                          refusal.keep_alive))
        if not refusal.keep_alive:
            self.transport.close()
        if not complete or self._answering:
            # Leaving HTTP, or a request read after this one is being answered (its answer
            # completes the rest: uvicorn's completion would start what is pipelined behind
            # it now): counted, nothing re-armed; noted as answered here, as
            # ``on_response_complete`` notes the others.
            self.server_state.total_requests += 1
            self._answered_at = self.app_state[GATE_STATE].impatience.clock()
        else:
            self.on_response_complete()  # uvicorn's own: counted, keep-alive re-armed

    def on_response_complete(self) -> None:
        self._answered_at = self.app_state[GATE_STATE].impatience.clock()
        if self.scope is not None and self.scope.get(RELAYED_BUSY):
            self._refused_at = self._relayed_at = self._answered_at
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


_Kept = list[tuple[list[tuple[bytes, bytes]] | None, dict[Any, bytes]]]
"""Bytes built lately, with the default headers they were built under (uvicorn replaces that
list each second, for its date; a server in another thread has its own): one pair, read
whole, so that what is found is never another list's."""
_ANSWERS: _Kept = [(None, {})]
"""The 503s written lately, by body and keep-alive."""


def _this_second(kept: _Kept, default_headers: list[tuple[bytes, bytes]]) -> dict[Any, bytes]:
    """What ``kept`` holds for ``default_headers``: afresh once uvicorn has replaced them."""
    under, found = kept[0]
    if under is not default_headers:
        found = {}
        kept[0] = (default_headers, found)
    return found


def _busy_answer(default_headers: list[tuple[bytes, bytes]], body: bytes,
                 keep_alive: bool) -> bytes:
    """A 503's bytes, the same for every refusal with that body in the same second: built
    once then, not once per refusal.

    >>> answer = _busy_answer([(b"server", b"uvicorn")], b"{}", False)
    >>> answer.splitlines()[:2]
    [b'HTTP/1.1 503 Service Unavailable', b'server: uvicorn']
    >>> answer.endswith(b"connection: close\\r\\n\\r\\n{}")
    True
    >>> b"date: Sat" in _busy_answer([(b"date", b"Sat")], b"{}", False)  # the next second's
    True
    """
    answers = _this_second(_ANSWERS, default_headers)
    answer = answers.get((body, keep_alive))
    if answer is None:
        answer = answers[body, keep_alive] = _answer_bytes(
            503, b"Service Unavailable", default_headers, body, retry=True, keep_alive=keep_alive)
    return answer


def _answer_bytes(status: int, phrase: bytes, default_headers: list[tuple[bytes, bytes]],
                  body: bytes, *, retry: bool, keep_alive: bool) -> bytes:
    """A JSON answer written by the protocol itself (uvicorn's default headers first).

    >>> lines = _answer_bytes(408, b"Request Timeout", [(b"server", b"x")], b"{}",
    ...                       retry=False, keep_alive=False).split(b"\\r\\n")
    >>> lines[:3]
    [b'HTTP/1.1 408 Request Timeout', b'server: x', b'content-type: application/json']
    >>> lines[3:]
    [b'content-length: 2', b'connection: close', b'', b'{}']
    """
    own = [_JSON, (b"retry-after", RETRY_AFTER)] if retry else [_JSON]
    return _written(b"HTTP/1.1 %d %s\r\n" % (status, phrase), default_headers, own, body,
                    keep_alive=keep_alive)


_JSON = (b"content-type", b"application/json")


def _written(status_line: bytes, default_headers: list[tuple[bytes, bytes]],
             headers: list[tuple[bytes, bytes]], body: bytes, *, keep_alive: bool) -> bytes:
    """An answer's bytes as the protocol writes them: the status line, uvicorn's default
    headers, the answer's own, its length, ``connection: close`` unless kept alive."""
    return _with_body(_head(status_line, default_headers, headers), body, keep_alive)


def _head(status_line: bytes, default_headers: list[tuple[bytes, bytes]],
          headers: list[tuple[bytes, bytes]]) -> bytes:
    """An answer's status line, uvicorn's default headers and the answer's own."""
    head: list[bytes] = [status_line]
    for name, value in (*default_headers, *headers):
        head += [name, b": ", value, b"\r\n"]
    return b"".join(head)


def _with_body(head: bytes, body: bytes, keep_alive: bool) -> bytes:
    """``head`` (``_head``) and the rest: the length, ``connection: close`` unless kept
    alive, the body."""
    return b"".join((head, b"content-length: ", str(len(body)).encode(),
                     b"\r\n\r\n" if keep_alive else b"\r\nconnection: close\r\n\r\n", body))


_HEADS: _Kept = [(None, {})]
"""The heads (``_head``) of the taken commands' answers written lately, by status and own
headers: a bet's answer differs from the last only in its body."""
MOST_HEADS = 64
"""Heads kept at most (industry-default): the answers' own headers are few and fixed."""


def _taken_answer(status: int, default_headers: list[tuple[bytes, bytes]],
                  headers: list[tuple[bytes, bytes]], body: bytes, keep_alive: bool) -> bytes:
    """A taken command's answer: ``_written``'s bytes, its head built once a second.

    >>> defaults, own = [(b"date", b"Sat"), (b"server", b"x")], [_JSON]
    >>> _taken_answer(200, defaults, own, b"{}", True) == _written(
    ...     STATUS_LINE[200], defaults, own, b"{}", keep_alive=True)
    True
    >>> _taken_answer(409, defaults, own, b"[]", False) == _written(
    ...     STATUS_LINE[409], defaults, own, b"[]", keep_alive=False)
    True
    """
    heads = _this_second(_HEADS, default_headers)
    key = (status, *headers)
    head = heads.get(key)
    if head is None:
        if len(heads) >= MOST_HEADS:
            heads.clear()
        head = heads[key] = _head(STATUS_LINE[status], default_headers, headers)
    return _with_body(head, body, keep_alive)


class _NoWait:
    """What uvicorn sets when the connection is lost: nothing waits on a taken bet's body."""

    def set(self) -> None:
        pass


class _Taken:
    """A bet taken at read (``BetsAtRead``), standing as the connection's cycle while it is
    answered: what uvicorn asks of a cycle it did not start."""

    __slots__ = ("disconnected", "keep_alive", "response_complete", "scope")
    response_started = False
    message_event = _NoWait()

    def __init__(self, scope: dict[str, Any], keep_alive: bool) -> None:
        self.scope = scope
        self.keep_alive = keep_alive
        self.response_complete = False
        self.disconnected = False


def _client(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "-"
