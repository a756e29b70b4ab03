"""The gaming day and its shifts, per site and in the site's time zone.

58 Pa. Code § 465a.31 (the gaming day) was not read; its start is a rule value
(``gaming_day.start``). A moment before the start belongs to the previous gaming day.

>>> from datetime import UTC, datetime
>>> from zoneinfo import ZoneInfo
>>> ny = ZoneInfo("America/New_York")
>>> gaming_day(datetime(2026, 1, 2, 4, 58, tzinfo=UTC), ny, "06:00")  # 23:58 EST on the 1st
'2026-01-01'
>>> gaming_day(datetime(2026, 1, 2, 11, 0, tzinfo=UTC), ny, "06:00")  # 06:00 EST on the 2nd
'2026-01-02'
>>> shift_of(datetime(2026, 1, 2, 4, 58, tzinfo=UTC), ny, ("06:00", "14:00", "22:00"))
'22:00'
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo


def _clock(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def local(at: datetime | str, zone: ZoneInfo) -> datetime:
    moment = datetime.fromisoformat(at) if isinstance(at, str) else at
    return moment.astimezone(zone)


def gaming_day(at: datetime | str, zone: ZoneInfo, start: str) -> str:
    """The gaming day (ISO date) ``at`` falls in at a site in ``zone`` whose day starts at
    ``start`` local time."""
    here = local(at, zone)
    begins = _clock(start)
    day = here.date() if here.time() >= begins else here.date() - timedelta(days=1)
    return day.isoformat()


def shift_of(at: datetime | str, zone: ZoneInfo, starts: Sequence[str]) -> str:
    """The shift (named by its local start time) ``at`` falls in."""
    now = local(at, zone).time()
    ordered = sorted(starts, key=_clock)
    current = ordered[-1]  # before the first start of the day: the last shift of the night
    for s in ordered:
        if now >= _clock(s):
            current = s
    return current
