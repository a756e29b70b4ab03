"""Every writer of a shared stream reads again and decides again after a lost race, through
the one loop (``store.versioned``), and ends as it always did when it loses every race: the
faults, the slip series, a wallet move, an account's login, logout
and unlock. The store here refuses the first appends to a stream as stale (counted)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dicetable.application.accounts import Accounts, Kind, NotAuthenticated, TooManyAttempts
from dicetable.application.integrity import Faults
from dicetable.application.service import Acting, Local
from dicetable.application.wallets import Wallet, deposited, moved, wallet_state
from dicetable.core.errors import StaleVersion
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.store.base import StoredEvent, kind_of, name_of
from dicetable.store.memory import MemoryStore
from dicetable.store.slip_serials_stream import SlipSerials
from dicetable.store.versioned import RETRIES
from tests.demo_floor import CHEAP_HASHER

AT = "2026-03-01T08:00:00+00:00"


class Racing(MemoryStore):
    """Refuses the next ``lose`` appends to streams of kind ``kind`` as stale."""

    def __init__(self) -> None:
        super().__init__()
        self.kind = ""
        self.lose = 0
        self.lost = 0

    def append(self, table: str, events: Sequence[Event], expected: int | None = None,
               request: str | None = None,
               spans: Sequence[tuple[str, int, int]] = ()) -> list[StoredEvent]:
        if kind_of(table) == self.kind and self.lose:
            self.lose -= 1
            self.lost += 1
            raise StaleVersion(f"{table} moved", rule="store.sequence")
        return super().append(table, events, expected, request, spans)

    def race(self, kind: str, lose: int) -> None:
        self.kind, self.lose, self.lost = kind, lose, 0


def test_a_fault_is_recorded_after_lost_races_and_not_after_every_one() -> None:
    store = Racing()
    faults = Faults(store)
    store.race("faults", 3)
    faults.raise_fault("t1", "chain", "broken", AT)
    assert (store.lost, list(faults.open)) == (3, ["t1"])
    store.race("faults", RETRIES)
    with pytest.raises(StaleVersion, match="the faults stream is changing too fast"):
        faults.raise_fault("t2", "chain", "broken", AT)
    assert list(faults.open) == ["t1"]


def test_a_slip_serial_is_taken_once_after_lost_races() -> None:
    store = Racing()
    serials = SlipSerials(store)
    store.race("serials", 2)
    assert serials.take("fill", None, table="t1", request=1, at=AT) == 1
    assert store.lost == 2
    assert serials.take("fill", None, table="t1", request=1, at=AT) == 1  # already held


def test_a_wallet_move_through_submit_is_decided_again_after_a_lost_race() -> None:
    store = Racing()
    app = Local(holders=lambda stream: Wallet(store, name_of(stream)))
    store.race("wallet", 4)
    moved(app, "al", Acting("cass", Role.CHIP_BANK_CASHIER), deposited("al", 10_00, "cash", AT))
    assert (store.lost, wallet_state(store, "al").own()) == (4, 10_00)
    store.race("wallet", RETRIES)
    with pytest.raises(StaleVersion, match="wallet:al is changing too fast"):
        moved(app, "al", Acting("cass", Role.CHIP_BANK_CASHIER),
              deposited("al", 10_00, "cash", AT))
    assert wallet_state(store, "al").own() == 10_00


def test_an_account_logs_in_out_and_is_unlocked_after_lost_races() -> None:
    store = Racing()
    accounts = Accounts(store, hasher=CHEAP_HASHER)
    accounts.create("al", "password1", Kind.PLAYER)
    accounts.create("pat", "password1", Kind.STAFF)
    store.race("account", 2)
    token = accounts.login("al", "password1")
    assert store.lost == 2
    assert accounts.session(token).username == "al"
    store.race("account", 2)
    accounts.logout(token)
    assert store.lost == 2
    with pytest.raises(NotAuthenticated, match="log in again"):  # the session is closed
        accounts.session(token)
    store.race("account", RETRIES)
    with pytest.raises(TooManyAttempts, match="changing too fast"):
        accounts.login("al", "password1")
    # A close or an unlock that lost every race is refused, never reported done.
    token = accounts.login("al", "password1")
    store.race("account", RETRIES)
    with pytest.raises(TooManyAttempts, match="log out again"):
        accounts.logout(token)
    assert accounts.session(token).username == "al"  # still open, and its holder knows it
    store.race("account", RETRIES)
    with pytest.raises(TooManyAttempts, match="unlock again"):
        accounts.unlock("al", by="pat", role="pit-boss", via="cli")
    store.race("account", 1)
    accounts.unlock("al", by="pat", role="pit-boss", via="cli")
    assert store.lost == 1
    events: list[Any] = list(store.events("account:al"))
    assert events[-1].kind == "AccountUnlocked"
