"""``decide(state, command, now) -> events``: every custody step checked against its rules.

``decide`` never changes the state. A refused command raises ``RoleNotPermitted``,
``ProcedureViolation`` or ``InvalidInput`` naming the broken rule and its citation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from dicetable.core.clock import limit_ends, local_day, months_later, over_limit
from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.events import Emitter as Stamps
from dicetable.core.events import carried
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as ev
from dicetable.custody import transport
from dicetable.custody.authority import distinct_people, require_people, require_role
from dicetable.custody.inspection import judge
from dicetable.custody.model import CancelMethod, DieState, Key, PlayMode, RemovalReason, parse_time
from dicetable.custody.rules import CustodyPack, dice_limit
from dicetable.custody.state import CustodyState, DieRecord
from dicetable.custody.steps import Participants

_ON_STOCK = (DieState.RECEIVED, DieState.QUARANTINED, DieState.IN_STORAGE, DieState.ISSUED,
             DieState.INSPECTED, DieState.AT_TABLE)
"""States a die may be removed from."""


@dataclass
class Emitter(Stamps[CustodyState, cmd.CustodyCommand, ev.CustodyEvent]):
    """Stamps a site's custody events: its site, and the command's people (actor, role,
    licence, witnesses)."""

    site: str = ""

    def stamp(self) -> dict[str, Any]:
        return {"site": self.site or self.state.site,
                **carried(self.command, Participants)}


class CustodyEngine:
    """Decides custody commands under a site's custody pack."""

    def __init__(self) -> None:
        self._handlers: dict[type[cmd.CustodyCommand],
                             Callable[[CustodyState, Any, Emitter], None]] = {
            cmd.OpenCustody: self._open,
            cmd.DrawKey: self._draw_key,
            cmd.ReturnKey: self._return_key,
            cmd.ReceiveShipment: self._receive,
            cmd.StoreDice: self._store,
            cmd.IssueForGamingDay: self._issue_day,
            cmd.ReturnToStorage: self._return_to_storage,
            cmd.InspectDice: self._inspect,
            cmd.IssueToTable: self._issue_to_table,
            cmd.RemoveDice: self._remove,
            cmd.DeliverEnvelope: self._deliver,
            cmd.TransferToCancellation: self._transfer,
            cmd.CancelDice: self._cancel,
            cmd.TakePhysicalInventory: self._inventory,
            cmd.CheckDeadlines: self._deadlines,
            cmd.RecordFairnessAlert: self._fairness,
            transport.FileTransportNotice: transport.file_notice,
            transport.ProveReceipt: transport.prove_receipt,
        }

    def decide(self, state: CustodyState, command: cmd.CustodyCommand,
               now: str) -> list[ev.CustodyEvent]:
        handler = self._handlers.get(type(command))
        if handler is None:
            raise InvalidInput(f"{type(command).__name__} is not a custody command",
                               rule="custody.commands")
        if state.pack is None and not isinstance(command, cmd.OpenCustody):
            raise ProcedureViolation("the custody record is not opened", rule="custody.open")
        if not command.actor.strip():
            raise InvalidInput("the actor needs a name", rule="custody.person")
        parse_time(now)
        out = Emitter(state, command, now)
        handler(state, command, out)
        return out.events

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _dice(state: CustodyState, serials: Iterable[str]) -> list[DieRecord]:
        serials = tuple(serials)
        if not serials:
            raise InvalidInput("name at least one die", rule="custody.serials")
        if len(set(serials)) != len(serials):
            raise InvalidInput("a die is named twice", rule="custody.serials")
        unknown = [s for s in serials if s not in state.dice]
        if unknown:
            raise InvalidInput(f"no record of dice {', '.join(unknown)}", rule="custody.serials")
        return [state.dice[s] for s in serials]

    @staticmethod
    def _require_states(dice: list[DieRecord], allowed: tuple[DieState, ...], message: str,
                        rule: str, pack: CustodyPack) -> None:
        wrong = [d for d in dice if d.state not in allowed]
        if wrong:
            listing = ", ".join(f"{d.serial} is {d.state}" for d in wrong)
            raise ProcedureViolation(f"{message} ({listing})", rule=rule,
                                     citation=pack.cite(rule) if rule in pack.rules else "")

    @staticmethod
    def _storage_access(state: CustodyState, c: cmd.CustodyCommand, pack: CustodyPack) -> None:
        """Both locks open: each key drawn, and both key holders are here (PA 603a.13(c))."""
        missing = [k.value for k in Key if k not in state.keys]
        if missing:
            raise ProcedureViolation(f"the storage area is locked: the {' and '.join(missing)} "
                                     "key is not drawn", rule="storage.keys",
                                     citation=pack.cite("storage.keys"))
        here = {p.name.casefold() for p in c.people}
        absent = [f"{holder.name} ({key.value} key)" for key, holder in state.keys.items()
                  if holder.name.casefold() not in here]
        if absent:
            raise ProcedureViolation(f"the key holders open the storage area: "
                                     f"{', '.join(absent)} is not here", rule="storage.keys",
                                     citation=pack.cite("storage.keys"))

    @staticmethod
    def _area(pack: CustodyPack, area: str) -> str:
        areas = pack.value("storage.areas")
        if area not in areas:
            raise InvalidInput(f"{area!r} is not an approved storage area ({', '.join(areas)})",
                               rule="storage.areas", citation=pack.cite("storage.areas"))
        return area

    @staticmethod
    def _licensed(pack: CustodyPack, *people: Any) -> None:
        if not pack.flag("logs.licence_numbers"):
            return
        missing = [p.name for p in people if not p.licence.strip()]
        if missing:
            raise InvalidInput(f"the logs need the occupational licence number of "
                               f"{', '.join(missing)}", rule="logs.licence_numbers",
                               citation=pack.cite("logs.licence_numbers"))

    @staticmethod
    def _not_playable(d: DieRecord, pack: CustodyPack) -> tuple[str, str] | None:
        """Why a die may not go to a table now, and the rule; None when it may."""
        if d.state is DieState.INSPECTED:
            return None
        if d.state is DieState.ISSUED:
            if not pack.flag("inspection.required_before_play"):
                return None
            return ("dice are inspected before they are put into play",
                    "inspection.required_before_play")
        if d.state in (DieState.RECEIVED, DieState.IN_STORAGE):
            return ("dice go to tables only from the approved storage area, taken out for the "
                    "gaming day", "storage.source_only")
        if d.state is DieState.QUARANTINED:
            return ("it failed inspection: remove it, never play it",
                    "inspection.required_before_play")
        if d.state is DieState.AT_TABLE:
            return f"it is already in play at {d.table}", "play.never_unattended"
        return f"it is {d.state}, out of play for good", "cancellation.required"

    # -- the site and its keys ---------------------------------------------------------------
    def _open(self, state: CustodyState, c: cmd.OpenCustody, out: Emitter) -> None:
        if state.pack is not None:
            raise ProcedureViolation("the custody record is already open", rule="custody.open")
        if not c.site.strip():
            raise InvalidInput("a site needs a name", rule="custody.open")
        out.site = c.site
        out.emit(ev.CustodyOpened, rule=c.pack.cite("jurisdiction"),
                 jurisdiction=c.pack.jurisdiction, pack=c.pack.to_dict(),
                 pack_digest=c.pack.digest)

    def _draw_key(self, state: CustodyState, c: cmd.DrawKey, out: Emitter) -> None:
        pack = state.rules()
        allowed = pack.keys()[c.key]
        if c.role not in allowed:
            raise RoleNotPermitted(f"a {c.role} may not use the {c.key} key of the dice "
                                   f"storage area; only {', '.join(sorted(allowed))}",
                                   rule="storage.keys", citation=pack.cite("storage.keys"))
        holder = state.keys.get(c.key)
        if holder is not None:
            raise ProcedureViolation(f"the {c.key} key is already drawn by {holder.name}",
                                     rule="storage.keys", citation=pack.cite("storage.keys"))
        other = [h for k, h in state.keys.items() if k is not c.key]
        if other and other[0].name.casefold() == c.actor.casefold():
            raise ProcedureViolation(f"{c.actor} already holds the other key: the two locks "
                                     "need two people", rule="storage.keys",
                                     citation=pack.cite("storage.keys"))
        out.emit(ev.KeyDrawn, rule=pack.cite("storage.keys"), key=c.key)

    def _return_key(self, state: CustodyState, c: cmd.ReturnKey, out: Emitter) -> None:
        pack = state.rules()
        holder = state.keys.get(c.key)
        if holder is None:
            raise ProcedureViolation(f"the {c.key} key is not drawn", rule="storage.keys")
        if holder.name.casefold() != c.actor.casefold() and c.role is not Role.SECURITY:
            raise RoleNotPermitted(f"the {c.key} key is returned by its holder {holder.name} "
                                   "or to security", rule="storage.keys",
                                   citation=pack.cite("storage.keys"))
        out.emit(ev.KeyReturned, rule=pack.cite("storage.keys"), key=c.key, holder=holder.name)

    # -- receipt and storage ---------------------------------------------------------------------
    def _receive(self, state: CustodyState, c: cmd.ReceiveShipment, out: Emitter) -> None:
        pack = state.rules()
        require_people(c.people, pack, "receipt.roles", "receive a dice shipment")
        if not c.shipment.strip() or c.shipment in state.shipments:
            raise InvalidInput(f"shipment {c.shipment!r} needs a new, unique id",
                               rule="custody.shipment")
        m = c.manufacturer
        if not m.name.strip() or (pack.flag("receipt.record_manufacturer")
                                  and not (m.address.strip() and m.phone.strip())):
            raise InvalidInput("record the manufacturer's name, business address and business "
                               "telephone", rule="receipt.record_manufacturer",
                               citation=pack.cite("receipt.record_manufacturer"))
        transport.check_delivery_witness(pack, c.delivery_witness)
        if not c.boxes:
            raise InvalidInput("a shipment has at least one box", rule="custody.shipment")
        serials = c.serials
        boxes = [b.box for b in c.boxes]
        if any(not b.serials for b in c.boxes) or len(set(boxes)) != len(boxes):
            raise InvalidInput("every box has a unique id and at least one die",
                               rule="custody.shipment")
        if len(set(serials)) != len(serials) or any(not s.strip() for s in serials):
            raise InvalidInput("every die in a shipment has its own serial",
                               rule="custody.serials")
        known = [s for s in serials if s in state.dice]
        if known:
            raise InvalidInput(f"dice {', '.join(known[:5])} are already on record",
                               rule="custody.serials")
        opened = {i.box: i for i in c.opened}
        by_box = {b.box: b for b in c.boxes}
        stray = [b for b in opened if b not in by_box]
        if stray:
            raise InvalidInput(f"inspected boxes {', '.join(stray)} are not in the shipment",
                               rule="custody.shipment")
        if pack.flag("receipt.open_failed_seals"):
            unopened = [b.box for b in c.boxes if not b.seal_intact and b.box not in opened]
            if unopened:
                raise ProcedureViolation(
                    f"boxes {', '.join(unopened)} failed the seal check: open them and inspect "
                    "their dice now, before they are stored", rule="receipt.open_failed_seals",
                    citation=pack.cite("receipt.open_failed_seals"))
        for inspection in c.opened:
            outside = [f.serial for f in inspection.findings
                       if f.serial not in by_box[inspection.box].serials]
            if outside or any(not f.problem.strip() for f in inspection.findings):
                raise InvalidInput(f"box {inspection.box}: each finding names a die of the box "
                                   "and what is wrong with it", rule="custody.inspection")
        out.emit(ev.ShipmentReceived, rule=pack.cite("receipt.roles"),
                 shipment=c.shipment, manufacturer=c.manufacturer, boxes=tuple(c.boxes),
                 quantity=len(serials), delivery_witness=c.delivery_witness.strip())
        for inspection in c.opened:
            out.emit(ev.BoxOpenedAndInspected, rule=pack.cite("receipt.open_failed_seals"),
                     dice=by_box[inspection.box].serials, shipment=c.shipment,
                     box=inspection.box, findings=inspection.findings)

    def _store(self, state: CustodyState, c: cmd.StoreDice, out: Emitter) -> None:
        pack = state.rules()
        distinct_people(c.people)
        dice = self._dice(state, c.dice)
        self._storage_access(state, c, pack)
        area = self._area(pack, c.area)
        self._require_states(dice, (DieState.RECEIVED,),
                             "only received dice that passed the seal check are stored",
                             "receipt.seal_check", pack)
        out.emit(ev.DiceStored, rule=pack.cite("storage.locked"), dice=tuple(c.dice), area=area)

    def _issue_day(self, state: CustodyState, c: cmd.IssueForGamingDay, out: Emitter) -> None:
        pack = state.rules()
        require_people(c.people, pack, "issue.day_roles", "take the gaming day's dice out of "
                                                          "storage")
        try:
            date.fromisoformat(c.gaming_day)
        except ValueError:
            raise InvalidInput(f"a gaming day is a date (YYYY-MM-DD), not {c.gaming_day!r}",
                               rule="custody.gaming_day") from None
        dice = self._dice(state, c.dice)
        self._storage_access(state, c, pack)
        self._require_states(dice, (DieState.IN_STORAGE,),
                             "dice go to pits and tables only from the approved storage area",
                             "storage.source_only", pack)
        areas = sorted({d.location.removeprefix("storage:") for d in dice})
        out.emit(ev.DiceIssuedForGamingDay, rule=pack.cite("issue.day_roles"),
                 dice=tuple(c.dice), gaming_day=c.gaming_day, area=",".join(areas))

    def _return_to_storage(self, state: CustodyState, c: cmd.ReturnToStorage,
                           out: Emitter) -> None:
        pack = state.rules()
        require_people(c.people, pack, "issue.day_roles", "return dice to storage")
        dice = self._dice(state, c.dice)
        self._storage_access(state, c, pack)
        area = self._area(pack, c.area)
        self._require_states(dice, (DieState.ISSUED, DieState.INSPECTED),
                             "only issued dice that never reached a table go back to storage; "
                             "dice removed from play are cancelled",
                             "cancellation.required", pack)
        out.emit(ev.DiceReturnedToStorage, rule=pack.cite("storage.locked"),
                 dice=tuple(c.dice), area=area)

    # -- inspection and play ---------------------------------------------------------------------
    def _inspect(self, state: CustodyState, c: cmd.InspectDice, out: Emitter) -> None:
        pack = state.rules()
        require_role(c.role, pack, "inspection.roles", "inspect dice before play")
        distinct_people(c.people)
        if pack.flag("inspection.surveillance") and not c.under_surveillance:
            raise ProcedureViolation("dice are inspected under surveillance monitoring",
                                     rule="inspection.surveillance",
                                     citation=pack.cite("inspection.surveillance"))
        missing = [t for t in pack.value("inspection.tools") if t not in c.tools]
        if missing:
            raise ProcedureViolation(f"the inspection needs {', '.join(missing)}",
                                     rule="inspection.tools",
                                     citation=pack.cite("inspection.tools"))
        dice = self._dice(state, (k.serial for k in c.checks))
        self._require_states(dice, (DieState.ISSUED, DieState.INSPECTED),
                             "dice reach the pit only from the approved storage area, issued "
                             "for the gaming day", "storage.source_only", pack)
        results = tuple(judge(pack, check) for check in c.checks)
        out.emit(ev.DiceInspected, rule=pack.cite("inspection.required_before_play"),
                 dice=tuple(k.serial for k in c.checks), results=results,
                 tools=tuple(c.tools), under_surveillance=c.under_surveillance)

    def _issue_to_table(self, state: CustodyState, c: cmd.IssueToTable, out: Emitter) -> None:
        pack = state.rules()
        require_role(c.role, pack, "play.issue_roles", "bring dice to a table")
        require_role(c.received_by.role, pack, "play.receive_roles",
                     "take charge of dice at a table")
        people = (*c.people, c.received_by)
        distinct_people(people)
        if not c.table.strip():
            raise InvalidInput("name the table", rule="custody.table")
        if c.mode is PlayMode.SHAKER:
            require_people(people, pack, "play.shaker_loader", "load dice into a shaker")
        dice = self._dice(state, c.dice)
        for d in dice:
            refusal = self._not_playable(d, pack)
            if refusal is not None:
                message, rule = refusal
                raise ProcedureViolation(f"die {d.serial}: {message}", rule=rule,
                                         citation=pack.cite(rule))
        hours, citation = dice_limit(pack.jurisdiction, c.game)
        expires = limit_ends(parse_time(out.now), hours)
        out.emit(ev.DiceIssuedToTable, rule=citation, dice=tuple(c.dice),
                 to_table=c.table, game=c.game, mode=c.mode, received_by=c.received_by,
                 expires_at=expires.isoformat())

    # -- removal, envelopes, cancellation ---------------------------------------------------------
    def _remove(self, state: CustodyState, c: cmd.RemoveDice, out: Emitter) -> None:
        pack = state.rules()
        require_role(c.role, pack, "removal.roles", "remove dice")
        distinct_people(c.people)
        dice = self._dice(state, c.dice)
        self._require_states(dice, _ON_STOCK, "these dice were already removed",
                             "cancellation.required", pack)
        locations = sorted({d.location for d in dice})
        tampered = c.reason is RemovalReason.TAMPERED
        if tampered:
            require_role(c.role, pack, "removal.tamper_roles",
                         "remove and seal dice suspected of tampering")
            if len(locations) != 1:
                raise InvalidInput("one tamper envelope holds dice from one table or place; "
                                   f"these come from {', '.join(locations)}",
                                   rule="custody.envelope")
            if pack.flag("removal.envelope.signs") and not c.signs.strip():
                raise InvalidInput("the envelope is marked with the characteristics that "
                                   "suggest tampering (--signs)", rule="removal.envelope.signs",
                                   citation=pack.cite("removal.envelope.signs"))
            if any(not p.name.strip() for p in c.table_staff):
                raise InvalidInput("every person at the table needs a name",
                                   rule="custody.person")
            if dice[0].state is DieState.AT_TABLE and pack.flag("removal.envelope.licensees"):
                self._envelope_licensees(c, dice[0].table or "", pack)
            envelope = c.envelope.strip() or f"ENV-{state.seq + 1}"
            if envelope in state.envelopes:
                raise InvalidInput(f"envelope {envelope} is already used",
                                   rule="custody.envelope")
        out.emit(ev.DiceRemoved, rule=pack.cite("removal.roles"), dice=tuple(c.dice),
                 reason=c.reason, from_location=", ".join(locations), detail=c.detail)
        if tampered:
            out.emit(ev.TamperEnvelopeSealed, rule=pack.cite("removal.tamper_roles"),
                     dice=tuple(c.dice), envelope=envelope, removed_at=out.now,
                     location=locations[0], signs=c.signs.strip(),
                     table_staff=tuple(c.table_staff), removed_by=c.people[0],
                     recipient=str(pack.value("removal.tamper_recipient")))

    @staticmethod
    def _envelope_licensees(c: cmd.RemoveDice, table: str, pack: CustodyPack) -> None:
        """68 IAC 14-3-4(b)(4)(A): the envelope names every occupational licensee at the
        table. Held against the staff the table's own log has assigned there when that log is
        known; a table not run on this system is sealed with the names as given, since the
        duty to seal for the agent (14-3-4(b)) does not wait on a table store."""
        rule = "removal.envelope.licensees"
        if not c.table_staff:
            raise InvalidInput(f"the envelope names every occupational licensee at {table}",
                               rule=rule, citation=pack.cite(rule))
        if c.assigned_at_table is None:
            return
        named = {p.name.strip().casefold() for p in c.table_staff}
        on_duty = {n.strip().casefold(): n for n in c.assigned_at_table}
        left_out = sorted(n for k, n in on_duty.items() if k not in named)
        strangers = sorted(p.name for p in c.table_staff
                           if p.name.strip().casefold() not in on_duty)
        differs = _differences(
            (left_out, f"assigned at {table} but not named: {', '.join(left_out)}"),
            (strangers, f"named but not assigned at {table}: {', '.join(strangers)}"))
        if differs:
            raise ProcedureViolation("the envelope's list of the table's licensees does not "
                                     f"match the staff assigned there ({differs})", rule=rule,
                                     citation=pack.cite(rule))

    def _deliver(self, state: CustodyState, c: cmd.DeliverEnvelope, out: Emitter) -> None:
        pack = state.rules()
        if c.role not in pack.roles("removal.tamper_roles") | {Role.SECURITY}:
            raise RoleNotPermitted(f"a {c.role} may not hand over a tamper envelope",
                                   rule="removal.tamper_roles",
                                   citation=pack.cite("removal.tamper_roles"))
        envelope = state.envelopes.get(c.envelope)
        if envelope is None:
            raise InvalidInput(f"no envelope {c.envelope!r}", rule="custody.envelope")
        if envelope.agent is not None:
            raise ProcedureViolation(f"envelope {c.envelope} was already given to "
                                     f"{envelope.agent}", rule="custody.envelope")
        if not c.agent.strip():
            raise InvalidInput(f"name the {pack.value('removal.tamper_recipient')} who receives "
                               "it", rule="removal.tamper_recipient",
                               citation=pack.cite("removal.tamper_recipient"))
        out.emit(ev.EnvelopeDelivered, rule=pack.cite("removal.tamper_recipient"),
                 dice=envelope.dice, envelope=c.envelope, agent=c.agent.strip())

    def _transfer(self, state: CustodyState, c: cmd.TransferToCancellation,
                  out: Emitter) -> None:
        pack = state.rules()
        require_role(c.role, pack, "logs.pit_manager_roles",
                     "sign dice out of the pit to the cancellation room")
        require_role(c.accepted_by.role, pack, "cancellation.roles",
                     "accept dice in the cancellation room")
        pit_manager = c.people[0]
        distinct_people((*c.people, c.accepted_by))
        self._licensed(pack, pit_manager, c.accepted_by)
        dice = self._dice(state, c.dice)
        self._not_tampered(dice, pack, "go to cancellation")
        self._require_states(dice, (DieState.REMOVED,), "only dice removed from play go to the "
                             "cancellation room", "cancellation.required", pack)
        out.emit(ev.DiceTransferredToCancellation, rule=pack.cite("logs.pit_manager_roles"),
                 dice=tuple(c.dice), pit_manager=pit_manager, accepted_by=c.accepted_by)

    @staticmethod
    def _not_tampered(dice: list[DieRecord], pack: CustodyPack, what: str) -> None:
        """68 IAC 14-3-4(c): every removed die is cancelled *except* one removed for
        suspected tampering, which stays sealed for the enforcement agent."""
        sealed = [d for d in dice if d.removal_reason is RemovalReason.TAMPERED]
        if sealed:
            where = ", ".join(f"{d.serial} ({d.location})" for d in sealed)
            raise ProcedureViolation(f"dice removed for suspected tampering do not {what}: "
                                     f"they stay sealed for the "
                                     f"{pack.value('removal.tamper_recipient')} ({where})",
                                     rule="cancellation.required",
                                     citation=pack.cite("cancellation.required"))

    def _cancel(self, state: CustodyState, c: cmd.CancelDice, out: Emitter) -> None:
        pack = state.rules()
        self._not_tampered(self._dice(state, c.dice), pack, "get cancelled")
        require_role(c.role, pack, "cancellation.roles", "cancel dice")
        distinct_people(c.people)
        destroyer = c.people[0]
        self._licensed(pack, destroyer)
        watchers = [p for p in c.witnesses if p.role is Role.SURVEILLANCE]
        if pack.flag("cancellation.surveillance") and not watchers:
            raise ProcedureViolation("dice are cancelled under surveillance: name the "
                                     "surveillance employee monitoring it",
                                     rule="cancellation.surveillance",
                                     citation=pack.cite("cancellation.surveillance"))
        if c.method.value not in pack.value("cancellation.methods"):
            raise ProcedureViolation(f"{c.method} is not an allowed cancellation method",
                                     rule="cancellation.methods",
                                     citation=pack.cite("cancellation.methods"))
        if c.method is CancelMethod.DRILL:
            least = pack.inches("cancellation.min_hole_in")
            if c.hole_in is None or c.hole_in < least:
                raise ProcedureViolation(f"the hole drilled through each die is at least "
                                         f"{least} inch across (given: {c.hole_in})",
                                         rule="cancellation.min_hole_in",
                                         citation=pack.cite("cancellation.min_hole_in"))
        if c.method is CancelMethod.APPROVED and not c.approval.strip():
            raise ProcedureViolation("name the executive director's approval of the method",
                                     rule="cancellation.methods",
                                     citation=pack.cite("cancellation.methods"))
        dice = self._dice(state, c.dice)
        self._require_states(dice, (DieState.IN_CANCELLATION_ROOM,),
                             "dice are cancelled in the cancellation room, after the pit "
                             "manager signs them over", "logs.pit_manager_roles", pack)
        out.emit(ev.DiceCancelled, rule=pack.cite("cancellation.required"), dice=tuple(c.dice),
                 method=c.method, hole_in=c.hole_in if c.method is CancelMethod.DRILL else None,
                 approval=c.approval.strip(), destroyed_by=destroyer, surveillance=watchers[0]
                 if watchers else destroyer)

    # -- inventory and alerts -------------------------------------------------------------------
    def _inventory(self, state: CustodyState, c: cmd.TakePhysicalInventory,
                   out: Emitter) -> None:
        pack = state.rules()
        require_people(c.people, pack, "inventory.roles", "take the physical dice inventory")
        if len(set(c.counted)) != len(c.counted):
            raise InvalidInput("a die is counted twice", rule="custody.serials")
        book = state.on_record()
        counted = set(c.counted)
        missing = tuple(sorted(book - counted))
        unexpected = tuple(sorted(counted - book))
        out.emit(ev.PhysicalInventoryTaken, rule=pack.cite("inventory.interval_months"),
                 counted=tuple(sorted(counted)), on_record=len(book), missing=missing,
                 unexpected=unexpected)
        differs = _differences((missing, f"{len(missing)} on record not found"),
                               (unexpected, f"{len(unexpected)} found not on record"))
        if differs:
            out.emit(ev.InventoryDiscrepancyReported, rule=pack.cite("inventory.report_to"),
                     report_to=str(pack.value("inventory.report_to")), missing=missing,
                     unexpected=unexpected,
                     detail=f"physical count {len(counted)} against {len(book)} on record: "
                            + differs)

    def _deadlines(self, state: CustodyState, c: cmd.CheckDeadlines, out: Emitter) -> None:
        pack = state.rules()
        if c.role is Role.PLAYER:
            raise RoleNotPermitted("a player does not run the custody deadline sweep",
                                   rule="custody.staff")
        now = parse_time(out.now)
        own = {table: (hours, citation) for table, hours, citation in c.limits}
        late: dict[tuple[str, str, str, PlayMode, str], list[str]] = {}
        for d in state.in_state(DieState.AT_TABLE):
            if d.overdue_alerted or d.expires_at is None or d.mode is None:
                continue
            hours = own[d.table][0] if d.table in own else None
            if _over_time(d, now, hours):
                key = (d.table or "", d.at_table_since or "", d.expires_at, d.mode, d.game)
                late.setdefault(key, []).append(d.serial)
        for (table, since, expires, _mode, game), serials in sorted(late.items()):
            if table in own:
                hours, citation = own[table]
                expires = limit_ends(parse_time(since), hours).isoformat()
            else:
                hours, citation = _hours(since, expires), _limit_citation(pack, game)
            out.emit(ev.DiceOverdue, rule=citation, dice=tuple(serials), table_id=table,
                     issued_at=since, expires_at=expires, limit_hours=hours)
        # Calendar months in the site's time zone: a count on 01-05 is due again by 04-05,
        # and is overdue from the first local minute of 04-06 (68 IAC 14-3-5(d)).
        last = state.last_inventory_at or state.opened_at
        zone = pack.time_zone
        due = months_later(local_day(parse_time(last), zone),
                           pack.number("inventory.interval_months"))
        if local_day(now, zone) > due and state.inventory_alerted_due != due.isoformat():
            out.emit(ev.InventoryOverdue, rule=pack.cite("inventory.interval_months"),
                     last=last, due=due.isoformat(), time_zone=str(zone))

    def _fairness(self, state: CustodyState, c: cmd.RecordFairnessAlert, out: Emitter) -> None:
        pack = state.rules()
        require_role(c.role, pack, "alerts.roles", "raise a dice-fairness alert")
        self._dice(state, (c.serial,))
        if c.rolls < 0:
            raise InvalidInput("a roll count is not negative", rule="custody.fairness")
        out.emit(ev.FairnessAlertRaised, rule=pack.cite("alerts.roles"), dice=(c.serial,),
                 test=c.test, detail=c.detail, statistic=c.statistic, threshold=c.threshold,
                 rolls=c.rolls)


def _differences(*sides: tuple[Sequence[str], str]) -> str:
    """Each side of a comparison that found something, said ("; " between); empty if none."""
    return "; ".join(said for found, said in sides if found)


def _limit_citation(pack: CustodyPack, game: str) -> str:
    """The citation of ``dice.max_hours`` for a die's game (a record from before games were
    recorded names none)."""
    try:
        return dice_limit(pack.jurisdiction, game)[1]
    except InvalidInput:
        return "dice.max_hours (the game pack's limit the dice were issued under)"


def _hours(since: str, expires: str) -> int:
    """The limit a die was issued under (``dice.max_hours`` then), from its two times."""
    return int((parse_time(expires) - parse_time(since)).total_seconds() // 3600)


def _over_time(d: DieRecord, now: datetime, hours: int | None = None) -> bool:
    """More than ``hours`` at the table (by default the ``dice.max_hours`` it was issued
    under): the one comparison of ``dicetable.core.clock`` (exactly the limit is not
    over it, 585.3(b)(1))."""
    if d.at_table_since is None or d.expires_at is None:
        return False
    limit = hours if hours is not None else _hours(d.at_table_since, d.expires_at)
    return over_limit(parse_time(d.at_table_since), now, limit)


def check_dice_in_play(state: CustodyState, table: str, serials: Iterable[str],
                       now: str, limit: tuple[int, str] | None = None) -> None:
    """For the table engine: raise unless every die is in play at ``table`` and in time.

    Call it before recording a roll that names its dice serials. ``limit`` is the table's
    ``dice.max_hours`` and its citation (the one rule, read from the table's own pack); without
    it, the limit the dice were issued under.
    """
    pack = state.rules()
    when = parse_time(now)
    for s in serials:
        d = state.dice.get(s)
        if d is None or d.state is not DieState.AT_TABLE or d.table != table:
            where = "no record" if d is None else f"{d.state} at {d.location}"
            raise ProcedureViolation(f"die {s} was not issued to {table} ({where})",
                                     rule="storage.source_only",
                                     citation=pack.cite("storage.source_only"))
        hours, citation = limit if limit is not None else (None, "")
        if _over_time(d, when, hours):
            if hours is None:
                hours = _hours(d.at_table_since or "", d.expires_at or "")
                citation = _limit_citation(pack, d.game)
            raise ProcedureViolation(f"die {s} has been at {table} since {d.at_table_since}, "
                                     f"past the {hours}-hour limit",
                                     rule="dice.max_hours", citation=citation)
