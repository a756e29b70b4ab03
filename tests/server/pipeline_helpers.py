"""A small floor on a memory store, and a store spy that holds each commit until released."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from dicetable.application.accounts import Account, Accounts, Kind
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.events import Event
from dicetable.server.demo import electronic_pack
from dicetable.server.floor import Chore, Floor
from dicetable.store.base import EventStore
from dicetable.store.memory import MemoryStore

R = TypeVar("R")
T = "e1"
PLAYERS = ("alice", "bob", "carol")


def account(name: str, kind: Kind = Kind.PLAYER) -> Account:
    return Account(name, kind, name.title())


def small_floor(*, chips: int = 100_00, max_queue: int = 512,
                store: EventStore | None = None) -> Floor:
    """An electronic PA Craps table ``e1`` (dealer dee) with alice, bob and carol bought in."""
    floor = Floor(store or MemoryStore(), Accounts("memory"), max_queue=max_queue)
    floor.open_table(electronic_pack(), T, mode="electronic", opener="fran",
                     staff={"dee": Role.DEALER})
    setup: list[g.Command] = []
    for seat, player in enumerate(PLAYERS, start=1):
        setup += [g.JoinTable(actor=player, role=Role.PLAYER, player=player, seat=seat),
                  g.BuyChips(actor="table", role=Role.SYSTEM, player=player, amount=chips)]
    floor.submit(T, Chore(lambda: setup)).result()
    return floor


def bet(wager: str, amount: int, base: str | None = None
        ) -> Callable[[str, Role], g.Command]:
    return lambda a, r: g.PlaceBet(actor=a, role=r, player=a, wager=wager, amount=amount,
                                   base=base)


class HeldCommits:
    """Wraps ``store.append``: records each call's events and holds it until released."""

    def __init__(self, store: EventStore) -> None:
        self.real = store.append
        self.calls: list[list[str]] = []
        self.entered: list[threading.Event] = [threading.Event() for _ in range(64)]
        self.release: list[threading.Event] = [threading.Event() for _ in range(64)]
        self.hold = True
        self._lock = threading.Lock()
        store.append = self  # type: ignore[method-assign,assignment]

    def __call__(self, table: str, events: Sequence[Event], expected: int | None = None,
                 request: str | None = None, spans: Sequence[tuple[str, int, int]] = ()
                 ) -> Any:
        with self._lock:
            n = len(self.calls)
            self.calls.append([e.kind for e in events])
        self.entered[n].set()
        if self.hold:
            assert self.release[n].wait(20), "the test never released this commit"
        return self.real(table, events, expected, request, spans)

    def wait_entered(self, n: int) -> None:
        assert self.entered[n].wait(20), f"commit {n} never started"

    def free(self) -> None:
        self.hold = False
        for gate in self.release:
            gate.set()


def run_async(make: Callable[[], Coroutine[Any, Any, R]]) -> R:
    """``asyncio.run`` on a thread of its own (another test's loop may be running on this
    one: Playwright's sync API keeps one for the session)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
