"""Appending at the version read: the one loop every writer of a shared stream runs.

A writer reads a stream (its head, or its fold), decides its events from what it read, and
appends them only if the stream is still at the version read (``expected``); another process
that appended first makes the store refuse with ``StaleVersion``, and the writer reads again
and decides again. ``RETRIES`` lost races in a row end it (``exhausted``: by default the
``StaleVersion`` of ``store.sequence``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from dicetable.core.errors import StaleVersion

if TYPE_CHECKING:  # the stream modules that use this are imported by ``store.base``
    from dicetable.core.events import Event
    from dicetable.store.base import EventStore

T = TypeVar("T")
S = TypeVar("S")

RETRIES = 50
"""Lost races in a row before a writer gives up."""


def too_fast(stream: str) -> Callable[[], NoReturn]:
    def exhausted() -> NoReturn:
        raise StaleVersion(f"{stream} is changing too fast", rule="store.sequence")
    return exhausted


def retry_stale(stream: str, attempt: Callable[[], T], *,
                exhausted: Callable[[], T] | None = None) -> T:
    """``attempt()`` (read, decide, append at the version read) until it is not refused for
    ``StaleVersion``; after ``RETRIES`` refusals, ``exhausted()``."""
    for _ in range(RETRIES):
        try:
            return attempt()
        except StaleVersion:
            continue
    return (exhausted or too_fast(stream))()


def folded(store: EventStore, stream: str, state_type: Callable[[], S],
           fold: Callable[[S, Event], None]) -> S:
    """``stream`` folded from its first event into a new ``state_type()``: the version read
    is the state's ``seq``."""
    state = state_type()
    for e in store.events(stream):
        fold(state, e)
    return state


def append_at_version(store: EventStore, stream: str, state_type: type[Any],
                      fold: Callable[[Any, Event], None], decide: Callable[[Any], Event]
                      ) -> Event:
    """Fold ``stream``, decide its next event from the state, append it only if the stream is
    still at the version folded; another writer got there first: fold and decide again.
    Returns the event appended."""

    def attempt() -> Event:
        state = folded(store, stream, state_type, fold)
        event = decide(state)
        store.append(stream, [event], expected=state.seq, request="")
        return event

    return retry_stale(stream, attempt)
