"""What the pit, compliance and the regulator read: built from the state and the log.

- ``pit_report``: every die on record, where it is and its whole history (text and JSON);
- ``pit_log``: removals and transfers to the cancellation room (68 IAC 14-3-8(a));
- ``cancellation_log``: dice received and destroyed in the cancellation room (14-3-8(b));
- ``inventory_record``: receipts, daily quantities and physical counts (14-3-5(c), (d)).

Every function returns plain JSON types; ``*_text`` renders them for a terminal or a printout.
A signature in these logs is the authenticated actor recorded on the event.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dicetable.core.clock import local_day
from dicetable.custody import events as ev
from dicetable.custody.model import DieState, RemovalReason
from dicetable.custody.state import CustodyState

Row = dict[str, Any]


def _day(state: CustodyState, at: str) -> str:
    """The calendar day of ``at`` at the site (its time zone), as the logs are kept."""
    if state.pack is None:
        return at[:10]
    return local_day(datetime.fromisoformat(at), state.pack.time_zone).isoformat()


def _names(people: Sequence[Any]) -> str:
    return ", ".join(str(p) for p in people)


def _n(dice: Sequence[str]) -> str:
    return "1 die" if len(dice) == 1 else f"{len(dice)} dice"


def describe(e: ev.CustodyEvent) -> str:
    """One line a person reads: what happened, in words."""
    w = f" with {_names(e.witnesses)}" if e.witnesses else ""
    match e:
        case ev.CustodyOpened():
            return f"custody record opened under {e.pack.get('id')} ({e.jurisdiction})"
        case ev.KeyDrawn():
            return f"{e.key} storage key drawn by {e.actor}"
        case ev.KeyReturned():
            return f"{e.key} storage key returned by {e.holder}"
        case ev.ShipmentReceived():
            seals = ", ".join(f"{b.box} {'sealed' if b.seal_intact else 'SEAL FAILED'}"
                              for b in e.boxes)
            return (f"shipment {e.shipment} of {e.quantity} dice from {e.manufacturer.name} "
                    f"received by {e.actor}{w}; seals: {seals}")
        case ev.BoxOpenedAndInspected():
            found = "; ".join(f"{f.serial}: {f.problem}" for f in e.findings) or "all conform"
            return f"box {e.box} opened at receipt and inspected: {found}"
        case ev.DiceStored():
            return f"{_n(e.dice)} stored in {e.area} by {e.actor}{w}"
        case ev.DiceIssuedForGamingDay():
            return (f"{_n(e.dice)} taken out of {e.area} for gaming day {e.gaming_day} "
                    f"by {e.actor}{w}")
        case ev.DiceReturnedToStorage():
            return f"{_n(e.dice)} returned to {e.area} by {e.actor}{w}"
        case ev.DiceInspected():
            failed = [r for r in e.results if not r.passed]
            verdict = "all passed" if not failed else "FAILED: " + "; ".join(
                f"{r.serial}: {', '.join(p.split(' [')[0] for p in r.problems)}" for r in failed)
            return f"{_n(e.dice)} inspected by {e.actor}: {verdict}"
        case ev.DiceIssuedToTable():
            return (f"{_n(e.dice)} put into play at {e.to_table} ({e.game}, {e.mode}) by "
                    f"{e.actor}, taken by {e.received_by.name}; out by {e.expires_at}")
        case ev.DiceRemoved():
            extra = f": {e.detail}" if e.detail else ""
            return f"{_n(e.dice)} removed ({e.reason}) from {e.from_location} by {e.actor}{extra}"
        case ev.TamperEnvelopeSealed():
            return (f"sealed in envelope {e.envelope} for the {e.recipient}: {e.signs}; "
                    f"table staff {_names(e.table_staff) or 'none'}; removed by {e.removed_by}")
        case ev.EnvelopeDelivered():
            return f"envelope {e.envelope} handed to {e.agent} by {e.actor}"
        case ev.DiceTransferredToCancellation():
            return (f"{_n(e.dice)} signed out by {e.pit_manager} to the cancellation room, "
                    f"accepted by {e.accepted_by}")
        case ev.DiceCancelled():
            how = f"drilled ({e.hole_in} in hole)" if e.hole_in is not None else str(e.method)
            if e.approval:
                how += f" ({e.approval})"
            return (f"{_n(e.dice)} cancelled, {how}, by {e.destroyed_by} under the "
                    f"surveillance of {e.surveillance}")
        case ev.PhysicalInventoryTaken():
            return (f"physical inventory: {len(e.counted)} counted, {e.on_record} on record, "
                    f"{len(e.missing)} missing, {len(e.unexpected)} unexpected")
        case ev.InventoryDiscrepancyReported():
            return f"ALERT: inventory discrepancy reported to the {e.report_to}: {e.detail}"
        case ev.DiceOverdue():
            return (f"ALERT: {_n(e.dice)} at {e.table_id} since {e.issued_at}: past the "
                    f"{e.limit_hours}-hour limit")
        case ev.InventoryOverdue():
            zone = f" {e.time_zone}" if e.time_zone else ""
            return (f"ALERT: physical inventory overdue: it was due by {e.due}{zone} "
                    f"(last {e.last})")
        case ev.FairnessAlertRaised():
            return (f"ALERT: fairness {e.test} after {e.rolls} rolls: {e.detail} "
                    f"({e.statistic} >= {e.threshold})")
    return _describe_transport(e)


def _describe_transport(e: ev.CustodyEvent) -> str:
    from dicetable.custody import transport

    match e:
        case transport.TransportNoticeFiled():
            return (f"transport notice {e.notice}: {e.quantity} dice ({e.description}) from "
                    f"{e.supplier.name} by {e.method}, delivery expected {e.delivery_at}; "
                    f"notified {e.notified_at}")
        case transport.ReceiptProved():
            return (f"receipt of shipment {e.shipment} ({e.quantity} dice, {e.received_at}) "
                    f"proved to {e.requested_by} (notice {e.notice})")
    return e.kind  # pragma: no cover - every custody event is described


def _entry(e: ev.CustodyEvent) -> Row:
    return {"seq": e.seq, "at": e.at, "event": e.kind, "actor": e.actor, "role": e.role.value,
            "witnesses": [str(p) for p in e.witnesses], "summary": describe(e), "rule": e.rule,
            "alert": e.alert}


def pit_report(state: CustodyState, log: Sequence[ev.CustodyEvent],
               include_gone: bool = True) -> Row:
    """Every die on record: where it is, its state, and its history, event by event."""
    by_seq = {e.seq: e for e in log}
    dice = []
    for d in sorted(state.dice.values(), key=lambda d: d.serial):
        if not include_gone and not d.state.in_building:
            continue
        dice.append({
            "serial": d.serial, "state": d.state.value, "location": d.location,
            "in_building": d.state.in_building, "shipment": d.shipment, "box": d.box,
            "manufacturer": state.shipments[d.shipment].manufacturer.name,
            "received_at": d.received_at, "gaming_day": d.gaming_day or None,
            "table": d.table, "game": d.game or None,
            "mode": d.mode.value if d.mode else None,
            "at_table_since": d.at_table_since if d.state is DieState.AT_TABLE else None,
            "expires_at": d.expires_at if d.state is DieState.AT_TABLE else None,
            "inspected_at": d.inspected_at,
            "removal_reason": d.removal_reason.value if d.removal_reason else None,
            "envelope": d.envelope, "fairness_alerts": d.fairness_alerts,
            "history": [_entry(by_seq[s]) for s in d.history if s in by_seq],
        })
    counts = Counter(d["state"] for d in dice)
    pack = state.rules()
    return {
        "site": state.site, "jurisdiction": pack.jurisdiction, "pack": pack.id,
        "as_of": log[-1].at if log else None, "events": len(log),
        "in_building": sum(1 for d in dice if d["in_building"]),
        "by_state": {s.value: counts.get(s.value, 0) for s in DieState},
        "keys": {k.value: str(p) for k, p in state.keys.items()},
        "alerts": [_entry(e) for e in log if e.alert],
        "dice": dice,
    }


def pit_report_text(report: Row, history: bool = True) -> str:
    """The pit report for a printout: a summary, then each die and its history."""
    lines = [f"Dice custody report: {report['site']} ({report['jurisdiction']}, "
             f"rules {report['pack']}) as of {report['as_of']}",
             f"{report['in_building']} dice in the building; "
             + ", ".join(f"{k} {v}" for k, v in report["by_state"].items() if v)]
    if report["keys"]:
        lines.append("storage keys out: " + "; ".join(f"{k}: {v}"
                                                      for k, v in report["keys"].items()))
    if report["alerts"]:
        lines.append(f"ALERTS ({len(report['alerts'])}):")
        lines += [f"  #{a['seq']} {a['at']} {a['summary']}" for a in report["alerts"]]
    lines.append("")
    lines.append(f"{'serial':<12} {'state':<21} {'location':<28} {'shipment':<10} {'since'}")
    for d in report["dice"]:
        since = d["at_table_since"] or d["received_at"]
        lines.append(f"{d['serial']:<12} {d['state']:<21} {d['location']:<28} "
                     f"{d['shipment']:<10} {since}")
        if history:
            lines += [f"    #{h['seq']} {h['at']} {h['summary']}" for h in d["history"]]
    return "\n".join(lines)


def pit_log(state: CustodyState, log: Sequence[ev.CustodyEvent]) -> list[Row]:
    """68 IAC 14-3-8(a): date, decks (none: dice only), dice removed, game, pit manager."""
    rows = []
    for e in log:
        if not isinstance(e, ev.DiceTransferredToCancellation):
            continue
        by_game: dict[str, int] = defaultdict(int)
        for s in e.dice:
            d = state.dice[s]
            where = d.removed_from
            if where.startswith("table:") and d.game:
                where = f"{where.removeprefix('table:')} ({d.game})"
            by_game[where] += 1
        for game, n in sorted(by_game.items()):
            rows.append({"date": _day(state, e.at), "at": e.at, "decks_removed": 0,
                         "dice_removed": n,
                         "game_removed_from": game, "pit_manager": e.pit_manager.name,
                         "pit_manager_licence": e.pit_manager.licence,
                         "signed_by": e.actor, "seq": e.seq})
    return rows


def cancellation_log(state: CustodyState, log: Sequence[ev.CustodyEvent]) -> list[Row]:
    """68 IAC 14-3-8(b): receipts and destructions, with the uncancelled dice held after each."""
    rows = []
    held = 0
    for e in log:
        if isinstance(e, ev.DiceTransferredToCancellation):
            held += len(e.dice)
            rows.append({"date": _day(state, e.at), "at": e.at, "entry": "received",
                         "decks": 0, "dice": len(e.dice), "person": e.accepted_by.name,
                         "licence": e.accepted_by.licence, "method": None,
                         "uncancelled_dice_held": held, "seq": e.seq})
        elif isinstance(e, ev.DiceCancelled):
            held -= len(e.dice)
            rows.append({"date": _day(state, e.at), "at": e.at, "entry": "destroyed",
                         "decks": 0, "dice": len(e.dice), "person": e.destroyed_by.name,
                         "licence": e.destroyed_by.licence, "method": e.method.value,
                         "surveillance": e.surveillance.name,
                         "uncancelled_dice_held": held, "seq": e.seq})
    return rows


def inventory_record(state: CustodyState, log: Sequence[ev.CustodyEvent]) -> Row:
    """68 IAC 14-3-5(c),(d): receipts, daily quantities, physical inventories."""
    receipts = [{"date": _day(state, e.at), "quantity": e.quantity, "shipment": e.shipment,
                 "manufacturer": e.manufacturer.name, "address": e.manufacturer.address,
                 "phone": e.manufacturer.phone}
                for e in log if isinstance(e, ev.ShipmentReceived)]
    daily: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"put_into_play": 0, "removed_tampering": 0, "tampering_removal_dates": [],
                 "cancelled": 0})
    for e in log:
        day = _day(state, e.at)
        if isinstance(e, ev.DiceIssuedToTable):
            daily[day]["put_into_play"] += len(e.dice)
        elif isinstance(e, ev.DiceRemoved) and e.reason is RemovalReason.TAMPERED:
            daily[day]["removed_tampering"] += len(e.dice)
            daily[day]["tampering_removal_dates"].append(e.at)
        elif isinstance(e, ev.DiceCancelled):
            daily[day]["cancelled"] += len(e.dice)
    counts = [{"date": _day(state, e.at), "at": e.at, "counted": len(e.counted),
               "on_record": e.on_record, "missing": list(e.missing),
               "unexpected": list(e.unexpected), "by": [str(p) for p in e.people]}
              for e in log if isinstance(e, ev.PhysicalInventoryTaken)]
    return {"receipts": receipts,
            "daily": [{"date": d, **v} for d, v in sorted(daily.items())],
            "physical_inventories": counts,
            "on_record_now": len(state.on_record())}


def rows_text(rows: list[Row], columns: Sequence[str]) -> str:
    """A plain fixed-width table of ``rows``."""
    cells = [[str(r.get(c, "")) if r.get(c) is not None else "" for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    out = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in out)
