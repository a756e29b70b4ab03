"""The table inventory's rules beyond the §6 vectors: a movement without its reason and
source cannot be written, a transfer between tables is refused, chips are redeemed only at
the cage, a retired chip set is refused, serials in sequence, Indiana's one officer."""

from __future__ import annotations

import pytest

from dicetable.bank.model import Movement, Reason, Source, SourceKind
from dicetable.bank.reports import serial_problems
from dicetable.core.errors import InvalidInput, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.table.catalogue import CATALOGUE

from .helpers import B, D, F, pit


def test_465a_36_b_a_movement_needs_one_of_the_six_reasons_and_its_source() -> None:
    with pytest.raises(ProcedureViolation, match="needs a source"):
        Movement(Reason.VIGORISH, Source(SourceKind.WAGER, ""), value=100)
    with pytest.raises(ProcedureViolation, match="never moved between tables"):
        Movement(Reason.FILL_CREDIT, Source(SourceKind.TABLE, "craps-2"), value=100)
    p = pit()
    before = p.bank.state.seq
    for reason, kind in (("transfer", "table"), ("fill-credit", "table"),
                         ("wager-settlement", "wager"), ("cash-exchange", "currency")):
        with pytest.raises(ProcedureViolation) as refused:
            p.bank.move(reason, kind, "x", ((2500, 4),), actor="dee", role=D)
        assert "465a.36(b)" in refused.value.citation or refused.value.rule == "inventory.reasons"
    assert p.bank.state.seq == before


def test_603a_10_d_chips_are_redeemed_for_cash_only_at_the_cage() -> None:
    p = pit()
    with pytest.raises(ProcedureViolation, match="only at the cage") as refused:
        p.bank.redeem_for_cash(100_00)
    assert "603a.10(d)" in refused.value.citation
    with pytest.raises(ProcedureViolation, match="cage"):  # chips back against a counter check
        p.bank.move("counter-check", "counter-check", "cc-1", ((2500, 4),), actor="dee", role=D)


def test_603a_10_b_a_retired_chip_set_is_refused() -> None:
    p = pit()
    p.bank.retire_chip_set("A", actor="rae", role=Role.REVENUE_AUDITOR)
    with pytest.raises(ProcedureViolation, match="retired") as refused:
        p.bank.check_chip_set("A")
    assert "603a.10(b)" in refused.value.citation
    p.bank.check_chip_set("B")


def test_md_36_05_03_04h_serials_in_sequence_gaps_and_duplicates_reported() -> None:
    p = pit()
    for n in (1, 2):
        p.bank.request("fill", ((2500, 4),), shift="06:00", actor="fran", role=F)
        p.bank.issue(n, actor="cass", role=Role.CHIP_BANK_CASHIER, serial={1: 1, 2: 4}[n])
    assert serial_problems(p.bank.state.serials) == ["serial 2 is missing (a gap)",
                                                     "serial 3 is missing (a gap)"]
    p.bank.request("fill", ((2500, 4),), shift="06:00", actor="fran", role=F)
    with pytest.raises(ProcedureViolation, match="duplicate"):
        p.bank.issue(3, actor="cass", role=Role.CHIP_BANK_CASHIER, serial=4)


def test_68iac_15_12_3_a5_the_officer_who_starts_a_fill_finishes_it() -> None:
    p = pit("in")
    p.bank.request("fill", ((2500, 4),), shift="06:00", actor="fran", role=F)
    p.bank.notify_surveillance(1, actor="fran", role=F)
    p.bank.issue(1, actor="cass", role=Role.CHIP_BANK_CASHIER)
    p.bank.carry(1, officer="sid", role=Role.SECURITY)
    with pytest.raises(ProcedureViolation, match="must finish it") as refused:
        p.bank.receive(1, ((2500, 4),), counter="bo", counter_role=B, officer="sue")
    assert "68 IAC 15-12-3(a)(5)" in refused.value.citation


def test_separation_of_duties_the_cashier_does_not_carry_or_receive() -> None:
    p = pit()
    p.bank.request("fill", ((2500, 4),), shift="06:00", actor="fran", role=F)
    p.bank.issue(1, actor="cass", role=Role.CHIP_BANK_CASHIER)
    with pytest.raises(ProcedureViolation, match="separation of duties"):
        p.bank.carry(1, officer="cass", role=Role.SECURITY)
    with pytest.raises(InvalidInput):
        p.bank.request("fill", ((2600, 4),), shift="06:00", actor="fran", role=F)


@pytest.mark.parametrize("command", [
    g.BuyChips(actor="dee", role=Role.DEALER, player="alice", amount=100_00, chip_set="A"),
    g.PlaceBet(actor="alice", role=Role.PLAYER, player="alice", wager="pass", amount=10_00,
               chip_set="B-2"),
    g.PlaceBet(actor="alice", role=Role.PLAYER, player="alice", wager="odds", amount=10_00,
               base="b1", chip_set="A"),
])
def test_603a_10_b_a_buy_in_or_wager_names_its_chip_set_in_a_script(
        command: g.Command) -> None:
    assert isinstance(command, g.BuyChips | g.PlaceBet)
    verb = CATALOGUE.verb_for(command)
    words = verb.format_words(None, command)
    assert f"set={command.chip_set}" in words
    args = [w for w in words if "=" not in w]
    opts = dict(w.split("=", 1) for w in words if "=" in w)
    assert verb.parse_words(None, command.actor, command.role, args, opts) == command
