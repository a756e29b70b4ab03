"""Every endpoint of the table server, with refusals by role and by rule: 4xx JSON naming the
rule and citation, never a 5xx for client input."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from dicetable.application.accounts import LOCK_AFTER
from dicetable.server.floor import ROUND_NOW, Floor
from tests.server.conftest import Login

T = "/api/tables/craps-pa-1"
PH = "/api/tables/props-pa-1"


def refused(reply: object, status: int, error: str, rule: str | None = None) -> dict[str, str]:
    import httpx

    assert isinstance(reply, httpx.Response)
    assert reply.status_code == status, reply.text
    body: dict[str, str] = reply.json()
    assert body["error"] == error
    assert set(body) == {"error", "message", "rule", "citation"}
    if rule is not None:
        assert body["rule"] == rule
    return body


def shooter_ready(login: Login) -> None:
    """Alice bets the pass line, is offered the dice by the stickperson and takes two."""
    alice, sam = login("alice"), login("sam")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200


# -- accounts --------------------------------------------------------------------------------
def test_login_me_logout(http: TestClient, login: Login) -> None:
    alice = login("alice")
    me = alice.get("/api/me").json()
    assert me["kind"] == "player"
    assert "craps-pa-1" in me["tables"]
    assert login("sam").get("/api/me").json()["tables"]["craps-pa-1"] == ["stickperson"]
    assert alice.post("/api/logout").status_code == 200
    refused(alice.get("/api/me"), 401, "NotAuthenticated")


def test_session_cookie_works_like_the_token(http: TestClient) -> None:
    reply = http.post("/api/login", json={"username": "bob", "password": "dicetable-demo"})
    assert "dicetable_session" in reply.cookies
    assert http.get("/api/me").json()["username"] == "bob"


def test_wrong_password_and_lockout_after_three_failures(http: TestClient,
                                                         login: Login) -> None:
    for _ in range(LOCK_AFTER - 1):
        refused(http.post("/api/login", json={"username": "carol", "password": "wrong!!!"}),
                401, "NotAuthenticated", "accounts.login")
    body = refused(http.post("/api/login", json={"username": "carol", "password": "nope!!!!"}),
                   423, "AccountLocked", "accounts.lockout")
    assert "13:69E-1.37A" in body["citation"]
    refused(http.post("/api/login", json={"username": "carol",
                                          "password": "dicetable-demo"}),
            423, "AccountLocked")
    refused(login("alice").post("/api/accounts/carol/unlock"), 403, "RoleNotPermitted")
    assert login("pat").post("/api/accounts/carol/unlock").status_code == 200
    assert login("carol").get("/api/me").status_code == 200


def test_unknown_user_and_malformed_login(http: TestClient) -> None:
    refused(http.post("/api/login", json={"username": "zed", "password": "whatever1"}),
            401, "NotAuthenticated")
    refused(http.post("/api/login", json={"user": "alice"}), 422, "InvalidInput", "api.request")
    refused(http.post("/api/login", content=b"{not json",
                      headers={"content-type": "application/json"}), 422, "InvalidInput")


def test_every_api_call_needs_a_session(http: TestClient) -> None:
    for method, path in (("get", "/api/tables"), ("get", T), ("post", f"{T}/bets"),
                         ("post", f"{T}/roll"), ("get", "/api/pit"), ("post", f"{T}/settle")):
        reply = getattr(http, method)(path, **({"json": {}} if method == "post" else {}))
        assert reply.status_code in (401, 422), (path, reply.text)
        assert reply.json()["error"] in ("NotAuthenticated", "InvalidInput")


# -- tables and views ------------------------------------------------------------------------
def test_tables_and_views(login: Login) -> None:
    alice = login("alice")
    tables = {t["table"]: t for t in alice.get("/api/tables").json()}
    assert set(tables) == {"craps-pa-1", "minicraps-pa-1", "props-pa-1", "craps-in-1",
                           "craps-pa-e1"}
    assert tables["craps-pa-e1"]["mode"] == "electronic"
    view = alice.get(T).json()
    assert view["me"]["balance"] == 50000
    assert "pass" in view["me"]["placeable"]
    assert "come" not in view["me"]["placeable"]  # a come bet waits for a point
    assert "players" not in view
    assert "bets" not in view
    assert view["limits"]["pass"]["minimum"] == 500
    staff = login("dee").get(T).json()
    assert set(staff["players"]) == {"alice", "bob", "carol", "dan"}
    assert staff["dice"]["bowl"] == ["PA1-1", "PA1-2", "PA1-3", "PA1-4", "PA1-5"]
    refused(alice.get("/api/tables/nowhere"), 404, "NotFound", "api.table")


def test_a_player_sees_only_their_own_wagers(login: Login) -> None:
    alice, bob = login("alice"), login("bob")
    alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000})
    bob.post(f"{T}/bets", {"wager": "dontpass", "amount": 2000})
    assert [b["wager"] for b in bob.get(T).json()["me"]["bets"]] == ["dontpass"]
    events = bob.get(f"{T}/events").json()
    assert not [e for e in events if e.get("player") == "alice"
                and e["type"] in ("BetPlaced", "ChipsBought")]  # seating is public
    assert [e["wager"] for e in events if e["type"] == "BetPlaced"] == ["dontpass"]
    staff_events = login("pat").get(f"{T}/events").json()
    assert {e["player"] for e in staff_events if e["type"] == "BetPlaced"} == {"alice", "bob"}


# -- a hand through the API ------------------------------------------------------------------------
def test_a_hand_point_and_seven_out(login: Login, floor: Floor) -> None:
    shooter_ready(login)
    sam, dee, alice = login("sam"), login("dee"), login("alice")
    reply = sam.post(f"{T}/roll", {"faces": "2-2"})
    assert [e["type"] for e in reply.json()["events"]] == ["DiceRolled"]
    settled = dee.post(f"{T}/settle").json()
    assert "view" not in settled  # a reply carries what changed, not the whole view
    view = dee.get(T).json()
    assert view["point"] == 4
    assert settled["seq"] == view["seq"]
    line = alice.get(T).json()["me"]["bets"][0]["id"]
    assert alice.post(f"{T}/bets", {"wager": "odds", "amount": 3000, "base": line}
                      ).status_code == 200
    sam.post(f"{T}/roll", {"faces": "3-4"})
    events = dee.post(f"{T}/settle").json()["events"]
    assert [e["type"] for e in events] == ["LosersCollected", "WinnersPaid", "PuckMoved",
                                           "ShooterEnded"]
    me = alice.get(T).json()
    assert me["me"]["balance"] == 50000 - 4000 == floor.tables["craps-pa-1"].table.balance(
        "alice")
    assert me["shooter"] is None
    assert me["history"][-1]["end_of_hand"]


def test_refusals_by_role(login: Login) -> None:
    shooter_ready(login)
    alice, dee, sam, bo = login("alice"), login("dee"), login("sam"), login("bo")
    refused(alice.post(f"{T}/roll", {"faces": "3-4"}), 403, "RoleNotPermitted",
            "authority.record_roll")
    refused(dee.post(f"{T}/roll", {"faces": "3-4"}), 403, "RoleNotPermitted",
            "authority.record_roll")
    sam.post(f"{T}/roll", {"faces": "3-4", "facts": ["not-released-together"]})
    body = refused(dee.post(f"{T}/no-roll", {"grounds": ["not-released-together"]}), 403,
                   "RoleNotPermitted", "noroll.callers")
    assert "623a.8(e)(1)" in body["citation"]  # TV-10
    assert bo.post(f"{T}/no-roll", {"grounds": ["not-released-together"]}).status_code == 200
    refused(alice.post(f"{T}/staff", {"person": "alice", "role": "dealer"}), 403,
            "RoleNotPermitted", "authority.staff")
    refused(login("bob").post(f"{T}/bets", {"wager": "field", "amount": 100,
                                            "player": "alice"}),
            403, "RoleNotPermitted")


def test_refusals_by_rule(login: Login) -> None:
    alice, sam, bo = login("alice"), login("sam"), login("bo")
    refused(alice.post(f"{T}/bets", {"wager": "place6", "amount": 500}), 422, "IllegalWager",
            "payout.inexact")
    refused(alice.post(f"{T}/bets", {"wager": "pass", "amount": 100}), 422, "IllegalWager",
            "limits.default")
    refused(alice.post(f"{T}/bets", {"wager": "double4", "amount": 100}), 422,
            "IllegalWager", "menu.double")
    sam.post(f"{T}/offer-dice", {"patron": "alice"})
    alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    body = refused(sam.post(f"{T}/roll", {"faces": "3-4"}), 409, "ProcedureViolation",
                   "shooter.line_bet")
    assert "623a.8(a)" in body["citation"]  # TV-01
    alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000})
    sam.post(f"{T}/roll", {"faces": "2-3", "facts": ["die-on-chips"]})
    refused(bo.post(f"{T}/no-roll", {"grounds": ["die-on-chips"]}), 409, "ProcedureViolation",
            "noroll.excluded_grounds")  # TV-06, 623a.8(d)
    refused(login("dee").post(f"{T}/pay"), 409, "ProcedureViolation", "settlement.order")


def test_pa_623a_8_c_a_call_is_held_against_the_recorded_throw(login: Login) -> None:
    shooter_ready(login)
    sam, bo = login("sam"), login("bo")
    sam.post(f"{T}/roll", {"faces": "5-6"})
    refused(bo.post(f"{T}/no-roll", {"grounds": ["die-on-rail"]}), 409, "ProcedureViolation",
            "noroll.grounds")
    refused(bo.post(f"{T}/no-roll", {"grounds": ["die-on-rail"], "observed": ["wizardry"]}),
            422, "InvalidInput", "throw.facts")
    reply = bo.post(f"{T}/no-roll", {"grounds": ["die-on-rail"], "observed": ["die-on-rail"]})
    assert reply.status_code == 200, reply.text
    called = [e for e in reply.json()["events"] if e["type"] == "NoRollCalled"]
    assert (called[0]["observed"], called[0]["actor"]) == (["die-on-rail"], "bo")


def test_malformed_requests_are_422_never_500(login: Login) -> None:
    alice, sam = login("alice"), login("sam")
    bets: list[dict[str, object]] = [
        {"wager": "pass"}, {"wager": "pass", "amount": -5}, {"wager": "pass", "amount": "ten"},
        {"wager": 7, "amount": 100}, {}, {"wager": "x" * 500, "amount": 100}]
    for bet in bets:
        assert alice.post(f"{T}/bets", bet).status_code == 422, bet
    rolls: list[dict[str, object]] = [
        {"faces": "7-1"}, {"faces": "3-4", "distance": "half"},
        {"faces": "3-4", "facts": ["levitated"]}]
    for throw in rolls:
        assert sam.post(f"{T}/roll", throw).status_code in (409, 422), throw
    assert alice.patch(f"{T}/bets/b99", {"amount": 100}).status_code == 422
    assert alice.delete(f"{T}/bets/b99").status_code == 422


def test_change_and_remove_a_bet(login: Login) -> None:
    alice = login("alice")
    alice.post(f"{T}/bets", {"wager": "place8", "amount": 1200})
    bet = alice.get(T).json()["me"]["bets"][0]["id"]
    assert alice.patch(f"{T}/bets/{bet}", {"amount": 2400, "working": True}
                       ).status_code == 200
    me = alice.get(T).json()["me"]
    assert me["bets"][0]["amount"] == 2400
    assert me["bets"][0]["working"] is True
    assert alice.delete(f"{T}/bets/{bet}").status_code == 200
    assert alice.get(T).json()["me"]["balance"] == 50000
    refused(alice.patch(f"{T}/bets/{bet}", {}), 422, "InvalidInput")


def test_staff_book_a_bet_for_a_player_and_sell_chips(login: Login) -> None:
    dee = login("dee")
    assert dee.post(f"{T}/bets", {"wager": "field", "amount": 100, "player": "bob"}
                    ).status_code == 200
    assert dee.post(f"{T}/chips", {"player": "bob", "amount": 10000}).status_code == 200
    assert login("bob").get(T).json()["me"]["balance"] == 50000 - 100 + 10000
    assert dee.post(f"{T}/cash-out", {"player": "bob", "amount": 5000}).status_code == 200
    refused(dee.post(f"{T}/cash-out", {"player": "bob", "amount": 10**9}), 422,
            "InvalidInput", "money.balance")


def test_shooter_steps_and_removal(login: Login) -> None:
    sam, bo, alice = login("sam"), login("bo"), login("alice")
    refused(sam.post(f"{T}/offer-dice", {"patron": "bob"}), 409, "ProcedureViolation",
            "shooter.first_offer")
    sam.post(f"{T}/offer-dice", {"patron": "alice"})
    assert alice.post(f"{T}/decline-dice").status_code == 200
    sam.post(f"{T}/offer-dice", {"patron": "bob"})
    login("bob").post(f"{T}/bets", {"wager": "pass", "amount": 500})
    login("bob").post(f"{T}/select-dice", {"serials": ["PA1-3", "PA1-4"]})
    assert bo.post(f"{T}/remove-shooter", {"ground": "unreasonable-delay"}).status_code == 200
    assert alice.get(T).json()["shooter"] is None
    refused(login("dee").post(f"{T}/remove-shooter", {"ground": "violation"}), 403,
            "RoleNotPermitted")


def test_dice_and_staff_endpoints(login: Login) -> None:
    bo, fran = login("bo"), login("fran")
    refused(bo.post(f"{T}/dice", {"serials": ["PA1-1"]}), 422, "InvalidInput", "dice.serials")
    assert bo.post(f"{T}/dice/remove", {"serials": ["PA1-5"], "reason": "chipped"}
                   ).status_code == 200
    # A die custody never issued to this table is refused (68 IAC 14-3 / 603a.13 stand-in).
    refused(bo.post(f"{T}/dice", {"serials": ["PA1-6"]}), 409, "ProcedureViolation",
            "storage.source_only")
    issued = login("pat").post("/api/dice-room/demo-pa/issue-table",
                               {"dice": ["PA1-S1"], "table": "craps-pa-1", "received_by": "bo"})
    assert issued.status_code == 200, issued.text
    assert bo.post(f"{T}/dice", {"serials": ["PA1-S1"]}).status_code == 200
    # a floorperson assigns below her own rank only (duties.rank)
    assert fran.post(f"{T}/staff", {"person": "sam", "role": "dealer"}).status_code == 200
    assert fran.post(f"{T}/staff/relieve", {"person": "sam", "role": "dealer"}
                     ).status_code == 200


def test_props_and_hops_round_with_a_no_roll(login: Login) -> None:
    dee, amy = login("dee"), login("alice")
    amy.post(f"{PH}/bets", {"wager": "double4", "amount": 500})
    assert dee.post(f"{PH}/no-more-bets").status_code == 200
    assert dee.post(f"{PH}/offer-shaker", {"player": "alice"}).status_code == 200
    refused(amy.post(f"{PH}/return-shaker"), 409, "ProcedureViolation", "shaker.min_shakes")
    amy.post(f"{PH}/player-shake", {"times": 3})
    amy.post(f"{PH}/return-shaker")
    dee.post(f"{PH}/uncover")
    reply = dee.post(f"{PH}/roll", {"faces": "2-2", "facts": ["die-fell-out"]})
    assert [e["type"] for e in reply.json()["events"]] == ["DiceRolled", "NoRollCalled"]
    # A live table automates nothing: returning the wagers is the dealer's chore.
    assert dee.get(PH).json()["chores"] == ["return-wagers"]
    refused(dee.post(f"{PH}/shake"), 409, "ProcedureViolation", "noroll.effect")
    refused(amy.post(f"{PH}/return-wagers"), 403, "RoleNotPermitted", "authority.settle")
    reply = dee.post(f"{PH}/return-wagers")
    assert [e["type"] for e in reply.json()["events"]] == ["WagersReturned", "RoundCompleted"]
    assert amy.get(PH).json()["me"]["balance"] == 50000  # 585.3(f): every wager returned
    assert dee.post(f"{PH}/shake").status_code == 200


def test_pa_585_3_e_a_lid_taken_off_is_put_back_and_shaken_again(login: Login) -> None:
    dee, amy = login("dee"), login("alice")
    dee.post(f"{PH}/no-more-bets")
    dee.post(f"{PH}/offer-shaker", {"player": "alice"})
    amy.post(f"{PH}/player-shake", {"times": 3})
    assert amy.post(f"{PH}/remove-lid").status_code == 200
    shaker = amy.get(PH).json()["shaker"]
    assert (shaker["lid_off"], shaker["shakes"]) == (True, 0)
    refused(amy.post(f"{PH}/player-shake", {"times": 3}), 409, "ProcedureViolation",
            "shaker.min_shakes")
    refused(login("bob").post(f"{PH}/re-cover-shaker"), 409, "ProcedureViolation",
            "authority.shake")                          # bob does not hold the shaker
    assert amy.post(f"{PH}/re-cover-shaker").status_code == 200
    assert amy.get(PH).json()["shaker"]["lid_off"] is False
    refused(amy.post(f"{PH}/return-shaker"), 409, "ProcedureViolation", "shaker.min_shakes")
    amy.post(f"{PH}/player-shake", {"times": 3})
    assert amy.post(f"{PH}/return-shaker").status_code == 200


def test_electronic_table_cycle(login: Login, floor: Floor) -> None:
    alice = login("alice")
    alice.post("/api/tables/craps-pa-e1/bets", {"wager": "field", "amount": 100})
    refused(alice.post("/api/tables/craps-pa-e1/roll", {"faces": "3-4"}), 403,
            "RoleNotPermitted")
    events = floor.submit("craps-pa-e1", ROUND_NOW).result()
    kinds = [e.kind for e in events]
    assert kinds[:2] == ["BettingClosed", "DiceRolled"]
    assert kinds[-1] == "PuckMoved"
    rolled = events[1]
    assert rolled.role.value == "system"
    assert getattr(rolled, "source", "") == "csprng"
    view = alice.get("/api/tables/craps-pa-e1").json()
    assert view["bets_close_at"]
    assert view["phase"] == "betting"


def test_recall_pit_and_audit(login: Login) -> None:
    shooter_ready(login)
    login("sam").post(f"{T}/roll", {"faces": "5-6"})
    login("dee").post(f"{T}/settle")
    rounds = login("alice").get(f"{T}/recall").json()
    assert rounds[-1]["rolls"][0]["roll"] == "5-6"
    assert rounds[-1]["balances_after"] == {"alice": 51000}
    assert "house_after" not in rounds[-1]
    staff_rounds = login("pat").get(f"{T}/recall").json()
    assert set(staff_rounds[-1]["balances_after"]) == {"alice", "bob", "carol", "dan"}
    pit = login("pat").get("/api/pit").json()
    assert {t["table"] for t in pit["tables"]} >= {"craps-pa-1", "props-pa-1"}
    assert all(t["conserved"] for t in pit["tables"])
    refused(login("alice").get("/api/pit"), 403, "RoleNotPermitted")
    audit = login("pat").get(f"{T}/audit").json()
    assert audit["ok"]
    assert audit["events"] > 20
    refused(login("alice").get(f"{T}/audit"), 403, "RoleNotPermitted")


def test_websocket_pushes_events_and_catches_up_on_reconnect(http: TestClient,
                                                             login: Login) -> None:
    alice, bob = login("alice"), login("bob")
    with http.websocket_connect(f"/ws/tables/craps-pa-1?token={alice.token}") as ws:
        hello = ws.receive_json()
        assert hello["type"] == "hello"
        assert hello["view"]["me"]["player"] == "alice"
        seen = hello["view"]["seq"]
        alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000})
        pushed = ws.receive_json()
        assert [e["type"] for e in pushed["events"]] == ["BetPlaced"]
        assert len(pushed["patch"]["me"]["bets"]) == 1  # her own part: a merge patch of it
        bob.post(f"{T}/bets", {"wager": "pass", "amount": 500})  # bob's bet: not for alice
        pushed = ws.receive_json()
        assert pushed["events"] == []
        assert "me" not in pushed["patch"]  # alice's own part did not change: no patch for it
        seen = pushed["patch"]["seq"]
    login("sam").post(f"{T}/offer-dice", {"patron": "alice"})
    alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    login("sam").post(f"{T}/roll", {"faces": "6-5"})
    login("dee").post(f"{T}/settle")
    with http.websocket_connect(f"/ws/tables/craps-pa-1?token={alice.token}&after={seen}"
                                ) as ws:
        hello = ws.receive_json()
        kinds = [e["type"] for e in hello["events"]]
        assert "WinnersPaid" in kinds  # what was settled while she was away
        paid = next(e for e in hello["events"] if e["type"] == "WinnersPaid")
        assert [i["player"] for i in paid["items"]] == ["alice"]


def test_websocket_refuses_without_a_session(http: TestClient) -> None:
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect), \
            http.websocket_connect("/ws/tables/craps-pa-1?token=nope") as ws:
        ws.receive_json()


def test_openapi_is_published(http: TestClient) -> None:
    spec = http.get("/openapi.json").json()
    assert "/api/tables/{table_id}/bets" in spec["paths"]
    assert "/api/tables/{table_id}/no-roll" in spec["paths"]
