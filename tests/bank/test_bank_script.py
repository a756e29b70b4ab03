"""A bank stream is a script of its steps (the catalogue's verbs): written, then replayed
against the table's log, it gives the very same events; a changed script does not."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dicetable.application.scripts import run_bank_script
from dicetable.bank import events as bev
from dicetable.bank.script import export_bank_script
from dicetable.core.errors import DicetableError
from dicetable.core.events import event_to_dict
from dicetable.core.roles import Role

from .helpers import B, D, F, Pit, pit

SEC, CASHIER = Role.SECURITY, Role.CHIP_BANK_CASHIER


def a_day() -> Pit:
    p = pit()
    bank, t = p.bank, p.table
    t.join("alice")
    t.buy_in("alice", 500_00)
    t.bet("alice", "pass", 25_00)
    t.roll("2-2")
    t.bet("alice", "buy4", 25_00)
    t.roll("1-3")
    bank.move("colour-change", "exchange", "x-1", ((500, 20), (10000, -1)), actor="dee", role=D)
    bank.move("counter-check", "counter-check", "cc-9", ((2500, -4),), actor="dee", role=D)
    bank.request("fill", ((2500, 40),), shift="06:00", actor="pam", role=Role.PIT_CLERK)
    bank.sign_request(1, actor="fran", role=F)
    bank.issue(1, actor="cass", role=CASHIER)
    bank.carry(1, officer="sid", role=SEC)
    bank.receive(1, ((2500, 40),), counter="bo", counter_role=B, officer="sid",
                 table_seq=p.seq)
    bank.request("credit", ((2500, 4),), shift="06:00", actor="fran", role=F)
    bank.void(actor="fran", role=F, reason="asked in error", request=2)
    bank.request("fill", ((500, 40),), shift="06:00", actor="fran", role=F, electronic=True)
    p.count("shift", ((2500, 830),))  # a discrepancy, with suspects from the table's log
    team = (("cole", Role.COUNT_TEAM), ("sid", SEC))
    bank.drop("BOX-1", "BOX-2", ((2500, 830),), counter="bo", counter_role=B,
              observer="fran", observer_role=F, team=team, table_log=p.log, table_seq=p.seq)
    bank.count_box("BOX-1", [("currency", 500_00), ("counter-check", 100_00)],
                   counters=team[:1])
    bank.investigate_hold("2026-03-02", Fraction(9, 10), [Fraction(1, 5), Fraction(1, 4),
                                                          Fraction(1, 5)], actor="rae",
                          role=Role.REVENUE_AUDITOR)
    bank.close_table(((2500, 830),), counter="bo", counter_role=B, observer="fran",
                     observer_role=F, container="C-1", table_log=p.log, table_seq=p.seq)
    return p


def test_a_bank_day_is_written_as_its_steps_and_replays_exactly() -> None:
    p = a_day()
    text = export_bank_script(p.bank.state.log, p.log)
    verbs = [line.split()[3] for line in text.splitlines()[2:]]
    assert verbs[:3] == ["open", "colour-change", "counter-check"]
    assert {"request", "sign", "issue", "carry", "receive", "void", "count", "drop",
            "count-box", "investigate-hold", "close"} <= set(verbs)
    replayed = run_bank_script(text, p.log).state.log
    assert [event_to_dict(e) for e in replayed] == [event_to_dict(e) for e in p.bank.state.log]


def test_a_changed_script_does_not_replay_to_the_log() -> None:
    p = a_day()
    text = export_bank_script(p.bank.state.log, p.log)
    forged = text.replace("observer=fran:floorperson", "observer=bo:boxperson", 1)
    with pytest.raises(DicetableError):
        run_bank_script(forged, p.log)
    other = text.replace("chips=2500x40 officer=sid", "chips=2500x41 officer=sid")
    with pytest.raises(DicetableError):
        run_bank_script(other, p.log)


def test_603a_10_b_the_chip_set_a_step_names_is_exported_and_replays() -> None:
    p = a_day()
    text = export_bank_script(p.bank.state.log, p.log)
    named = ("open", "colour-change", "counter-check", "request", "receive", "count", "drop",
             "close")
    lines = [f"{line} set=A-1" if i > 1 and line.split()[3] in named else line
             for i, line in enumerate(text.splitlines())]
    bank = run_bank_script("\n".join(lines) + "\n", p.log)
    chip_events = [e for e in bank.state.log
                   if isinstance(e, bev.ChipStep) and not isinstance(e, bev.SlipIssued)]
    assert len(chip_events) >= 7
    assert {e.chip_set for e in chip_events} == {"A-1"}
    # exported with its set= words, the script replays to the very same events
    again = export_bank_script(bank.state.log, p.log)
    assert sum("set=A-1" in line for line in again.splitlines()) == sum(
        1 for line in lines if "set=A-1" in line)
    assert [event_to_dict(e) for e in run_bank_script(again, p.log).state.log] == [
        event_to_dict(e) for e in bank.state.log]
    # and a script without the word gives other events (the set is part of the record)
    plain = [event_to_dict(e) for e in run_bank_script(text, p.log).state.log]
    assert plain != [event_to_dict(e) for e in bank.state.log]
