"""Regulatory precision (issue 16): where the system was almost, but not exactly, what the text
says. One test per defect, named after the section it encodes; each failed on the main branch
before the fix.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.clock import FixedClock
from dicetable.core.errors import (
    InvalidInput,
    ProcedureViolation,
    RoleNotPermitted,
    RulePackInvalid,
)
from dicetable.core.events import event_to_dict
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody import events as cev
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import CancelMethod, Key, Person, PlayMode, RemovalReason
from dicetable.custody.rules import derive_custody_pack, load_custody_pack
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.table import Table
from dicetable.table import commands as tcmd
from tests.custody.scenario import (
    ANN,
    BOB,
    DEE,
    FLO,
    PAT,
    SAM,
    STU,
    SUE,
    as_,
    in_play,
    inspect,
    new_ledger,
    on_duty,
    refused,
    remove_and_transfer,
    serials,
    stock,
    to_table,
)
from tests.profiles import examples

runner = CliRunner()
TICK = tcmd.Tick(actor="clock", role=Role.SYSTEM)
SWEEP = cmd.CheckDeadlines(actor="sweep", role=Role.SYSTEM)


# -- 1. the 24-hour limit: one rule, one comparison ----------------------------------------------
def test_pa_585_3_b_1_exactly_24_hours_is_not_more_than_24_hours() -> None:
    """'may not remain on a table for more than 24 hours': the table and custody agree at the
    boundary, and a second later both act."""
    led, clock = new_ledger("pa")
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice, FLO)
    to_table(led, dice, "props-1", PlayMode.SHAKER)
    table = Table.open("pa-props-and-hops", "props-1", mode="live", clock=clock,
                       actor=FLO.name, staff={DEE.name: Role.DEALER}, dice_registry=led)
    table.bring_dice(*dice, witness=DEE.name)
    clock.advance(hours=24)
    assert table.execute(TICK) == []
    assert not table.blocked()
    assert led.execute(SWEEP) == []
    led.check_dice_in_play("props-1", dice)
    table.execute(tcmd.ShakeShaker(actor=DEE.name, role=Role.DEALER))   # play goes on
    clock.advance(seconds=1)
    alert = table.execute(TICK)
    assert [e.kind for e in alert] == ["AlertRaised"]
    assert table.blocked()
    overdue = led.execute(SWEEP)
    assert [e.kind for e in overdue] == ["DiceOverdue"]
    assert "585.3(b)(1)" in overdue[0].rule
    assert "585.3(b)(1)" in alert[0].rule
    with pytest.raises(ProcedureViolation):
        led.check_dice_in_play("props-1", dice)


# -- 2. calendar months, in the site's time zone -------------------------------------------------
def _counted_on(when: datetime, jurisdiction: str = "in",
                house: dict[str, object] | None = None) -> tuple[CustodyLedger, FixedClock]:
    pack = load_custody_pack(jurisdiction)
    if house:
        pack = derive_custody_pack(pack, "house", house)
    clock = FixedClock(when - timedelta(hours=1))
    led = CustodyLedger.open(pack, "river", clock=clock)
    clock.set(when)
    led.execute(cmd.TakePhysicalInventory(**as_(ANN, SAM), counted=()))
    return led, clock


def test_in_14_3_5_d_every_three_months_is_three_calendar_months() -> None:
    # a count on 2026-01-05 (Indianapolis): three calendar months end on 2026-04-05
    led, clock = _counted_on(datetime(2026, 1, 5, 15, 0, tzinfo=UTC))
    clock.set(datetime(2026, 4, 6, 3, 59, tzinfo=UTC))       # 04-05 23:59 EDT: still in time
    assert led.execute(SWEEP) == []
    clock.set(datetime(2026, 4, 6, 4, 0, tzinfo=UTC))        # 04-06 00:00 EDT: overdue
    alert = led.execute(SWEEP)
    assert [e.kind for e in alert] == ["InventoryOverdue"]
    assert isinstance(alert[0], cev.InventoryOverdue)
    assert alert[0].due == "2026-04-05"
    assert "14-3-5(d)" in alert[0].rule
    assert "due by 2026-04-05 America/Indiana/Indianapolis" in _describe(alert[0])
    assert led.pack.rule("inventory.interval_months").value == 3


def test_in_14_3_5_d_calendar_days_are_the_site_s_days_not_utc() -> None:
    # Lake County keeps Central time: a count at 23:30 on 01-05 there is 05:30 UTC on 01-06
    led, clock = _counted_on(datetime(2026, 1, 6, 5, 30, tzinfo=UTC),
                             house={"site.time_zone": "America/Chicago"})
    clock.set(datetime(2026, 4, 6, 4, 30, tzinfo=UTC))       # 04-05 23:30 CDT: in time
    assert led.execute(SWEEP) == []
    clock.set(datetime(2026, 4, 6, 5, 0, tzinfo=UTC))        # 04-06 00:00 CDT
    alert = led.execute(SWEEP)
    assert [getattr(e, "due", "") for e in alert] == ["2026-04-05"]
    with pytest.raises(RulePackInvalid):
        derive_custody_pack(load_custody_pack("in"), "bad", {"site.time_zone": "Mars/Olympus"})


def test_in_14_3_5_d_a_short_month_ends_on_its_last_day() -> None:
    led, clock = _counted_on(datetime(2025, 11, 30, 17, 0, tzinfo=UTC))
    clock.set(datetime(2026, 3, 1, 4, 59, tzinfo=UTC))       # 02-28 23:59 EST
    assert led.execute(SWEEP) == []
    clock.set(datetime(2026, 3, 1, 5, 0, tzinfo=UTC))
    assert [getattr(e, "due", "") for e in led.execute(SWEEP)] == ["2026-02-28"]


def _describe(e: cev.CustodyEvent) -> str:
    from dicetable.custody.reports import describe

    return describe(e)


# -- 3. invalid-roll grounds held against the recorded throw -------------------------------------
def _in_table_after(roll: str, *facts: str, pack: str = "in-craps") -> Table:
    t = Table.open(pack, "c-1", mode="live", clock=FixedClock(), actor="fran",
                   staff={"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER})
    t.join("ann", 1)
    t.buy_in("ann", 100_00)
    t.bring_dice("A1", "A2", "A3", "A4", "A5")
    t.bet("ann", "pass", 10_00)
    t.new_shooter("ann")
    t.roll(roll, facts=facts)
    return t


def _call(t: Table, *grounds: str, observed: tuple[str, ...] = (), actor: str = "sam",
          role: Role = Role.STICKPERSON) -> list[gev.Event]:
    extra = {"observed": observed} if observed else {}
    return t.execute(gcmd.CallNoRoll(actor=actor, role=role, grounds=grounds, **extra))


def _refused(t: Table, *grounds: str, observed: tuple[str, ...] = (), actor: str = "sam",
             role: Role = Role.STICKPERSON) -> str:
    before = len(t.log)
    with pytest.raises(ProcedureViolation) as info:
        _call(t, *grounds, observed=observed, actor=actor, role=role)
    assert info.value.rule == "noroll.grounds"
    assert len(t.log) == before
    return str(info.value)


def test_in_10_4_4_c_a_declaration_rests_on_the_recorded_throw() -> None:
    t = _in_table_after("3-4")                            # a clean 3-4, no physical facts
    assert "does not show it" in _refused(t, "die-on-rail")
    assert "10-4-4(c)" in _refused(t, "die-in-bowl")
    # (c)(11) is contradicted: both faces were read, and the recorder noted no doubt
    assert "contradicts" in _refused(t, "top-face-indeterminable")
    assert "contradicts" in _refused(t, "top-face-indeterminable",
                                     observed=("top-face-indeterminable",))
    # the stickperson saw the die on the rail: the call records it, and who saw it
    called = [e for e in _call(t, "die-on-rail", observed=("die-on-rail",))
              if isinstance(e, gev.NoRollCalled)]
    assert (called[0].observed, called[0].actor, called[0].automatic) == \
        (("die-on-rail",), "sam", False)
    assert t.state.last_roll_valid is False


def test_in_10_4_4_c_9_cocked_on_chips_is_one_fact() -> None:
    t = _in_table_after("2-3", "cocked-on-chips")
    called = [e for e in _call(t, "die-on-chips") if isinstance(e, gev.NoRollCalled)]
    assert called
    assert called[0].grounds == ("die-on-chips",)


def test_in_10_4_4_c_6_no_line_bet_is_contradicted_by_the_shooter_s_bet() -> None:
    t = _in_table_after("5-5")
    assert "pass or don't pass" in _refused(t, "no-line-bet")


def test_pa_623a_8_c_grounds_are_held_against_the_throw_the_same_way() -> None:
    t = _in_table_after("6-1", pack="pa-craps")
    assert "does not show it" in _refused(t, "die-on-rail", actor="bo", role=Role.BOXPERSON)
    _call(t, "die-on-rail", observed=("die-on-rail",), actor="bo", role=Role.BOXPERSON)
    # a judgement, not a physical fact: no fact needed ((c)(5), (c)(6))
    t2 = _in_table_after("6-1", pack="pa-craps")
    _call(t2, "improper-throw")
    # 623a.8(d): chips other than the bank are no cause, cocked or not
    t3 = _in_table_after("2-3", "cocked-on-chips", pack="pa-craps")
    with pytest.raises(ProcedureViolation) as info:
        _call(t3, "die-on-chips")
    assert info.value.rule == "noroll.excluded_grounds"


# -- 4. refusals that point at the right rule ----------------------------------------------------
def test_in_14_3_4_b_3_missing_signs_are_the_envelope_s_marking_not_who_removes() -> None:
    led, _, dice = in_play("in")
    refused(led, cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                                table_staff=(BOB,), assigned_at_table=on_duty(BOB)),
            InvalidInput, "removal.envelope.signs", "14-3-4(b)(3)")


def test_in_14_3_4_c_a_sealed_tampered_die_is_refused_cancellation_under_c() -> None:
    led, _, dice = in_play("in")
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                               signs="shaved", table_staff=(BOB,),
                               assigned_at_table=on_duty(BOB), envelope="E-1"))
    cancel = cmd.CancelDice(**as_(SAM, SUE), dice=dice[:1], method=CancelMethod.SHRED)
    err = refused(led, cancel, ProcedureViolation, "cancellation.required", "14-3-4(c)")
    assert "suspected tampering" in str(err)
    assert "cancellation room" not in str(err)
    led.execute(cmd.DeliverEnvelope(**as_(PAT), envelope="E-1", agent="Agent Cole"))
    err = refused(led, cancel, ProcedureViolation, "cancellation.required", "14-3-4(c)")
    assert "enforcement agent" in str(err)


def test_in_14_3_4_b_4_A_envelope_licensees_are_the_staff_assigned_at_the_table() -> None:
    led, clock, dice = in_play("in")
    table = Table.open("in-craps", "craps-1", mode="live", clock=clock, actor=FLO.name,
                       staff={BOB.name: Role.BOXPERSON, STU.name: Role.STICKPERSON},
                       dice_registry=led)
    roster = tuple(sorted(table.procedure.staff))

    def tampered(*named: Person) -> cmd.RemoveDice:
        return cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                              signs="shaved", table_staff=named, assigned_at_table=roster)

    err = refused(led, tampered(BOB, STU), ProcedureViolation, "removal.envelope.licensees",
                  "14-3-4(b)(4)(A)")
    assert f"not named: {FLO.name}" in str(err)
    err = refused(led, tampered(BOB, STU, FLO, DEE), ProcedureViolation,
                  "removal.envelope.licensees")
    assert f"named but not assigned at craps-1: {DEE.name}" in str(err)
    refused(led, cmd.RemoveDice(**as_(PAT), dice=dice[:1], reason=RemovalReason.TAMPERED,
                                signs="shaved", table_staff=()),
            InvalidInput, "removal.envelope.licensees")     # the envelope names them always
    sealed = led.execute(tampered(BOB, STU, FLO))[1]
    assert isinstance(sealed, cev.TamperEnvelopeSealed)
    assert {p.name for p in sealed.table_staff} == set(roster)


# -- 5. measurements as the regulation writes them -----------------------------------------------
def _walk_to_cancellation_room(log: Path) -> None:
    led, _, dice = in_play("in", n=2)
    remove_and_transfer(led, dice)
    log.write_text("".join(json.dumps(event_to_dict(e)) + "\n" for e in led.log))


def test_in_14_3_4_c_1_a_hole_written_as_a_fraction_of_an_inch(tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    _walk_to_cancellation_room(log)
    base = ["dice", "--log", str(log), "--at", "2026-03-02T12:00:00Z", "cancel", "D0001",
            "--method", "drill", "--actor", SAM.name, "--role", "security", "--licence",
            SAM.licence, "--with", f"{SUE.name}:surveillance"]
    short = runner.invoke(app, [*base, "--hole", "3/16"])
    assert short.exit_code == 2
    assert "cancellation.min_hole_in" in short.output          # too small, not unreadable
    assert "custody.measurement" not in short.output
    done = runner.invoke(app, [*base, "--hole", "1/4"])
    assert done.exit_code == 0, done.output
    assert load_custody_pack("in").inches("cancellation.min_hole_in") == Decimal("1") / 4
    again = runner.invoke(app, [*base[:6], "D0002", *base[7:], "--hole", "5/16 in"])
    assert again.exit_code == 0, again.output


# -- 6. exit codes a lab's automation can rely on ------------------------------------------------
def test_in_14_3_7_a_die_that_fails_inspection_exits_non_zero(tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    led, _ = new_ledger("in")
    dice = serials("D", 2)
    stock(led, dice)
    log.write_text("".join(json.dumps(event_to_dict(e)) + "\n" for e in led.log))
    base = ["dice", "--log", str(log), "--at", "2026-03-02T12:00:00Z", "inspect",
            "--actor", PAT.name, "--role", "pit-boss", "--licence", PAT.licence]
    failed = runner.invoke(app, [*base, "--die", "D0001=0.749,0.749,0.749"])
    assert failed.exit_code == 1, failed.output          # recorded, and a non-compliance
    assert "FAILED" in failed.output
    passed = runner.invoke(app, [*base, "--die", "D0002=3/4,3/4,3/4"])
    assert passed.exit_code == 0, passed.output
    count = runner.invoke(app, ["dice", "--log", str(log), "--at", "2026-03-02T13:00:00Z",
                                "count", "D0002", "--actor", ANN.name, "--role",
                                "shift-manager", "--with", f"{SAM.name}:security"])
    assert count.exit_code == 1, count.output             # 14-3-5(d): D0001 not counted
    assert runner.invoke(app, ["dice", "--help"]).output.count("non-compliance") >= 1


# -- 7. supervisor ranks, ordered, in the pack ----------------------------------------------------
def test_pa_603a_13_c_assistant_table_games_shift_manager_or_above() -> None:
    pa = load_custody_pack("pa")
    ranks = pa.ranks()
    assert ranks.index(Role.ASSISTANT_SHIFT_MANAGER) > ranks.index(Role.PIT_BOSS)
    assert pa.keys()[Key.TABLE_GAMES] == {Role.ASSISTANT_SHIFT_MANAGER, Role.SHIFT_MANAGER,
                                          Role.TABLE_GAMES_MANAGER}
    led, _ = new_ledger("pa")
    # a supervisor below that level can be named, and is refused
    refused(led, cmd.DrawKey(actor="Gail", role=Role.PIT_BOSS, key=Key.TABLE_GAMES),
            RoleNotPermitted, "storage.keys", "603a.13(c)")
    led.execute(cmd.DrawKey(actor="Asa", role=Role.ASSISTANT_SHIFT_MANAGER,
                            key=Key.TABLE_GAMES))
    # a house ladder may not move a rank across the line the regulation draws
    with pytest.raises(RulePackInvalid) as info:
        derive_custody_pack(pa, "lax", {"staff.ranks": ["floorperson", "assistant-shift-manager",
                                                         "pit-boss", "shift-manager",
                                                         "table-games-manager"]})
    assert "storage.keys" in str(info.value)


def test_in_14_3_5_c_daily_quantities_are_counted_by_the_site_s_calendar_day() -> None:
    from dicetable.custody.reports import inventory_record

    led, clock = new_ledger("in")
    clock.set(datetime(2026, 3, 3, 2, 0, tzinfo=UTC))       # 21:00 on 03-02 in Indianapolis
    stock(led, serials("D", 2))
    record = inventory_record(led.state, led.log)
    assert record["receipts"][0]["date"] == "2026-03-02"


def test_in_14_3_4_b_4_A_is_regulation_in_indiana_and_a_stand_in_in_pennsylvania() -> None:
    with pytest.raises(RulePackInvalid, match="regulation text"):
        derive_custody_pack(load_custody_pack("in"), "lax",
                            {"removal.envelope.licensees": False})
    house = derive_custody_pack(load_custody_pack("pa"), "river",
                                {"removal.envelope.licensees": False})
    clock = FixedClock(datetime(2026, 3, 2, 8, 0, tzinfo=UTC))
    led = CustodyLedger.open(house, "river", clock=clock)
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice)
    to_table(led, dice)
    sealed = led.execute(cmd.RemoveDice(**as_(PAT), dice=dice[:1],
                                        reason=RemovalReason.TAMPERED, signs="shaved"))
    assert [e.kind for e in sealed] == ["DiceRemoved", "TamperEnvelopeSealed"]


@settings(max_examples=examples(11), deadline=None, derandomize=True)
@given(seconds=st.integers(min_value=24 * 3600 - 5, max_value=24 * 3600 + 5))
def test_pa_585_3_b_1_the_table_and_custody_agree_at_every_second_near_the_limit(
        seconds: int) -> None:
    led, clock = new_ledger("pa")
    dice = serials("D", 2)
    stock(led, dice)
    inspect(led, dice, FLO)
    to_table(led, dice, "props-1", PlayMode.SHAKER)
    table = Table.open("pa-props-and-hops", "props-1", mode="live", clock=clock,
                       actor=FLO.name, staff={DEE.name: Role.DEALER}, dice_registry=led)
    table.bring_dice(*dice, witness=DEE.name)
    clock.advance(seconds=seconds)
    table_alerts = bool(table.execute(TICK))
    custody_alerts = bool(led.execute(SWEEP))
    assert table_alerts == custody_alerts == (seconds > 24 * 3600)
