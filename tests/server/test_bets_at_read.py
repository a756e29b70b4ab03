"""Bets placed and taken down as the protocol reads them (``server.bets_at_read``, issue 28):
through a real uvicorn on loopback running ``dicetable serve``'s protocol, an admitted bet
that the door has nothing to check for is answered without reaching the app, as the app
answers it; anything the door must check is left to it. Counted, never timed."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi.testclient import TestClient

from dicetable.cli.serve import HTTP_PROTOCOL
from dicetable.server.app import COOKIE, create_app
from dicetable.server.bets_at_read import BetsAtRead
from dicetable.server.door import Admission, Proxies
from dicetable.server.floor import Floor
from tests.server.conftest import Client
from tests.server.pipeline_helpers import HeldCommits
from tests.server.test_refusing_http import Counting, answer
from tests.uvicorn_thread import serving

TABLE = "craps-pa-1"
T = f"/api/tables/{TABLE}"


@dataclass
class Served:
    url: str
    port: int
    app: Counting
    at_read: BetsAtRead
    admission: Admission
    token: str
    http: TestClient
    """The same app through the framework's test client (no protocol: the door's path)."""

    @property
    def auth(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}

    def bet(self, body: object, **headers: str) -> httpx.Response:
        return httpx.post(f"{self.url}{T}/bets", json=body, headers=self.auth | headers)

    def commands_counted(self) -> float:
        """``dicetable_commands_total``, all kinds and statuses together."""
        text = httpx.get(f"{self.url}/metrics").text
        return sum(float(line.rpartition(" ")[2]) for line in text.splitlines()
                   if line.startswith("dicetable_commands_total{"))


@pytest.fixture
def served(floor: Floor) -> Iterator[Served]:
    admission = Admission()
    app = create_app(floor, electronic_loop=False, admission=admission)
    with TestClient(app) as http:
        token = Client(http, "alice").token
        counting = Counting(app)
        with serving(counting, http=HTTP_PROTOCOL) as port:
            yield Served(f"http://127.0.0.1:{port}", port, counting, app.state.at_read,
                         admission, token, http)


FIELD = {"wager": "field", "amount": 1000}


def test_issue_28_a_bet_and_its_take_down_are_answered_as_they_are_read(
        served: Served, floor: Floor) -> None:
    before = floor.store.head(TABLE).seq
    reached, taken = len(served.app.requests), served.at_read.taken
    counted = served.commands_counted()
    placed = served.bet(FIELD)
    assert placed.status_code == 200, placed.text
    reply = placed.json()
    assert [e["type"] for e in reply["events"]] == ["BetPlaced"]
    assert set(reply) == {"events", "balance", "seq"}  # the route's own reply
    bet = reply["events"][0]["bet"]
    down = httpx.delete(f"{served.url}{T}/bets/{bet}", headers=served.auth)
    assert down.status_code == 200, down.text
    assert [e["type"] for e in down.json()["events"]] == ["BetRemoved"]
    assert down.json()["balance"] == reply["balance"] + FIELD["amount"]
    assert served.at_read.taken == taken + 2
    assert served.admission.in_flight == 0  # each counted out once answered
    assert served.commands_counted() == counted + 2  # and counted as the door's are
    assert served.app.requests[reached:] == ["GET /metrics"] * 2  # no bet reached the app
    assert floor.store.head(TABLE).seq == before + 2  # both committed


def test_issue_28_a_refusal_at_read_is_the_routes_own(served: Served, floor: Floor) -> None:
    before = floor.store.head(TABLE).seq
    taken = served.at_read.taken
    too_small = {"wager": "field", "amount": 1}
    here = served.bet(too_small)
    there = served.http.post(f"{T}/bets", json=too_small, headers=served.auth)
    assert served.at_read.taken == taken + 1
    assert here.status_code == there.status_code == 422
    assert here.json() == there.json()
    assert here.json()["rule"]  # names the rule it broke
    assert floor.store.head(TABLE).seq == before  # nothing changed
    assert served.admission.in_flight == 0


@pytest.mark.parametrize(("headers", "content", "status"), [
    ({"idempotency-key": "k-1"}, json.dumps(FIELD), 200),  # exactly-once: the Keeper's
    ({}, "{not json", 422),  # the framework's route says how it is malformed
    ({}, json.dumps({"wager": "field"}), 422),  # the model refuses it
    ({"content-type": "text/plain"}, json.dumps(FIELD), 422),
    ({"authorization": "Bearer nobody"}, json.dumps(FIELD), 401),  # no such session
], ids=["idempotency-key", "not-json", "no-amount", "not-json-media", "unknown-session"])
def test_issue_28_what_the_door_must_check_is_left_to_it(
        served: Served, headers: dict[str, str], content: str, status: int) -> None:
    taken, reached = served.at_read.taken, len(served.app.requests)
    reply = httpx.post(f"{served.url}{T}/bets", content=content,
                       headers={"content-type": "application/json"} | served.auth | headers)
    assert reply.status_code == status, reply.text
    assert served.at_read.taken == taken
    assert served.app.requests[reached:] == [f"POST {T}/bets"]


def test_issue_28_a_cookie_bet_from_another_origin_is_left_to_the_door(
        served: Served) -> None:
    taken = served.at_read.taken
    cookie = {"cookie": f"{COOKIE}={served.token}"}
    foreign = httpx.post(f"{served.url}{T}/bets", json=FIELD,
                         headers=cookie | {"origin": "https://elsewhere.example"})
    assert foreign.status_code == 403  # the door's origin check
    assert served.at_read.taken == taken
    own = httpx.post(f"{served.url}{T}/bets", json=FIELD,
                     headers=cookie | {"origin": served.url})
    assert own.status_code == 200, own.text
    assert served.at_read.taken == taken + 1


def test_issue_28_answers_at_read_keep_their_order_on_one_connection(
        served: Served) -> None:
    def bet(wager: str) -> bytes:
        body = json.dumps({"wager": wager, "amount": 1000}).encode()
        return (f"POST {T}/bets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                f"{served.token}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body

    read = f"GET {T} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.token}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        buffered = bytearray()
        # pipelined: answered in the order sent
        sock.sendall(bet("field") + read.encode() + bet("big6"))
        answers = [answer(sock, buffered) for _ in range(3)]
    assert [a[0] for a in answers] == [200, 200, 200]
    first, view, last = (json.loads(a[2]) for a in answers)
    assert [e["type"] for e in first["events"]] == ["BetPlaced"]
    assert "events" not in view  # the table's view, between the two bets
    assert last["seq"] > first["seq"]


def test_issue_28_a_bet_at_read_gives_the_view_when_asked(served: Served) -> None:
    taken = served.at_read.taken
    reply = served.bet(FIELD, prefer="return=representation")
    assert reply.status_code == 200, reply.text
    assert "view" in reply.json()
    assert served.at_read.taken == taken + 1


@pytest.mark.parametrize(("version", "extra"), [("1.1", "Connection: close\r\n"), ("1.0", "")],
                         ids=["connection-close", "http-1.0"])
def test_issue_28_a_bet_at_read_on_a_connection_asked_to_close_is_closed(
        served: Served, version: str, extra: str) -> None:
    body = json.dumps(FIELD).encode()
    request = (f"POST {T}/bets HTTP/{version}\r\nHost: x\r\nAuthorization: Bearer "
               f"{served.token}\r\nContent-Type: application/json\r\n{extra}"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    taken = served.at_read.taken
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(request)
        status, headers, _ = answer(sock, bytearray())
        assert (status, headers.get("connection")) == (200, "close")
        assert sock.recv(10) == b""  # closed by the server
    assert served.at_read.taken == taken + 1


def test_issue_28_a_bet_whose_client_left_is_committed_and_counted_out(
        served: Served, floor: Floor) -> None:
    # Acknowledged or not, a command taken is decided and committed; its client's leaving
    # only drops the answer, and the admission counts it out all the same.
    before = floor.store.head(TABLE).seq
    held = HeldCommits(floor.store)
    body = json.dumps(FIELD).encode()
    request = (f"POST {T}/bets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.token}"
               f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
               ).encode() + body
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(request)
        held.wait_entered(0)  # decided, its commit held
    held.free()  # the client is gone when its answer is written
    deadline = time.monotonic() + 20  # a guard against a hang, not a measure
    while served.admission.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert served.admission.in_flight == 0
    assert floor.store.head(TABLE).seq == before + 1
    assert held.calls == [["BetPlaced"]]


def test_issue_28_a_named_proxys_scheme_is_applied_before_the_origin_check_at_read(
        floor: Floor) -> None:
    # Behind a TLS proxy the browser's origin is https: the door's proxy rule (applied to a
    # copy of the request) makes it this server's own origin, so the bet is taken at read.
    app = create_app(floor, electronic_loop=False, proxies=Proxies("127.0.0.1"))
    with TestClient(app) as http:
        token = Client(http, "alice").token
        with serving(app, http=HTTP_PROTOCOL) as port:
            at_read: BetsAtRead = app.state.at_read
            headers = {"cookie": f"{COOKIE}={token}", "host": "floor.example",
                       "x-forwarded-proto": "https", "origin": "https://floor.example"}
            reply = httpx.post(f"http://127.0.0.1:{port}{T}/bets", json=FIELD, headers=headers)
            assert reply.status_code == 200, reply.text
            assert at_read.taken == 1
            foreign = httpx.post(f"http://127.0.0.1:{port}{T}/bets", json=FIELD,
                                 headers=headers | {"origin": "http://floor.example"})
            assert foreign.status_code == 403  # the scheme differs: another origin
            assert at_read.taken == 1
