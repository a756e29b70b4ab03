"""The client request in progress on this thread (its idempotency key), for the store.

The server's idempotency layer sets it around a command; every append the command makes
records it in the same transaction as the events (``EventStore.append``), so after a crash
a retry can tell whether its command was applied.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CURRENT: ContextVar[str | None] = ContextVar("dicetable_request", default=None)


def current_request() -> str | None:
    return _CURRENT.get()


@contextmanager
def request_in_progress(request: str | None) -> Iterator[None]:
    token = _CURRENT.set(request)
    try:
        yield
    finally:
        _CURRENT.reset(token)
