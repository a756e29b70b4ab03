"""The server checks before it serves (spec/standards.md MEM-2, MEM-3, RES-2, RES-3).

At start-up, before a request is taken, and then periodically, every stream is verified: each
table's keyed chain and recorded head, every other stream (accounts, staff, faults, kept
answers), and the signed checkpoints when a checkpoint file is kept. A table whose log fails
is put in a locked fault state: it is not loaded (a forged balance is never served), a
``FaultRaised`` event goes into the ``faults:floor`` stream, and the pit console lists it.
It stays locked - also across restarts, even once the log verifies again - until a pit boss
or shift manager clears it with an authorised, recorded command, which verifies the log once
more first.

The store's head only ever moves forward. ``HighWater`` remembers, per stream, the newest
head this process has committed, caught up to or verified; a store found behind it (events
dropped from the end and the head moved back) or holding another event at that seq (a history
replaced, even rehashed with the key) is faulted at once - on the table's next catch-up or
commit, or on the periodic verification - and nothing more is served from memory against it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dicetable.core.errors import DicetableError, ProcedureViolation, StaleVersion
from dicetable.core.roles import Role
from dicetable.store import fault_stream
from dicetable.store.adjudicate import adjudicate_table
from dicetable.store.archive_file import ArchiveError
from dicetable.store.audit import verify_table
from dicetable.store.base import EventStore
from dicetable.store.chain import Head
from dicetable.store.checkpoints import (
    CheckpointProblem,
    Cursor,
    Streams,
    heads_of,
    newest,
    verify_checkpoints,
    verify_lines,
    write_checkpoint,
)
from dicetable.store.incremental import ROLLING_SLICE, ChainVerifier
from dicetable.store.versioned import retry_stale

log = logging.getLogger(__name__)

FAULTS = fault_stream.STREAM
"""The stream of fault records (raised and cleared)."""
CHECKPOINTS = "checkpoints"
"""The name a fault of the checkpoint file itself is raised under (a store-wide fault)."""
FAULT_CITATION = ("25 CFR 547.10 (critical memory error: stop play, record a fault event; "
                  "spec/standards.md MEM-3) [other-jurisdiction]")
CLEARERS = frozenset({Role.PIT_BOSS, Role.SHIFT_MANAGER})
"""Who may clear a fault (industry-default: a supervisor above the table)."""


class TableFaulted(DicetableError):
    """The table's log failed verification: locked until an authorised clear."""


class Faults:
    """The open faults: the fold of the store's ``faults:floor`` stream."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._state = fault_stream.FaultState()
        self._catch_up()

    @property
    def open(self) -> dict[str, dict[str, str]]:
        return self._state.open

    def _catch_up(self) -> None:
        for event in self.store.events(FAULTS, after=self._state.seq):
            fault_stream.apply(self._state, event)

    def _record(self, make: Callable[[int], fault_stream.FaultEvent]) -> None:
        def attempt() -> None:  # another process recorded a fault meanwhile: fold it, again
            try:
                self.store.append(FAULTS, [make(self._state.seq + 1)],
                                  expected=self._state.seq, request="")
            except StaleVersion:
                self._catch_up()
                raise
            self._catch_up()

        retry_stale("the faults stream", attempt)

    def raise_fault(self, table: str, what: str, detail: str, at: str) -> None:
        if table in self.open:
            return
        self._record(lambda seq: fault_stream.FaultRaised(seq=seq, at=at, subject=table,
                                                          what=what, detail=detail))
        log.error("integrity fault on %s: %s - %s", table, what, detail)

    def clear(self, table: str, by: str, role: str, reason: str, at: str) -> None:
        self._record(lambda seq: fault_stream.FaultCleared(seq=seq, at=at, actor=by,
                                                           subject=table, by_role=role,
                                                           reason=reason))

    def refuse(self, table: str) -> None:
        fault = self.open.get(table)
        if fault is not None:
            raise TableFaulted(f"{table} is locked: its log failed verification "
                               f"({fault['what']}: {fault['detail']}); a pit boss must clear "
                               "the fault", rule="integrity.fault", citation=FAULT_CITATION)


def table_problem(store: EventStore, table: str, *, replay: bool = False
                  ) -> tuple[str, str] | None:
    """(what, detail) of the table's first chain problem, or None when it verifies.

    The table may be in play: an append landing between reading its head and its rows looks
    like rows "added outside the store". Every append moves the head, so a problem found
    while the head stood still is real; one found while it moved is checked again.
    """
    for _ in range(5):
        before = store.head(table)
        report = verify_table(store, table, replay=replay)
        if report.ok:
            return None
        if store.head(table) == before:
            break
    p = report.problems[0]
    return p.what, f"seq {p.seq}: {p.detail}"


def still_failing(table: str, problems: list[str]) -> ProcedureViolation:
    return ProcedureViolation(f"{table} still fails verification ({'; '.join(problems)}); "
                              "restore its log before clearing", rule="integrity.fault",
                              citation=FAULT_CITATION)


def moved_back(source: Streams, stream: str, mark: Head, now: Head | None = None
               ) -> tuple[str, str] | None:
    """(what, detail) when ``stream``'s head in ``source`` (``now``, read if not given) is
    behind ``mark`` - a head this process committed or read - or holds another event there.

    No read beyond the head itself when the head is still at the mark (the usual case).

    >>> from dicetable.store.memory import MemoryStore
    >>> from dicetable.store.durable import DurableTable
    >>> store = MemoryStore()
    >>> t = DurableTable.open(store, "pa-craps", "t1").table
    >>> _ = t.join("alice"); mark = store.head("t1")
    >>> moved_back(store, "t1", mark) is None
    True
    >>> del store.rows["t1"][-1]; store.heads["t1"] = Head(mark.seq - 1, store.rows["t1"][-1].hash)
    >>> moved_back(store, "t1", mark)[0]
    'truncated'
    """
    if not mark.seq:
        return None
    head = source.head(stream) if now is None else now
    if head.seq < mark.seq:
        return ("truncated", f"the store's head is seq {head.seq}, behind seq {mark.seq} that "
                             "this server committed or read (events were dropped from the end "
                             "and the head moved back)")
    if head.seq == mark.seq:
        found: str | None = head.hash
    else:
        rows = list(source.records(stream, after=mark.seq - 1, until=mark.seq))
        found = rows[0].hash if rows else None
    if found != mark.hash:
        return ("rewritten", f"seq {mark.seq}: the stored event is not the one this server "
                             "committed or read (the log was replaced)")
    return None


class HighWater:
    """The newest head of each stream this process has committed, caught up to or verified,
    with the store or stream log that holds it. Only ever moves forward."""

    def __init__(self) -> None:
        self._marks: dict[str, tuple[Streams, Head]] = {}
        self._lock = threading.Lock()

    def note(self, source: Streams, stream: str, head: Head) -> None:
        with self._lock:
            held = self._marks.get(stream)
            if held is None or head.seq > held[1].seq:
                self._marks[stream] = (source, head)

    def mark(self, stream: str) -> Head | None:
        with self._lock:
            held = self._marks.get(stream)
        return None if held is None else held[1]

    def streams(self) -> list[str]:
        with self._lock:
            return sorted(self._marks)

    def check(self, stream: str) -> tuple[str, str] | None:
        """Whether ``stream``'s head has moved back (or its history was replaced)."""
        with self._lock:
            held = self._marks.get(stream)
        return None if held is None else moved_back(held[0], stream, held[1])


def checkpoint_file_behind(path: Path, seen: int) -> tuple[str, str] | None:
    """(what, detail) when the checkpoint file holds fewer lines than the ``seen`` this
    process wrote or verified: its newest lines were removed (their MACs chain only
    backwards, so the shorter file still verifies)."""
    held = len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0
    if held >= seen:
        return None
    return ("truncated", f"the checkpoint file holds {held} line(s), behind the {seen} this "
                         "server wrote or verified (checkpoints were removed)")


def found_by_checkpoints(fault: dict[str, Any]) -> bool:
    """Whether ``fault`` was raised by the signed checkpoints (a problem only they can see)."""
    return fault.get("table") == CHECKPOINTS or str(fault.get("detail", "")).startswith(
        "checkpoint ")


def clear_problems(store: EventStore, name: str, *,
                   checkpoints: Path | None, fault: dict[str, Any] | None = None
                   ) -> list[str]:
    """Everything that still fails for the fault on ``name`` (empty: it may be cleared).

    The whole log is checked, not only what raised the fault: the stream's chain (a table's
    replayed, its snapshots and money too), the signed checkpoints (when kept: every line,
    and the stream against each), and the adjudication of each settlement of a table. For
    the checkpoint file's own fault (store-wide) every stream is checked. A fault that the
    checkpoints found is not cleared without them.
    """
    wide = name == CHECKPOINTS
    out: list[str] = []
    stored = store.stream_ids()
    for stream in stored if wide else [s for s in (name,) if s in stored]:
        problem = table_problem(store, stream, replay=True)
        if problem is not None:
            out.append(f"chain: {stream} {problem[0]}: {problem[1]}")
    if checkpoints is None:
        if fault is not None and found_by_checkpoints(fault):
            out.append("checkpoints: this fault was found by the signed checkpoints; the "
                       "log must be checked against them (--checkpoints FILE)")
    elif not store.key:
        out.append("checkpoints: they are verified with the chain key, and this store has "
                   "none")
    elif not checkpoints.exists():
        out.append(f"checkpoints: no checkpoint file at {checkpoints}")
    else:
        out += [f"checkpoints: {cp}" for cp in verify_checkpoints(checkpoints, store.key, [store])
                if wide or cp.stream in ("", name)]
    tables = store.tables()
    for table in tables if wide else [t for t in (name,) if t in tables]:
        try:
            diff = adjudicate_table(store, table)
        except Exception as e:  # a log the chain check already names cannot be replayed
            out.append(f"adjudication: {table} cannot be replayed ({e})")
            continue
        if diff is not None:
            out.append(f"adjudication: {diff}")
    return out


def slice_from_env() -> int:
    """The rolling pass's events per period: ``DICETABLE_VERIFY_SLICE``, else the default."""
    raw = os.environ.get("DICETABLE_VERIFY_SLICE", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else ROLLING_SLICE


Fault = Callable[[str, tuple[str, str], str], None]
"""How a stream found failing is faulted: (stream, (what, detail), when)."""


class Verification:
    """The floor's check at start-up and every period: the links added since each stream's
    verified head, a slice of the rolling full pass, and the checkpoint file's new lines (the
    whole file again each time a full pass ends); a checkpoint is written when it finds no new
    fault.

    At start-up the newest checkpoint is verified against the store first; the heads it signed
    are then the verified heads, so a restart walks only the events after them (a checkpoint
    is written only after a verification found nothing new, and its signature needs the key).
    Without a checkpoint file the first check walks every stream whole.
    """

    def __init__(self, store: EventStore, faults: Faults, high_water: HighWater,
                 checkpoints: Path | None, *, slice_events: int | None = None) -> None:
        self.store = store
        self.faults = faults
        self.high_water = high_water
        self.checkpoints = checkpoints
        self.chains = ChainVerifier(store, slice_events=slice_events or slice_from_env())
        self.seen = 0
        """Lines of the checkpoint file this process wrote or verified: never fewer later."""
        self._cursor: Cursor | None = None
        """How much of the checkpoint file is verified (None: nothing yet)."""
        self._size = 0
        """The checkpoint file's size when this process last wrote or read it whole."""

    def run(self, held: Iterable[tuple[str, Head]], fault: Fault, now: str) -> None:
        """One verification; ``held`` are the heads this process committed or read."""
        store, faults = self.store, self.faults
        before = set(faults.open)
        if self._cursor is None:
            self._anchor(fault, now)
            self._openings(fault, now)
        # Has any head moved back behind what this process committed or read? The chain
        # alone cannot tell (the shorter chain verifies).
        for stream, head in held:
            self.high_water.note(store, stream, head)
        for stream in self.high_water.streams():
            if stream not in faults.open:
                problem = self.high_water.check(stream)
                if problem is not None:
                    fault(stream, problem, now)
        for stream in store.stream_ids():  # tables, accounts, staff, faults, answers
            if stream not in faults.open:
                found = self.chains.check_new(stream)
                if found is not None:
                    fault(stream, (found.what, f"seq {found.seq}: {found.detail}"), now)
        passes = self.chains.passes
        for found in self.chains.roll(skip=faults.open):
            if found.table not in faults.open:
                fault(found.table, (found.what, f"seq {found.seq}: {found.detail}"), now)
        if self.checkpoints is not None and store.key:
            self._checkpoints(self.checkpoints, store.key, self.chains.passes > passes,
                              before, fault, now)
        for stream, head in self.chains.verified.items():  # what verified is what was read
            if stream not in faults.open:
                self.high_water.note(store, stream, head)

    def _anchor(self, fault: Fault, now: str) -> None:
        """Start-up: verify the newest checkpoint against the store, and take the heads it
        signed as verified."""
        self._cursor = Cursor()
        path, key = self.checkpoints, self.store.key
        if path is None or not key or not path.exists():
            return
        top = newest(path, key)
        if top is None:
            return  # the file's own check names what is wrong with its last line
        cursor, claimed = top
        found, verified = verify_lines(path, key, [self.store], cursor)
        if verified == cursor:
            return
        self._report(found, fault, now)
        broken = {cp.stream for cp in found}
        for stream, head in claimed.items():
            if head.seq and stream not in broken and stream not in self.faults.open:
                self.chains.anchor(stream, head)
        self._cursor = verified
        self.seen = verified.lines
        self._size = verified.offset

    def _openings(self, fault: Fault, now: str) -> None:
        """Start-up: each table's opening event can be read (a table is loaded from it, and
        it may lie in an archive file): one whose archive is bad is faulted, not loaded."""
        for table in self.store.tables():
            try:
                next(self.store.records(table, after=0, until=1), None)
            except ArchiveError as e:
                fault(table, ("archive", f"seq 1: {e.message}"), now)

    def _checkpoints(self, path: Path, key: bytes, whole: bool, before: set[str], fault: Fault,
                     now: str) -> None:
        faults = self.faults
        size = path.stat().st_size if path.exists() else 0
        if size < self._size:  # the file only grows: shorter, its newest lines were removed
            cut = checkpoint_file_behind(path, self.seen)
            if cut is not None:
                faults.raise_fault(CHECKPOINTS, cut[0], cut[1], now)
        found: list[CheckpointProblem] = []
        if path.exists():
            since = Cursor() if whole or self._cursor is None else self._cursor
            found, self._cursor = verify_lines(path, key, [self.store], since,
                                               newest_only=since == Cursor())
            self._report(found, fault, now)
        if not found and not set(faults.open) - before and CHECKPOINTS not in faults.open:
            # A faulted stream's head is not signed: its log is not vouched for.
            signed = {s: h for s, h in heads_of([self.store]).items() if s not in faults.open}
            self.seen = write_checkpoint(path, key, signed, at=now)
        if path.exists():
            self._size = max(self._size, path.stat().st_size)

    def _report(self, found: list[CheckpointProblem], fault: Fault, now: str) -> None:
        for cp in found:
            if cp.stream:
                fault(cp.stream, (cp.what, str(cp)), now)
            else:
                self.faults.raise_fault(CHECKPOINTS, cp.what, str(cp), now)
