"""Issue 10, 'one command catalogue': every readable route that takes a body is registered from
its catalogue declaration (path, method, the commands it gives, the body's fields and their
limits), and OpenAPI documents the request model those declarations build."""

from __future__ import annotations

from fastapi.testclient import TestClient

from dicetable.table.catalogue import CATALOGUE

from .conftest import Login
from .test_api import refused

T = "/api/tables/craps-pa-1"


def _schema(http: TestClient, path: str, method: str = "post") -> dict[str, object]:
    spec = http.get("/openapi.json").json()
    op = spec["paths"][f"/api/tables/{{table_id}}/{path}"][method]
    ref = op["requestBody"]["content"]["application/json"]["schema"]
    ref = next((r for r in ref.get("anyOf", [ref]) if "$ref" in r), ref)["$ref"]
    found: dict[str, object] = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return found


def test_api_routes_document_the_limits_the_catalogue_declares(http: TestClient) -> None:
    roll = _schema(http, "roll")["properties"]
    assert isinstance(roll, dict)
    assert "faces" in roll  # the route's own name for the command's ``roll`` field
    assert any(o.get("maxLength") == 8 for o in roll["faces"].get("anyOf", [roll["faces"]]))
    bets = _schema(http, "bets")
    assert bets["required"] == ["wager", "amount"]
    staff = _schema(http, "staff")["properties"]
    assert isinstance(staff, dict)
    assert set(staff) == {"person", "role"}
    patch = _schema(http, "bets/{bet}", "patch")
    assert "required" not in patch  # either field, or both


def test_api_every_route_path_and_method_the_catalogue_declares_is_served(
        http: TestClient) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    for route in CATALOGUE.routes:
        assert route.method.lower() in paths[f"/api/tables/{{table_id}}/{route.path}"], route


def test_api_wrong_fields_are_refused_naming_the_rule_and_change_nothing(login: Login) -> None:
    alice, sam = login("alice"), login("sam")
    before = alice.get(T).json()["me"]["balance"]
    for body in ({"wager": "pass", "amount": "ten"}, {"wager": "pass"},
                 {"wager": ["pass"], "amount": 500}, {"amount": 500}):
        assert alice.post(f"{T}/bets", body).status_code == 422, body
    refused(sam.post(f"{T}/roll", {"faces": "3-4", "distance": "half"}), 422, "InvalidInput",
            "api.request")
    refused(sam.post(f"{T}/roll", {"faces": "9-9"}), 422, "InvalidInput")
    refused(alice.patch(f"{T}/bets/b1", {"working": None}), 422, "InvalidInput", "api.request")
    assert alice.get(T).json()["me"]["balance"] == before


def test_api_a_player_acts_for_themselves_on_a_route_that_names_the_player(
        login: Login) -> None:
    alice = login("alice")
    reply = alice.post(f"{T}/bets", {"wager": "field", "amount": 500})
    assert reply.status_code == 200, reply.text
    assert reply.json()["events"][0]["player"] == "alice"
    # naming another player does not let a player act for them (the engine's own rule)
    assert alice.post(f"{T}/bets", {"wager": "field", "amount": 500, "player": "bob"}
                      ).status_code in (403, 409, 422)
