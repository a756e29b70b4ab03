"""SD ARSD 20:18:33:07 (``noroll.window``) on the floor: while a no roll may be called the
staff view withholds what the roll would settle and lights "Call no roll" for its callers;
once the dealer collects the losers the roll stands, the button goes dark, the
consequences show, and a call sent anyway is refused with the rule and its citation."""

from __future__ import annotations

from dicetable.server.floor import Floor
from tests.server.conftest import Login

T = "/api/tables/craps-pa-1"
TABLE = "craps-pa-1"


def test_sd_20_18_33_07_the_window_closes_when_settlement_begins(floor: Floor,
                                                                  login: Login) -> None:
    alice, sam, bo, dee = login("alice"), login("sam"), login("bo"), login("dee")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    assert sam.post(f"{T}/roll", {"faces": "3-4"}).status_code == 200  # a winner on the come-out

    pack = floor.tables[TABLE].table.pack
    held = bo.get(T).json()
    assert held["pending"]["noroll_window"] == {
        "open": True, "rule": "noroll.window", "citation": pack.cite("noroll.window")}
    assert held["pending"]["payments"] == []
    assert held["pending"]["seven_out"] is None
    assert held["can"]["call-no-roll"] is True
    assert dee.get(T).json()["can"]["call-no-roll"] is False  # noroll.callers: not a dealer

    assert dee.post(f"{T}/collect").status_code == 200
    stands = bo.get(T).json()
    assert stands["pending"]["noroll_window"]["open"] is False
    assert [p["player"] for p in stands["pending"]["payments"]] == ["alice"]
    assert stands["can"]["call-no-roll"] is False
    ground = pack.get("noroll.grounds")[0]
    refused = bo.post(f"{T}/no-roll", {"grounds": [ground]})
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert body["rule"] == "noroll.window"
    assert "20:18:33:07" in body["citation"]
    assert "the roll stands" in body["message"]
