"""spec/table-bank.md §6: every test vector, named after its ID and the section it encodes.
"Refused" is a structured refusal citing the rule, with no state change."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dicetable.bank import events as bev
from dicetable.bank.follow import Totals, movements
from dicetable.bank.ledger import TableBank
from dicetable.bank.model import Reason, SourceKind
from dicetable.bank.notices import receives
from dicetable.bank.reports import (
    day_report,
    drop_collection_problems,
    indiana_receipts,
    table_win,
)
from dicetable.core.errors import DicetableError, ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role

from .helpers import CREW, B, D, F, S, pit

PIT_CLERK, CASHIER, SEC = Role.PIT_CLERK, Role.CHIP_BANK_CASHIER, Role.SECURITY
SHIFT = "06:00"


def _unchanged(bank: TableBank, before: int) -> None:
    assert bank.state.seq == before


def _fill(bank: TableBank, chips: tuple[tuple[int, int], ...], *, kind: str = "fill",
          surveillance: bool = False) -> int:
    bank.request(kind, chips, shift=SHIFT, actor="fran", role=F)
    req = max(bank.state.requests)
    if surveillance:
        bank.notify_surveillance(req, actor="fran", role=F, officer="sid")
    bank.issue(req, actor="cass", role=CASHIER)
    serial = bank.state.requests[req].serial
    bank.carry(serial, officer="sid", role=SEC)
    return serial


def test_tb01_465a_38_a_a_dealer_may_not_prepare_a_fill_request() -> None:
    p = pit()
    before = p.bank.state.seq
    with pytest.raises(RoleNotPermitted) as refused:
        p.bank.request("fill", ((2500, 80),), shift=SHIFT, actor="dee", role=D)
    assert refused.value.rule == "fill.preparer_roles"
    assert "465a.38(a)" in refused.value.citation
    _unchanged(p.bank, before)


def test_tb02_465a_38_a_b5_an_unsigned_request_is_not_sent_to_the_chip_bank() -> None:
    p = pit()
    p.bank.request("fill", ((2500, 80),), shift=SHIFT, actor="pc", role=PIT_CLERK)
    req = max(p.bank.state.requests)
    assert p.bank.state.requests[req].status == "requested"  # a pit clerk cannot sign
    with pytest.raises(RoleNotPermitted):
        p.bank.sign_request(req, actor="pc", role=PIT_CLERK)
    before = p.bank.state.seq
    with pytest.raises(ProcedureViolation, match="incomplete") as refused:
        p.bank.issue(req, actor="cass", role=CASHIER)
    assert "465a.38(b)(5)" in refused.value.citation
    _unchanged(p.bank, before)
    p.bank.sign_request(req, actor="fran", role=F)
    p.bank.issue(req, actor="cass", role=CASHIER)
    assert p.bank.state.requests[req].serial == 1


@pytest.mark.parametrize(("shift", "chips"), [("", ((2500, 80),)), (SHIFT, ())])
def test_tb03_465a_38_b1_4_a_request_missing_its_fields_is_refused(
        shift: str, chips: tuple[tuple[int, int], ...]) -> None:
    p = pit()
    before = p.bank.state.seq
    with pytest.raises(ProcedureViolation, match="missing") as refused:
        p.bank.request("fill", chips, shift=shift, actor="fran", role=F)
    assert "465a.38" in refused.value.citation
    _unchanged(p.bank, before)


def test_tb04_465a_38_e_the_electronic_path_takes_only_authorised_input() -> None:
    p = pit()
    before = p.bank.state.seq
    with pytest.raises(RoleNotPermitted):
        p.bank.request("fill", ((2500, 80),), shift=SHIFT, actor="dee", role=D,
                       electronic=True)
    _unchanged(p.bank, before)
    events = p.bank.request("fill", ((2500, 80),), shift=SHIFT, actor="fran", role=F,
                            electronic=True)
    assert [e.kind for e in events] == ["SlipRequested", "RequestSigned", "SlipIssued"]
    issued = events[-1]
    assert isinstance(issued, bev.SlipIssued)
    assert issued.serial == 1
    assert issued.value == 2000_00


def test_tb06_68iac_15_12_4_5_c_a_credit_without_the_security_officer_is_refused() -> None:
    p = pit("in", opener=((2500, 800),))
    serial = _fill(p.bank, ((2500, 200),), kind="credit", surveillance=True)
    p.bank.sign_slip(serial, actor="dee", role=D)
    p.bank.sign_slip(serial, actor="fran", role=F)
    inventory, before = p.bank.state.inventory, p.bank.state.seq
    with pytest.raises(ProcedureViolation, match="security") as refused:
        p.bank.receive(serial, ((2500, 200),), counter="dee", counter_role=D, officer="sid")
    assert "68 IAC 15-12-4(5)" in refused.value.citation
    assert p.bank.state.inventory == inventory  # the chips stay in the table inventory
    _unchanged(p.bank, before)
    p.bank.sign_slip(serial, actor="sid", role=SEC)
    p.bank.receive(serial, ((2500, 200),), counter="dee", counter_role=D, officer="sid")
    assert p.bank.state.inventory == ((2500, 600),)


@pytest.mark.parametrize("kind", ["fill", "credit"])
def test_tb07_68iac_15_12_3_a3_15_12_4_3_surveillance_is_told_or_nothing_moves(
        kind: str) -> None:
    p = pit("in")
    serial = _fill(p.bank, ((2500, 40),), kind=kind, surveillance=False)
    for who, role in (("dee", D), ("fran", F), ("sid", SEC)):
        p.bank.sign_slip(serial, actor=who, role=role)
    before = p.bank.state.seq
    with pytest.raises(ProcedureViolation, match="surveillance") as refused:
        p.bank.receive(serial, ((2500, 40),), counter="dee", counter_role=D, officer="sid")
    assert "68 IAC 15-12-" in refused.value.citation
    _unchanged(p.bank, before)


def test_tb09_465a_36_b6_vigorish_enters_the_inventory_linked_to_its_wager() -> None:
    p = pit()
    p.table.join("alice")
    p.table.buy_in("alice", 100_00)
    before = p.bank.expected(p.log, p.seq)
    bet = p.table.bet("alice", "buy4", 25_00)
    assert p.bank.expected(p.log, p.seq) == before + 1_00
    vig = [m for m in movements(p.log) if m.reason is Reason.VIGORISH]
    assert len(vig) == 1
    assert (vig[0].value, vig[0].source.kind, vig[0].source.ref) == (1_00, SourceKind.WAGER,
                                                                     bet)


def test_tb10_465a_36_b4_a_colour_change_keeps_the_total_and_changes_the_mix() -> None:
    p = pit(opener=((500, 100), (10000, 10)))
    expected = p.bank.expected(p.log, p.seq)
    p.bank.move("colour-change", "exchange", "x-1", ((500, 20), (10000, -1)), actor="dee",
                role=D)
    assert p.bank.expected(p.log, p.seq) == expected
    assert p.bank.state.inventory == ((500, 120), (10000, 9))
    moved = p.bank.state.log[-1]
    assert isinstance(moved, bev.InventoryMoved)
    assert moved.reason == "colour-change"
    before = p.bank.state.seq
    with pytest.raises(ProcedureViolation, match="equal value"):
        p.bank.move("colour-change", "exchange", "x-2", ((500, 20),), actor="dee", role=D)
    _unchanged(p.bank, before)


def test_tb12_465a_36_b1_a_cash_buy_in_issues_chips_and_drops_the_currency() -> None:
    p = pit()
    expected = p.bank.expected(p.log, p.seq)
    p.table.join("alice")
    p.table.buy_in("alice", 200_00)
    assert p.bank.expected(p.log, p.seq) == expected - 200_00
    (m,) = [m for m in movements(p.log) if m.reason is Reason.CASH_EXCHANGE]
    assert (m.value, m.source.kind) == (-200_00, SourceKind.CURRENCY)
    assert Totals().fold(p.log).cash_exchange == 200_00  # currency in the drop box, uncounted


def test_tb14_465a_37_a_e_a_closed_table_opens_on_a_signed_count() -> None:
    p = pit(opener=((2500, 800),))
    p.bank.close_table(((2500, 800),), counter="bo", counter_role=B, observer="fran",
                       observer_role=F, container="C-1", table_log=p.log, table_seq=p.seq)
    events = p.bank.open_table(((2500, 800),), counter="bo", counter_role=B,
                               observer="fran", observer_role=F, crew=CREW,
                               container="C-1", carrier="sid", carrier_role=SEC,
                               table_log=p.log, table_seq=p.seq)
    count, status = events[0], events[-1]
    assert isinstance(count, bev.InventoryCounted)
    assert count.total == 20_000_00
    assert (count.counter, count.observer, count.place) == ("bo", "fran", "drop box")
    assert isinstance(status, bev.TableStatusChanged)
    assert status.status == "open"
    assert status.carrier == "sid"
    assert not any(isinstance(e, bev.DiscrepancyFound) for e in events)


def test_tb15_465a_37_c_d_without_the_floorperson_the_table_may_not_open() -> None:
    p = pit(open_table=False)
    for observer, role in (("", F), ("bo", B), ("bo", F)):
        with pytest.raises(DicetableError):
            p.bank.open_table(((2500, 800),), counter="bo", counter_role=B,
                              observer=observer, observer_role=role, crew=CREW)
    assert p.bank.state.status == "closed"
    assert p.bank.state.seq == 1


def test_tb17_465a_37_f_a_short_opener_is_a_discrepancy_with_notices_and_a_recount() -> None:
    p = pit(opener=((2500, 800),))
    p.bank.close_table(((2500, 800),), counter="bo", counter_role=B, observer="fran",
                       observer_role=F, container="C-1", table_log=p.log, table_seq=p.seq)
    events = p.bank.open_table(((2500, 798), (500, 2)), counter="bo", counter_role=B,
                               observer="fran", observer_role=F, crew=CREW,
                               container="C-1", table_log=p.log, table_seq=p.seq)
    (d,) = [e for e in events if isinstance(e, bev.DiscrepancyFound)]
    assert (d.expected, d.counted, d.variance) == (20_000_00, 19_960_00, -40_00)
    assert d.notified == ("floorperson+", "security", "regulator")
    assert "COMAR 36.05.03.03F" in d.rule
    assert "[other-jurisdiction]" in d.rule
    assert d.alert
    # the recount before a floorperson+ is a new slip
    recount = p.bank.count("opening", ((2500, 798), (500, 2)), counter="bo",
                           counter_role=B, observer="pat", observer_role=Role.PIT_BOSS,
                           table_log=p.log, table_seq=p.seq)
    assert isinstance(recount[0], bev.InventoryCounted)
    assert recount[0].slip == d.slip + 1


@pytest.mark.parametrize(("short", "report", "copy"), [(30_00, True, False),
                                                       (150_00, True, True),
                                                       (25_00, False, False)])
def test_tb18_njac_13_69d_1_21_e_the_25_and_100_dollar_thresholds(short: int, report: bool,
                                                                  copy: bool) -> None:
    p = pit(opener=((100, 100_000),))  # $1,000 in $1 chips
    events = p.count("shift", ((100, 100_000 - short // 100),))
    (d,) = [e for e in events if isinstance(e, bev.DiscrepancyFound)]
    assert (d.written_report, d.regulator_copy) == (report, copy)
    assert "N.J.A.C. 13:69D-1.21(e)" in p.bank.pack.cite("discrepancy.written_report_over")


def test_tb20_465a_41_a_d_the_drop_at_an_open_table() -> None:
    p = pit()
    team = (("cc1", Role.COUNT_TEAM), ("sid", SEC))
    before = p.bank.state.seq
    with pytest.raises(DicetableError):  # no observer's signature: no drop
        p.bank.drop("BOX-1", "BOX-2", ((2500, 800),), counter="bo", counter_role=B,
                    observer="", observer_role=F, team=team, table_log=p.log,
                    table_seq=p.seq)
    _unchanged(p.bank, before)
    events = p.bank.drop("BOX-1", "BOX-2", ((2500, 800),), counter="bo", counter_role=B,
                         observer="fran", observer_role=F, team=team, table_log=p.log,
                         table_seq=p.seq)
    collected, count = events[0], events[1]
    assert isinstance(collected, bev.DropBoxCollected)
    assert collected.replacement == "BOX-2"
    assert isinstance(count, bev.InventoryCounted)
    assert count.purpose == "drop"
    assert count.place == "original in box BOX-1; duplicate in box BOX-2"
    assert p.bank.state.current_box == "BOX-2"


def _day_of_tb21(jurisdiction: str = "pa") -> tuple[TableBank, str]:
    p = pit(jurisdiction, opener=((2500, 800),))
    fill = _fill(p.bank, ((2500, 200),), surveillance=True)
    if jurisdiction == "in":
        for who, role in (("dee", D), ("fran", F), ("sid", SEC)):
            p.bank.sign_slip(fill, actor=who, role=role)
    p.bank.receive(fill, ((2500, 200),), counter="bo", counter_role=B, officer="sid")
    credit = _fill(p.bank, ((2500, 80),), kind="credit", surveillance=True)
    for who, role in (("dee", D), ("fran", F), ("sid", SEC)):
        p.bank.sign_slip(credit, actor=who, role=role)
    p.bank.receive(credit, ((2500, 80),), counter="bo", counter_role=B, officer="sid")
    team = (("cc1", Role.COUNT_TEAM), ("cc2", Role.COUNT_TEAM), ("sid", SEC))
    p.bank.drop("BOX-1", "BOX-2", ((2500, 720),), counter="bo", counter_role=B,
                observer="fran", observer_role=F, team=team, table_log=p.log,
                table_seq=p.seq)
    p.bank.count_box("BOX-1", [("currency", 8_500_00), ("counter-check", 500_00),
                               ("chips", 300_00), ("coupon", 25_00)],
                     counters=team[:2])
    day = p.bank.day_and_shift()[0]
    return p.bank, day


def test_tb21_601a_9_c_the_day_s_net_revenue() -> None:
    bank, day = _day_of_tb21()
    rep = day_report(bank.state, day, included=bank.pack.value("drop.included"))
    assert rep.win is not None
    assert rep.win.win == 4_000_00
    terms = {t.name: t for t in rep.win.terms}
    assert (terms["opener"].amount, terms["fills"].amount) == (20_000_00, 5_000_00)
    assert (terms["credits"].amount, terms["closer"].amount) == (2_000_00, 18_000_00)
    assert terms["opener"].label.startswith("INFERRED")
    assert terms["fills"].label.startswith(
        "INFERRED")
    assert table_win(opener=20_000_00, fills=5_000_00, credits=2_000_00, closer=18_000_00,
                     drop={"currency": 8_500_00, "counter-check": 500_00},
                     included=("currency", "counter-check")).win == 4_000_00


def test_tb22_601a_9_c3_chips_and_coupons_in_the_drop_box_are_reported_separately() -> None:
    bank, day = _day_of_tb21()
    rep = day_report(bank.state, day, included=bank.pack.value("drop.included"))
    assert rep.win is not None
    assert rep.win.drop == 9_000_00
    assert dict(rep.win.excluded) == {"chips": 300_00, "coupon": 25_00}
    # Indiana's drop (68 IAC 1-1-25) counts the chips too
    bank_in, day_in = _day_of_tb21("in")
    rep_in = day_report(bank_in.state, day_in, included=bank_in.pack.value("drop.included"))
    assert rep_in.win is not None
    assert rep_in.win.drop == 9_300_00


def test_tb24_68iac_15_5_3_table_receipts_add_the_chip_float_adjustment() -> None:
    r = indiana_receipts(10_000_00, {2500: 3_000_00}, {2500: 3_500_00})
    assert (r.adjustment, r.receipts, r.negative) == (500_00, 10_500_00, ())
    assert indiana_receipts(0, {100: 10}, {100: -5}).negative == (100,)


def test_tb26_465a_35_b3_4_a_craps_table_needs_three_dealers_and_a_boxperson() -> None:
    p = pit(open_table=False)
    with pytest.raises(ProcedureViolation, match="3 dealers") as refused:
        p.bank.open_table(((2500, 800),), counter="bo", counter_role=B, observer="fran",
                          observer_role=F, crew=(("dee", D), ("sam", S), ("bo", B)))
    assert "465a.35(b)(3),(4)" in refused.value.citation
    assert p.bank.state.seq == 1
    assert p.bank.state.status == "closed"


def test_tb29_68iac_11_3_1_a3_the_daily_collection_by_three_with_security() -> None:
    p = pit("in")
    day = p.bank.day_and_shift()[0]
    assert drop_collection_problems(p.bank.state, day, 3) == [
        f"no drop box collected from t1 on {day}"]
    before = p.bank.state.seq
    with pytest.raises(ProcedureViolation, match="at least 3") as refused:
        p.bank.drop("BOX-1", "BOX-2", ((2500, 800),), counter="bo", counter_role=B,
                    observer="fran", observer_role=F,
                    team=(("cc1", Role.COUNT_TEAM), ("sid", SEC)), table_log=p.log,
                    table_seq=p.seq)
    assert "68 IAC 11-3-1(a)(3)" in refused.value.citation
    _unchanged(p.bank, before)


def test_tb31_comar_36_05_03_25b_a_hold_outside_the_band_is_investigated() -> None:
    p = pit()
    history = [Fraction(n, 100) for n in (18, 20, 22, 19, 21, 20, 18, 22)]
    assert p.bank.investigate_hold("2026-03-02", Fraction(20, 100), history,
                                   actor="ra", role=Role.REVENUE_AUDITOR) == []
    (rec,) = p.bank.investigate_hold("2026-03-02", Fraction(45, 100), history, actor="ra",
                                     role=Role.REVENUE_AUDITOR)
    assert isinstance(rec, bev.HoldInvestigated)
    assert rec.alert
    assert rec.hold == "45.00%"
    assert "COMAR 36.05.03.25B" in rec.rule
    assert "[other-jurisdiction]" in rec.rule
    # the record is a notice, and its copy waits in the regulator desk's outbox
    assert rec in p.bank.notices()
    told = p.bank.notified_of(rec)
    assert receives(p.bank.pack, told, [Role.REVENUE_AUDITOR]) == "regulator-copy"
    assert receives(p.bank.pack, told, [F]) == "told"
