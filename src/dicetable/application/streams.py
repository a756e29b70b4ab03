"""New streams through the application's one way in: a stream's first events are written by an
``Open`` order given to ``Application.submit``, as every later step of it is, never appended
by a surface itself.

A custody ledger is opened by its own command (``OpenCustody``) on the ledger before it is
opened (``open_custody``: ``dicetable dice open``, the floor's sites). A log decided and
checked elsewhere - a custody file replayed (``dicetable dice import``), a script run through
the application (``dicetable script load``), a bank's opening (``open_bank``) - opens its
stream as it is (``Logged`` on ``Unwritten``), in the name and role of whoever its first event
names. Either way the first events are appended at version 0 only: a stream is opened once,
and a second opening (in this process or another) is refused and appends nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from dicetable.application.service import Acting, Application, Holds, Open, Signed
from dicetable.bank.rules import BankPack
from dicetable.core.clock import Clock
from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.custody import commands as ccmd
from dicetable.custody.rules import CustodyPack, load_custody_pack
from dicetable.store.bank_stream import DurableBank
from dicetable.store.base import EventStore
from dicetable.store.custody import DurableCustody

T = TypeVar("T")


def opened(app: Application[Any], stream: str, command: Signed, fresh: Holds,
           caller: Acting | None = None) -> list[Event]:
    """``command`` opens ``stream`` on ``fresh`` through ``app.submit``, given by ``caller``
    (by default whoever the command names); a refusal is raised with its rule."""
    who = caller if caller is not None else Acting(command.actor, command.role)
    answer = app.submit(stream, Open(who, command, fresh))
    assert answer is not None
    events: list[Event] = answer.result()
    return events


@dataclass(frozen=True)
class Logged:
    """A new stream's log, decided and checked elsewhere, given in the name and role of
    whoever its first event names (who opened it)."""

    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        if not self.events:
            raise InvalidInput("an empty log opens no stream", rule="store.stream")

    @property
    def actor(self) -> str:
        return self.events[0].actor

    @property
    def role(self) -> Role:
        return self.events[0].role


class Unwritten:
    """A stream the store does not hold yet, held for its one step (``Holds``): a ``Logged``
    log of this stream, appended at version 0 (``StaleVersion`` when another writer was
    first)."""

    def __init__(self, store: EventStore, stream: str) -> None:
        self.store = store
        self.stream = stream
        self.lock = threading.Lock()

    def run(self, step: Callable[[Unwritten], T]) -> T:
        with self.lock:
            return step(self)

    def execute(self, log: Logged) -> list[Event]:
        others = {e.stream for e in log.events} - {self.stream}
        if others:
            raise InvalidInput(f"a log of {', '.join(sorted(others))} cannot open "
                               f"{self.stream}", rule="store.stream")
        self.store.append(self.stream, log.events, expected=0)
        return list(log.events)


def open_log(app: Application[Any], store: EventStore, events: Sequence[Event]) -> list[Event]:
    """``events`` (a whole log, its first event the stream's opening) as a new stream of
    ``store``, through ``app``."""
    log = Logged(tuple(events))
    return opened(app, log.events[0].stream, log, Unwritten(store, log.events[0].stream))


def open_custody(app: Application[Any], store: EventStore, pack: CustodyPack | str | Path,
                 site: str, caller: Acting, *, clock: Clock | None = None) -> DurableCustody:
    """A site's custody ledger opened on ``store`` by ``caller``'s ``OpenCustody``, through
    ``app``; the ledger, held on its stream, for the steps after."""
    rules = pack if isinstance(pack, CustodyPack) else load_custody_pack(pack)
    fresh = DurableCustody.fresh(store, site, clock=clock)
    opened(app, fresh.stream, ccmd.OpenCustody(actor=caller.name, role=caller.role,
                                                site=site, pack=rules), fresh, caller)
    return fresh


def open_bank(app: Application[Any], store: EventStore, pack: BankPack | str | Path,
              table: str, *, site: str, game: str, electronic: bool = False,
              clock: Clock | None = None) -> DurableBank:
    """A table's bank opened on ``store`` (``DurableBank.opening``), its first events
    through ``app``; the bank, held on its stream, for the steps after."""
    bank, first = DurableBank.opening(store, pack, table, site=site, game=game,
                                      electronic=electronic, clock=clock)
    open_log(app, store, first)
    return DurableBank(store, bank)
