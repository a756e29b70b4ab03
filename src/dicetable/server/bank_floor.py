"""Every live table's bank on the floor's store (``bank:TABLE``), and the pit's view of it.

Each bank follows its table's log: the movements the table records (buy-ins, payouts,
collections, vigorish) are folded once, when the pit asks, from where the last fold stopped
(``Totals``), so the bet path writes and reads nothing for the bank. A step is one of the
catalogue's verbs (``dicetable.bank.catalogue``); the actor's role comes from the table's own
log (the crew assigned there) or the site's staff list (pit clerks, the chip bank, the count
team, revenue audit), never from the request.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dicetable.application.accounts import Account, Kind
from dicetable.application.service import Acting, Step
from dicetable.application.streams import open_bank
from dicetable.bank import events as bev
from dicetable.bank.catalogue import VERBS, Context, parse_fields, parse_float
from dicetable.bank.follow import CHECKPOINT_ROLLS, Totals
from dicetable.bank.ledger import TableBank, check_chip_set
from dicetable.bank.model import money
from dicetable.bank.notices import REGULATOR_DESK, receives, recipients
from dicetable.bank.reports import (
    conservation,
    day_report,
    drop_collection_problems,
    indiana_receipts,
    percent,
    serial_problems,
)
from dicetable.bank.rules import load_bank_pack
from dicetable.bank.slips import slip_citations, slip_document
from dicetable.bank.staffing import check_crew, check_span
from dicetable.core.errors import DicetableError, InvalidInput, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games.commands import BuyChips, Command
from dicetable.server.floor import Floor, NotFound
from dicetable.store.bank_stream import DurableBank, bank_stream
from dicetable.store.slip_serials_stream import SlipSerials
from dicetable.table.commands import AssignStaff, RelieveStaff
from dicetable.table.events import StaffAssigned, StaffRelieved

VERB_RULE = {"request": "fill.preparer_roles", "sign": "fill.signer_roles",
             "notify-surveillance": "fill.signer_roles", "issue": "slips.cashier_roles",
             "carry": "fill.carrier_roles", "receive": "slips.receiver_roles",
             "colour-change": "count.counter_roles", "counter-check": "count.counter_roles",
             "count-box": "drop.team_roles", "retire-chip-set": "report.roles",
             "investigate-hold": "report.roles", "open": "count.observer_roles",
             "close": "count.observer_roles", "count": "count.observer_roles",
             "supervise": "staff.ranks", "acknowledge": "",
             "drop": "count.observer_roles", "void": "fill.signer_roles"}
"""The rule whose roles the acting account should act in, per verb (the ledger decides)."""


@dataclass
class Followed:
    totals: Totals = field(default_factory=Totals)


class FloorBanks:
    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.banks: dict[str, DurableBank] = {}
        self.followed: dict[str, Followed] = {}
        self._lock = threading.RLock()
        self.series = SlipSerials(floor.store, also=self.serials)
        """The casino's serial series, taken on the store at the version read (no two
        processes issue one serial); serials the banks issued before it are kept after."""
        for stream in floor.store.streams(bev.KIND):
            table = stream.split(":", 1)[1]
            self._keep(table, DurableBank.resume(floor.store, table, clock=floor.clock))

    def _keep(self, table_id: str, durable: DurableBank) -> DurableBank:
        durable.bank.series = self.series
        durable.bank.retired_elsewhere = self.retired_sets
        self.banks[table_id] = durable
        self.floor.hold(bank_stream(table_id), durable)  # its steps: the floor's submit
        return durable

    # -- the casino's slip series -------------------------------------------------------------
    def serials(self, kind: str) -> list[int]:
        """Every serial of ``kind`` the floor's tables have used, in one list."""
        return [n for d in self.banks.values() for n in d.bank.state.serials_of.get(kind, ())]

    def retired_sets(self) -> list[str]:
        """The chip sets retired anywhere on the floor (603a.10(b))."""
        return sorted({c for d in self.banks.values() for c in d.bank.state.retired_sets})

    def serial_problems(self) -> dict[str, list[str]]:
        """Gaps and duplicates in each slip kind's series, across the floor."""
        return {kind: serial_problems(self.serials(kind)) for kind in ("fill", "credit")}

    @property
    def roster(self) -> dict[str, Role]:
        """The site's staff list (the one the dice room keeps): roles not assigned at a
        table (pit clerk, chip bank cashier, count team, revenue auditor, security) and each
        staff member's own rank."""
        return {name: p.role for name, p in self.floor.custody.roster.items()}

    # -- banks --------------------------------------------------------------------------------
    def start(self, table_id: str) -> DurableBank:
        """The table's bank, opened under its jurisdiction's bank pack if it has none yet."""
        with self._lock:
            if table_id in self.banks:
                return self.banks[table_id]
            table = self.floor.get(table_id).table
            jurisdiction = table.pack.jurisdiction.lower()
            site = self.floor.custody.site_for(jurisdiction.upper())
            name = site.ledger.state.site if site is not None else jurisdiction
            return self._keep(table_id, open_bank(
                self.floor, self.floor.store, load_bank_pack(jurisdiction), table_id,
                site=name, game=table.state.game, electronic=table.mode == "electronic",
                clock=self.floor.clock))

    def get(self, table_id: str) -> DurableBank:
        found = self.banks.get(table_id)
        if found is None:
            if self.floor.store.head(bank_stream(table_id)).seq:
                found = self._keep(table_id, DurableBank.resume(
                    self.floor.store, table_id, clock=self.floor.clock))
            else:
                raise NotFound(f"table {table_id!r} has no bank yet", rule="api.table")
        found.refresh()
        return found

    def follow(self, table_id: str) -> Totals:
        """The table's log folded up to now: only the events since the last fold are read,
        and a process that starts cold resumes from the bank's latest checkpoint. A
        checkpoint is written every ``CHECKPOINT_ROLLS`` rolls followed."""
        with self._lock:
            followed = self.followed.get(table_id)
            durable = self.banks.get(table_id)
            if followed is None:
                cp = durable.bank.state.checkpoint if durable is not None else None
                followed = self.followed[table_id] = Followed(
                    Totals.resume(cp.totals, cp.values) if cp is not None else Totals())
            totals = followed.totals
            totals.fold(list(self.floor.store.table_events(table_id, after=totals.seq)))
            if durable is not None and durable.bank.state.status == "open":
                cp = durable.bank.state.checkpoint
                noted = dict(cp.totals).get("rolls", 0) if cp is not None else 0
                if totals.rolls - noted >= CHECKPOINT_ROLLS:
                    durable.run(lambda bank: bank.note(totals))
            return totals

    # -- who acts -----------------------------------------------------------------------------
    def roles_of(self, username: str, table_id: str | None) -> list[Role]:
        held: list[Role] = []
        if table_id is not None and table_id in self.floor.tables:
            held += sorted(self.floor.get(table_id).table.procedure.staff.get(username, set()))
        own = self.roster.get(username)
        if own is not None and own not in held:
            held.append(own)
        return held

    def resolve(self, table_id: str) -> Any:
        def role(name: str) -> Role:
            held = self.roles_of(name, table_id)
            if not held:
                raise InvalidInput(f"{name!r} is not on the site's staff list",
                                   rule="bank.person")
            return held[0]
        return role

    def acting_role(self, who: Account, table_id: str, verb: str, bank: TableBank) -> Role:
        if who.kind is not Kind.STAFF:
            raise RoleNotPermitted("the table bank is worked by staff", rule="authority.staff")
        held = self.roles_of(who.username, table_id)
        if not held:
            raise RoleNotPermitted(f"{who.username} is not on the site's staff list nor "
                                   f"assigned at {table_id}", rule="authority.staff")
        rule = VERB_RULE.get(verb)
        allowed = bank.pack.roles(rule) if rule else frozenset()
        if verb == "sign-slip":
            allowed = frozenset(r for g in bank.pack.groups("credit.signatures") for r in g)
        if verb == "acknowledge":
            told, _ = recipients(bank.pack, bank.pack.value("discrepancy.notify"))
            allowed = told | REGULATOR_DESK
        return next((r for r in held if r in allowed), held[0])

    # -- steps --------------------------------------------------------------------------------
    def step(self, table_id: str, who: Account, verb: str,
             fields: Mapping[str, Any]) -> list[bev.BankEvent]:
        spec = VERBS.get(verb)
        if spec is None:
            raise NotFound(f"no bank step {verb!r}; steps: {', '.join(VERBS)}",
                           rule="api.route")
        durable = self.start(table_id) if verb == "open" else self.get(table_id)
        role = self.acting_role(who, table_id, verb, durable.bank)
        needs_log = verb in ("open", "close", "count", "drop")
        # a count reads the table's log since the last count only (its variance's window);
        # opening reads it all, for the crew the log has assigned
        last = durable.bank.state.last_count
        after = last.table_seq if last is not None and verb != "open" else 0
        log = list(self.floor.store.table_events(table_id, after=after)) if needs_log else []
        if verb == "open":  # the crew is the table's own assignments, not the request's
            fields = {**fields, "crew": ",".join(
                f"{person}:{role.value}" for person, role in sorted(_assigned(log)))}
        args = parse_fields(fields, spec, self.resolve(table_id))
        totals = self.follow(table_id)
        ctx = Context(table_log=log, table_seq=totals.seq, totals=totals if needs_log else None,
                      floor_tables=lambda person: self.supervised(person, table_id))
        answer = self.floor.submit(bank_stream(table_id), Step(
            Acting(who.username, role), lambda bank, me: spec.run(bank, me, args, ctx)))
        assert answer is not None
        events: list[bev.BankEvent] = answer.result()
        return events

    def register(self) -> dict[str, list[str]]:
        """The floor-wide register: each supervisor and the open tables they supervise."""
        out: dict[str, list[str]] = {}
        for table_id, durable in sorted(self.banks.items()):
            s = durable.bank.state
            if s.status == "open" and s.supervisor:
                out.setdefault(s.supervisor, []).append(table_id)
        return out

    def supervised(self, person: str, besides: str) -> list[tuple[str, list[Role]]]:
        """The other open tables the register gives ``person`` (465a.35(c)): each one's game
        and the crew it opened with."""
        out = []
        for table_id in self.register().get(person, []):
            if table_id != besides:
                bank = self.banks[table_id].bank
                out.append((bank.state.game, [r for _, r in bank.opened_crew()]))
        return out

    def guard_staff(self, table_id: str, build: Any) -> Any:
        """``build`` (a staff assignment or relief), refused when it would leave an open
        table's crew short (465a.35(b)) or take a floorperson assigned here past their span
        (465a.35(c), from the register). Checked where the table decides, on its own staff."""
        def checked(actor: str, role: Role) -> Any:
            built = build(actor, role)
            durable = self.banks.get(table_id)
            if durable is None or durable.bank.state.status != "open" \
                    or durable.bank.state.electronic:
                return built
            commands = [built] if isinstance(built, Command) else list(built)
            staff = self.floor.get(table_id).table.procedure.staff
            crew = {(p, r) for p, roles in staff.items() for r in roles}
            for c in commands:
                if isinstance(c, AssignStaff):
                    crew.add((c.person, c.staff_role))
                elif isinstance(c, RelieveStaff):
                    crew.discard((c.person, c.staff_role))
            bank = durable.bank
            check_crew(bank.pack, bank.state.game, [r for _, r in crew])
            for c in commands:
                if isinstance(c, AssignStaff) and c.staff_role is Role.FLOORPERSON:
                    check_span(bank.pack, [(bank.state.game, [r for _, r in crew]),
                                           *self.supervised(c.person, table_id)])
            return commands
        return checked

    def guard_chips(self, table_id: str, build: Any) -> Any:
        """``build`` (a buy-in or a wager), refused when it names a chip set retired at any
        table of the floor (603a.10(b): redeemed only at the cage). Nothing is read unless a
        set is named, so the bet path pays one call."""
        return _ChipsGuarded(self, table_id, build)

    def check_chips(self, table_id: str, commands: list[Command]) -> None:
        """Refuse ``commands`` if one names a chip set retired at any table of the floor."""
        named = [(c, s) for c in commands if (s := str(getattr(c, "chip_set", "")))]
        if not named:
            return
        for durable in list(self.banks.values()):
            durable.refresh()  # a set retired by another process counts too
        retired = self.retired_sets()
        own = self.banks.get(table_id)
        pack = own.bank.pack if own is not None else load_bank_pack(
            self.floor.get(table_id).table.pack.jurisdiction.lower()) if retired else None
        for c, chip_set in named:
            if pack is not None:
                check_chip_set(pack, chip_set, retired,
                               "sold" if isinstance(c, BuyChips) else "wagered")

    def slip(self, table_id: str, kind: str, number: int) -> dict[str, Any]:
        """One slip's printable document (a fill, a credit or a Table Inventory Slip)."""
        bank = self.get(table_id).bank
        return slip_document(bank.state, kind, number, jurisdiction=bank.pack.jurisdiction,
                             cite=slip_citations(bank.pack)).to_dict()

    # -- notices ------------------------------------------------------------------------------
    def notices_for(self, who: Account) -> list[dict[str, Any]]:
        """The notices this account must receive, newest first, across the floor's banks:
        those whose recipients include one of its roles (at that table or on the staff list),
        and the regulator's copies for the desk that files them."""
        out = []
        for table_id, durable in sorted(self.banks.items()):
            bank = durable.bank
            roles = self.roles_of(who.username, table_id)
            for e in bank.notices():
                how = receives(bank.pack, bank.notified_of(e), roles)
                if not how:
                    continue
                read = bank.state.read.get(e.seq, [])
                out.append({"table": table_id, "notice": e.seq, "at": e.at, "rule": e.rule,
                            "kind": e.kind, "how": how, "text": _notice_text(e),
                            "read_by": [p for p, _ in read],
                            "read": any(p == who.username for p, _ in read)})
        return sorted(out, key=lambda n: n["at"], reverse=True)

    # -- the pit's view -----------------------------------------------------------------------
    def players_chips(self, table_id: str) -> int:
        """The players' chips (balances and stakes); the table's lock held (its worker
        changes the state under it)."""
        state = self.floor.get(table_id).table.state
        return sum(p.balance for p in state.players.values()) + state.on_layout()

    def followed_with_chips(self, table_id: str) -> tuple[Totals, int]:
        """The table's log folded and the players' chips at one seq: read under the table's
        lock, or a bet committed between the two reads (or during the second: "dictionary
        changed size") breaks the conservation check. The bulk is folded first, unlocked."""
        self.follow(table_id)
        info = self.floor.get(table_id)
        with info.lock:
            self.floor.catch_up(table_id)
            return self.follow(table_id), self.players_chips(table_id)

    def detail(self, table_id: str) -> dict[str, Any]:
        bank = self.get(table_id).bank
        s = bank.state
        totals, chips = self.followed_with_chips(table_id)
        books = conservation(s, totals, chips)
        day, shift = bank.day_and_shift()
        last = s.last_count
        expected = bank.expected(totals=totals) if last is not None else None
        return {
            "table": table_id, "site": s.site, "game": s.game, "electronic": s.electronic,
            "jurisdiction": bank.pack.jurisdiction, "status": s.status,
            "gaming_day": day, "shift": shift,
            "expected": expected, "expected_text": None if expected is None else money(expected),
            "inventory": [list(x) for x in s.inventory],
            "last_count": None if last is None else {
                "slip": last.slip, "purpose": last.purpose, "total": last.total,
                "at": last.at, "counter": last.counter, "observer": last.observer},
            "since_count": list(s.since_count_log),
            "requests": [{"request": p.request, "kind": p.kind, "value": p.value,
                          "chips": [list(x) for x in p.chips], "status": p.status,
                          "serial": p.serial, "prepared_by": p.prepared_by,
                          "signed_by": p.signed_by, "officer": p.officer,
                          "surveillance": p.surveillance, "shift": p.shift,
                          "signatures": [list(x) for x in p.signatures]}
                         for p in sorted(s.requests.values(), key=lambda p: -p.request)],
            "discrepancies": [_discrepancy(e) for e in s.log
                              if isinstance(e, bev.DiscrepancyFound)][-10:],
            "conservation": books.to_dict(),
            "drop_box": s.current_box,
            "closed_table_slip_due": s.status == "closed" and bank.closed_tables_missing_slip(day),
            "serials": self.serial_problems(),
            "rolls_followed": totals.rolls,
            "expected_chips": _expected_chips(bank, totals),
            "retired_sets": self.retired_sets(),
            "staffing": self.staffing(table_id, bank),
        }

    def staffing(self, table_id: str, bank: TableBank) -> str:
        """The crew now assigned, checked as when the table opened (465a.35(b)): a staff
        change that leaves an open table short shows here."""
        if bank.state.status != "open" or bank.state.electronic:
            return ""
        staff = self.floor.get(table_id).table.procedure.staff
        crew = [(person, role) for person, roles in staff.items() for role in roles]
        try:
            bank.check_staffing(crew)
        except DicetableError as e:
            return f"{e.message} [{e.citation}]"
        return ""

    def report(self, table_id: str, day: str | None = None, *, float_yesterday: str = "",
               float_today: str = "") -> dict[str, Any]:
        durable = self.get(table_id)
        bank = durable.bank
        day = day or bank.day_and_shift()[0]
        table_day = [e for e in self.floor.store.table_events(table_id)
                     if bank.day_and_shift(e.at)[0] == day] if bank.state.electronic else []
        rep = day_report(bank.state, day, included=bank.pack.value("drop.included"),
                         table_day_log=table_day).to_dict()
        rep["drop_problems"] = [] if bank.state.electronic else drop_collection_problems(
            bank.state, day, bank.pack.number("drop.team_min"))
        rep["formula"] = bank.pack.cite("drop.included")
        if bank.pack.flag("win.chip_float_adjustment") and rep["win"] and (
                float_yesterday or float_today):
            r = indiana_receipts(rep["win"]["win"], parse_float(float_yesterday),
                                 parse_float(float_today))
            rep["receipts"] = {"table_win": r.table_win, "adjustment": r.adjustment,
                               "receipts": r.receipts, "negative": list(r.negative),
                               "citation": bank.pack.cite("win.chip_float_adjustment")}
        return rep

    def summaries(self, day: str | None = None) -> dict[str, Any]:
        tables = []
        win = drop = 0
        for table_id in sorted(self.banks):
            if table_id not in self.floor.tables:
                continue
            detail = self.detail(table_id)
            rep = self.report(table_id, day)
            w = rep["win"]["win"] if rep["win"] else (rep["electronic_win"] or 0)
            d = rep["win"]["drop"] if rep["win"] else 0
            win += w
            drop += d
            tables.append({"table": table_id, "status": detail["status"],
                           "expected_text": detail["expected_text"],
                           "conservation": detail["conservation"],
                           "discrepancies": len(detail["discrepancies"]),
                           "win": w, "drop": d,
                           "hold": rep["win"]["hold"] if rep["win"] else "-",
                           "electronic": detail["electronic"],
                           "problems": rep["problems"]})
        return {"tables": tables, "win": win, "drop": drop,
                "serials": self.serial_problems(),
                "hold": percent(Fraction(win, drop)) if drop else "-",
                "day": day}


def _expected_chips(bank: TableBank, totals: Totals) -> dict[str, Any] | None:
    found = bank.expected_chips(totals)
    if found is None:
        return None
    chips, uncovered = found
    return {"chips": [list(x) for x in chips], "uncovered": uncovered,
            "rule": bank.pack.cite("chips.breakdown")}


def _notice_text(e: bev.BankEvent) -> str:
    if isinstance(e, bev.DiscrepancyFound):
        extra = [x for x, on in (("a signed security and surveillance report", e.written_report),
                                 ("a copy to the regulator", e.regulator_copy)) if on]
        return (f"Count slip {e.slip}: counted {money(e.counted)}, expected "
                f"{money(e.expected)}, variance {money(e.variance)}"
                + (f"; needs {' and '.join(extra)}" if extra else ""))
    if isinstance(e, bev.HoldInvestigated):
        return (f"Gaming day {e.gaming_day}: hold {e.hold} outside {e.low} to {e.high}; "
                "investigation record queued for the regulator")
    return e.kind


def _discrepancy(e: bev.DiscrepancyFound) -> dict[str, Any]:
    return {"slip": e.slip, "expected": e.expected, "counted": e.counted,
            "variance": e.variance, "notified": list(e.notified),
            "written_report": e.written_report, "regulator_copy": e.regulator_copy,
            "suspects": list(e.suspects), "at": e.at, "rule": e.rule}


def banks_of(floor: Floor) -> FloorBanks:
    """The floor's banks (made once, beside the floor)."""
    found = getattr(floor, "banks", None)
    if not isinstance(found, FloorBanks):
        found = FloorBanks(floor)
        floor.banks = found  # type: ignore[attr-defined]
    return found


def _assigned(log: list[Any]) -> set[tuple[str, Role]]:
    """The crew a table's log has assigned and not relieved: read from the log itself, which
    every process agrees on, rather than from a table object another thread may be rebuilding."""
    crew: set[tuple[str, Role]] = set()
    for event in log:
        if isinstance(event, StaffAssigned):
            crew.add((event.person, event.staff_role))
        elif isinstance(event, StaffRelieved):
            crew.discard((event.person, event.staff_role))
    return crew


class _ChipsGuarded:
    """A buy-in or wager's ``build``, its chip sets checked (``FloorBanks.guard_chips``): one
    object per command, where a closure over it was four for the collector to count."""

    __slots__ = ("banks", "build", "table_id")

    def __init__(self, banks: FloorBanks, table_id: str, build: Any) -> None:
        self.banks, self.table_id, self.build = banks, table_id, build

    def __call__(self, actor: str, role: Role) -> list[Command]:
        built = self.build(actor, role)
        commands = [built] if isinstance(built, Command) else list(built)
        self.banks.check_chips(self.table_id, commands)
        return commands
