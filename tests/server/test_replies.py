"""A command's reply carries what changed: its own events and the caller's new balance."""

from __future__ import annotations

from dicetable.server.floor import Floor
from tests.server.conftest import Login


def test_a_reply_carries_the_commands_events_and_the_callers_balance(
        login: Login, floor: Floor) -> None:
    alice = login("alice")
    reply = alice.post("/api/tables/craps-pa-1/bets", {"wager": "pass", "amount": 10_00})
    data = reply.json()
    assert set(data) == {"events", "balance", "seq"}  # not the whole view
    assert [e["type"] for e in data["events"]] == ["BetPlaced"]
    assert data["balance"] == floor.tables["craps-pa-1"].table.balance("alice")
    assert data["seq"] == data["events"][-1]["seq"]
    asked = alice.http.post("/api/tables/craps-pa-1/bets", json={"wager": "field",
                                                                  "amount": 5_00},
                            headers={**alice.headers, "prefer": "return=representation"})
    view = asked.json()["view"]  # the pages ask for the view (RFC 7240 Prefer)
    assert view["me"]["balance"] == asked.json()["balance"] == data["balance"] - 5_00
    staff = login("dee").post("/api/tables/craps-pa-1/chips",
                              {"player": "bob", "amount": 1_00}).json()
    assert staff["balance"] is None
    assert [e["type"] for e in staff["events"]] == ["ChipsBought"]
