"""A player's wallet (``wallet:ACCOUNT``) and a live table's requests to its dealer
(``seat-requests:TABLE``) as streams of the one store.

Every move that takes money out of a wallet (a buy-in at an electronic table, a withdrawal at
the cage) is an event of the wallet's own stream, appended only if the stream is still at the
version its balance was read at (``EventStore.append``'s ``expected``): two processes deciding
on the same wallet cannot both spend the same money, the second decides again on the new
balance (NJAC 13:69E-1.37A: no overdraft, no simultaneous transactions on one account). Money
coming back (an electronic table's ``ChipsCashedOut``) is read from the table logs: a credit
read late can only understate the balance. Deposits and withdrawals are the cage's.

A request (a colour-up, "I'm leaving") stays pending until the dealer confirms it or the player
withdraws it.

>>> AT = "2026-01-01T00:00:00+00:00"
>>> w = WalletState()
>>> apply_wallet(w, WalletDeposited(seq=1, at=AT, account="al", amount=100_00, reason="demo"))
>>> apply_wallet(w, WalletToTable(seq=2, at=AT, account="al", amount=30_00, table="e1",
...                                 transfer="x1"))
>>> apply_wallet(w, WalletReturned(seq=3, at=AT, account="al", amount=30_00, table="e1",
...                                transfer="x1", reason="table closed"))
>>> apply_wallet(w, WalletWithdrawn(seq=4, at=AT, account="al", amount=20_00, reason="cash"))
>>> w.deposited, w.own(), w.to_tables, wallet_invariants(w), roundtrips(w)
(10000, 8000, {'e1': 0}, [], True)
>>> r = RequestsState()
>>> apply_request(r, RequestMade(seq=1, at=AT, table="t1", actor="al", request=1,
...                              player="al", what="colour-up"))
>>> sorted(r.pending), r.pending["1"]["what"], roundtrips(r)
(['1'], 'colour-up', True)
>>> apply_request(r, RequestSettled(seq=2, at=AT, table="t1", actor="dee", request=1,
...                                 outcome="confirmed", detail="coloured up $500.00"))
>>> r.pending, r.made, request_invariants(r), roundtrips(r)
({}, 1, [], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dicetable.core import events as envelope
from dicetable.store.record_codec import roundtrips as roundtrips
from dicetable.store.record_stream import AccountRecordEvent, RecordEvent

WALLET = "wallet"
REQUESTS = "seat-requests"
OUTCOMES = ("confirmed", "withdrawn")


class WalletEvent(AccountRecordEvent, abstract=True):
    stream_kind = WALLET


class WalletDeposited(WalletEvent):
    amount: int
    """Cents, more than 0."""
    reason: str


class WalletWithdrawn(WalletEvent):
    """The cage paid the player ``amount`` out of the wallet."""

    amount: int
    reason: str


class WalletToTable(WalletEvent):
    """``amount`` left the wallet for an electronic table's buy-in (written before the table's
    ``ChipsBought``; ``transfer`` names the move)."""

    amount: int
    table: str
    transfer: str


class WalletReturned(WalletEvent):
    """A ``WalletToTable`` the table refused came back whole."""

    amount: int
    table: str
    transfer: str
    reason: str


@dataclass
class WalletState:
    seq: int = 0
    deposited: int = 0
    withdrawn: int = 0
    to_tables: dict[str, int] = field(default_factory=dict)
    """Electronic table -> cents moved onto it from this wallet (less those returned)."""

    def own(self) -> int:
        """What the wallet's own stream holds: deposits less withdrawals and buy-ins (the
        tables' cash-outs come on top)."""
        return self.deposited - self.withdrawn - sum(self.to_tables.values())


def apply_wallet(state: WalletState, event: envelope.Event) -> None:
    if isinstance(event, WalletDeposited):
        state.deposited += event.amount
    elif isinstance(event, WalletWithdrawn):
        state.withdrawn += event.amount
    elif isinstance(event, WalletToTable):
        state.to_tables[event.table] = state.to_tables.get(event.table, 0) + event.amount
    elif isinstance(event, WalletReturned):
        state.to_tables[event.table] = state.to_tables.get(event.table, 0) - event.amount
    else:
        raise ValueError(f"a {event.kind} is not a wallet event")
    state.seq = event.seq


def wallet_invariants(state: Any) -> list[str]:
    out = ["a wallet's deposits are negative"] if state.deposited < 0 else []
    out += [f"more came back from {t} than went to it" for t, n in state.to_tables.items()
            if n < 0]
    return out


class RequestEvent(RecordEvent, abstract=True):
    stream_kind = REQUESTS
    owner_field = "table"
    table: str
    request: int
    """The request's number at its table (1, 2, ...)."""


class RequestMade(RequestEvent):
    player: str
    what: str
    """``colour-up`` or ``leave``."""


class RequestSettled(RequestEvent):
    outcome: str
    """``confirmed`` (by the dealer) or ``withdrawn`` (by the player)."""
    detail: str = ""


@dataclass
class RequestsState:
    seq: int = 0
    made: int = 0
    pending: dict[str, dict[str, str]] = field(default_factory=dict)
    """Request number (as text: a snapshot is JSON) -> ``player``, ``what``, ``at``."""


def apply_request(state: RequestsState, event: envelope.Event) -> None:
    if isinstance(event, RequestMade):
        state.made = max(state.made, event.request)
        state.pending[str(event.request)] = {"player": event.player, "what": event.what,
                                        "at": event.at}
    elif isinstance(event, RequestSettled):
        state.pending.pop(str(event.request), None)
    else:
        raise ValueError(f"a {event.kind} is not a seat request event")
    state.seq = event.seq


def request_invariants(state: Any) -> list[str]:
    return [f"request {n} is numbered after the last one made ({state.made})"
            for n in state.pending if int(n) > state.made]
