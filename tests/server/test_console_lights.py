"""Every console button is lit exactly when the engine would take it from the person looking
at it: at the demo's PA Craps and Props & Hops tables a lit button, pressed, is answered 2xx,
and an unlit one, sent anyway, is refused 4xx with the rule that refuses it ("Offer the
shaker" before "No more bets"; "Record throw" before the shooter has a line bet)."""

from __future__ import annotations

from typing import Any

from tests.server.conftest import Client, Login

T = "/api/tables/craps-pa-1"
PH = "/api/tables/props-pa-1"


def _lit(who: Client, table: str, name: str) -> bool:
    can: dict[str, Any] = who.get(table).json()["can"]
    return bool(can[name])


def test_record_throw_is_lit_only_once_the_shooter_may_throw(login: Login) -> None:
    alice, sam, dee = login("alice"), login("sam"), login("dee")
    assert not _lit(sam, T, "record-roll")  # no shooter yet
    early = sam.post(f"{T}/roll", {"faces": "3-4"})
    assert early.status_code == 409, early.text
    assert _lit(sam, T, "offer-dice")
    assert not _lit(dee, T, "offer-dice")  # authority.offer_dice: the stickperson
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    assert not _lit(sam, T, "record-roll")  # 623a.8(a): the shooter has no line bet yet
    refused = sam.post(f"{T}/roll", {"faces": "3-4"})
    assert refused.status_code == 409
    assert refused.json()["rule"] == "shooter.line_bet"
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert _lit(sam, T, "record-roll")
    assert not _lit(dee, T, "record-roll")  # authority.record_roll: the stickperson
    assert sam.post(f"{T}/roll", {"faces": "3-4"}).status_code == 200


def test_offer_the_shaker_is_lit_only_after_no_more_bets(login: Login) -> None:
    dee, alice = login("dee"), login("alice")
    assert not _lit(dee, PH, "offer-shaker")
    early = dee.post(f"{PH}/offer-shaker", {"player": "alice"})
    assert early.status_code == 409, early.text
    if _lit(dee, PH, "shake"):
        assert dee.post(f"{PH}/shake").status_code == 200
    assert alice.post(f"{PH}/bets", {"wager": "double4", "amount": 500}).status_code == 200
    assert dee.post(f"{PH}/no-more-bets").status_code == 200
    assert _lit(dee, PH, "offer-shaker")
    assert dee.post(f"{PH}/offer-shaker", {"player": "alice"}).status_code == 200


def test_dice_chips_and_the_shooters_removal_are_lit_exactly_when_taken(login: Login) -> None:
    """authority.dice (the boxperson), authority.chips, authority.remove_shooter: each button
    lit for whoever the engine takes it from, and only while there is something to do."""
    alice, bo, dee, sam = login("alice"), login("bo"), login("dee"), login("sam")
    assert not _lit(bo, T, "remove-shooter")  # no shooter yet
    assert bo.post(f"{T}/remove-shooter", {"ground": "violation"}).status_code == 409
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    assert _lit(bo, T, "remove-shooter")
    assert not _lit(sam, T, "remove-shooter")  # PA: the boxperson or the floorperson
    assert bo.post(f"{T}/remove-shooter", {"ground": "continual-invalid-rolls"}).status_code \
        == 200
    assert _lit(bo, T, "remove-dice")
    assert not _lit(dee, T, "remove-dice")
    assert dee.post(f"{T}/dice/remove", {"serials": ["PA1-5"]}).status_code == 403
    assert bo.post(f"{T}/dice/remove", {"serials": ["PA1-5"]}).status_code == 200

    assert _lit(dee, T, "cash-out:bob")
    assert _lit(dee, T, "sell-chips:bob")
    assert not _lit(sam, T, "sell-chips:bob")  # the stickperson handles no chips
    assert sam.post(f"{T}/chips", {"player": "bob", "amount": 100}).status_code == 403
    assert dee.post(f"{T}/cash-out", {"player": "bob", "amount": 500_00}).status_code == 200
    assert not _lit(dee, T, "cash-out:bob")  # nothing left to cash out
    assert dee.post(f"{T}/cash-out", {"player": "bob", "amount": 100}).status_code in (409, 422)


def test_pa_623a_8_c_a_no_roll_is_lit_per_ground_on_the_record_or_as_seen(login: Login) -> None:
    alice, sam, bo = login("alice"), login("sam"), login("bo")
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert sam.post(f"{T}/roll", {"faces": "3-4"}).status_code == 200
    assert not _lit(bo, T, "call-no-roll:die-on-rail")  # the record does not show it
    refused = bo.post(f"{T}/no-roll", {"grounds": ["die-on-rail"]})
    assert refused.status_code == 409
    assert refused.json()["rule"] == "noroll.grounds"
    assert _lit(bo, T, "call-no-roll-seen:die-on-rail")  # the caller saw it
    assert bo.post(f"{T}/no-roll", {"grounds": ["die-on-rail"],
                                    "observed": ["die-on-rail"]}).status_code == 200
    assert not _lit(bo, T, "call-no-roll-seen:die-on-rail")  # called already
