"""Money the player handles (``dicetable.table.player_money``): buy-in and cash-out between
the wallet and an electronic table, colour-up and leaving requests a live table's dealer
confirms, and the dealer's "cash out all". Money is conserved: wallet + table balance moves
only by wagers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dicetable.core.roles import Role
from dicetable.games.packs import derive_pack
from dicetable.server.demo import electronic_pack
from dicetable.server.floor import Floor
from tests.server.conftest import Client, Login
from tests.server.test_api import T, refused

E = "/api/tables/craps-pa-e1"


def money(client: Client, table: str = E) -> dict[str, Any]:
    reply = client.get(f"{table}/money")
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def test_wallet_tables_buy_in_and_cash_out_move_money_between_wallet_and_table(
        login: Login) -> None:
    alice = login("alice")
    start = money(alice)
    assert start["self_service"] is True
    assert start["wallet"] == 1_000_00
    assert start["balance"] == 500_00  # $1,500 less the $500
    total = int(start["wallet"]) + int(start["balance"])

    after = alice.post(f"{E}/money/buy-in", {"amount": 250_00}).json()
    assert (after["wallet"], after["balance"]) == (750_00, 750_00)
    after = alice.post(f"{E}/money/cash-out", {"amount": 100_00}).json()
    assert (after["wallet"], after["balance"]) == (850_00, 650_00)
    assert after["wallet"] + after["balance"] == total

    events = alice.get(f"{E}/events").json()
    kinds = [(e["type"], e.get("amount")) for e in events if e.get("player") == "alice"]
    assert ("ChipsBought", 250_00) in kinds
    assert ("ChipsCashedOut", 100_00) in kinds

    everything = alice.post(f"{E}/money/cash-out", {}).json()  # no amount: all of it
    assert (everything["wallet"], everything["balance"]) == (total, 0)
    assert everything["last_cash_out"]["amount"] == 650_00


def test_wallet_buy_in_limits_and_balance_refuse_naming_their_rule(login: Login) -> None:
    alice = login("alice")
    before = money(alice)
    body = refused(alice.post(f"{E}/money/buy-in", {"amount": 5_00}), 422, "InvalidInput",
                   "wallet.buy_in.minimum")
    assert "smallest buy-in is $20.00" in body["message"]
    assert "[industry-default]" not in body["message"]
    assert body["citation"]
    refused(alice.post(f"{E}/money/buy-in", {"amount": 6_000_00}), 422, "InvalidInput",
            "wallet.buy_in.maximum")
    body = refused(alice.post(f"{E}/money/buy-in", {"amount": 1_000_01}), 422, "InvalidInput",
                   "wallet.balance")  # within the limits, a cent beyond the wallet
    assert "Your wallet holds $1,000.00" in body["message"]
    refused(alice.post(f"{E}/money/cash-out", {"amount": 500_01}), 422, "InvalidInput",
            "money.balance")
    after = money(alice)
    assert (after["wallet"], after["balance"]) == (before["wallet"], before["balance"])


def test_wallet_moves_are_refused_at_a_live_table_where_the_dealer_sells_chips(
        login: Login) -> None:
    alice = login("alice")
    body = refused(alice.post(f"{T}/money/buy-in", {"amount": 50_00}), 409,
                   "ProcedureViolation", "wallet.tables")
    assert "hand your cash to the dealer" in body["message"]
    refused(alice.post(f"{T}/money/cash-out", {"amount": 50_00}), 409, "ProcedureViolation",
            "wallet.tables")
    refused(alice.post(f"{E}/money/requests", {"what": "colour-up"}), 409,
            "ProcedureViolation", "requests.confirmed_by")
    refused(login("dee").post(f"{E}/money/buy-in", {"amount": 50_00}), 403,
            "RoleNotPermitted", "authority.chips")


def test_leaving_an_electronic_table_sends_the_whole_balance_to_the_wallet(
        login: Login) -> None:
    alice = login("alice")
    before = money(alice)
    after = alice.post(f"{E}/money/leave").json()
    assert after["seated"] is False
    assert after["balance"] == 0
    assert after["wallet"] == before["wallet"] + before["balance"]


def test_603a_10_colour_up_and_leaving_requests_the_dealer_confirms(login: Login) -> None:
    alice, dee = login("alice"), login("dee")
    mine = alice.post(f"{T}/money/requests", {"what": "colour-up"}).json()
    assert [r["what"] for r in mine["requests"]] == ["colour-up"]
    refused(alice.post(f"{T}/money/requests", {"what": "colour-up"}), 422, "InvalidInput",
            "requests.confirmed_by")
    refused(alice.post(f"{T}/money/requests", {"what": "a drink"}), 422, "InvalidInput",
            "requests.confirmed_by")
    seen = money(dee, T)
    [pending] = seen["requests"]
    assert (pending["player"], pending["what"], pending["balance"]) == ("alice", "colour-up",
                                                                        500_00)
    refused(login("bob").post(f"{T}/money/requests/{pending['id']}/confirm"), 403,
            "RoleNotPermitted", "authority.chips")
    done = dee.post(f"{T}/money/requests/{pending['id']}/confirm").json()
    assert done["requests"] == []
    assert money(alice, T)["balance"] == 500_00  # equal value: 465a.36(b)(4)

    alice.post(f"{T}/money/requests", {"what": "leave"})
    [leaving] = money(dee, T)["requests"]
    dee.post(f"{T}/money/requests/{leaving['id']}/confirm")
    me = money(alice, T)
    assert me["seated"] is False
    assert me["balance"] == 0
    assert me["last_cash_out"]["amount"] == 500_00
    assert me["last_cash_out"]["by"] == "dee"
    assert me["wallet"] == 1_000_00  # chips went with her to the cage, not to the wallet


def test_leaving_with_wagers_on_the_layout_stays_pending_naming_the_rule(login: Login) -> None:
    alice, dee = login("alice"), login("dee")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 10_00}).status_code == 200
    alice.post(f"{T}/money/requests", {"what": "leave"})
    [leaving] = money(dee, T)["requests"]
    refused(dee.post(f"{T}/money/requests/{leaving['id']}/confirm"), 409,
            "ProcedureViolation", "leaving.wagers")
    assert len(money(dee, T)["requests"]) == 1
    withdrawn = alice.delete(f"{T}/money/requests/{leaving['id']}").json()
    assert withdrawn["requests"] == []


def test_the_dealer_cashes_a_player_out_in_full_without_typing_an_amount(login: Login) -> None:
    alice, dee = login("alice"), login("dee")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 10_00}).status_code == 200
    dee.post(f"{T}/money/cash-out-all", {"player": "alice"})
    me = money(alice, T)
    assert me["balance"] == 0
    assert me["on_layout"] == 10_00
    assert me["last_cash_out"]["amount"] == 490_00
    assert me["last_cash_out"]["by"] == "dee"
    refused(dee.post(f"{T}/money/cash-out-all", {"player": "alice"}), 422, "InvalidInput",
            "money.balance")
    refused(alice.post(f"{T}/money/cash-out-all", {"player": "alice"}), 403,
            "RoleNotPermitted", "authority.chips")


def test_staff_do_not_sell_chips_at_an_electronic_table_and_its_cash_outs_reach_the_wallet(
        login: Login) -> None:
    alice, dee = login("alice"), login("dee")
    before = money(alice)
    body = refused(dee.post(f"{E}/chips", {"player": "alice", "amount": 100_00}), 409,
                   "ProcedureViolation", "wallet.buy_in.by")
    assert "buys in from their wallet" in body["message"]
    assert "605a.2" in body["citation"]
    assert (money(alice)["wallet"], money(alice)["balance"]) == (before["wallet"],
                                                                 before["balance"])
    # The same sale at a live table is the dealer's (603a.10(c)).
    assert dee.post(f"{T}/chips", {"player": "alice", "amount": 100_00}).status_code == 200
    # A cash-out staff give at an electronic table goes to the player's wallet.
    assert dee.post(f"{E}/cash-out", {"player": "alice", "amount": 100_00}).status_code == 200
    after = money(alice)
    assert (after["wallet"], after["balance"]) == (before["wallet"] + 100_00,
                                                   before["balance"] - 100_00)


C = "/api/cage/wallets"


def test_the_cage_deposits_and_withdraws_and_the_player_sees_it_at_the_table(
        login: Login) -> None:
    cass, alice = login("cass"), login("alice")
    shown = cass.get(f"{C}/alice").json()
    assert (shown["balance"], shown["deposited"], shown["to_tables"]) == (1_000_00, 1_500_00,
                                                                          500_00)
    assert shown["in_transit"] == 0
    after = cass.post(f"{C}/alice/deposit", {"amount": 200_00, "reason": "cash"}).json()
    assert after["balance"] == 1_200_00
    assert after["moves"][-1]["type"] == "WalletDeposited"
    assert after["moves"][-1]["by"] == "cass"
    after = cass.post(f"{C}/alice/withdraw", {"amount": 50_00}).json()
    assert (after["balance"], after["withdrawn"]) == (1_150_00, 50_00)
    assert money(alice)["wallet"] == 1_150_00
    listed = {w["account"]: w["balance"] for w in cass.get(C).json()}
    assert listed["alice"] == 1_150_00
    assert "cass" not in listed


def test_the_cage_refuses_naming_the_rule_and_changes_nothing(login: Login) -> None:
    cass = login("cass")
    before = cass.get(f"{C}/alice").json()
    body = refused(cass.post(f"{C}/alice/withdraw", {"amount": 1_000_01}), 422, "InvalidInput",
                   "wallet.balance")
    assert "The wallet holds $1,000.00" in body["message"]
    refused(cass.post(f"{C}/nobody/deposit", {"amount": 10_00}), 422, "InvalidInput",
            "wallet.account")
    refused(cass.post(f"{C}/dee/deposit", {"amount": 10_00}), 422, "InvalidInput",
            "wallet.account")  # a staff account has no wallet
    for who in ("dee", "alice"):  # a dealer, the player herself: not the cage
        refused(login(who).post(f"{C}/alice/deposit", {"amount": 10_00}), 403,
                "RoleNotPermitted", "wallet.cage")
        refused(login(who).get(f"{C}/alice"), 403, "RoleNotPermitted", "wallet.cage")
    assert cass.post(f"{C}/alice/deposit", {"amount": 0}).status_code == 422
    assert cass.post(f"{C}/alice/deposit", {"amount": -5}).status_code == 422
    after = cass.get(f"{C}/alice").json()
    assert (after["balance"], after["version"]) == (before["balance"], before["version"])


def test_a_withdrawal_and_a_buy_in_at_once_cannot_both_spend_the_wallet(
        login: Login) -> None:
    cass, alice = login("cass"), login("alice")
    cass.post(f"{C}/alice/withdraw", {"amount": 900_00})  # leaves $100
    with ThreadPoolExecutor(2) as pool:
        out = cass.post
        spent = [pool.submit(out, f"{C}/alice/withdraw", {"amount": 80_00}),
                 pool.submit(alice.post, f"{E}/money/buy-in", {"amount": 80_00})]
        codes = sorted(f.result().status_code for f in spent)
    assert codes == [200, 422]
    assert cass.get(f"{C}/alice").json()["balance"] == 20_00


def test_a_house_pack_sets_the_money_rules_the_table_follows(login: Login,
                                                             floor: Floor) -> None:
    """The money rules are the pack's (``rules show`` lists them): a house pack that raises
    the smallest buy-in and lets staff sell credits changes what the table allows."""
    house = derive_pack(electronic_pack(), "house-e", {"wallet.buy_in.minimum": 100_00,
                                                       "wallet.buy_in.by": "wallet-or-staff"})
    floor.open_table(house, "house-e1", mode="electronic", opener="fran",
                     staff={"dee": Role.DEALER})
    h = "/api/tables/house-e1"
    alice, dee = login("alice"), login("dee")
    assert alice.post(f"{h}/join", {"seat": 1}).status_code == 200
    body = refused(alice.post(f"{h}/money/buy-in", {"amount": 50_00}), 422, "InvalidInput",
                   "wallet.buy_in.minimum")
    assert "smallest buy-in is $100.00" in body["message"]
    assert alice.post(f"{E}/money/buy-in", {"amount": 50_00}).status_code == 200  # the preset
    assert alice.post(f"{h}/money/buy-in", {"amount": 100_00}).status_code == 200
    assert dee.post(f"{h}/chips", {"player": "alice", "amount": 10_00}).status_code == 200
    rules = {r["id"]: r for r in money(alice, h)["rules"]}
    assert (rules["wallet.buy_in.minimum"]["value"], rules["wallet.buy_in.by"]["value"]) == (
        100_00, "wallet-or-staff")
    assert rules["live.cash_out"]["status"] == "regulation"


def test_465a_36_b_4_a_confirmed_colour_up_with_its_chips_is_a_bank_colour_change(
        login: Login) -> None:
    alice, dee = login("alice"), login("dee")
    alice.post(f"{T}/money/requests", {"what": "colour-up"})
    [pending] = money(dee, T)["requests"]
    assert pending["suggested_out"] == "10000x5"  # $500 in the tray's largest chips ($100)
    confirm = f"{T}/money/requests/{pending['id']}/confirm"
    before = dee.get("/api/bank/craps-pa-1").json()
    refused(dee.post(confirm, {"chips": "500x20,10000x-2"}), 409, "ProcedureViolation",
            "inventory.reasons")  # not equal in value
    refused(dee.post(confirm, {"chips": "2500x24,50000x-1,10000x-1"}), 422, "InvalidInput",
            "colour_up.value")  # more than the $500 she has at the table
    assert len(money(dee, T)["requests"]) == 1  # still pending; the bank unchanged
    assert dee.get("/api/bank/craps-pa-1").json() == before
    done = dee.post(confirm, {"chips": "500x20,10000x-1"}).json()
    assert done["requests"] == []
    bank = dee.get("/api/bank/craps-pa-1").json()
    assert "colour-change" in str(bank)
    assert f"request {pending['id']} (alice)" in str(bank)
    assert money(alice, T)["balance"] == 500_00  # equal value: the balance is unchanged


def test_two_confirms_of_one_colour_up_at_once_record_one_bank_colour_change(
        login: Login) -> None:
    """A double click on the dealer's Confirm (or two dealers) sends two confirms: one is
    recorded, the other finds the request no longer pending."""
    alice, dee = login("alice"), login("dee")
    alice.post(f"{T}/money/requests", {"what": "colour-up"})
    [pending] = money(dee, T)["requests"]
    confirm = f"{T}/money/requests/{pending['id']}/confirm"
    with ThreadPoolExecutor(2) as pool:
        sent = [pool.submit(dee.post, confirm, {"chips": "500x100,10000x-5"}) for _ in "ab"]
        codes = sorted(f.result().status_code for f in sent)
    assert codes == [200, 422]
    bank = str(dee.get("/api/bank/craps-pa-1").json())
    assert bank.count(f"request {pending['id']} (alice)") == 1


def test_money_changes_are_pushed_to_the_dealer_and_the_player(http: TestClient,
                                                               login: Login) -> None:
    alice, dee, cass = login("alice"), login("dee"), login("cass")
    with http.websocket_connect(f"/ws/tables/craps-pa-1/money?token={dee.token}") as desk, \
            http.websocket_connect(f"/ws/tables/craps-pa-1/money?token={alice.token}") as me:
        assert desk.receive_json() == {"type": "money", "table": "craps-pa-1"}  # the hello
        assert me.receive_json()["type"] == "money"
        alice.post(f"{T}/money/requests", {"what": "colour-up"})
        assert desk.receive_json()["type"] == "money"  # the dealer's list, without polling
        assert me.receive_json()["type"] == "money"
        cass.post(f"{C}/alice/deposit", {"amount": 10_00})
        assert me.receive_json()["type"] == "money"  # her wallet
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect), \
            http.websocket_connect("/ws/tables/craps-pa-1/money?token=nope") as ws:
        ws.receive_json()


def test_a_buy_in_the_table_refuses_after_the_wallet_paid_comes_back_whole(
        login: Login, monkeypatch: pytest.MonkeyPatch) -> None:
    import dicetable.server.player_money as pm

    real = pm.give

    def refused_by_the_table(name: str, actor: str, role: Role, **fields: object) -> object:
        if name == "buy-chips":  # the table refuses the sale (decided after the wallet paid)
            fields["amount"] = 0
        return real(name, actor, role, **fields)

    monkeypatch.setattr(pm, "give", refused_by_the_table)
    alice = login("alice")
    before = money(alice)
    assert alice.post(f"{E}/money/buy-in", {"amount": 50_00}).status_code == 422
    after = money(alice)
    assert (after["wallet"], after["balance"], after["in_transit"]) == (
        before["wallet"], before["balance"], 0)
    kinds = [m["type"] for m in login("cass").get(f"{C}/alice").json()["moves"]]
    assert kinds[-2:] == ["WalletToTable", "WalletReturned"]
