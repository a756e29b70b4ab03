"""Archiving: closed gaming days leave the live log without leaving the chain.

``archive_through(store, DAY, directory)`` moves every table's events of each closed gaming
day up to DAY into one signed, compressed file per day (``store/archive_file.py``) and
records each table's span in the store's index in the same transaction that drops them from
the live log. Nothing else changes: ``records``, recall, export, ``audit verify`` and the
adjudication read the archived events from their files, each file's signature and each
block's signed digest checked as it is read (``audit verify`` checks each file whole), and
the chain runs on unbroken from the last archived event to the first live one. Only a day
that verified (each link, from the start of the stream or the previous archive) is archived,
and only a closed one: a day is closed once the next gaming day has begun.

Each file records the retention rule of the jurisdictions whose tables it holds (``RETENTION``:
the years it must be kept, the citation and its status), and the day it may be destroyed.

>>> gaming_day("2026-03-02T05:59:59+00:00"), gaming_day("2026-03-02T06:00:00+00:00")
('2026-03-01', '2026-03-02')
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store.archive_file import Span, write_archive
from dicetable.store.audit import walk_links
from dicetable.store.base import EventStore
from dicetable.store.chain import EMPTY, Head, StoredEvent
from dicetable.store.replay import opening
from dicetable.store.state_codec import pack_for

GAMING_DAY_STARTS = 6
"""The hour (UTC) a gaming day begins: industry-default, configurable (``--day-starts``).
PA 58 Pa. Code 465a.31 (gaming day) was read by title only; a 2010 temporary rule set
6:00 a.m.-5:59:59 a.m. (spec/table-bank.md), which this follows as a stand-in."""


@dataclass(frozen=True)
class Retention:
    """How long a jurisdiction's table records are kept, and why."""

    jurisdiction: str
    years: int
    citation: str
    status: str

    def until(self, day: str) -> str:
        """The first day an archive of ``day`` may be destroyed."""
        d = date.fromisoformat(day)
        try:
            return d.replace(year=d.year + self.years).isoformat()
        except ValueError:  # 29 February
            return (d.replace(day=28, year=d.year + self.years) + timedelta(days=1)).isoformat()

    def to_dict(self) -> dict[str, Any]:
        return {"jurisdiction": self.jurisdiction, "years": self.years,
                "citation": self.citation, "status": self.status}


_STAND_IN = ("industry-default: {j}'s own retention text for table game records was not read "
             "(PA 58 Pa. Code 465a.6 is not in spec/regulations.md); 10 years follows the "
             "longest retention the spec names, PA's for interactive gaming logs (58 Pa. Code "
             "811a.7(d), spec/standards.md REC-4); configurable (--retention-years)")
RETENTION: dict[str, Retention] = {
    j: Retention(j, 10, _STAND_IN.format(j=j), "industry-default") for j in ("PA", "IN")
}
"""Retention per jurisdiction. Neither value is regulation: both are stand-ins, said so."""


def retention_for(jurisdiction: str, years: int | None = None) -> Retention:
    """The jurisdiction's rule, or the operator's ``years`` in its place (recorded as such)."""
    base = RETENTION.get(jurisdiction, Retention(jurisdiction, 10, _STAND_IN.format(
        j=jurisdiction), "industry-default"))
    if years is None:
        return base
    if years < 1:
        raise InvalidInput("records are kept at least a year (--retention-years)",
                           rule="archive.retention")
    return Retention(jurisdiction, years, f"set by the operator (--retention-years {years}) "
                     f"in place of: {base.citation}", "industry-default")


def gaming_day(at: str, starts: int = GAMING_DAY_STARTS) -> str:
    """The gaming day (YYYY-MM-DD) an event recorded at ``at`` belongs to."""
    moment = datetime.fromisoformat(at)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment.astimezone(UTC) - timedelta(hours=starts)).date().isoformat()


@dataclass
class Archived:
    """What one run archived."""

    days: dict[str, int] = field(default_factory=dict)
    """Events archived per gaming day."""
    files: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    retention: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def events(self) -> int:
        return sum(self.days.values())


def _day_of(row: StoredEvent, starts: int) -> str:
    at = json.loads(row.body).get("at")
    if not isinstance(at, str):
        raise InvalidInput(f"{row.table} seq {row.seq} records no time; it cannot be given a "
                           "gaming day", rule="archive.day")
    return gaming_day(at, starts)


def _closed_rows(store: EventStore, table: str, through: str, starts: int
                 ) -> tuple[Head, list[StoredEvent]]:
    """Where the table's archive ends, and its live events of days up to ``through``."""
    spans = store.archive_spans(table)
    start = spans[-1].end if spans else EMPTY
    rows: list[StoredEvent] = []
    for row in store.records(table, after=start.seq):
        if _day_of(row, starts) > through:
            break
        rows.append(row)
    return start, rows


def archive_through(store: EventStore, through: str, directory: Path, *,
                    today: str | None = None, starts: int = GAMING_DAY_STARTS,
                    retention_years: int | None = None,
                    tables: Iterable[str] | None = None) -> Archived:
    """Archive every table's events of the closed gaming days up to ``through``.

    Refused, with nothing changed, when the store has no key, when ``through`` is not a
    closed day, or when a table's events to archive do not verify.
    """
    if not store.key:
        raise InvalidInput("archives are signed with the chain key (--key)", rule="store.key")
    try:
        date.fromisoformat(through)
    except ValueError:
        raise InvalidInput(f"--through {through!r} is not a day (YYYY-MM-DD)",
                           rule="archive.day") from None
    current = today or gaming_day(datetime.now(UTC).isoformat(), starts)
    if through >= current:
        raise InvalidInput(f"gaming day {through} is not closed (the current gaming day is "
                           f"{current}); only a closed day is archived", rule="archive.day")
    directory.mkdir(parents=True, exist_ok=True)
    by_day: dict[str, dict[str, list[StoredEvent]]] = {}
    out = Archived()
    keep: dict[str, Retention] = {}
    for table in sorted(tables if tables is not None else store.tables()):
        start, rows = _closed_rows(store, table, through, starts)
        if not rows:
            continue
        walk = walk_links(store, table, start, rows=rows)
        if walk.problem is not None:
            raise InvalidInput(f"{table} does not verify, so it is not archived: "
                               f"{walk.problem}", rule="archive.verify")
        jurisdiction = pack_for(opening(store, table)).jurisdiction
        keep[jurisdiction] = retention_for(jurisdiction, retention_years)
        for row in rows:
            by_day.setdefault(_day_of(row, starts), {}).setdefault(table, []).append(row)
    for day, streams in sorted(by_day.items()):
        retention = {j: {**r.to_dict(), "keep_until": r.until(day)}
                     for j, r in sorted(keep.items())}
        path = _free_name(directory, day)
        spans = write_archive(path, store.key, day, streams, {"by_jurisdiction": retention})
        store.move_to_archive(spans)
        out.days[day] = sum(len(r) for r in streams.values())
        out.files.append(str(path))
        out.spans += spans
        out.retention = retention
    return out


def _free_name(directory: Path, day: str) -> Path:
    path = directory / f"{day}.jsonl.gz"
    n = 1
    while path.exists():  # the same day archived again (events recorded late): a new file
        n += 1
        path = directory / f"{day}.{n}.jsonl.gz"
    return path


def day_span(store: EventStore, table: str, day: str,
             starts: int = GAMING_DAY_STARTS) -> tuple[int, int] | None:
    """The first and last seq of ``table``'s events on gaming ``day`` (None: none). An
    archived day is found from the index; a live one by reading the live log."""
    spans = store.archive_spans(table)
    archived = [s for s in spans if s.day == day]
    if archived:
        return min(s.first for s in archived), max(s.last for s in archived)
    after = spans[-1].last if spans else 0
    first = last = 0
    for row in store.records(table, after=after):
        found = _day_of(row, starts)
        if found == day:
            first, last = first or row.seq, row.seq
        elif found > day:
            break
    return (first, last) if first else None
