"""Kept answers of exactly-once requests as streams of the one store: ``requests:ACCOUNT``.

Each ``RequestRecorded`` keeps the answer to one ``Idempotency-Key`` of the account (its
status and body, and the fingerprint of the request it answered). The store's own request
index finds it (``index_key``: recorded in the same commit as the event), so a retry reads one
row, in any process, after any restart.

>>> AT = "2026-01-01T00:00:00+00:00"
>>> s = RequestsState()
>>> apply(s, RequestRecorded(account="al", seq=1, at=AT, scope="al:k1", fingerprint="f",
...                          status=200, body="{}"))
>>> s.kept, index_key("al:k1"), invariants(s), roundtrips(s)
({'al:k1': 'f'}, 'answer:al:k1', [], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dicetable.core import events as envelope
from dicetable.store.record_codec import roundtrips as roundtrips
from dicetable.store.record_stream import AccountRecordEvent

KIND = "requests"


def index_key(scope: str) -> str:
    """The store's request-index key under which a kept answer is found."""
    return f"answer:{scope}"


class RequestEvent(AccountRecordEvent, abstract=True):
    stream_kind = KIND


class RequestRecorded(RequestEvent):
    scope: str
    """``ACCOUNT:KEY``."""
    fingerprint: str
    status: int
    body: str


@dataclass
class RequestsState:
    seq: int = 0
    kept: dict[str, str] = field(default_factory=dict)
    """Scope -> the fingerprint of the request it answered."""


def apply(state: RequestsState, event: envelope.Event) -> None:
    if not isinstance(event, RequestRecorded):
        raise ValueError(f"a {event.kind} is not a request event")
    state.kept.setdefault(event.scope, event.fingerprint)
    state.seq = event.seq


def invariants(state: Any) -> list[str]:
    return [f"answer {scope!r} kept in another account's stream"
            for scope in state.kept if ":" not in scope]
