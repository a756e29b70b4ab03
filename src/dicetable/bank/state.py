"""The table bank as the fold of its stream: status, the last count, the slips in progress,
the drop boxes, and the whole (short) log the day's reports are built from.

>>> from dicetable.bank.rules import load_bank_pack
>>> AT = "2026-01-01T12:00:00+00:00"
>>> pack = load_bank_pack("pa")
>>> s = BankState()
>>> apply(s, bev.BankOpened(table="t1", seq=1, actor="pat", role="pit-boss", at=AT, site="river",
...                         game="craps", pack=pack.to_dict(), pack_digest=pack.digest))
>>> s.status, s.table, s.last_count
('closed', 't1', None)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dicetable.bank import events as bev
from dicetable.bank.model import Chips, add, chips_value, negate
from dicetable.core.events import Event, event_from_dict, event_to_dict


@dataclass
class SlipProgress:
    """A fill or credit from its request to its receiving count (or its void)."""

    request: int
    kind: str
    chips: Chips
    value: int
    gaming_day: str
    shift: str
    prepared_by: str
    prepared_role: str
    signed_by: str = ""
    surveillance: bool = False
    serial: int = 0
    cashier: str = ""
    officer: str = ""
    signatures: list[tuple[str, str]] = field(default_factory=list)
    status: str = "requested"
    """requested, signed, issued, carried, completed, voided."""


@dataclass
class DropBox:
    box: str
    gaming_day: str
    shift: str
    team: tuple[str, ...]
    items: dict[str, int] | None = None


@dataclass
class BankState:
    seq: int = 0
    table: str = ""
    site: str = ""
    game: str = ""
    pack: dict[str, Any] = field(default_factory=dict)
    electronic: bool = False
    status: str = "closed"
    supervisor: str = ""
    read: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    """Each notice's (by its event's seq) acknowledgements: (person, role)."""
    """The floorperson supervising the table while it is open (the register's entry)."""
    inventory: Chips = ()
    """The last count by denomination plus the bank's own movements since (fills, credits,
    colour changes, counter checks). Movements the table's log records are in totals only."""
    last_count: bev.InventoryCounted | None = None
    since_count: int = 0
    """Value of the bank's own movements since the last count."""
    since_count_log: list[str] = field(default_factory=list)
    slips: int = 0
    requests: dict[int, SlipProgress] = field(default_factory=dict)
    serials: list[int] = field(default_factory=list)
    serials_of: dict[str, list[int]] = field(default_factory=dict)
    """Each slip kind's serials used at this table (a casino-wide series per kind)."""
    retired_sets: list[str] = field(default_factory=list)
    boxes: dict[str, DropBox] = field(default_factory=dict)
    current_box: str = ""
    log: list[bev.BankEvent] = field(default_factory=list)
    checkpoint: bev.TotalsNoted | None = None
    """The latest checkpoint of the table log's running totals."""
    count_checkpoint: bev.TotalsNoted | None = None
    """The checkpoint written with the last count: a variance's window starts there."""

    def slip_by_serial(self, serial: int) -> SlipProgress | None:
        """The slip with ``serial``: the one still in progress when a fill and a credit of
        the two kinds' series share the number, else the latest."""
        found = [p for p in self.requests.values() if p.serial == serial]
        live = [p for p in found if p.status not in ("completed", "voided")]
        chosen = live or found
        return chosen[-1] if chosen else None


def apply(state: BankState, event: Event) -> None:
    if not isinstance(event, bev.BankEvent):
        raise ValueError(f"a {event.kind} is not a bank event")
    fn = _APPLY.get(type(event))
    if fn is not None:
        fn(state, event)
    state.log.append(event)
    state.seq = event.seq


def _opened(s: BankState, e: Any) -> None:
    s.table, s.site, s.game, s.pack, s.electronic = e.table, e.site, e.game, dict(e.pack), \
        e.electronic


def _moved(s: BankState, e: Any) -> None:
    s.inventory = add(s.inventory, e.chips)
    s.since_count += e.value
    s.since_count_log.append(f"{e.reason} {e.value:+d} {e.source_kind}:{e.source_ref}")


def _counted(s: BankState, e: Any) -> None:
    s.inventory = e.chips
    s.last_count = e
    s.since_count = 0
    s.since_count_log = []
    s.slips = max(s.slips, e.slip)


def _status(s: BankState, e: Any) -> None:
    s.status = e.status
    s.supervisor = e.actor if e.status == "open" else ""


def _read(s: BankState, e: Any) -> None:
    s.read.setdefault(e.notice, []).append((e.person, e.person_role))


def _supervisor(s: BankState, e: Any) -> None:
    s.supervisor = e.person


def _requested(s: BankState, e: Any) -> None:
    s.requests[e.request] = SlipProgress(e.request, e.slip_kind, e.chips, e.value,
                                         e.gaming_day, e.shift, e.actor, e.role.value)


def _signed(s: BankState, e: Any) -> None:
    p = s.requests[e.request]
    p.signed_by, p.status = e.actor, "signed"


def _surveillance(s: BankState, e: Any) -> None:
    s.requests[e.request].surveillance = True


def _issued(s: BankState, e: Any) -> None:
    p = s.requests[e.request]
    p.serial, p.cashier, p.status = e.serial, e.actor, "issued"
    s.serials.append(e.serial)
    s.serials_of.setdefault(e.slip_kind, []).append(e.serial)


def _carried(s: BankState, e: Any) -> None:
    p = s.slip_by_serial(e.serial)
    assert p is not None
    p.officer, p.status = e.officer, "carried"


def _signature(s: BankState, e: Any) -> None:
    p = s.slip_by_serial(e.serial)
    assert p is not None
    p.signatures.append((e.signer, e.signer_role))


def _completed(s: BankState, e: Any) -> None:
    p = s.slip_by_serial(e.serial)
    assert p is not None
    p.status = "completed"
    chips = e.chips if e.slip_kind == "fill" else negate(e.chips)
    s.inventory = add(s.inventory, chips)
    s.since_count += chips_value(chips)
    s.since_count_log.append(f"{e.slip_kind} {chips_value(chips):+d} slip:{e.serial}")


def _voided(s: BankState, e: Any) -> None:
    for p in s.requests.values():
        if (e.request and p.request == e.request) or (e.serial and p.serial == e.serial):
            p.status = "voided"


def _collected(s: BankState, e: Any) -> None:
    s.boxes[e.box] = DropBox(e.box, e.gaming_day, e.shift, e.team)
    s.current_box = e.replacement


def _box_counted(s: BankState, e: Any) -> None:
    box = s.boxes.get(e.box)
    if box is not None:
        box.items = dict(e.items)


def _noted(s: BankState, e: Any) -> None:
    s.checkpoint = e
    if s.last_count is not None and s.last_count.table_seq == e.table_seq:
        s.count_checkpoint = e


def _retired(s: BankState, e: Any) -> None:
    s.retired_sets.append(e.chip_set)


_APPLY = {bev.BankOpened: _opened, bev.InventoryMoved: _moved, bev.InventoryCounted: _counted,
          bev.TableStatusChanged: _status, bev.SlipRequested: _requested,
          bev.RequestSigned: _signed, bev.SurveillanceNotified: _surveillance,
          bev.SlipIssued: _issued, bev.SlipCarried: _carried, bev.SlipSignature: _signature,
          bev.SlipCompleted: _completed, bev.SlipVoided: _voided,
          bev.DropBoxCollected: _collected, bev.DropBoxCounted: _box_counted,
          bev.ChipSetRetired: _retired, bev.TotalsNoted: _noted,
          bev.SupervisorAssigned: _supervisor, bev.NoticeAcknowledged: _read}


# -- snapshots: the state is the fold of its (short) log, so a snapshot keeps the log ---------
def encode_state(state: Any) -> dict[str, Any]:
    return {"seq": state.seq, "log": [event_to_dict(e) for e in state.log]}


def decode_state(data: dict[str, Any], first: Event | None = None) -> BankState:
    if not isinstance(data, dict) or not isinstance(data.get("log"), list):
        raise ValueError("a bank snapshot keeps its log")
    state = BankState()
    for raw in data["log"]:
        apply(state, event_from_dict(raw))
    if state.seq != data.get("seq"):
        raise ValueError("a bank snapshot's seq does not match its log")
    return state


def invariants(state: Any) -> list[str]:
    out = []
    if any(len(set(v)) != len(v) for v in state.serials_of.values()):
        out.append("a slip serial was issued twice")
    return out


def roundtrips(state: Any) -> bool:
    return encode_state(decode_state(encode_state(state))) == encode_state(state)
