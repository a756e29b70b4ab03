"""The excess refused as it is read (``server.refusing_http``, issue 13): through a real
uvicorn on loopback running ``dicetable serve``'s protocol, a command the load gate refuses
gets the middleware's own 503 without ever reaching the app, the keep-alive connection goes
on, and everything not refused is served as before. Counted, never timed."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dicetable.cli.serve import HTTP_PROTOCOL
from dicetable.server.app import create_app
from dicetable.server.bets_at_read import BetsAtRead
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.door import (
    RESEND_HOLD,
    SERVER_BUSY,
    TABLE_BUSY,
    Admission,
    Impatience,
)
from dicetable.server.floor import Floor
from dicetable.server.refusing_http import RefusingHttp
from tests.server.conftest import Client
from tests.server.pipeline_helpers import HeldCommits
from tests.uvicorn_thread import serving

T = "/api/tables/craps-pa-1"


class Counting:
    """The app, counting the HTTP requests that reach it (and keeping the server's loop)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[str] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.protocols: list[Any] = []
        """Each request's connection (its protocol), in the order they came."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.loop = asyncio.get_running_loop()
            self.requests.append(f"{scope['method']} {scope['path']}")
            self.protocols.append(send.__self__.transport.get_protocol())
        await self.app(scope, receive, send)


@dataclass
class Live:
    port: int
    app: Counting
    admission: Admission
    token: str
    impatience: Impatience
    at_read: BetsAtRead
    """The bets answered as the protocol read them, never reaching the app (counted)."""

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)

    def served(self, n: int) -> list[socket.socket]:
        """``n`` connections, each accepted and answered a read once already."""
        socks = [self.connect() for _ in range(n)]
        for s in socks:
            s.sendall(self.get())
            assert answer(s, bytearray())[0] == 200
        return socks

    def bet(self, wager: str = "field", *, extra: str = "", version: str = "1.1",
            amount: int = 1000) -> bytes:
        body = json.dumps({"wager": wager, "amount": amount}).encode()
        return (f"POST {T}/bets HTTP/{version}\r\nHost: x\r\nAuthorization: Bearer "
                f"{self.token}\r\nContent-Type: application/json\r\n{extra}"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body

    def anonymous_bet(self) -> bytes:
        """A bet without a session: refused for load before that is ever looked at."""
        return self.bet().replace(f"Authorization: Bearer {self.token}\r\n".encode(), b"")

    def get(self, path: str = T) -> bytes:
        return (f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {self.token}"
                "\r\n\r\n").encode()

    def refusing(self) -> None:
        self.admission.per_answer = 1.0  # as if each answer took a second ...
        self.admission.in_flight = self.admission.floor  # ... with a full house waiting

    def admitting(self) -> None:
        self.admission.in_flight = 0


def answer(sock: socket.socket, buffered: bytearray) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response read off ``sock`` (what follows it stays in ``buffered``)."""
    while b"\r\n\r\n" not in buffered:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        buffered += chunk
    head, _, rest = bytes(buffered).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip()
               for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk
        rest += chunk
    buffered[:] = rest[length:]
    return int(lines[0].split(" ")[1]), headers, rest[:length]


@pytest.fixture
def live(floor: Floor) -> Iterator[Live]:
    admission = Admission()
    app = create_app(floor, electronic_loop=False, admission=admission)
    with TestClient(app) as http:  # a session for alice
        token = Client(http, "alice").token
    counting = Counting(app)
    with serving(counting, http=HTTP_PROTOCOL) as port:
        yield Live(port, counting, admission, token, app.state.gate.impatience,
                   app.state.at_read)


def test_issue_13_serve_runs_the_refusing_protocol() -> None:
    module, _, name = HTTP_PROTOCOL.partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is RefusingHttp


def test_issue_13_a_refused_command_is_answered_as_read_and_never_reaches_the_app(
        live: Live, floor: Floor) -> None:
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.bet("pass"))
        assert answer(sock, buffered)[0] == 200
        before = floor.store.head("craps-pa-1").seq
        reached = len(live.app.requests)
        refused = live.admission.refused
        live.refusing()
        sock.sendall(live.bet())
        status, headers, body = answer(sock, buffered)
        assert (status, headers["retry-after"], body) == (503, "1", SERVER_BUSY)
        assert json.loads(body)["rule"] == "server.backpressure"
        assert headers["content-type"] == "application/json"
        assert "connection" not in headers  # kept alive
        # a second refusal on the same connection, then a read: all on one keep-alive
        sock.sendall(live.bet("big6"))
        assert answer(sock, buffered)[0] == 503
        sock.sendall(live.get())
        assert answer(sock, buffered)[0] == 200  # reading is never refused
        assert live.admission.refused == refused + 2
        assert live.app.requests[reached:] == [f"GET {T}"]  # the 503s never reached it
        assert floor.store.head("craps-pa-1").seq == before  # nothing changed
        live.admitting()
        taken = live.at_read.taken
        sock.sendall(live.bet())
        assert answer(sock, buffered)[0] == 200
        assert live.at_read.taken == taken + 1  # admitted, and answered as it was read
        assert live.app.requests[-1] == f"GET {T}"


def test_issue_13_a_refused_commands_body_is_read_past_whatever_its_size(live: Live) -> None:
    live.refusing()
    with live.connect() as sock:
        buffered = bytearray()
        head, _, body = live.bet().partition(b"\r\n\r\n")
        big = b"x" * 300_000
        sock.sendall(head.replace(f"Content-Length: {len(body)}".encode(),
                                  f"Content-Length: {len(big)}".encode()) + b"\r\n\r\n")
        sock.sendall(big[:1000])
        sock.sendall(big[1000:])  # the body comes in pieces: all of it discarded
        assert answer(sock, buffered)[0] == 503
        sock.sendall(live.get())
        assert answer(sock, buffered)[0] == 200  # the connection is still in step


def test_issue_13_a_connection_that_asks_to_close_is_closed_after_its_503(live: Live) -> None:
    live.refusing()
    for request in (live.bet(extra="Connection: close\r\n"), live.bet(version="1.0")):
        with live.connect() as sock:
            buffered = bytearray()
            sock.sendall(request)
            status, headers, _ = answer(sock, buffered)
            assert (status, headers.get("connection")) == (503, "close")
            assert sock.recv(10) == b""  # closed by the server


def test_issue_13_a_command_pipelined_behind_an_answer_is_answered_in_order(
        live: Live) -> None:
    # A read still being answered when the command is read: the protocol must not write
    # the 503 before the read's answer, so the middleware refuses it, in its turn.
    live.refusing()
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.get() + live.bet() + live.get("/api/tables"))
        statuses = [answer(sock, buffered)[0] for _ in range(3)]
        assert statuses == [200, 503, 200]
        assert f"POST {T}/bets" in live.app.requests  # refused by the middleware


def test_issue_13_a_full_tables_503_says_so(live: Live, floor: Floor) -> None:
    pipeline = floor.get("craps-pa-1").pipeline
    assert pipeline is not None
    pipeline.max_queue = 0  # the table's own queue counts as full
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.bet())
        status, _, body = answer(sock, buffered)
        assert (status, body) == (503, TABLE_BUSY)
        assert pipeline.stats.busy >= 1
        assert f"POST {T}/bets" not in live.app.requests


def test_issue_13_a_command_awaiting_100_continue_is_left_to_the_middleware(
        live: Live) -> None:
    live.refusing()
    with live.connect() as sock:
        buffered = bytearray()
        request = live.bet(extra="Expect: 100-continue\r\n")
        head = request.partition(b"\r\n\r\n")[0]
        sock.sendall(head + b"\r\n\r\n")  # the client waits for the server's word
        status, _, _ = answer(sock, buffered)
        assert status == 503  # the middleware refuses it, without asking for the body
        assert live.app.requests[-1] == f"POST {T}/bets"


def test_issue_13_commands_read_in_one_turn_are_counted_as_each_is_admitted(
        live: Live, floor: Floor) -> None:
    # Six bets on six connections, all read in one turn of the loop (held still while they
    # are sent), with room for two in flight: the protocol counts each admitted one as it is
    # read, so the other four are refused there and only two ever reach the app. (Counted
    # in only once its task ran, all six were admitted by the protocol, then four refused
    # by the middleware, after waiting behind the turn.)
    socks = live.served(6)
    try:
        loop = live.app.loop
        assert loop is not None
        held = HeldCommits(floor.store)  # the admitted stay in flight until released
        live.admission.floor = 2  # two in flight, then each would wait a second: refused
        live.admission.per_answer = 1.0
        reached, refused = len(live.app.requests), live.admission.refused
        taken = live.at_read.taken
        still, stopped = threading.Event(), threading.Event()

        def hold_still() -> None:
            stopped.set()
            still.wait(20)

        loop.call_soon_threadsafe(hold_still)
        assert stopped.wait(20)
        for i, s in enumerate(socks):
            s.sendall(live.bet(("field", "pass", "big6", "big8", "place6", "place8")[i]))
        still.set()  # the loop reads them all at once
        deadline = time.monotonic() + 20
        while live.admission.refused < refused + 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        held.free()
        statuses = sorted(answer(s, bytearray())[0] for s in socks)
    finally:
        for s in socks:
            s.close()
    assert statuses.count(503) == 4
    assert live.admission.refused == refused + 4
    assert live.at_read.taken == taken + 2  # answered as they were read
    assert live.app.requests[reached:] == []


def _unreachable_after(requests: int, send: Callable[[], None]) -> int:
    """The objects the collector finds unreachable after ``requests`` calls of ``send``."""
    send()  # anything built once (caches, compiled routes) is built before counting
    gc.collect()
    gc.disable()
    try:
        for _ in range(requests):
            send()
        return gc.collect()
    finally:
        gc.enable()


def test_issue_13_a_bet_refused_by_the_rules_leaves_no_cycle_for_the_collector(
        live: Live) -> None:
    # Under load every cycle a request leaves is traversed by the next young collection,
    # every table and every read stopped meanwhile; a refusal left its table's frames (and
    # the state in them) and the waiting request's in such cycles: 200 objects each.
    with live.connect() as sock:
        buffered = bytearray()

        def refused() -> None:
            sock.sendall(live.bet(amount=1))  # under the table's minimum
            assert answer(sock, buffered)[0] == 422

        assert _unreachable_after(20, refused) < 20  # not one object per refusal


def test_issue_13_an_answered_connection_holds_nothing_of_its_request(live: Live) -> None:
    # 2,000 idle keep-alive connections each held their last request (its cycle, scope,
    # headers and event): a third of what each young collection traversed under load.
    socks = [live.connect() for _ in range(3)]
    try:
        for s in socks:
            s.sendall(live.get())
            assert answer(s, bytearray())[0] == 200
        protocols = live.app.protocols[-3:]
        assert len(set(map(id, protocols))) == 3
        assert all(isinstance(p, RefusingHttp) for p in protocols)
        # all three still open, none holding its answered request
        assert [(p.cycle, p.scope, p.headers) for p in protocols] == [(None, None, None)] * 3
    finally:
        for s in socks:
            s.close()


def _refused_twice_at_once(live: Live, sock: socket.socket) -> None:
    """A bet refused on ``sock`` (at once), then another sent at once: its 503 held."""
    sock.sendall(live.bet())
    assert answer(sock, bytearray())[0] == 503  # the first refusal: at once
    sock.sendall(live.bet("pass"))  # again at once, on the same connection: held
    _held_once(live)


def _held_once(live: Live) -> None:
    """Wait (counted, not timed: 20 s at most) until one 503 is held, and no more."""
    deadline = time.monotonic() + 20
    while not live.impatience.held and time.monotonic() < deadline:
        time.sleep(0.01)
    assert live.impatience.held == 1


def _still_held(sock: socket.socket) -> None:
    """Nothing has been written to ``sock``: its 503 is still held."""
    sock.setblocking(False)
    with pytest.raises(BlockingIOError):
        sock.recv(1)


def test_issue_13_a_client_refused_again_at_once_has_its_503_held(live: Live) -> None:
    # 200 connections sending again the moment they were refused spent the server's time
    # on their 503s; each client's next 503 now waits ``hold`` after its last one.
    live.impatience.hold = 60.0  # held past the test: its 503 must not have come
    live.refusing()
    with live.connect() as a, live.connect() as b:
        _refused_twice_at_once(live, a)
        b.sendall(live.anonymous_bet())  # another client (its own connection): at once
        assert answer(b, bytearray())[0] == 503
        _still_held(a)  # b was answered
    # a went away while held: nothing is written to it, and the server goes on
    with live.connect() as c:
        c.sendall(live.anonymous_bet())
        assert answer(c, bytearray())[0] == 503
        live.admitting()
        c.sendall(live.bet("pass"))
        assert answer(c, bytearray())[0] == 200


def test_issue_28_a_connection_sending_again_at_once_has_its_next_503_held(
        live: Live) -> None:
    """A closed-loop client spinning on its refusals: its connection's next 503 waits the
    resend hold (``door.RESEND_HOLD`` by default); the same session on another connection,
    at its own pace, is answered at once."""
    assert live.impatience.resend == RESEND_HOLD
    live.impatience.resend = 60.0  # held past the test: its 503 must not have come
    live.refusing()
    with live.connect() as a, live.connect() as b:
        _refused_twice_at_once(live, a)
        b.sendall(live.bet())  # alice again, on her other connection: at once
        assert answer(b, bytearray())[0] == 503
        _still_held(a)
    live.admitting()


class BusyOwner(socketserver.ThreadingTCPServer):
    """The owner of a table (another process), answering every command forwarded to it with
    its 503 for load, and counting them."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.forwarded = 0
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                while True:
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = self.rfile.readline()
                        if not line:
                            return
                        head += line
                    length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n")
                                  if h.lower().startswith(b"content-length:"))
                    self.rfile.read(length)
                    owner.forwarded += 1
                    self.wfile.write(b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n"
                                     b"content-type: application/json\r\ncontent-length: "
                                     + str(len(SERVER_BUSY)).encode() + b"\r\n\r\n"
                                     + SERVER_BUSY)

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


@dataclass
class Elsewhere:
    """Table owners (``table_owners.TableOwners``) by which every table is another process's."""

    owner: str
    url: str = "http://127.0.0.1:1"

    def owns(self, table: str) -> bool:
        return False

    def owner_url(self, table: str) -> str:
        return self.owner

    def forget(self, table: str) -> None:
        raise AssertionError("the owner answered")


@pytest.fixture
def owner(live: Live) -> Iterator[BusyOwner]:
    """Every table another process's (``owner``), for the length of the test."""
    door = live.app.app.state.door
    owner = BusyOwner()
    door.split.owners = Elsewhere(owner.url)
    try:
        yield owner
    finally:
        door.split.owners = None
        owner.shutdown()
        owner.server_close()


def test_issue_28_a_connection_sending_again_at_once_after_its_owners_503_is_held_here(
        live: Live, owner: BusyOwner) -> None:
    """A client spinning on the 503s of its table's owner (another process): its next command
    is answered 503 here, held as this server's own would be, and not forwarded; another
    connection's is; after the hold it is forwarded again."""
    with live.connect() as a, live.connect() as b:
        buffered = bytearray()
        a.sendall(live.bet())
        assert answer(a, buffered)[:3:2] == (503, SERVER_BUSY)  # the owner's, relayed
        assert owner.forwarded == 1
        live.impatience.resend = 60.0  # held past the test: its 503 must not have come
        a.sendall(live.bet("pass"))  # again at once: answered here, held
        _held_once(live)
        b.sendall(live.bet())  # another connection: forwarded
        assert answer(b, bytearray())[0] == 503
        assert owner.forwarded == 2
        _still_held(a)
    live.impatience.resend = 0.05
    with live.connect() as c:
        buffered = bytearray()
        c.sendall(live.bet())
        assert answer(c, buffered)[0] == 503
        c.sendall(live.bet())
        assert answer(c, buffered)[0] == 503  # held 50 ms, not forwarded
        assert owner.forwarded == 3
        # The hold's timer may fire early by a loaded loop's turn (its time is read once a
        # turn), so the next is sent once the hold has surely passed, not at once.
        time.sleep(live.impatience.resend)
        c.sendall(live.bet())  # past the hold: the owner is asked again
        assert answer(c, buffered)[0] == 503
        assert owner.forwarded == 4


def test_issue_28_a_stranger_whose_command_goes_to_its_tables_owner_is_remembered_here(
        live: Live, floor: Floor, owner: BusyOwner) -> None:
    """A command whose session this server does not remember, for a table another process
    owns: its session is read here before it is forwarded, so that the client's next
    commands count in flight here as the others do, not among the few strangers."""
    floor.accounts.sessions.clear()  # just started, say
    assert floor.accounts.remembered(live.token) is None
    with live.connect() as sock:
        sock.sendall(live.bet())
        assert answer(sock, bytearray())[0] == 503  # the owner's
    assert owner.forwarded == 1
    assert floor.accounts.remembered(live.token) is not None
    assert live.admission.strangers == 0


def test_issue_13_a_held_503_comes_and_the_connection_goes_on_in_step(live: Live) -> None:
    live.impatience.hold = 0.2
    live.refusing()
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.bet() + live.bet("pass"))  # two at once, in one write
        assert [answer(sock, buffered)[0] for _ in range(2)] == [503, 503]
        assert live.impatience.held == 1  # the second, after the first
        sock.sendall(live.get())
        assert answer(sock, buffered)[0] == 200


def test_issue_13_what_a_client_would_be_admitted_for_is_never_held(live: Live) -> None:
    live.impatience.hold = 60.0
    live.refusing()
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.bet())
        assert answer(sock, buffered)[0] == 503
        live.admitting()
        sock.sendall(live.bet("pass"))  # within the hold, but admitted: answered as ever
        assert answer(sock, buffered)[0] == 200
        assert live.impatience.held == 0


def test_issue_13_the_access_log_shows_a_503_written_by_the_protocol(live: Live) -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    access = logging.getLogger("uvicorn.access")
    level, keep = access.level, Keep()
    access.setLevel(logging.INFO)
    access.addHandler(keep)
    try:
        live.refusing()
        reached = len(live.app.requests)
        with live.connect() as sock:
            sock.sendall(live.bet())
            assert answer(sock, bytearray())[0] == 503
        assert len(live.app.requests) == reached  # refused by the protocol, not the app
    finally:
        access.removeHandler(keep)
        access.setLevel(level)
    lines = [r.getMessage() for r in records]
    assert any(f'"POST {T}/bets HTTP/1.1" 503' in line for line in lines), lines


def test_issue_13_a_read_pipelined_behind_a_refused_command_is_answered_after_it(
        live: Live) -> None:
    # The 503 is written once the whole read is parsed, the read's answer after it: in order.
    live.impatience.hold = 60.0
    live.refusing()
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.bet() + live.get() + live.bet("pass"))
        statuses = [answer(sock, buffered)[0] for _ in range(3)]
        assert statuses == [503, 200, 503]  # the last behind the read: the middleware's
        assert live.impatience.held == 0  # nothing held with a request read behind it


def test_issue_13_a_server_stops_at_once_with_a_503_still_held(floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        token = Client(http, "alice").token
    live = None
    with serving(app, http=HTTP_PROTOCOL) as port:
        live = Live(port, Counting(app), app.state.admission, token, app.state.gate.impatience,
                    app.state.at_read)
        live.impatience.hold = 600.0
        live.refusing()
        sock = live.connect()
        sock.sendall(live.bet())
        assert answer(sock, bytearray())[0] == 503
        sock.sendall(live.bet("pass"))  # held for ten minutes
        deadline = time.monotonic() + 20
        while not live.impatience.held and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.impatience.held == 1
    # serving() joined the server's thread: it stopped, and closed the held connection
    assert sock.recv(10) == b""
    sock.close()


def test_issue_13_a_503_read_before_an_unreadable_request_comes_before_its_400(
        live: Live) -> None:
    live.refusing()
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.bet() + b"NOT HTTP AT ALL\r\n\r\n")
        assert answer(sock, buffered)[0] == 503
        assert answer(sock, buffered)[0] == 400  # uvicorn's own, then closed


def test_issue_13_a_503_read_before_a_websocket_upgrade_comes_before_the_upgrade(
        live: Live) -> None:
    live.refusing()
    upgrade = (f"GET /ws/tables/craps-pa-1?token={live.token} HTTP/1.1\r\nHost: x\r\n"
               "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode()
    with live.connect() as sock:
        buffered = bytearray()
        sock.sendall(live.bet() + upgrade)
        assert answer(sock, buffered)[0] == 503
        assert answer(sock, buffered)[0] == 101  # the WebSocket, after the 503, intact
        while not buffered:  # its first frame: the table's hello
            chunk = sock.recv(65536)
            assert chunk
            buffered += chunk
        assert buffered[0] == 0x81  # a final text frame


def test_issue_28_strangers_are_counted_and_only_a_few_at_once(live: Live, floor: Floor) -> None:
    """Commands of sessions this server does not remember (after a restart) are counted in
    flight as the others are, but only ``most_strangers`` at once: the rest are refused as
    they are read (503), while a session it remembers is still admitted. (Before, they were
    admitted uncounted, as many as came: a thousand new sessions at once queued behind their
    session reads for a third of a second.)"""
    strangers = [floor.accounts.login(who, DEMO_PASSWORD) for who in ("bob", "carol", "dan")]
    floor.accounts.sessions.clear()  # forgotten: as a server just started finds them
    floor.accounts.session(live.token)  # alice's read again: remembered
    live.admission.most_strangers = 2
    socks = live.served(4)
    try:
        refused = live.admission.refused
        held = HeldCommits(floor.store)  # the admitted stay in flight until released
        for s, token, wager in zip(socks, strangers, ("field", "pass", "big6"), strict=False):
            s.sendall(live.bet(wager).replace(live.token.encode(), token.encode()))
        deadline = time.monotonic() + 20
        while live.admission.refused < refused + 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.admission.strangers == 2
        assert live.admission.refused == refused + 1
        socks[3].sendall(live.bet("big8"))
        while live.admission.in_flight < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.admission.in_flight == 3  # a remembered session: admitted all the same
        held.free()
        statuses = sorted(answer(s, bytearray())[0] for s in socks)
    finally:
        for s in socks:
            s.close()
    assert statuses == [200, 200, 200, 503]
    deadline = time.monotonic() + 20
    while live.admission.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (live.admission.in_flight, live.admission.strangers) == (0, 0)  # all counted out


def test_issue_28_a_refusal_sent_as_soon_as_answered_is_counted_at_once(
        live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that sends as soon as its last command was answered (accepted) and is refused
    waits for each answer: counted ``at_once`` (no new load), not a retry; a first command
    on a connection of its own, refused, is neither."""
    monkeypatch.setattr("dicetable.server.refusing_http.RETRY_WINDOW", 60.0)
    at_once, retried = live.admission.at_once, live.admission.retried
    try:
        with live.connect() as sock, live.connect() as other:
            buffered = bytearray()
            sock.sendall(live.bet("pass"))
            assert answer(sock, buffered)[0] == 200
            live.refusing()
            sock.sendall(live.bet())
            assert answer(sock, buffered)[0] == 503
            assert (live.admission.at_once, live.admission.retried) == (at_once + 1, retried)
            other.sendall(live.bet())
            assert answer(other, bytearray())[0] == 503
            assert (live.admission.at_once, live.admission.retried) == (at_once + 1, retried)
    finally:
        live.admitting()


def test_issue_28_a_refusal_sent_again_at_once_is_counted_a_retry(
        live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two bets refused on one connection, the second sent with the first (at once): one
    retry; a first refusal on another connection is new work."""
    # "at once" is a minute here: a loaded machine may read the two apart
    monkeypatch.setattr("dicetable.server.refusing_http.RETRY_WINDOW", 60.0)
    live.refusing()
    retried = live.admission.retried
    try:
        with live.connect() as sock:
            buffered = bytearray()
            sock.sendall(live.bet() + live.bet("pass"))
            assert [answer(sock, buffered)[0] for _ in range(2)] == [503, 503]
        assert live.admission.retried == retried + 1
        with live.connect() as other:
            other.sendall(live.bet())
            assert answer(other, bytearray())[0] == 503
            other.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            metrics = answer(other, bytearray())[2].decode()
        assert live.admission.retried == retried + 1
        assert f"dicetable_load_refused_retries_total {float(retried + 1)}" in metrics
    finally:
        live.admitting()
