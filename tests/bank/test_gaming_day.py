"""The gaming day is the site's, in the site's time zone (58 Pa. Code § 465a.31's start is a
rule value): the dice room and the pit's books count the same day."""

from __future__ import annotations

from datetime import UTC, datetime

from dicetable.bank.calendar import gaming_day, shift_of
from dicetable.bank.ledger import TableBank
from dicetable.bank.rules import derive_bank_pack, load_bank_pack
from dicetable.core.clock import FixedClock
from dicetable.server.custody_floor import FloorCustody
from dicetable.server.dice_room import Roster
from dicetable.store.memory import MemoryStore

LATE = datetime(2026, 1, 2, 4, 58, tzinfo=UTC)  # 23:58 EST on 1 January


def test_465a_31_a_pa_site_at_23_58_est_is_still_on_today_s_gaming_day() -> None:
    custody = FloorCustody(MemoryStore(), FixedClock(LATE))
    custody.open_site("pa", "demo-pa")
    assert Roster(custody).today() == "2026-01-01"  # the UTC date would say the 2nd
    bank = TableBank.open("pa", "t1", site="demo-pa", game="craps", clock=FixedClock(LATE))
    assert bank.day_and_shift() == ("2026-01-01", "22:00")


def test_465a_31_the_gaming_day_start_is_configurable() -> None:
    pa = load_bank_pack("pa")
    house = derive_bank_pack(pa, "house", {"gaming_day.start": "04:00"})
    assert gaming_day(LATE, house.time_zone, "04:00") == "2026-01-01"
    assert gaming_day(datetime(2026, 1, 2, 9, 30, tzinfo=UTC), house.time_zone,
                      str(house.value("gaming_day.start"))) == "2026-01-02"
    assert shift_of(datetime(2026, 1, 2, 9, 30, tzinfo=UTC), house.time_zone,
                    ["04:00", "12:00", "20:00"]) == "04:00"
