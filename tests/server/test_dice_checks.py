"""The dice checks the consoles light their buttons on (issue 31): "Bring dice" asks the
table, which asks the custody ledger, whether custody issued these very dice to this table;
the dice room asks the ledger whether a step would be taken. Each answer is the engine's own
decision, changes nothing, and agrees with what the command meets when it is sent."""

from __future__ import annotations

from fastapi.testclient import TestClient

from dicetable.server.floor import Floor
from tests.server.conftest import Login
from tests.server.test_api import refused

T = "/api/tables/craps-pa-1"
ROOM = "/api/dice-room/demo-pa"


def _check(client: object, serials: str, action: str = "bring") -> dict[str, object]:
    from tests.server.conftest import Client

    assert isinstance(client, Client)
    reply = client.http.get(f"{T}/dice/check", headers=client.headers,
                            params={"serials": serials, "action": action})
    assert reply.status_code == 200, reply.text
    body: dict[str, object] = reply.json()
    return body


def test_dice_custody_never_issued_to_the_table_are_not_lit_and_are_refused_alike(
        floor: Floor, login: Login) -> None:
    bo = login("bo")  # the boxperson brings the dice at PA Craps
    held = dict(floor.tables["craps-pa-1"].table.procedure.dice)
    for serials, why in [("PA1-S1", "inspected"), ("ZZ-9", "no record")]:
        answer = _check(bo, serials)
        assert answer["ok"] is False
        assert answer["rule"] == "storage.source_only"
        assert answer["citation"]
        assert why in str(answer["message"])
        # the command itself meets the same refusal, and nothing changed
        body = refused(bo.post(f"{T}/dice", {"serials": [serials]}), 409,
                       "ProcedureViolation", "storage.source_only")
        assert body["message"] == answer["message"]
    assert floor.tables["craps-pa-1"].table.procedure.dice == held


def test_dice_issued_to_the_table_are_lit_and_taken(floor: Floor, login: Login) -> None:
    pat, bo = login("pat"), login("bo")
    issue = {"dice": ["PA1-S1", "PA1-S2"], "table": "craps-pa-1", "received_by": "bo"}
    ledger = floor.custody.ledger_for_table("craps-pa-1").ledger
    before = len(ledger.log)
    # the dice room's check decides the step and takes nothing
    assert pat.post(f"{ROOM}/issue-table/check", issue).json() == {"ok": True}
    assert len(ledger.log) == before
    assert ledger.state.dice["PA1-S1"].state.value == "inspected"
    assert pat.post(f"{ROOM}/issue-table", issue).status_code == 200
    assert _check(bo, "PA1-S1, PA1-S2") == {"ok": True, "action": "bring",
                                             "serials": ["PA1-S1", "PA1-S2"]}
    assert bo.post(f"{T}/dice", {"serials": ["PA1-S1", "PA1-S2"]}).status_code == 200
    # brought now: asking again names the rule that refuses them twice
    again = _check(bo, "PA1-S1")
    assert again["ok"] is False
    assert again["rule"] == "dice.serials"


def test_a_role_that_may_not_bring_dice_is_told_the_rule(floor: Floor, login: Login) -> None:
    answer = _check(login("dee"), "PA1-1")  # a dealer at PA Craps: the boxperson brings dice
    assert answer["ok"] is False
    assert answer["rule"] == "authority.dice"
    answer = _check(login("alice"), "PA1-1")  # a player: not staff at the table
    assert answer["ok"] is False
    assert answer["rule"]


def test_the_dice_room_check_says_why_a_step_would_be_refused(floor: Floor,
                                                              login: Login) -> None:
    pat = login("pat")
    ledger = floor.custody.ledger_for_table("craps-pa-1").ledger
    before = len(ledger.log)
    answer = pat.post(f"{ROOM}/issue-table/check", {
        "dice": ["PA1-1"], "table": "craps-pa-1", "received_by": "bo"}).json()
    assert answer["ok"] is False  # already at a table: custody issues it nowhere again
    assert answer["rule"]
    assert answer["citation"]
    assert answer["message"]
    # a role the step's rule never lists: refused before the body is read, and said so
    dee = login("dee").post(f"{ROOM}/receive/check", {}).json()
    assert dee["ok"] is False
    assert dee["error"] == "RoleNotPermitted"
    assert dee["rule"]
    assert len(ledger.log) == before


def test_bad_serials_are_refused_with_the_rule(login: Login) -> None:
    bo = login("bo")
    reply = bo.http.get(f"{T}/dice/check", headers=bo.headers,
                        params={"serials": " ".join(f"S{i}" for i in range(13))})
    refused(reply, 422, "InvalidInput", "dice.serials")
    reply = bo.http.get(f"{T}/dice/check", headers=bo.headers,
                        params={"serials": "A1", "action": "juggle"})
    assert reply.status_code == 422
    assert _check(bo, "")["rule"] == "dice.serials"  # nothing named: the engine's own rule


def test_the_checks_answer_only_who_is_signed_in(http: TestClient, login: Login) -> None:
    assert http.get(f"{T}/dice/check", params={"serials": "PA1-1"}).status_code == 401
    assert http.post(f"{ROOM}/issue-table/check", json={}).status_code == 401
    alice = login("alice")  # a player: the dice room is for the site's staff
    refused(alice.post(f"{ROOM}/issue-table/check", {"dice": ["PA1-1"], "table": "craps-pa-1",
                                                     "received_by": "bo"}),
            403, "RoleNotPermitted", "custody.staff")
