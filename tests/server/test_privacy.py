"""One privacy projection for every surface (spec/standards.md SEC-4, REC-1): an event seen by
the same caller through a command's reply, the event list, a WebSocket push and game recall is
the same event, and another player's wagers and settlements appear in none of them."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from tests.server.conftest import Login

T = "/api/tables/craps-pa-1"
WATCHERS = ("alice", "bob", "dee", "carol")
"""Two players who bet, the dealer (staff), and a seated player who does not bet."""


def _pushed(ws: WebSocketTestSession, upto: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while True:
        message = ws.receive_json()
        events += message["events"]
        if message["seq"] >= upto:
            return events


def test_sec_4_one_event_is_seen_alike_through_reply_export_push_and_recall(
        http: TestClient, login: Login) -> None:
    clients = {name: login(name) for name in WATCHERS}
    alice, bob, dee = clients["alice"], clients["bob"], clients["dee"]
    with ExitStack() as stack:
        sockets = {name: stack.enter_context(http.websocket_connect(
            f"/ws/tables/craps-pa-1?token={c.token}")) for name, c in clients.items()}
        start = {name: ws.receive_json()["view"]["seq"] for name, ws in sockets.items()}
        replies: dict[str, list[dict[str, Any]]] = {name: [] for name in clients}
        replies["alice"] += alice.post(f"{T}/bets", {"wager": "pass", "amount": 10_00}
                                       ).json()["events"]
        replies["bob"] += bob.post(f"{T}/bets", {"wager": "field", "amount": 5_00}
                                   ).json()["events"]
        replies["dee"] += dee.post(f"{T}/bets", {"wager": "dontpass", "amount": 6_00,
                                                 "player": "bob"}).json()["events"]
        login("sam").post(f"{T}/offer-dice", {"patron": "alice"})
        replies["alice"] += alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}
                                       ).json()["events"]
        login("sam").post(f"{T}/roll", {"faces": "5-6"})  # the pass line and the field win
        replies["dee"] += dee.post(f"{T}/settle").json()["events"]
        head = clients["dee"].get(T).json()["seq"]
        pushed = {name: _pushed(ws, head) for name, ws in sockets.items()}

    for name, client in clients.items():
        exported = client.get(f"{T}/events", {"after": start[name]}).json()
        assert pushed[name] == exported, f"{name}: the push and the event list differ"
        by_seq = {e["seq"]: e for e in exported}
        for event in replies[name]:
            assert by_seq[event["seq"]] == event, f"{name}: the reply and the list differ"

    bob_bets = {e["bet"] for e in pushed["dee"] if e["type"] == "BetPlaced"
                and e["player"] == "bob"}
    assert len(bob_bets) == 2
    for name in ("alice", "carol"):
        text = str(pushed[name]) + str(login(name).get(f"{T}/recall").json())
        assert not any(b in text for b in bob_bets), f"bob's bets leak to {name}"

    # Recall's round shows each caller the settlement items the events show them.
    for name, client in clients.items():
        last = client.get(f"{T}/recall").json()[-1]
        paid = [i for e in pushed[name] if e["type"] == "WinnersPaid" for i in e["items"]]
        assert last["payments"] == paid, name
        placed = [{k: v for k, v in e.items() if k not in ("table", "pack")}
                  for e in pushed[name] if e["type"] == "BetPlaced"]
        assert [a for a in last["activity"] if a["type"] == "BetPlaced"] == placed, name
    staff_round = dee.get(f"{T}/recall").json()[-1]
    assert {i["player"] for i in staff_round["payments"]} == {"alice", "bob"}
    assert {i["player"] for i in staff_round["collections"]} == {"bob"}
    assert set(staff_round["balances_after"]) >= {"alice", "bob", "carol"}
