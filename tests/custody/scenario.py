"""People and helpers that walk dice through custody, for the custody tests."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import TypedDict

from dicetable.core.clock import FixedClock
from dicetable.core.roles import Role
from dicetable.custody import commands as cmd
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import (
    Box,
    BoxInspection,
    CancelMethod,
    DieCheck,
    Key,
    Manufacturer,
    Person,
    PlayMode,
    RemovalReason,
)

ANN = Person("Ann Lee", Role.SHIFT_MANAGER, "TG-100")
"""Assistant table games shift manager."""
SAM = Person("Sam Ortiz", Role.SECURITY, "SE-200")
PAT = Person("Pat Kim", Role.PIT_BOSS, "PB-300")
FLO = Person("Flo Diaz", Role.FLOORPERSON, "FP-400")
BOB = Person("Bob Ray", Role.BOXPERSON, "BX-500")
STU = Person("Stu Park", Role.STICKPERSON, "ST-600")
DEE = Person("Dee Fox", Role.DEALER, "DL-700")
SUE = Person("Sue Wu", Role.SURVEILLANCE, "SV-800")
ACME = Manufacturer("Acme Dice Co.", "1 Cube Way, Reno NV", "+1 775 555 0100")
TOOLS = ("micrometer", "balancing-caliper", "steel-set-square", "magnet")
START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
AGENT = "Agent Cole (Indiana Gaming Commission)"
"""Present at the point of delivery (the IN pack's receipt.delivery_witness stand-in)."""


class Actor(TypedDict):
    actor: str
    role: Role
    licence: str
    witnesses: tuple[Person, ...]


def as_(p: Person, *witnesses: Person) -> Actor:
    """The people fields of a command: ``p`` acts, ``witnesses`` are present."""
    return {"actor": p.name, "role": p.role, "licence": p.licence, "witnesses": witnesses}


def on_duty(*people: Person) -> tuple[str, ...]:
    """The staff a table's log has assigned there, as the table tells custody (names)."""
    return tuple(p.name for p in people)


def serials(prefix: str, n: int, start: int = 1) -> tuple[str, ...]:
    return tuple(f"{prefix}{i:04d}" for i in range(start, start + n))


def new_ledger(jurisdiction: str = "pa") -> tuple[CustodyLedger, FixedClock]:
    clock = FixedClock(START)
    return CustodyLedger.open(jurisdiction, "river", clock=clock), clock


def good_check(serial: str, side: str = "0.7500") -> DieCheck:
    d = Decimal(side)
    return DieCheck(serial, (d, d, d))


def draw_keys(led: CustodyLedger) -> None:
    led.execute(cmd.DrawKey(**as_(ANN), key=Key.TABLE_GAMES))
    led.execute(cmd.DrawKey(**as_(SAM), key=Key.SECURITY))


def return_keys(led: CustodyLedger) -> None:
    led.execute(cmd.ReturnKey(**as_(ANN), key=Key.TABLE_GAMES))
    led.execute(cmd.ReturnKey(**as_(SAM), key=Key.SECURITY))


def receive(led: CustodyLedger, dice: tuple[str, ...], shipment: str = "S1",
            seal_intact: bool = True, opened: tuple[BoxInspection, ...] = ()) -> None:
    led.execute(cmd.ReceiveShipment(**as_(ANN, SAM), shipment=shipment,
                                    manufacturer=ACME, delivery_witness=AGENT,
                                    boxes=(Box(f"{shipment}-B1", dice, seal_intact),),
                                    opened=opened))


def stock(led: CustodyLedger, dice: tuple[str, ...], shipment: str = "S1") -> None:
    """Receive, store and take out for the gaming day (keys drawn and returned)."""
    receive(led, dice, shipment)
    draw_keys(led)
    led.execute(cmd.StoreDice(**as_(ANN, SAM), dice=dice, area="dice-storage"))
    led.execute(cmd.IssueForGamingDay(**as_(ANN, SAM), dice=dice,
                                      gaming_day="2026-03-02"))
    return_keys(led)


def inspect(led: CustodyLedger, dice: tuple[str, ...], inspector: Person = PAT) -> None:
    led.execute(cmd.InspectDice(**as_(inspector), checks=tuple(good_check(s) for s in dice),
                                tools=TOOLS, under_surveillance=True))


def to_table(led: CustodyLedger, dice: tuple[str, ...], table: str = "craps-1",
             mode: PlayMode = PlayMode.TABLE) -> None:
    if mode is PlayMode.SHAKER:
        led.execute(cmd.IssueToTable(**as_(FLO), dice=dice, table=table, game="props-and-hops",
                                     mode=mode, received_by=DEE))
    else:
        led.execute(cmd.IssueToTable(**as_(PAT), dice=dice, table=table, received_by=BOB))


def in_play(jurisdiction: str = "pa", n: int = 5,
            table: str = "craps-1") -> tuple[CustodyLedger, FixedClock, tuple[str, ...]]:
    led, clock = new_ledger(jurisdiction)
    dice = serials("D", n)
    stock(led, dice)
    inspect(led, dice)
    to_table(led, dice, table)
    return led, clock, dice


def remove_and_transfer(led: CustodyLedger, dice: tuple[str, ...],
                        reason: RemovalReason = RemovalReason.ROUTINE) -> None:
    led.execute(cmd.RemoveDice(**as_(PAT), dice=dice, reason=reason))
    led.execute(cmd.TransferToCancellation(**as_(PAT), dice=dice, accepted_by=SAM))


def cancel(led: CustodyLedger, dice: tuple[str, ...]) -> None:
    led.execute(cmd.CancelDice(**as_(SAM, SUE), dice=dice,
                               method=CancelMethod.DRILL, hole_in=Decimal("0.25")))


def refused(led: CustodyLedger, command: cmd.CustodyCommand, error: type[Exception],
            rule: str, cites: str = "") -> Exception:
    """Assert ``command`` is refused with ``error`` naming ``rule``, and nothing changed."""
    import pytest

    before = (len(led.log), led.state.seq)
    with pytest.raises(error) as info:
        led.execute(command)
    assert getattr(info.value, "rule", None) == rule, info.value
    assert cites in getattr(info.value, "citation", ""), info.value
    assert (len(led.log), led.state.seq) == before
    assert not led.can(command)
    return info.value
