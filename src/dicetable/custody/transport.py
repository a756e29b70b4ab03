"""Transport of dice (68 IAC 14-3-10) and who must be at the delivery (the 14-3-9 predecessor).

``FileTransportNotice`` records the written notice to the executive director: at least
``transport.notice_days`` days (IN: ten) before the expected delivery, with the seven items of
14-3-10(a) - (1) the supplier, (2) the method of transportation and each carrier, (3) the
recipient, each with full name, business address and telephone, (4) the individual
responsible for the shipment for each of them, (5) the quantity, (6) a brief description and
(7) the expected date and time of delivery. ``ProveReceipt`` is the recipient proving receipt
on the executive director's request (14-3-10(b)). ``receipt.delivery_witness`` (a stand-in,
never presented as 14-3-9) asks that a gaming agent or Commission staff member be named as
present at the point of delivery when a shipment is received.

>>> from datetime import timedelta
>>> from dicetable.core.clock import FixedClock
>>> from dicetable.core.roles import Role
>>> from dicetable.custody.ledger import CustodyLedger
>>> led = CustodyLedger.open("in", "river", clock=FixedClock())
>>> acme = Party("Acme Dice", "1 Cube Way, Reno NV", "+1 775 555 0100")
>>> notice = FileTransportNotice(actor="Ann", role=Role.SHIFT_MANAGER, notice="N-1",
...     supplier=acme, method="road", carriers=(Party("Fast Freight", "2 Dock St", "555"),),
...     recipient=Party("River Casino", "3 River Rd", "556"), responsible_supplier="Al",
...     responsible_carrier="Cy", responsible_recipient="Ann", quantity=50,
...     description="red dice, 0.750 in", delivery_at="2026-01-05T10:00:00+00:00")
>>> led.execute(notice)
Traceback (most recent call last):
...
dicetable.core.errors.ProcedureViolation: notice N-1 is 4 days before the delivery; ...
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.frozen import Frozen
from dicetable.custody.authority import require_role
from dicetable.custody.commands import CustodyCommand
from dicetable.custody.events import CustodyEvent
from dicetable.custody.model import parse_time


@dataclass(frozen=True)
class Party:
    """A supplier, carrier or recipient: full name, business address, business telephone."""

    name: str
    address: str
    phone: str

    @property
    def complete(self) -> bool:
        return all(x.strip() for x in (self.name, self.address, self.phone))


class NoticeContent(Frozen):
    """What a written notice of a dice shipment says (14-3-10(a)(1)-(7)): the command that
    files it and the event that records it carry the same."""

    notice: str
    supplier: Party
    method: str
    carriers: tuple[Party, ...]
    recipient: Party
    responsible_supplier: str
    responsible_carrier: str
    responsible_recipient: str
    quantity: int
    description: str
    delivery_at: str
    """(7) the expected date and time of delivery (ISO 8601)."""


class FileTransportNotice(NoticeContent, CustodyCommand):
    notified_at: str = ""
    """When the executive director was notified in writing (default: now)."""


class ProofRequest(Frozen):
    """The executive director's request for proof that a noticed shipment arrived
    (14-3-10(b)): the command that answers it and the event that records it carry the same."""

    notice: str
    shipment: str
    requested_by: str
    """Who asked for the proof (the executive director or their staff)."""


class ProveReceipt(ProofRequest, CustodyCommand):
    """The recipient proves receipt of the shipment, on request."""


class TransportNoticeFiled(NoticeContent, CustodyEvent):
    """Written notice of a dice shipment given to the executive director (14-3-10(a))."""

    notified_at: str


class ReceiptProved(ProofRequest, CustodyEvent):
    """The recipient's proof of receipt, on request (14-3-10(b))."""

    received_at: str
    quantity: int


def _time(text: str, what: str) -> Any:
    try:
        when = parse_time(text)
    except InvalidInput:
        raise InvalidInput(f"{what}: not an ISO time: {text!r}", rule="transport.notice_days"
                           ) from None
    if when.tzinfo is None:
        raise InvalidInput(f"{what} needs its time zone: {text!r}",
                           rule="transport.notice_days")
    return when


def file_notice(state: Any, c: FileTransportNotice, out: Any) -> None:
    pack = state.rules()
    require_role(c.role, pack, "transport.roles", "file a dice transport notice")
    if not c.notice.strip() or c.notice in state.notices:
        raise InvalidInput(f"notice {c.notice!r} needs a new, unique id", rule="custody.notice")
    cite = pack.cite("transport.notice_days")
    missing = []
    if not c.supplier.complete:
        missing.append("(1) the supplier's full name, business address and telephone")
    if not c.method.strip():
        missing.append("(2)(A) the method of transportation")
    if not c.carriers or not all(p.complete for p in c.carriers):
        missing.append("(2)(B) each carrier's name, business address and telephone")
    if not c.recipient.complete:
        missing.append("(3) the recipient's full name, business address and telephone")
    if not all(x.strip() for x in (c.responsible_supplier, c.responsible_carrier,
                                   c.responsible_recipient)):
        missing.append("(4) the individual responsible for the shipment for each of them")
    if c.quantity <= 0:
        missing.append("(5) the quantity")
    if not c.description.strip():
        missing.append("(6) a brief description")
    if not c.delivery_at.strip():
        missing.append("(7) the expected date and time of delivery")
    if missing:
        raise InvalidInput("the transport notice needs " + "; ".join(missing),
                           rule="transport.notice_days", citation=cite)
    notified = c.notified_at.strip() or out.now
    delivery = _time(c.delivery_at, "the expected delivery")
    sent = _time(notified, "the notice")
    days = pack.number("transport.notice_days")
    if days and delivery - sent < timedelta(days=days):
        ahead = (delivery - sent).days
        raise ProcedureViolation(f"notice {c.notice} is {ahead} days before the delivery; "
                                 f"14-3-10 asks at least {days}",
                                 rule="transport.notice_days", citation=cite)
    out.emit(TransportNoticeFiled, rule=cite, notice=c.notice.strip(), supplier=c.supplier,
             method=c.method.strip(), carriers=tuple(c.carriers), recipient=c.recipient,
             responsible_supplier=c.responsible_supplier.strip(),
             responsible_carrier=c.responsible_carrier.strip(),
             responsible_recipient=c.responsible_recipient.strip(), quantity=c.quantity,
             description=c.description.strip(), delivery_at=delivery.isoformat(),
             notified_at=sent.isoformat())


def prove_receipt(state: Any, c: ProveReceipt, out: Any) -> None:
    pack = state.rules()
    require_role(c.role, pack, "transport.roles", "prove receipt of dice")
    cite = pack.cite("transport.receipt_proof")
    notice = state.notices.get(c.notice)
    if notice is None:
        raise InvalidInput(f"no transport notice {c.notice!r}", rule="custody.notice")
    shipment = state.shipments.get(c.shipment)
    if shipment is None:
        raise ProcedureViolation(f"shipment {c.shipment!r} was never received: there is no "
                                 "receipt to prove", rule="transport.receipt_proof",
                                 citation=cite)
    if not c.requested_by.strip():
        raise InvalidInput("name who asked for the proof of receipt",
                           rule="transport.receipt_proof", citation=cite)
    out.emit(ReceiptProved, rule=cite, notice=c.notice, shipment=c.shipment,
             requested_by=c.requested_by.strip(), received_at=shipment.received_at,
             quantity=shipment.quantity)


def check_delivery_witness(pack: Any, witness: str) -> None:
    """The configurable stand-in for 14-3-9: someone from the regulator at the delivery."""
    if pack.flag("receipt.delivery_witness") and not witness.strip():
        raise ProcedureViolation("dice are delivered only with a gaming agent or Commission "
                                 "staff member present at the point of delivery: name them",
                                 rule="receipt.delivery_witness",
                                 citation=pack.cite("receipt.delivery_witness"))


def apply_notice(state: Any, e: TransportNoticeFiled) -> None:
    state.notices[e.notice] = e


def apply_proof(state: Any, e: ReceiptProved) -> None:
    state.receipt_proofs.append(e.seq)
