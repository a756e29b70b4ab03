"""The pit's industry formula and the ratings' other rule values, each with its citation.

The industry formula (spec/table-bank.md §8): theoretical win = average bet x decisions per
hour x hours played x one house edge for the game. Its two inputs are common practice, not
regulation: they are ``industry-default`` and configurable.

>>> f = IndustryFormula()
>>> display_cents(f.theo(Fraction(10_00), Fraction(1, 2)))  # $10 average, half an hour
423
>>> f.rules()[0].id, f.rules()[0].status.value
('ratings.industry.decisions_per_hour', 'industry-default')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dicetable.core.errors import InvalidInput
from dicetable.core.money import percent
from dicetable.rules.model import Rule, Status

THEO_CITATION = "spec/table-bank.md §8 (theoretical win: the standard pit formula)"
DISPLAY_ROUNDING = "half-up to the cent"
"""How an exact theo (a Fraction of a cent) is shown: to the nearest cent, a half cent up."""


def display_cents(value: Fraction) -> int:
    """An exact amount of cents rounded for display (``DISPLAY_ROUNDING``).

    >>> display_cents(Fraction(30_000, 216)), display_cents(Fraction(1, 2))
    (139, 1)
    >>> display_cents(Fraction(-1, 2)), display_cents(Fraction(-3, 2))
    (0, -1)
    """
    return math.floor(value + Fraction(1, 2))


@dataclass(frozen=True)
class IndustryFormula:
    """average bet x decisions per hour x hours x one edge (spec/table-bank.md §8).

    ``decisions_per_hour`` 60: the figure pit systems are often pre-set to (§8, GGB; it is
    rolls, not decisions, at Craps). ``edge`` 1.41%: the pass line's edge rounded, the one
    edge of the spec's worked example (§7 item 3).
    """

    decisions_per_hour: int = 60
    edge: Fraction = Fraction(141, 10_000)
    citation: str = THEO_CITATION
    status: Status = Status.INDUSTRY_DEFAULT

    def __post_init__(self) -> None:
        if self.decisions_per_hour <= 0:
            raise InvalidInput(f"decisions per hour must be positive, not "
                               f"{self.decisions_per_hour}",
                               rule="ratings.industry.decisions_per_hour")
        if not 0 <= self.edge < 1:
            raise InvalidInput(f"the industry edge is a rate from 0 to 1, not {self.edge}",
                               rule="ratings.industry.edge")

    @classmethod
    def parse(cls, decisions_per_hour: int = 60, edge: str = "1.41%") -> IndustryFormula:
        """From an operator's values (the edge written ``1.41%`` or ``7/495``)."""
        try:
            rate = percent(edge)
        except InvalidInput:
            raise InvalidInput(f"the industry edge is a rate such as 1.41% or 7/495, not "
                               f"{edge!r}", rule="ratings.industry.edge") from None
        return cls(decisions_per_hour, rate)

    def theo(self, average_bet: Fraction, hours: Fraction) -> Fraction:
        """The formula's theo in cents (exact)."""
        return average_bet * self.decisions_per_hour * hours * self.edge

    def rules(self) -> list[Rule]:
        return [Rule("ratings.industry.decisions_per_hour", self.decisions_per_hour,
                     self.citation, self.status),
                Rule("ratings.industry.edge", f"{float(self.edge) * 100:g}%",
                     self.citation, self.status)]


@dataclass(frozen=True)
class GamingDay:
    """The gaming day a session belongs to: the one in which it started, in the site's zone.

    PA 465a.31 (the gaming day) was found by title only; a 2010 temporary rule set 6:00 a.m.
    to 5:59:59 a.m. (spec/table-bank.md §0). The start is therefore an industry-default.
    """

    day: date
    zone: str = "UTC"
    starts: time = time(6, 0)
    citation: str = ("PA 465a.31 (title only); 2010 temporary rule 6:00 a.m. "
                     "(spec/table-bank.md §0)")
    status: Status = Status.INDUSTRY_DEFAULT

    @classmethod
    def parse(cls, day: str, zone: str = "UTC", starts: str = "06:00") -> GamingDay:
        try:
            when = date.fromisoformat(day)
        except ValueError:
            raise InvalidInput(f"a gaming day is written YYYY-MM-DD, not {day!r}",
                               rule="ratings.gaming_day") from None
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise InvalidInput(f"no such time zone: {zone!r}",
                               rule="ratings.gaming_day.zone") from None
        try:
            start = time.fromisoformat(starts)
        except ValueError:
            raise InvalidInput(f"a gaming day starts at HH:MM, not {starts!r}",
                               rule="ratings.gaming_day.start") from None
        return cls(when, zone, start)

    def window(self) -> tuple[datetime, datetime]:
        """[start, end) of this gaming day, as UTC instants."""
        begin = datetime.combine(self.day, self.starts, tzinfo=ZoneInfo(self.zone))
        end = datetime.combine(self.day + timedelta(days=1), self.starts,
                               tzinfo=ZoneInfo(self.zone))
        return begin.astimezone(UTC), end.astimezone(UTC)

    def holds(self, at: str) -> bool:
        """Is the instant ``at`` (ISO 8601 with an offset) within this gaming day?"""
        begin, end = self.window()
        return begin <= datetime.fromisoformat(at) < end
