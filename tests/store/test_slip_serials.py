"""The casino's slip serials (COMAR 36.05.03.04H, the stand-in for PA 465a.38's unread tail)
are taken on the store at the version read: two processes on one store (two handles on one
SQLite file, two connections to one PostgreSQL schema) never issue one serial twice. The
loser of a race reads again and takes the next one, or is refused for a serial named by hand."""

from __future__ import annotations

import threading
from functools import partial

import pytest

from dicetable.bank.events import SlipIssued
from dicetable.bank.ledger import TableBank
from dicetable.core.clock import FixedClock
from dicetable.core.errors import ProcedureViolation
from dicetable.core.roles import Role
from dicetable.store.bank_stream import DurableBank
from dicetable.store.base import EventStore
from dicetable.store.slip_serials_stream import KIND, SerialsState, SerialTaken, SlipSerials
from tests.bank.helpers import NOON_EST
from tests.store.conftest import StoreFactory

AT = "2026-03-02T17:00:00+00:00"
F, CASHIER = Role.FLOORPERSON, Role.CHIP_BANK_CASHIER


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def taken(factory: StoreFactory, kind: str = "credit") -> list[int]:
    return [e.serial for e in factory().events(f"{KIND}:{kind}")
            if isinstance(e, SerialTaken)]


class HeldAtItsFirstRead(SlipSerials):
    """A second process that read the series (empty) and appends only after another took a
    serial: its first read is the version it saw before."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.reads = 0

    def _read(self, kind: str) -> SerialsState:
        self.reads += 1
        return SerialsState() if self.reads == 1 else super()._read(kind)


def test_the_loser_of_a_race_reads_again_and_takes_the_next(
        store_factory: StoreFactory) -> None:
    a, b = SlipSerials(store_factory()), HeldAtItsFirstRead(store_factory())
    assert a.take("credit", None, table="t1", request=1, at=AT) == 1
    # b still believes 1 is free: its append at the version it read (0) is refused by the
    # store, and it takes 2 on its second read
    assert b.take("credit", None, table="t2", request=1, at=AT) == 2
    assert b.reads == 2
    assert taken(store_factory) == [1, 2]


def test_a_serial_named_by_hand_that_another_process_took_is_refused(
        store_factory: StoreFactory) -> None:
    a, b = SlipSerials(store_factory()), SlipSerials(store_factory())
    assert a.take("credit", 7, table="t1", request=1, at=AT) == 7
    with pytest.raises(ProcedureViolation, match="already taken") as refused:
        b.take("credit", 7, table="t2", request=3, at=AT, citation="COMAR 36.05.03.04H")
    assert refused.value.rule == "slips.serial_sequence"
    assert taken(store_factory) == [7]
    assert b.take("credit", None, table="t2", request=3, at=AT) == 8


def test_two_processes_issuing_at_once_never_share_a_serial(
        store_factory: StoreFactory) -> None:
    takers = [SlipSerials(store_factory()), SlipSerials(store_factory())]
    start = threading.Barrier(2)
    got: list[list[int]] = [[], []]
    failed: list[BaseException] = []

    def issue(n: int) -> None:
        try:
            start.wait()
            for request in range(1, 16):
                got[n].append(takers[n].take("credit", None, table=f"t{n}", request=request,
                                             at=AT))
        except BaseException as e:  # reported below
            failed.append(e)

    threads = [threading.Thread(target=issue, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failed, failed
    assert sorted(got[0] + got[1]) == list(range(1, 31))
    assert sorted(taken(store_factory)) == list(range(1, 31))


def test_two_floors_banks_issue_credit_slips_from_one_series(
        store_factory: StoreFactory) -> None:
    """Two processes, each with its own table's bank on one store: their Credit Slips take
    serials from the one series, so none is issued twice."""
    banks = []
    for n in (1, 2):
        store = store_factory()
        durable = DurableBank.open(store, "pa", f"t{n}", site="river", game="craps",
                                   clock=FixedClock(NOON_EST))
        durable.bank.series = SlipSerials(store)
        banks.append(durable)
    serials = []
    for round_ in range(3):
        for durable in banks:
            request = round_ + 1
            durable.run(lambda b: b.request("credit", ((2500, 4),), shift="06:00",
                                            actor="fran", role=F))
            events = durable.run(partial(TableBank.issue, request=request, actor="cass",
                                         role=CASHIER))
            assert isinstance(events[0], SlipIssued)
            serials.append(events[0].serial)
    assert serials == [1, 2, 3, 4, 5, 6]
    # a serial named by hand that the other table's bank already issued is refused
    banks[0].run(lambda b: b.request("credit", ((2500, 4),), shift="06:00", actor="fran",
                                     role=F))
    with pytest.raises(ProcedureViolation) as refused:
        banks[0].run(lambda b: b.issue(4, actor="cass", role=CASHIER, serial=6))
    assert refused.value.rule == "slips.serial_sequence"
    assert "COMAR 36.05.03.04H" in refused.value.citation
