"""Injected clocks: events take their time from here, never from the wall directly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """UTC wall-clock time (a synchronised server clock, spec/standards.md SEC-1)."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock tests move by hand.

    >>> c = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    >>> c.advance(hours=25).isoformat()
    '2026-01-02T01:00:00+00:00'
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when
