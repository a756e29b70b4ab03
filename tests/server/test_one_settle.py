"""One settle (settlement.order, 58 Pa. Code 585.3(j)): the dealer's ``POST .../settle`` does
the chores the script's ``settle`` and ``Table.settle`` do, each asked for once the one before
it is done, so a round's total of 7 passes the shaker in the same settle."""

from __future__ import annotations

from tests.server.conftest import Login
from tests.server.test_api import refused

PH = "/api/tables/props-pa-1"


def test_shaker_passes_on_the_route_settle_passes_the_shaker_as_the_script_settle_does(
        login: Login) -> None:
    dee, amy = login("dee"), login("alice")
    amy.post(f"{PH}/bets", {"wager": "double4", "amount": 500})
    assert dee.post(f"{PH}/no-more-bets").status_code == 200
    assert dee.post(f"{PH}/offer-shaker", {"player": "alice"}).status_code == 200
    amy.post(f"{PH}/player-shake", {"times": 3})
    amy.post(f"{PH}/return-shaker")
    dee.post(f"{PH}/uncover")
    assert dee.post(f"{PH}/roll", {"faces": "5-2"}).status_code == 200
    assert dee.get(PH).json()["chores"] == ["collect", "pay", "complete-round"]
    reply = dee.post(f"{PH}/settle").json()
    kinds = [e["type"] for e in reply["events"]]
    assert kinds[-2:] == ["RoundCompleted", "ShakerPassed"], kinds
    view = dee.get(PH).json()
    assert view["chores"] == []
    assert view["shaker"]["holder"] != "alice"
    refused(dee.post(f"{PH}/settle"), 409, "ProcedureViolation", "settlement.order")
