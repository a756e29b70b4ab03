"""``TableBank``: one table's chip bank as the fold of its events, with every step checked
against its bank pack before anything is written.

Storage-agnostic: ``sink`` receives each batch of events before it is applied (where the
store plugs in). A refused step raises a ``DicetableError`` naming its rule and citation, and
changes nothing. Steps that need the table's own log (a count compares with the expected
inventory) take its events as an argument; the bank never writes on the bet path.

>>> from dicetable.core.clock import FixedClock
>>> bank = TableBank.open("pa", "t1", site="river", game="craps", clock=FixedClock())
>>> _ = bank.count("opening", ((2500, 800),), counter="bo", counter_role=Role.BOXPERSON,
...                observer="bo", observer_role=Role.FLOORPERSON)
Traceback (most recent call last):
...
dicetable.core.errors.ProcedureViolation: the counter and the observer are two distinct people ...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Protocol

from dicetable.bank import events as bev
from dicetable.bank.calendar import gaming_day, shift_of
from dicetable.bank.follow import Totals, matching, recent_matching
from dicetable.bank.model import (
    INVENTORY_CITE,
    Chips,
    Movement,
    Reason,
    Source,
    SourceKind,
    breakdown,
    chips_value,
    money,
    normalise,
)
from dicetable.bank.notices import receives
from dicetable.bank.reports import hold_band, percent
from dicetable.bank.rules import BankPack, load_bank_pack, pack_from_dict
from dicetable.bank.staffing import check_crew, check_span
from dicetable.bank.state import BankState, SlipProgress, apply
from dicetable.core.clock import Clock, SystemClock
from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.events import Event
from dicetable.core.log_order import in_order
from dicetable.core.roles import Role

Sink = Callable[[Sequence[bev.BankEvent]], None]
PURPOSES = ("opening", "drop", "closing", "shift", "closed-daily")
SLIP_KINDS = ("fill", "credit")
REDEEM_CITE = "58 Pa. Code § 603a.10(d) [regulation]"


class Series(Protocol):
    """One serial series per slip kind across the floor (used in sequence, 465a.38 stand-in
    COMAR 36.05.03.04H)."""

    def next(self, kind: str) -> int: ...

    def used(self, kind: str, serial: int) -> bool: ...

    def take(self, kind: str, serial: int | None, *, table: str, request: int, at: str,
             actor: str = "chip-bank", citation: str = "") -> int:
        """Take ``serial`` (None: the next) durably, refusing one already taken."""
        ...


class TableBank:
    """One table's bank: its rules, its state, its log."""

    def __init__(self, *, clock: Clock | None = None, sink: Sink | None = None) -> None:
        self.state = BankState()
        self.clock: Clock = clock or SystemClock()
        self.sink = sink
        self._pack: BankPack | None = None
        self.retired_elsewhere: Callable[[], Iterable[str]] | None = None
        """The chip sets retired at the floor's other tables (a chip set is the site's)."""
        self.series: Series | None = None
        """The casino-wide serial series of each slip kind (the floor's); without one, the
        table's own."""
        self.chip_set = ""
        """The chip set the step being decided named (``set=``): its chip events record it."""

    @classmethod
    def open(cls, pack: BankPack | str | Path, table: str, *, site: str, game: str,
             electronic: bool = False, clock: Clock | None = None,
             actor: str = "table-games", role: Role = Role.TABLE_GAMES_MANAGER,
             sink: Sink | None = None) -> TableBank:
        rules = pack if isinstance(pack, BankPack) else load_bank_pack(pack)
        if not table or not site:
            raise InvalidInput("a table bank needs a table and a site", rule="bank.open")
        bank = cls(clock=clock, sink=sink)
        bank._commit([bev.BankOpened(table=table, seq=1, actor=actor, role=role,
                                     at=bank._now(), site=site, game=game,
                                     pack=rules.to_dict(), pack_digest=rules.digest,
                                     electronic=electronic, rule="bank.open")])
        return bank

    @classmethod
    def replay(cls, events: Iterable[Event], *, clock: Clock | None = None,
               sink: Sink | None = None) -> TableBank:
        bank = cls(clock=clock, sink=sink)
        for e in in_order(events, "bank", bev.BankEvent, bev.BankOpened):
            apply(bank.state, e)
        return bank

    def catch_up(self, events: Iterable[Event]) -> None:
        for e in events:
            if e.seq == self.state.seq + 1:
                apply(self.state, e)

    # -- plumbing -----------------------------------------------------------------------------
    @property
    def pack(self) -> BankPack:
        if self._pack is None:
            self._pack = pack_from_dict(self.state.pack)
        return self._pack

    @property
    def table(self) -> str:
        return self.state.table

    def _now(self) -> str:
        return self.clock.now().isoformat()

    def day_and_shift(self, at: str | None = None) -> tuple[str, str]:
        when = at or self._now()
        p = self.pack
        return (gaming_day(when, p.time_zone, str(p.value("gaming_day.start"))),
                shift_of(when, p.time_zone, p.value("shifts.starts")))

    def _commit(self, events: list[bev.BankEvent]) -> list[bev.BankEvent]:
        # a step's events are recorded at one moment (its first event's)
        events = [e if e.at == events[0].at else dataclasses.replace(e, at=events[0].at)
                  for e in events]
        if self.chip_set:
            events = [dataclasses.replace(e, chip_set=self.chip_set)
                      if isinstance(e, bev.ChipStep) else e for e in events]
        if self.sink is not None:
            self.sink(events)
        for e in events:
            apply(self.state, e)
        return events

    def _event(self, cls: type[bev.BankEvent], offset: int, actor: str, role: Role,
               rule: str = "", **fields: object) -> bev.BankEvent:
        return cls(table=self.state.table, seq=self.state.seq + 1 + offset, actor=actor,
                   role=role, at=self._now(), rule=rule, **fields)

    def _refuse(self, rule: str, message: str) -> ProcedureViolation:
        return ProcedureViolation(message, rule=rule, citation=self.pack.cite(rule))

    def _role(self, rule: str, role: Role, what: str) -> None:
        allowed = self.pack.roles(rule)
        if role not in allowed:
            raise RoleNotPermitted(
                f"a {role.value} may not {what}: only "
                f"{', '.join(sorted(r.value for r in allowed))}", rule=rule,
                citation=self.pack.cite(rule))

    def _distinct(self, a: str, b: str, first: str, second: str) -> None:
        pairs = {tuple(p) for p in self.pack.value("duties.distinct")}
        if a and a == b and ((first, second) in pairs or (second, first) in pairs):
            raise self._refuse("duties.distinct",
                               f"{a} may not both {first} and {second} (separation of duties)")

    def _chips(self, chips: Iterable[tuple[int, int]], *, positive: bool = True) -> Chips:
        out = normalise(chips)
        known = set(self.pack.value("chips.denominations"))
        bad = sorted({d for d, _ in out} - known)
        if bad:
            raise InvalidInput(f"{', '.join(money(d) for d in bad)}: not a chip denomination "
                               "of this site", rule="chips.denominations")
        if positive and any(n <= 0 for _, n in out):
            raise InvalidInput("chip counts are whole numbers above zero",
                               rule="chips.denominations")
        return out

    def _not_electronic(self) -> None:
        if self.state.electronic:
            raise ProcedureViolation(
                "a fully automated table keeps no table inventory; its win comes from its own "
                "log", rule="bank.electronic", citation="58 Pa. Code § 601a.9(e) [regulation]")

    # -- counts and Table Inventory Slips ------------------------------------------------------
    def expected(self, table_log: Iterable[Event] = (), table_seq: int | None = None, *,
                 totals: Totals | None = None) -> int:
        """The inventory the ledger expects: the last count, the bank's own movements since,
        and what the table's log moved since that count. ``totals``: the table's log folded
        from its first event to now, when the caller follows it already (then the log is not
        read again)."""
        last = self.state.last_count
        if last is None:
            return self.state.since_count
        if totals is None:
            totals = self.totals_of(list(table_log), table_seq)
        return last.total + self.state.since_count + totals.inventory_change - last.table_change

    def totals_of(self, table_log: Sequence[Event], table_seq: int | None = None) -> Totals:
        """The table's log folded up to ``table_seq``, on from the latest checkpoint at or
        before it (``TotalsNoted``): a cold read folds only the events since."""
        cp = self.state.checkpoint
        if cp is not None and (table_seq is None or cp.table_seq <= table_seq):
            start = Totals.resume(cp.totals, cp.values)
            return start.fold(table_log, after=cp.table_seq, until=table_seq)
        return Totals().fold(table_log, until=table_seq)

    def note(self, totals: Totals, *, actor: str = "bank",
             role: Role = Role.SYSTEM) -> list[bev.BankEvent]:
        """A checkpoint of the table's running totals (the pit's follower writes one every
        ``CHECKPOINT_ROLLS`` rolls, and every count writes one)."""
        return self._commit([self._checkpoint(0, totals, actor, role)])

    def _checkpoint(self, offset: int, totals: Totals, actor: str,
                    role: Role) -> bev.BankEvent:
        return self._event(bev.TotalsNoted, offset, actor, role, rule="bank.checkpoint",
                           table_seq=totals.seq, totals=totals.to_checkpoint(),
                           values=totals.value_counts())

    def suspects(self, variance: int, table_log: Sequence[Event],
                 table_seq: int | None, totals: Totals | None = None) -> tuple[str, ...]:
        """The movements since the last count that would explain ``variance``: those whose
        value is the variance (a payout made twice, a collection missed), the bank's own
        first; failing any, the bank's own movements since the count (a count cannot tell
        which of the table's settlements went wrong). How many there are comes from the
        checkpointed value counts; examples are read from the newest events back."""
        last = self.state.last_count
        after = last.table_seq if last else 0
        size = str(abs(variance))
        own = [line for line in self.state.since_count_log
               if line.split()[1].lstrip("+-") == size]
        base = self.state.count_checkpoint
        if totals is not None and (last is None or (base is not None
                                                    and base.table_seq == after)):
            n = totals.count_of(variance) - (
                Totals.resume(base.totals, base.values).count_of(variance) if base else 0)
            found = recent_matching(table_log, variance, after=after, until=table_seq,
                                    limit=min(n, 20)) if n else []
        else:
            found, n = matching(table_log, variance, after=after, until=table_seq)
        lines = own + [m.describe() for m in found]
        if n > len(found):
            lines.append(f"... and {n - len(found)} more movements of {money(abs(variance))}")
        if lines:
            return tuple(lines)
        return tuple(self.state.since_count_log[-20:]) or (
            f"no single movement of {money(abs(variance))} since the last count",)

    def count(self, purpose: str, chips: Iterable[tuple[int, int]], *, counter: str,
              counter_role: Role, observer: str, observer_role: Role, container: str = "",
              place: str = "", table_log: Sequence[Event] = (), table_seq: int = 0,
              actor: str | None = None, extra: Sequence[bev.BankEvent] = (),
              totals: Totals | None = None) -> list[bev.BankEvent]:
        """A Table Inventory Slip: counted by the dealer or boxperson, observed and signed by
        a floorperson or above (465a.37(c)-(d), 465a.41(a)-(c)). A count that disagrees
        with the ledger records a discrepancy (465a.37(f) and its stand-ins)."""
        self._not_electronic()
        if purpose not in PURPOSES:
            raise InvalidInput(f"a count is one of {', '.join(PURPOSES)}", rule="count.purpose")
        counted = self._chips(chips)
        if not counter or not observer:
            raise self._refuse("count.observer_roles",
                               "a Table Inventory Slip is signed by the person who counts and "
                               "the floorperson who observes")
        self._role("count.counter_roles", counter_role, "count a table inventory")
        self._role("count.observer_roles", observer_role, "observe and sign a count")
        if counter == observer:
            raise self._refuse("count.observer_roles",
                               f"the counter and the observer are two distinct people "
                               f"({counter} cannot sign twice)")
        day, shift = self.day_and_shift()
        total = chips_value(counted)
        if totals is None:
            totals = self.totals_of(table_log, table_seq or None)
        expected = None if self.state.last_count is None and not self.state.since_count \
            else self.expected(totals=totals)
        slip = self.state.slips + 1
        events: list[bev.BankEvent] = [*extra]
        events.append(self._event(
            bev.InventoryCounted, len(events), actor or counter, counter_role,
            rule=self.pack.cite("count.observer_roles"), slip=slip, purpose=purpose,
            gaming_day=day, shift=shift, chips=counted, total=total, expected=expected,
            counter=counter, counter_role=counter_role.value, observer=observer,
            observer_role=observer_role.value, container=container,
            place=place or _place(purpose), table_seq=table_seq or totals.seq,
            table_change=totals.inventory_change))
        if expected is not None and expected != total:
            events.append(self._discrepancy(len(events), slip, expected, total,
                                            self.suspects(total - expected, table_log,
                                                          table_seq or None, totals),
                                            observer, observer_role))
        events.append(self._checkpoint(len(events), totals, actor or counter, counter_role))
        return self._commit(events)

    def _discrepancy(self, offset: int, slip: int, expected: int, counted: int,
                     suspects: tuple[str, ...], actor: str, role: Role) -> bev.BankEvent:
        p = self.pack
        variance = counted - expected
        return self._event(
            bev.DiscrepancyFound, offset, actor, role, rule=p.cite("discrepancy.notify"),
            slip=slip, expected=expected, counted=counted, variance=variance,
            notified=tuple(p.value("discrepancy.notify")),
            written_report=abs(variance) > p.number("discrepancy.written_report_over"),
            regulator_copy=abs(variance) >= p.number("discrepancy.regulator_copy_at"),
            suspects=suspects)

    def open_table(self, chips: Iterable[tuple[int, int]], *, counter: str,
                   counter_role: Role, observer: str, observer_role: Role,
                   crew: Sequence[tuple[str, Role]], container: str = "",
                   floor_tables: Sequence[tuple[str, Sequence[Role]]] = (),
                   table_log: Sequence[Event] = (), table_seq: int = 0,
                   carrier: str = "", carrier_role: Role | None = None,
                   totals: Totals | None = None) -> list[bev.BankEvent]:
        """Open a live table: the crew is checked (465a.35(b)), the floorperson's span
        (465a.35(c)), then the opening count is made and signed (465a.37(a)-(e))."""
        self._not_electronic()
        if self.state.status == "open":
            raise ProcedureViolation("the table is already open", rule="bank.status")
        check_crew(self.pack, self.state.game, [r for _, r in crew])
        check_span(self.pack, [(self.state.game, [r for _, r in crew]), *floor_tables])
        if carrier and carrier_role is not Role.SECURITY:
            raise ProcedureViolation(
                "a security employee carries the locked container from the cage",
                rule="fill.carrier_roles", citation="58 Pa. Code § 465a.37(a) [regulation]")
        events = self.count("opening", chips, counter=counter, counter_role=counter_role,
                            observer=observer, observer_role=observer_role,
                            container=container, table_log=table_log, table_seq=table_seq,
                            totals=totals)
        status = self._event(bev.TableStatusChanged, 0, observer, observer_role,
                             rule=self.pack.cite("staffing.craps"), status="open",
                             slip=self.state.slips, container=container,
                             crew=tuple((p, r.value) for p, r in crew), carrier=carrier)
        return events + self._commit([dataclasses.replace(status, at=events[0].at)])

    def close_table(self, chips: Iterable[tuple[int, int]], *, counter: str,
                    counter_role: Role, observer: str, observer_role: Role, container: str,
                    location: str = "cage", table_log: Sequence[Event] = (),
                    table_seq: int = 0, totals: Totals | None = None) -> list[bev.BankEvent]:
        """Close the table: the closing count, the inventory locked in its container
        (465a.36(c); 465a.42 not held: NY 5323.7 stand-in)."""
        if self.state.status != "open":
            raise ProcedureViolation("the table is not open", rule="bank.status")
        if not container:
            raise self._refuse("count.closed_table_daily_slip",
                               "a closed table's inventory goes into a locked container, "
                               "named")
        events = self.count("closing", chips, counter=counter, counter_role=counter_role,
                            observer=observer, observer_role=observer_role,
                            container=container, place=f"container {container}",
                            table_log=table_log, table_seq=table_seq, totals=totals)
        status = self._event(bev.TableStatusChanged, 0, observer, observer_role,
                             rule=self.pack.cite("count.closed_table_daily_slip"),
                             status="closed", slip=self.state.slips, container=container,
                             location=location)
        return events + self._commit([dataclasses.replace(status, at=events[0].at)])

    def check_staffing(self, crew: Sequence[tuple[str, Role]],
                       floor_tables: Sequence[tuple[str, Sequence[Role]]] = ()) -> None:
        """A staff change at an open table: the crew and the floorperson's span still hold."""
        if self.state.status == "open":
            check_crew(self.pack, self.state.game, [r for _, r in crew])
        check_span(self.pack, [(self.state.game, [r for _, r in crew]), *floor_tables])

    def expected_chips(self, totals: Totals) -> tuple[Chips, int] | None:
        """The expected inventory by denomination: the last count's chips and the bank's own
        movements since, plus the table log's movements since that count, each amount broken
        into chips by the pack's ``chips.breakdown`` rule (from the checkpointed value counts,
        so nothing is read again). Returns the chips (a negative count: the dealer coloured
        up or down) and what no chip covers; None without a count checkpoint."""
        base = self.state.count_checkpoint
        if self.state.last_count is None or base is None:
            return None
        then = Totals.resume(base.totals, base.values)
        denominations = self.pack.value("chips.denominations")
        sign = {"collect": 1, "vig": 1, "pay": -1, "cash": -1}
        out = dict(self.state.inventory)
        left = 0
        for kind, now in totals.values.items():
            for value, n in now.items():
                moved = n - then.values[kind].get(value, 0)
                if not moved:
                    continue
                s = sign[kind] * (1 if value > 0 else -1) * moved
                chips, rest = breakdown(value, denominations)
                for d, k in chips:
                    out[d] = out.get(d, 0) + s * k
                left += s * rest
        return tuple(sorted((d, n) for d, n in out.items() if n)), left

    def notices(self) -> list[bev.DiscrepancyFound | bev.HoldInvestigated]:
        """The notices this bank has raised (alerts that reach people at once)."""
        return [e for e in self.state.log
                if isinstance(e, bev.DiscrepancyFound | bev.HoldInvestigated)]

    def notified_of(self, e: bev.BankEvent) -> tuple[str, ...]:
        if isinstance(e, bev.DiscrepancyFound):
            return e.notified
        return tuple(self.pack.value("discrepancy.notify"))

    def acknowledge(self, notice: int, *, person: str, role: Role) -> list[bev.BankEvent]:
        """``person`` read notice ``notice`` (its event's seq): only a recipient may."""
        found = next((e for e in self.notices() if e.seq == notice), None)
        if found is None:
            raise InvalidInput(f"no notice {notice} at this table", rule="discrepancy.notify")
        if not receives(self.pack, self.notified_of(found), [role]):
            raise RoleNotPermitted(f"a {role.value} does not receive this notice",
                                   rule="discrepancy.notify",
                                   citation=self.pack.cite("discrepancy.notify"))
        if any(p == person for p, _ in self.state.read.get(notice, [])):
            raise ProcedureViolation(f"{person} already acknowledged notice {notice}",
                                     rule="discrepancy.notify")
        return self._commit([self._event(bev.NoticeAcknowledged, 0, person, role,
                                         rule=self.pack.cite("discrepancy.notify"),
                                         notice=notice, person=person,
                                         person_role=role.value)])

    def opened_crew(self) -> list[tuple[str, Role]]:
        """The crew the table opened with (its opening's record)."""
        opened = next((e for e in reversed(self.state.log)
                       if isinstance(e, bev.TableStatusChanged) and e.status == "open"), None)
        return [] if opened is None else [(p, Role(r)) for p, r in opened.crew]

    def supervise(self, person: str, person_role: Role, *, actor: str, role: Role,
                  floor_tables: Sequence[tuple[str, Sequence[Role]]] = (),
                  crew: Sequence[tuple[str, Role]] = ()) -> list[bev.BankEvent]:
        """Put ``person`` (a floorperson or above) in charge of this open table, in the
        floor-wide register; refused when it would take them past their span (465a.35(c)):
        ``floor_tables`` are the other open tables the register already gives them."""
        self._not_electronic()
        if self.state.status != "open":
            raise ProcedureViolation("only an open table has a supervisor", rule="bank.status")
        ranks = self.pack.expand(["floorperson+"])
        if role not in ranks:
            raise RoleNotPermitted(f"a {role.value} may not assign a table's supervisor",
                                   rule="staff.ranks", citation=self.pack.cite("staff.ranks"))
        if person_role not in ranks:
            raise RoleNotPermitted(f"{person} ({person_role.value}) cannot supervise a table: "
                                   "a floorperson or above does", rule="staff.ranks",
                                   citation=self.pack.cite("staff.ranks"))
        if person_role is Role.FLOORPERSON:  # 465a.35(c) caps a floorperson's span
            check_span(self.pack, [(self.state.game, [r for _, r in crew]), *floor_tables])
        return self._commit([self._event(bev.SupervisorAssigned, 0, actor, role,
                                         rule=self.pack.cite("staffing.floor_span"),
                                         person=person, person_role=person_role.value)])

    def closed_tables_missing_slip(self, day: str) -> bool:
        """465a.36(c): a closed table still gets a Table Inventory Slip each gaming day."""
        if self.state.electronic or not self.pack.flag("count.closed_table_daily_slip"):
            return False
        return not any(isinstance(e, bev.InventoryCounted) and e.gaming_day == day
                       for e in self.state.log)

    # -- movements the table's log does not record ------------------------------------------
    def move(self, reason: str, source_kind: str, source_ref: str,
             chips: Iterable[tuple[int, int]], *, actor: str, role: Role,
             table_seq: int = 0) -> list[bev.BankEvent]:
        """A colour change (equal value, 465a.36(b)(4)) or chips issued against a Counter
        Check ((b)(2)). The other reasons are recorded by the table's own log or by a slip."""
        self._not_electronic()
        try:
            r, kind = Reason(reason), SourceKind(source_kind)
        except ValueError:
            raise ProcedureViolation(
                f"{reason!r} with a {source_kind!r} source is not one of the six ways chips "
                "may enter or leave a table inventory", rule="inventory.reasons",
                citation=INVENTORY_CITE) from None
        counts = self._chips(chips, positive=False)
        movement = Movement(r, Source(kind, source_ref), chips=counts)
        if r is Reason.COLOUR_CHANGE and movement.value != 0:
            raise self._refuse("inventory.reasons",
                               f"a colour change is an exchange of equal value; this one "
                               f"changes the inventory by {money(movement.value)}")
        if r is Reason.COUNTER_CHECK and movement.value >= 0:
            raise self._refuse("inventory.redeem_at_cage_only",
                               "chips are issued against a Counter Check, never taken back "
                               "for one: patrons redeem chips only at the cage")
        if r not in (Reason.COLOUR_CHANGE, Reason.COUNTER_CHECK):
            raise self._refuse("inventory.reasons",
                               f"a {r.value} movement is recorded by "
                               + ("the table's own log (the wager, the buy-in)"
                                  if r is not Reason.FILL_CREDIT else "a fill or credit slip"))
        if self.state.status != "open":
            raise ProcedureViolation("the table is not open", rule="bank.status")
        day, _ = self.day_and_shift()
        return self._commit([self._event(
            bev.InventoryMoved, 0, actor, role, rule=INVENTORY_CITE, reason=r.value,
            source_kind=kind.value, source_ref=source_ref, chips=counts,
            value=movement.value, table_seq=table_seq, gaming_day=day)])

    def redeem_for_cash(self, amount: int) -> None:
        """Always refused: chips are redeemed for cash only at the cage (603a.10(d))."""
        raise ProcedureViolation(
            f"chips ({money(amount)}) are redeemed for cash only at the cage, never at the "
            "table", rule="inventory.redeem_at_cage_only", citation=REDEEM_CITE)

    def retire_chip_set(self, chip_set: str, *, actor: str, role: Role) -> list[bev.BankEvent]:
        self._role("report.roles", role, "retire a chip set")
        return self._commit([self._event(bev.ChipSetRetired, 0, actor, role,
                                         rule=self.pack.cite("chips.retired_refused"),
                                         chip_set=chip_set)])

    def check_chip_set(self, chip_set: str) -> None:
        retired = set(self.state.retired_sets)
        if self.retired_elsewhere is not None:
            retired.update(self.retired_elsewhere())
        check_chip_set(self.pack, chip_set, retired)

    # -- fills and credits --------------------------------------------------------------------
    def request(self, kind: str, chips: Iterable[tuple[int, int]], *, shift: str, actor: str,
                role: Role, electronic: bool = False, sign: bool = True,
                cashier: str = "") -> list[bev.BankEvent]:
        """A Fill Request Slip or a credit request (465a.38(a)-(b)). Prepared by a pit clerk
        or a floorperson or above; signed only by a floorperson or above. On the electronic
        path (465a.38(e)) the signed input generates the slip at the chip bank."""
        self._not_electronic()
        if kind not in SLIP_KINDS:
            raise InvalidInput("a request is for a fill or a credit", rule="fill.kind")
        self._role("fill.preparer_roles", role, f"prepare a {kind} request")
        counts = normalise(chips)
        missing = [name for name, ok in (("the shift", bool(shift)),
                                         ("the amount of each denomination", bool(counts)))
                   if not ok]
        if missing:
            raise self._refuse("fill.signer_roles",
                               f"a {kind} request is refused: missing {' and '.join(missing)} "
                               "(465a.38(b)(1)-(4))")
        counts = self._chips(counts)
        if shift not in self.pack.value("shifts.starts"):
            raise InvalidInput(f"{shift!r} is not a shift of this site "
                               f"({', '.join(self.pack.value('shifts.starts'))})",
                               rule="shifts.starts")
        if electronic and not self.pack.flag("fill.electronic"):
            raise self._refuse("fill.electronic", "the electronic path is not enabled")
        if self.state.status != "open" and kind == "fill":
            raise ProcedureViolation("fills go to an open table", rule="bank.status")
        day, _ = self.day_and_shift()
        number = 1 + max(self.state.requests, default=0)
        events: list[bev.BankEvent] = [self._event(
            bev.SlipRequested, 0, actor, role, rule=self.pack.cite("fill.preparer_roles"),
            request=number, slip_kind=kind, chips=counts, value=chips_value(counts),
            gaming_day=day, shift=shift, electronic=electronic)]
        if sign and role in self.pack.roles("fill.signer_roles"):
            events.append(self._event(bev.RequestSigned, 1, actor, role,
                                      rule=self.pack.cite("fill.signer_roles"),
                                      request=number))
            if electronic:
                events.append(self._event(
                    bev.SlipIssued, 2, cashier or "chip-bank", Role.SYSTEM,
                    rule=self.pack.cite("fill.electronic"), request=number,
                    serial=self._take_serial(kind, None, number, cashier or "chip-bank"),
                    slip_kind=kind, chips=counts, value=chips_value(counts)))
        return self._commit(events)

    def _progress(self, request: int) -> SlipProgress:
        p = self.state.requests.get(request)
        if p is None:
            raise InvalidInput(f"no request {request} at this table", rule="fill.request")
        if p.status == "voided":
            raise ProcedureViolation(f"request {request} was voided", rule="slips.void_only")
        return p

    def _by_serial(self, serial: int) -> SlipProgress:
        live = [p for p in self.state.requests.values()
                if p.serial == serial and p.status not in ("completed", "voided")]
        if len(live) > 1:
            raise InvalidInput(f"serial {serial} names both a fill and a credit in progress; "
                               "finish or void one first", rule="slips.serial_sequence")
        p = self.state.slip_by_serial(serial)
        if p is None:
            raise InvalidInput(f"no slip {serial} at this table", rule="fill.request")
        if p.status == "voided":
            raise ProcedureViolation(f"slip {serial} was voided", rule="slips.void_only")
        return p

    def sign_request(self, request: int, *, actor: str, role: Role) -> list[bev.BankEvent]:
        p = self._progress(request)
        self._role("fill.signer_roles", role, f"sign a {p.kind} request")
        if p.signed_by:
            raise ProcedureViolation(f"request {request} is already signed",
                                     rule="slips.void_only")
        return self._commit([self._event(bev.RequestSigned, 0, actor, role,
                                         rule=self.pack.cite("fill.signer_roles"),
                                         request=request)])

    def notify_surveillance(self, request: int, *, actor: str, role: Role,
                            officer: str = "") -> list[bev.BankEvent]:
        self._progress(request)
        return self._commit([self._event(bev.SurveillanceNotified, 0, actor, role,
                                         rule=self.pack.cite("fill.surveillance_notice"),
                                         request=request, officer=officer)])

    def _next_serial(self, kind: str) -> int:
        if self.series is not None:
            return self.series.next(kind)
        return 1 + max(self.state.serials_of.get(kind, ()), default=0)

    def _take_serial(self, kind: str, serial: int | None, request: int, actor: str) -> int:
        """The serial for ``request``: with the casino's series, taken there (durably, so no
        other table or process issues it too); without one, the table's own next."""
        if self.series is None:
            return self._next_serial(kind) if serial is None else serial
        return self.series.take(kind, serial, table=self.table, request=request,
                                at=self._now(), actor=actor,
                                citation=self.pack.cite("slips.serial_sequence"))

    def issue(self, request: int, *, actor: str, role: Role,
              serial: int | None = None) -> list[bev.BankEvent]:
        """The chip bank's Fill Slip or Credit Slip, from a signed request."""
        p = self._progress(request)
        self._role("slips.cashier_roles", role, f"prepare a {p.kind} slip")
        if not p.signed_by:
            raise self._refuse("fill.signer_roles",
                               f"request {request} is incomplete: not sent to the chip bank "
                               "until a floorperson or above signs it")
        if p.serial:
            raise ProcedureViolation(f"request {request} already has slip {p.serial}",
                                     rule="slips.serial_sequence")
        self._distinct(p.prepared_by, actor, "prepare-request", "issue-slip")
        self._distinct(p.signed_by, actor, "prepare-request", "issue-slip")
        number = self._next_serial(p.kind) if serial is None else serial
        if number in self.state.serials_of.get(p.kind, ()) or (
                self.series is not None and self.series.used(p.kind, number)):
            raise self._refuse("slips.serial_sequence",
                               f"{p.kind} slip serial {number} was already used (a duplicate "
                               "in the casino's series)")
        if number <= 0:
            raise InvalidInput("a slip serial is a whole number above zero",
                               rule="slips.serial_sequence")
        number = self._take_serial(p.kind, serial, request, actor)
        return self._commit([self._event(
            bev.SlipIssued, 0, actor, role, rule=self.pack.cite("slips.serial_sequence"),
            request=request, serial=number, slip_kind=p.kind, chips=p.chips, value=p.value)])

    def carry(self, serial: int, *, officer: str, role: Role) -> list[bev.BankEvent]:
        p = self._by_serial(serial)
        self._role("fill.carrier_roles", role, "carry a fill or credit")
        self._distinct(p.cashier, officer, "issue-slip", "carry")
        if p.officer and p.officer != officer and self.pack.flag("fill.same_officer"):
            raise self._refuse("fill.same_officer",
                               f"{p.officer} started this {p.kind} and must finish it")
        return self._commit([self._event(bev.SlipCarried, 0, officer, role,
                                         rule=self.pack.cite("fill.carrier_roles"),
                                         serial=serial, officer=officer)])

    def sign_slip(self, serial: int, *, actor: str, role: Role) -> list[bev.BankEvent]:
        p = self._by_serial(serial)
        groups = self.pack.groups("credit.signatures")
        if not any(role in g for g in groups):
            raise RoleNotPermitted(f"a {role.value} does not sign a {p.kind} slip",
                                   rule="credit.signatures",
                                   citation=self.pack.cite("credit.signatures"))
        if any(s == actor for s, _ in p.signatures):
            raise ProcedureViolation(f"{actor} has already signed slip {serial}",
                                     rule="credit.signatures",
                                     citation=self.pack.cite("credit.signatures"))
        return self._commit([self._event(bev.SlipSignature, 0, actor, role,
                                         rule=self.pack.cite("credit.signatures"),
                                         serial=serial, signer=actor, signer_role=role.value)])

    def receive(self, serial: int, chips: Iterable[tuple[int, int]], *, counter: str,
                counter_role: Role, officer: str, table_seq: int = 0,
                ) -> list[bev.BankEvent]:
        """The receiving count: the dealer or boxperson counts the chips in (a fill) or out
        (a credit) in front of the officer; only then do they move."""
        p = self._by_serial(serial)
        pk = self.pack
        self._role("slips.receiver_roles", counter_role, f"count a {p.kind}")
        self._distinct(p.cashier, counter, "issue-slip", "receive")
        notice = "fill.surveillance_notice" if p.kind == "fill" else "credit.surveillance_notice"
        if pk.flag(notice) and not p.surveillance:
            raise self._refuse(notice, f"surveillance was not told of this {p.kind}")
        if not p.officer:
            raise self._refuse("fill.carrier_roles",
                               f"no security employee carried this {p.kind}")
        if pk.flag("fill.same_officer") and officer != p.officer:
            raise self._refuse("fill.same_officer",
                               f"{p.officer} started this {p.kind} and must finish it, not "
                               f"{officer}")
        if p.kind == "credit":
            self._credit_signatures(p)
        counted = self._chips(chips)
        if counted != p.chips:
            raise self._refuse("slips.receiver_roles",
                               f"the chips counted ({money(chips_value(counted))}) are not the "
                               f"slip's ({money(p.value)}): the officer takes the {p.kind} "
                               "back; nothing moves")
        if self.state.status != "open" and p.kind == "fill":
            raise ProcedureViolation("fills go to an open table", rule="bank.status")
        day, _ = self.day_and_shift()
        return self._commit([self._event(
            bev.SlipCompleted, 0, counter, counter_role, rule=INVENTORY_CITE, serial=serial,
            slip_kind=p.kind, chips=counted, value=p.value, counter=counter, officer=officer,
            gaming_day=day, table_seq=table_seq)])

    def _credit_signatures(self, p: SlipProgress) -> None:
        groups = self.pack.groups("credit.signatures")
        signed = [(person, Role(r)) for person, r in p.signatures]
        missing = []
        used: set[str] = set()
        for g in groups:
            who = next((person for person, r in signed if r in g and person not in used), None)
            if who is None:
                missing.append("/".join(sorted(r.value for r in g)))
            else:
                used.add(who)
        if missing:
            raise self._refuse("credit.signatures",
                               f"the credit slip lacks the signature of: {', '.join(missing)}; "
                               "the chips stay in the table inventory")

    def void(self, *, actor: str, role: Role, reason: str, request: int = 0,
             serial: int = 0) -> list[bev.BankEvent]:
        """Slips are never edited, only voided (LAC 42:III-2717 stand-in)."""
        p = self._by_serial(serial) if serial else self._progress(request)
        if p.status == "completed":
            raise self._refuse("slips.void_only",
                               f"slip {p.serial} is completed: its chips moved; a new slip "
                               "corrects it")
        allowed = self.pack.roles("fill.signer_roles") | self.pack.roles("slips.cashier_roles")
        if role not in allowed:
            raise RoleNotPermitted(f"a {role.value} may not void a slip", rule="slips.void_only",
                                   citation=self.pack.cite("slips.void_only"))
        if not reason.strip():
            raise InvalidInput("a void gives its reason", rule="slips.void_only")
        return self._commit([self._event(bev.SlipVoided, 0, actor, role,
                                         rule=self.pack.cite("slips.void_only"),
                                         request=p.request, serial=p.serial, reason=reason)])

    def investigate_hold(self, day: str, hold: Fraction, history: Sequence[Fraction], *,
                         actor: str, role: Role) -> list[bev.BankEvent]:
        """A day's win-to-drop against the band of earlier days (COMAR 36.05.03.25B
        stand-in): outside it, an investigation record is written and queued for the
        regulator; inside it, nothing is written."""
        self._role("report.roles", role, "review table statistics")
        low, high = hold_band(history, self.pack.number("hold.band_percent"))
        if low <= hold <= high:
            return []
        return self._commit([self._event(
            bev.HoldInvestigated, 0, actor, role, rule=self.pack.cite("hold.band_percent"),
            gaming_day=day, hold=percent(hold), low=percent(low), high=percent(high),
            hold_exact=str(hold), history=tuple(str(h) for h in history))])

    # -- the drop -----------------------------------------------------------------------------
    def drop(self, box: str, replacement: str, chips: Iterable[tuple[int, int]], *,
             counter: str, counter_role: Role, observer: str, observer_role: Role,
             team: Sequence[tuple[str, Role]], table_log: Sequence[Event] = (),
             table_seq: int = 0, totals: Totals | None = None) -> list[bev.BankEvent]:
        """The drop at an open table (465a.41): the drop-time count signed by both on both
        copies, the original into the outgoing box, the duplicate into the replacement."""
        if not box or not replacement or box == replacement:
            raise InvalidInput("a drop names the outgoing box and a different replacement",
                               rule="drop.box")
        if any(b == replacement for b in self.state.boxes):
            raise InvalidInput(f"box {replacement} was already collected", rule="drop.box")
        self._team(team)
        day, shift = self.day_and_shift()
        if self.state.electronic:
            raise ProcedureViolation("a fully automated table has no drop box here",
                                     rule="bank.electronic")
        collected = self._event(bev.DropBoxCollected, 0, team[0][0], team[0][1],
                                rule=self.pack.cite("drop.team_roles"), box=box,
                                gaming_day=day, shift=shift,
                                team=tuple(p for p, _ in team), replacement=replacement,
                                team_roles=tuple(r.value for _, r in team))
        if self.state.status != "open":
            return self._commit([collected])
        return self.count("drop", chips, counter=counter, counter_role=counter_role,
                          observer=observer, observer_role=observer_role,
                          place=f"original in box {box}; duplicate in box {replacement}",
                          table_log=table_log, table_seq=table_seq, extra=[collected],
                          totals=totals)

    def _team(self, team: Sequence[tuple[str, Role]]) -> None:
        allowed = self.pack.roles("drop.team_roles")
        bad = [p for p, r in team if r not in allowed]
        if bad:
            raise RoleNotPermitted(f"{', '.join(bad)}: not on the drop team",
                                   rule="drop.team_roles",
                                   citation=self.pack.cite("drop.team_roles"))
        people = {p for p, _ in team}
        need = self.pack.number("drop.team_min")
        if len(people) < need or (need >= 3 and not any(r is Role.SECURITY for _, r in team)):
            raise self._refuse("drop.team_min",
                               f"the drop team is {len(people)} people; at least {need}"
                               + (", a security officer among them" if need >= 3 else ""))

    def count_box(self, box: str, items: Iterable[tuple[str, int]], *,
                  counters: Sequence[tuple[str, Role]]) -> list[bev.BankEvent]:
        if box not in self.state.boxes:
            raise InvalidInput(f"box {box} was not collected from this table", rule="drop.box")
        if self.state.boxes[box].items is not None:
            raise ProcedureViolation(f"box {box} is already counted", rule="slips.void_only")
        self._role_all("drop.team_roles", counters, "count a drop box")
        typed: dict[str, int] = {}
        for kind, amount in items:
            if kind not in ("currency", "counter-check", "chips", "coupon") or not isinstance(
                    amount, int) or isinstance(amount, bool) or amount < 0:
                raise InvalidInput(f"a drop item is currency, counter-check, chips or coupon "
                                   f"with an amount in cents, not {kind!r}",
                                   rule="drop.included")
            typed[kind] = typed.get(kind, 0) + amount
        day = self.state.boxes[box].gaming_day
        first = counters[0]
        return self._commit([self._event(bev.DropBoxCounted, 0, first[0], first[1],
                                         rule=self.pack.cite("drop.included"), box=box,
                                         gaming_day=day, items=tuple(sorted(typed.items())),
                                         counters=tuple(p for p, _ in counters),
                                         counter_roles=tuple(r.value for _, r in counters))])

    def _role_all(self, rule: str, people: Sequence[tuple[str, Role]], what: str) -> None:
        if not people:
            raise InvalidInput(f"name who will {what}", rule=rule)
        for _, r in people:
            self._role(rule, r, what)


def _place(purpose: str) -> str:
    return {"opening": "drop box", "drop": "outgoing and incoming drop boxes",
            "closing": "locked container", "shift": "drop box (shift compartment)",
            "closed-daily": "locked container"}[purpose]


def check_chip_set(pack: BankPack, chip_set: str, retired: Iterable[str],
                   what: str = "wagered or moved") -> None:
    """Refuse chips of a retired set (603a.10(b)): they are redeemed only at the cage. Used by
    every bank step that names its set and by the bet path (a buy-in, a wager) that does.

    >>> check_chip_set(load_bank_pack("pa"), "old", ["old"], "bought")
    Traceback (most recent call last):
    ...
    dicetable.core.errors.ProcedureViolation: chip set old is retired: ... cannot be bought ...
    """
    if chip_set and chip_set in set(retired) and pack.flag("chips.retired_refused"):
        raise ProcedureViolation(f"chip set {chip_set} is retired: it is redeemed only at the "
                                 f"cage and cannot be {what}", rule="chips.retired_refused",
                                 citation=pack.cite("chips.retired_refused"))
