"""A player's wallet deposits (``wallet:ACCOUNT``) and a live table's requests to its dealer
(``seat-requests:TABLE``) as streams of the one store.

The wallet's balance is its deposits less what its owner moved onto electronic tables (their
``ChipsBought`` less ``ChipsCashedOut``): every move is one event of a table's log, so a move
cannot take money from the wallet without putting it on a table. Deposits are the cage's.

A request (a colour-up, "I'm leaving") stays pending until the dealer confirms it or the player
withdraws it.

>>> AT = "2026-01-01T00:00:00+00:00"
>>> w = WalletState()
>>> apply_wallet(w, WalletDeposited(seq=1, at=AT, account="al", amount=100_00, reason="demo"))
>>> w.deposited, wallet_invariants(w), roundtrips(w)
(10000, [], True)
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
from dicetable.store.record_stream import RecordEvent

WALLET = "wallet"
REQUESTS = "seat-requests"
OUTCOMES = ("confirmed", "withdrawn")


@dataclass(frozen=True, kw_only=True)
class WalletEvent(RecordEvent, abstract=True):
    stream_kind = WALLET
    owner_field = "account"
    account: str


@dataclass(frozen=True, kw_only=True)
class WalletDeposited(WalletEvent):
    amount: int
    """Cents, more than 0."""
    reason: str


@dataclass
class WalletState:
    seq: int = 0
    deposited: int = 0


def apply_wallet(state: WalletState, event: envelope.Event) -> None:
    if not isinstance(event, WalletDeposited):
        raise ValueError(f"a {event.kind} is not a wallet event")
    state.deposited += event.amount
    state.seq = event.seq


def wallet_invariants(state: Any) -> list[str]:
    return ["a wallet's deposits are negative"] if state.deposited < 0 else []


@dataclass(frozen=True, kw_only=True)
class RequestEvent(RecordEvent, abstract=True):
    stream_kind = REQUESTS
    owner_field = "table"
    table: str
    request: int
    """The request's number at its table (1, 2, ...)."""


@dataclass(frozen=True, kw_only=True)
class RequestMade(RequestEvent):
    player: str
    what: str
    """``colour-up`` or ``leave``."""


@dataclass(frozen=True, kw_only=True)
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
