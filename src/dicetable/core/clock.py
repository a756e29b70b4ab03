"""Injected clocks: events take their time from here, never from the wall directly.

Time limits as the regulations write them: one comparison, used by the table and custody.

58 Pa. Code 585.3(b)(1) / 668a.3(b)(1): dice "may not remain on a table for more than 24
hours". Exactly 24 hours is not more than 24 hours; a second past it is. Every time limit in
dicetable (the table's ``dice.max_hours``, custody's ``play.max_hours.*``) goes through
``over_limit`` so the table and the dice room never disagree at the boundary.

>>> from datetime import datetime, UTC
>>> start = datetime(2026, 1, 1, tzinfo=UTC)
>>> over_limit(start, datetime(2026, 1, 2, tzinfo=UTC), 24)
False
>>> over_limit(start, datetime(2026, 1, 2, 0, 0, 1, tzinfo=UTC), 24)
True
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta, tzinfo
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


def over_limit(since: datetime, now: datetime, hours: int) -> bool:
    """True when more than ``hours`` have passed from ``since`` to ``now``."""
    return now - since > timedelta(hours=hours)


def limit_ends(since: datetime, hours: int) -> datetime:
    """The last instant still within the limit (at it, not over it)."""
    return since + timedelta(hours=hours)


def months_later(day: date, months: int) -> date:
    """The same day ``months`` calendar months later, or that month's last day when it is
    shorter (68 IAC 14-3-5(d) "every three months": 01-05 -> 04-05; 11-30 -> 02-28).

    >>> months_later(date(2026, 1, 5), 3), months_later(date(2025, 11, 30), 3)
    (datetime.date(2026, 4, 5), datetime.date(2026, 2, 28))
    """
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def local_day(moment: datetime, zone: tzinfo) -> date:
    """The calendar day ``moment`` falls on at the site (its time zone, not UTC)."""
    return moment.astimezone(zone).date()
