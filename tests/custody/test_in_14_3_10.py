"""68 IAC 14-3-10: notice of dice transport at least ten days ahead, with its seven items; the
recipient proves receipt. And the delivery-witness rule of 14-3-9's emergency predecessor,
as a configurable stand-in (spec/regulations.md section 5.6)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dicetable.core.errors import InvalidInput, ProcedureViolation, RulePackInvalid
from dicetable.custody import commands as cmd
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import Box
from dicetable.custody.rules import derive_custody_pack, load_custody_pack
from dicetable.custody.transport import FileTransportNotice, Party, ProveReceipt
from dicetable.rules.model import Status
from tests.custody.scenario import ACME, ANN, SAM, as_, new_ledger, receive, refused, serials

ACME_PARTY = Party("Acme Dice Co.", "1 Cube Way, Reno NV", "+1 775 555 0100")


def notice(**changes: object) -> FileTransportNotice:
    base = FileTransportNotice(
        **as_(ANN), notice="N-1", supplier=ACME_PARTY, method="road freight",
        carriers=(Party("Fast Freight", "2 Dock St, Reno NV", "+1 775 555 0111"),),
        recipient=Party("River Casino", "3 River Rd, Evansville IN", "+1 812 555 0122"),
        responsible_supplier="Al Moss", responsible_carrier="Cy Lane",
        responsible_recipient=ANN.name, quantity=50, description="red dice, 0.750 in",
        delivery_at="2026-03-12T08:00:00+00:00")  # START + 10 days
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_in_14_3_10_a_notice_at_least_ten_days_before_delivery() -> None:
    led, _ = new_ledger("in")
    error = refused(led, notice(delivery_at="2026-03-11T08:00:00+00:00"), ProcedureViolation,
                    "transport.notice_days")
    assert "68 IAC 14-3-10(a)" in str(error)
    assert "9 days" in str(error)
    [filed] = led.execute(notice())
    assert filed.kind == "TransportNoticeFiled"
    assert filed.rule.startswith("68 IAC 14-3-10(a)")
    assert led.state.notices["N-1"].quantity == 50
    refused(led, notice(), InvalidInput, "custody.notice")  # an id is used once


def test_in_14_3_10_a_a_notice_given_earlier_counts_from_when_it_was_given() -> None:
    led, _ = new_ledger("in")
    refused(led, notice(notified_at="2026-03-03T08:00:01+00:00"), ProcedureViolation,
            "transport.notice_days")
    [filed] = led.execute(notice(notified_at="2026-03-02T08:00:00+00:00"))
    assert getattr(filed, "notified_at") == "2026-03-02T08:00:00+00:00"  # noqa: B009


@pytest.mark.parametrize(("changes", "item"), [
    ({"supplier": Party("Acme", "", "555")}, "(1)"),
    ({"method": " "}, "(2)(A)"),
    ({"carriers": ()}, "(2)(B)"),
    ({"carriers": (Party("Fast Freight", "2 Dock St", ""),)}, "(2)(B)"),
    ({"recipient": Party("", "3 River Rd", "556")}, "(3)"),
    ({"responsible_carrier": ""}, "(4)"),
    ({"quantity": 0}, "(5)"),
    ({"description": ""}, "(6)"),
    ({"delivery_at": ""}, "(7)"),
])
def test_in_14_3_10_a_the_notice_gives_its_seven_items(changes: dict[str, object],
                                                       item: str) -> None:
    led, _ = new_ledger("in")
    error = refused(led, notice(**changes), InvalidInput, "transport.notice_days")
    assert item in str(error)


def test_in_14_3_10_b_the_recipient_proves_receipt() -> None:
    led, _ = new_ledger("in")
    led.execute(notice())
    proof = ProveReceipt(**as_(ANN), notice="N-1", shipment="S1",
                         requested_by="executive director")
    refused(led, proof, ProcedureViolation, "transport.receipt_proof")  # nothing received yet
    receive(led, serials("D", 3))
    [proved] = led.execute(proof)
    assert proved.kind == "ReceiptProved"
    assert getattr(proved, "quantity") == 3  # noqa: B009
    assert proved.rule.startswith("68 IAC 14-3-10(b)")
    refused(led, dataclasses.replace(proof, notice="N-9"), InvalidInput, "custody.notice")


def test_in_14_3_9_predecessor_delivery_witness_is_a_configurable_stand_in(
        tmp_path: Path) -> None:
    pack = load_custody_pack("in")
    rule = pack.rule("receipt.delivery_witness")
    assert rule.status is Status.OTHER_JURISDICTION  # never presented as 14-3-9 text
    assert rule.citation.startswith("Emergency rule LSA #11-375(E)")
    led, _ = new_ledger("in")
    bare = cmd.ReceiveShipment(**as_(ANN, SAM), shipment="S1", manufacturer=ACME,
                               boxes=(Box("B1", serials("D", 2)),))
    error = refused(led, bare, ProcedureViolation, "receipt.delivery_witness")
    assert "LSA #11-375(E)" in str(error)
    [got] = led.execute(dataclasses.replace(bare, delivery_witness="Agent Cole"))
    assert getattr(got, "delivery_witness") == "Agent Cole"  # noqa: B009
    # A house pack may turn the stand-in off; PA does not apply it.
    house = derive_custody_pack(pack, "house", {"receipt.delivery_witness": False})
    other = CustodyLedger.open(house, "river")
    assert other.execute(bare)[0].kind == "ShipmentReceived"
    assert not load_custody_pack("pa").flag("receipt.delivery_witness")
    # ... but not the ten days, which are regulation text in Indiana.
    with pytest.raises(RulePackInvalid):
        derive_custody_pack(pack, "house", {"transport.notice_days": 2})
    path = tmp_path / "house.json"
    path.write_text(json.dumps({"extends": "in", "id": "house",
                                "overrides": {"receipt.delivery_witness": False}}))
    assert not load_custody_pack(path).flag("receipt.delivery_witness")
