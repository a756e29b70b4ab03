"""The catalogue's routes: ``POST /api/tables/{id}/commands`` and the readable ones."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from dicetable.application.scripts import run_script
from dicetable.games.commands import OpenTable
from dicetable.server.floor import ADVANCE, Floor
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.script_export import export_script

from .conftest import Login

T = "/api/tables/craps-pa-1"


def test_every_catalogued_command_is_listed_and_every_route_exists(http: TestClient,
                                                                    login: Login) -> None:
    listed = {c["command"] for c in login("pat").get("/api/commands").json()}
    assert listed == {e.name for e in CATALOGUE if e.command is not OpenTable}
    app = http.app
    assert isinstance(app, FastAPI)
    routes = {(getattr(r, "path", ""), m) for r in app.routes
              for m in getattr(r, "methods", None) or ()}
    for route in CATALOGUE.routes:
        assert (f"/api/tables/{{table_id}}/{route.path}", route.method) in routes, route
    documented = http.get("/openapi.json").json()["paths"]
    for route in CATALOGUE.routes:  # each with its request model, from the declarations
        operation = documented[f"/api/tables/{{table_id}}/{route.path}"][route.method.lower()]
        assert operation["description"] or operation["summary"]
        if route.body:
            assert "requestBody" in operation, route.path


def test_commands_route_takes_any_catalogued_command_with_the_accounts_role(
        login: Login, floor: Floor) -> None:
    alice, dee, sam = login("alice"), login("dee"), login("sam")
    reply = alice.post(f"{T}/commands", {"command": "place-bet",
                                         "fields": {"wager": "field", "amount": 500}})
    assert reply.status_code == 200, reply.text
    assert reply.json()["events"][0]["type"] == "BetPlaced"
    # The role comes from the account's assignment: a dealer may not record the throw.
    refused = dee.post(f"{T}/commands", {"command": "roll", "fields": {"roll": "3-4"}})
    assert refused.status_code == 403
    assert refused.json()["rule"] == "authority.record_roll"
    # A player may not act for another player.
    other = alice.post(f"{T}/commands", {"command": "place-bet", "fields": {
        "player": "bob", "wager": "field", "amount": 500}})
    assert other.status_code == 403
    before = floor.tables["craps-pa-1"].table.state.seq
    assert sam.post(f"{T}/commands", {"command": "no-more-bets"}).status_code == 200
    assert floor.tables["craps-pa-1"].table.state.seq == before + 1


def test_commands_route_refuses_bad_input_with_4xx_and_changes_nothing(login: Login,
                                                                        floor: Floor) -> None:
    alice = login("alice")
    table = floor.tables["craps-pa-1"].table
    before = table.state.seq
    for body, rule in [({"command": "nope"}, "commands"),
                       ({"command": "open-table", "fields": {}}, "api.request"),
                       ({"command": "place-bet", "fields": {"wager": "field"}}, "api.request"),
                       ({"command": "place-bet", "fields": {"wager": "field", "amount": "5"}},
                        "api.request"),
                       ({"command": "place-bet", "fields": {"wager": "field", "amount": 500,
                                                            "evil": 1}}, "api.request"),
                       ({"command": "roll", "fields": {"roll": "9-9"}}, "dice.notation")]:
        reply = alice.post(f"{T}/commands", body)
        assert 400 <= reply.status_code < 500, (body, reply.text)
        assert reply.json()["rule"] == rule, (body, reply.text)
    assert table.state.seq == before


def test_a_player_leaves_through_the_catalogues_route(login: Login, floor: Floor) -> None:
    alice = login("alice")
    alice.post(f"{T}/bets", {"wager": "field", "amount": 500})
    refused = alice.post(f"{T}/leave")
    assert refused.status_code == 409
    assert refused.json()["rule"] == "leaving.wagers"
    alice.delete(f"{T}/bets/{floor.tables['craps-pa-1'].table.state.bets_of('alice')[0].id}")
    assert alice.post(f"{T}/leave").status_code == 200
    assert floor.tables["craps-pa-1"].table.state.players["alice"].seat is None


def test_design_3_the_server_only_supplies_time_to_an_electronic_table(login: Login,
                                                                       floor: Floor) -> None:
    alice = login("alice")
    alice.post("/api/tables/craps-pa-e1/bets", {"wager": "field", "amount": 500})
    table = floor.tables["craps-pa-e1"].table
    table.betting_seconds = 3600  # the timer has not run out: time passing does nothing
    assert floor.submit("craps-pa-e1", ADVANCE).result() == []
    table.betting_seconds = 0
    kinds = [e.kind for e in floor.submit("craps-pa-e1", ADVANCE).result()]
    assert kinds[:2] == ["BettingClosed", "DiceRolled"]
    assert kinds[-1] == "PuckMoved"


def test_lesson_8_a_live_session_run_through_the_server_exports_and_replays(
        login: Login, floor: Floor) -> None:
    sam, dee, alice = login("sam"), login("dee"), login("alice")
    alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000})
    sam.post(f"{T}/offer-dice", {"patron": "alice"})
    alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]})
    assert sam.post(f"{T}/roll", {"faces": "2-2"}).status_code == 200
    dee.post(f"{T}/settle")
    alice.post(f"{T}/bets", {"wager": "place6", "amount": 600})
    sam.post(f"{T}/roll", {"faces": "3-4"})
    dee.post(f"{T}/settle")
    logged = list(floor.store.events("craps-pa-1"))
    result = run_script(export_script(logged))
    assert result.ok, result.failure
    assert result.table is not None
    assert [e.kind for e in result.table.log] == [e.kind for e in logged]
    assert result.table.balances == floor.tables["craps-pa-1"].table.balances


def test_issue_28_a_plain_request_models_fields_are_its_dump() -> None:
    """``Declared.order`` reads a plain model's (texts, numbers, booleans, nulls) fields as
    they are rather than dumping it: for every such route's model, the two agree."""
    from dicetable.server.app import declared

    plain = 0
    for route in CATALOGUE.routes:
        spec = declared(route.path, route.method)
        if spec.model is None or not spec._plain:
            continue
        plain += 1
        values = {name: ("x" if f.annotation is str else 1 if f.annotation is int else None)
                  for name, f in spec.model.model_fields.items() if f.is_required()}
        body = spec.model.model_validate(values)
        assert body.__dict__ == body.model_dump(exclude_unset=False), route.path
    assert plain >= 2  # the bets' routes among them
