"""The bet route's fast path (``server.door``, issue 13) answers exactly as the
framework's route does: the same refusals for bad input, no session, an oversized body, a
reused idempotency key, a wager the rules refuse; the same reply for a bet taken."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.door import Door
from dicetable.server.floor import Floor
from dicetable.server.limits import MAX_BODY

T = "/api/tables/craps-pa-1"


def _fast(app: Any) -> Door:
    door: Door = app.state.door
    return door


@pytest.fixture(params=[True, False], ids=["fast", "framework"])
def both(floor: Floor, request: pytest.FixtureRequest) -> Iterator[tuple[TestClient, bool]]:
    with TestClient(create_app(floor, electronic_loop=False, fast_path=request.param)) as c:
        yield c, request.param


def _login(http: TestClient, who: str) -> dict[str, str]:
    reply = http.post("/api/login", json={"username": who, "password": DEMO_PASSWORD})
    assert reply.status_code == 200
    http.cookies.clear()  # the bearer token only: a case without it has no session
    return {"authorization": f"Bearer {reply.json()['token']}"}


def _answer(reply: httpx.Response) -> tuple[int, Any]:
    body = reply.json()
    if isinstance(body, dict) and "message" in body:
        body = {k: v for k, v in body.items() if k != "message"} | {"has_message": True}
    return reply.status_code, body


# Each case: (headers beyond the caller's, body as bytes or JSON).
CASES: dict[str, tuple[dict[str, str], Any]] = {
    "no_session": ({"authorization": "Bearer nonsense"}, {"wager": "pass", "amount": 1000}),
    "no_credentials": ({"authorization": ""}, {"wager": "pass", "amount": 1000}),
    "missing_field": ({}, {"wager": "pass"}),
    "negative_amount": ({}, {"wager": "pass", "amount": -5}),
    "wrong_type": ({}, {"wager": "pass", "amount": "lots"}),
    "not_json": ({"content-type": "application/json"}, b"{wager: pass"),
    "not_an_object": ({}, [1, 2]),
    "other_media_type": ({"content-type": "text/plain"}, b'{"wager":"pass","amount":1000}'),
    "long_wager_name": ({}, {"wager": "p" * 40, "amount": 1000}),
    "unknown_wager": ({}, {"wager": "nosuchbet", "amount": 1000}),
    "over_the_maximum": ({}, {"wager": "pass", "amount": 10**11}),
    "for_another_player": ({}, {"wager": "pass", "amount": 1000, "player": "bob"}),
    "no_such_table": ({"x-path": "/api/tables/nowhere/bets"}, {"wager": "pass", "amount": 1000}),
}


def _send(http: TestClient, headers: dict[str, str], case: str) -> httpx.Response:
    extra, body = CASES[case]
    merged = {**headers, **extra}
    path = merged.pop("x-path", f"{T}/bets")
    if merged.get("authorization") == "":
        merged.pop("authorization")
    reply: httpx.Response = http.post(path, content=body, headers=merged) \
        if isinstance(body, bytes) else http.post(path, json=body, headers=merged)
    return reply


def test_issue_13_fast_path_refuses_as_the_framework_route_does(floor: Floor) -> None:
    answers: dict[bool, dict[str, tuple[int, Any]]] = {}
    for fast in (True, False):
        with TestClient(create_app(floor, electronic_loop=False, fast_path=fast)) as http:
            alice = _login(http, "alice")
            answers[fast] = {case: _answer(_send(http, alice, case)) for case in CASES}
    assert answers[True] == answers[False]
    for case, (status, _) in answers[True].items():
        assert 400 <= status < 500, case


def test_issue_13_fast_path_takes_a_good_bet_and_answers_as_the_route(floor: Floor) -> None:
    replies = {}
    for fast, wager in ((True, "pass"), (False, "field")):
        app = create_app(floor, electronic_loop=False, fast_path=fast)
        with TestClient(app) as http:
            alice = _login(http, "alice")
            reply = http.post(f"{T}/bets", json={"wager": wager, "amount": 1000},
                              headers=alice)
            assert reply.status_code == 200, reply.text
            assert reply.headers["content-type"] == "application/json"
            replies[fast] = reply.json()
            if fast:
                assert _fast(app).taken == 1
    assert set(replies[True]) == set(replies[False]) == {"events", "balance", "seq"}
    assert [e["type"] for e in replies[True]["events"]] == ["BetPlaced"]
    assert replies[False]["balance"] == replies[True]["balance"] - 1000
    assert replies[False]["seq"] == replies[True]["seq"] + 1


def test_issue_13_fast_path_gives_the_whole_view_when_asked(floor: Floor) -> None:
    with TestClient(create_app(floor, electronic_loop=False)) as http:
        alice = _login(http, "alice")
        reply = http.post(f"{T}/bets", json={"wager": "pass", "amount": 1000},
                          headers={**alice, "prefer": "return=representation"})
        assert reply.status_code == 200
        view = reply.json()["view"]
        assert view == http.get(T, headers=alice).json()
        assert len(view["me"]["bets"]) == 1


def test_issue_13_fast_path_keeps_the_body_limit(both: tuple[TestClient, bool]) -> None:
    http, _ = both
    alice = _login(http, "alice")
    big = b'{"wager":"pass","amount":1000,"pad":"' + b"x" * MAX_BODY + b'"}'
    reply = http.post(f"{T}/bets", content=big,
                      headers={**alice, "content-type": "application/json"})
    assert reply.status_code == 413
    assert reply.json()["rule"] == "api.body_limit"
    assert not any(e.kind == "BetPlaced" for e in http.app.state.floor.store.events(  # type: ignore[attr-defined]
        "craps-pa-1"))


def test_issue_13_fast_path_keeps_idempotency(both: tuple[TestClient, bool]) -> None:
    http, _ = both
    alice = _login(http, "alice")
    keyed = {**alice, "idempotency-key": "bet-1"}
    first = http.post(f"{T}/bets", json={"wager": "pass", "amount": 1000}, headers=keyed)
    again = http.post(f"{T}/bets", json={"wager": "pass", "amount": 1000}, headers=keyed)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    reused = http.post(f"{T}/bets", json={"wager": "field", "amount": 1000}, headers=keyed)
    assert reused.status_code == 422
    assert reused.json()["rule"] == "idempotency.reuse"
    floor: Floor = http.app.state.floor  # type: ignore[attr-defined]
    assert sum(1 for e in floor.store.events("craps-pa-1") if e.kind == "BetPlaced") == 1


def test_issue_13_fast_path_keeps_the_origin_check(both: tuple[TestClient, bool]) -> None:
    http, _ = both
    reply = http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD})
    token = reply.json()["token"]
    http.cookies.set("dicetable_session", token)
    forged = http.post(f"{T}/bets", json={"wager": "pass", "amount": 1000},
                       headers={"origin": "https://evil.example"})
    assert forged.status_code == 403
    assert forged.json()["rule"] == "security.origin"
    own = http.post(f"{T}/bets", json={"wager": "pass", "amount": 1000},
                    headers={"origin": str(http.base_url).rstrip("/")})
    assert own.status_code == 200, own.text


def test_issue_13_a_refused_bet_changes_nothing_on_the_fast_path(floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        alice = _login(http, "alice")
        before = floor.store.head("craps-pa-1").seq
        reply = http.post(f"{T}/bets", json={"wager": "pass", "amount": 10**11}, headers=alice)
        assert reply.status_code == 422
        assert set(reply.json()) == {"error", "message", "rule", "citation"}
        assert floor.store.head("craps-pa-1").seq == before
        assert _fast(app).taken == 1  # decided by the engine, answered by the shared handler


def test_issue_28_a_bet_passes_one_layer_and_never_the_framework(floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False)
    assert app.user_middleware == []  # the door is the only layer: no middleware stack
    entered: list[str] = []
    framework = app.state.door.app

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        entered.append(scope["path"])
        await framework(scope, receive, send)

    app.state.door.app = counting
    with TestClient(app) as http:
        alice = _login(http, "alice")
        reply = http.post(f"{T}/bets", json={"wager": "pass", "amount": 1000}, headers=alice)
        assert reply.status_code == 200, reply.text
        bad = http.post(f"{T}/bets", json={"wager": "pass"}, headers=alice)
    assert entered == ["/api/login", f"{T}/bets"]  # the bet taken at the door; the bad one
    assert bad.status_code == 422                   # is the framework's route's to refuse
    assert _fast(app).taken == 1
    assert _fast(app).passed == 1
