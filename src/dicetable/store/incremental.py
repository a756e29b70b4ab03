"""Verification whose cost follows the work, not the history (spec/standards.md MEM-2).

Each stream keeps the head up to which its chain is known good: verified in this process, or
signed in the newest checkpoint (``anchor``). ``check_new`` walks only the links after that
head, so a periodic check costs what the events since the last one cost. The history behind
those heads is walked again by a rolling full pass, ``ROLLING_SLICE`` events per call of
``roll``: the whole log is re-verified over several periods, and a rewrite anywhere in it is
found - in new events by ``check_new``, in old ones by the pass that reaches it. A pass ends
each stream where ``check_new`` took over (the verified head), so the two halves meet.

Archived history (``store/archive.py``) is not walked link by link again: its links were
verified before it was archived, each file's signed manifest holds the digest of its rows,
and the store's index anchors each span between the one before it and the live chain. So a
stream's pass checks the index's spans link to one another (no file read) and walks from the
last archived link into the live log, and then the pass checks each archive file in steps
(``FileCheck``: signature, the index's spans, the rows' digest - decompressed and hashed, no
row parsed) at ``ARCHIVE_BYTES_PER_EVENT`` bytes per event of the slice. A period costs what
the live log and one slice cost, however many days are archived; every file is re-read once
a pass.

>>> from dicetable.store.memory import MemoryStore
>>> from dicetable.store.durable import DurableTable
>>> import dataclasses
>>> store = MemoryStore(key=b"k" * 32)
>>> t = DurableTable.open(store, "pa-craps", "t1").table
>>> _ = t.join("alice"), t.buy_in("alice", 100_00)
>>> chains = ChainVerifier(store, slice_events=2)
>>> chains.check_new("t1") is None, chains.verified["t1"].seq
(True, 3)
>>> rows = store.rows["t1"]
>>> rows[1] = dataclasses.replace(rows[1], body=rows[1].body.replace("alice", "mallory"))
>>> chains.check_new("t1") is None   # nothing new: the old rows are the rolling pass's
True
>>> [str(p) for p in chains.roll()]  # the first slice: events 1-2
['t1 seq 2: altered - its content does not match its hash']
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dicetable.store.archive_file import ArchiveError, FileCheck, Span
from dicetable.store.audit import Problem, end_problem, walk_links
from dicetable.store.base import EventStore
from dicetable.store.chain import EMPTY, Head, StoredEvent

ROLLING_SLICE = 50_000
"""Events the rolling full pass re-verifies per call (industry-default; the server takes
``DICETABLE_VERIFY_SLICE``): a floor of N events is re-verified in full every
N / ROLLING_SLICE periods, and each period's cost is bounded whatever the history."""

ARCHIVE_BYTES_PER_EVENT = 512
"""Archive bytes checked (decompressed and hashed) in place of one event walked: a stored
row is about 509 bytes, and hashing them costs far less than walking its link (industry-
default)."""


@dataclass
class _Pass:
    """Where the rolling pass stands: the streams it walks and its place in the current one."""

    streams: list[str]
    index: int = 0
    at: Head | None = None
    """Where the pass stands in the current stream (None: it has not begun it)."""
    archived: dict[str, list[Span]] = field(default_factory=dict)
    """The archive spans met so far, by file (its signature)."""
    files: list[FileCheck] | None = None
    file_index: int = 0


class ChainVerifier:
    """The verified head of each stream, and the rolling full pass behind them."""

    def __init__(self, store: EventStore, *, slice_events: int = ROLLING_SLICE) -> None:
        if slice_events < 1:
            raise ValueError("the rolling pass must verify at least one event per call")
        self.store = store
        self.slice_events = slice_events
        self.verified: dict[str, Head] = {}
        """Each stream's chain is known good up to this head."""
        self.passes = 0
        """Rolling full passes completed."""
        self.walked_new = 0
        self.walked_rolling = 0
        """Events walked so far by ``check_new`` and by the rolling pass (what the checks
        cost, in events)."""
        self.checked_archive_bytes = 0
        """Archive bytes the rolling pass decompressed and hashed so far."""
        self._pass: _Pass | None = None

    def anchor(self, stream: str, head: Head) -> None:
        """Take ``head`` as verified (a signed checkpoint's, or this process's own check)."""
        held = self.verified.get(stream)
        if held is None or head.seq > held.seq:
            self.verified[stream] = head

    def forget(self, stream: str) -> None:
        """Verify ``stream`` from its first event next time (after a fault was cleared)."""
        self.verified.pop(stream, None)

    def check_new(self, stream: str) -> Problem | None:
        """Walk the links after the verified head up to the store's head; on success the
        verified head moves there. The stream may be in play: a problem found while its head
        moved is looked at again (an append between reading the head and the rows looks like
        rows added outside the store)."""
        start = self.verified.get(stream, EMPTY)
        problem: Problem | None = None
        for _ in range(5):
            head = self.store.head(stream)
            rows = self.store.records(stream, after=max(0, start.seq - 1))
            try:
                problem = self._still_there(stream, start, rows)
            except ArchiveError as e:  # the verified head's event is archived, its file bad
                return Problem(stream, start.seq, "archive", e.message)
            walk = walk_links(self.store, stream, start, rows=rows)
            self.walked_new += walk.events
            problem = problem or walk.problem or end_problem(stream, walk.end, head, start)
            if problem is None:
                self.anchor(stream, walk.end)
                return None
            if self.store.head(stream) == head:
                break
        return problem

    def roll(self, budget: int | None = None, *, skip: Container[str] = ()) -> list[Problem]:
        """Re-verify up to ``budget`` (default ``slice_events``) more events of the history
        behind the verified heads, where the last call stopped; a stream with no verified
        head is left to ``check_new``, one in ``skip`` (already faulted) is passed over. At
        most one pass ends per call."""
        left = self.slice_events if budget is None else budget
        found: list[Problem] = []
        if self._pass is None:
            self._pass = _Pass(self.store.stream_ids())
        rolling = self._pass
        while left > 0 and rolling.index < len(rolling.streams):
            stream = rolling.streams[rolling.index]
            target = None if stream in skip else self.verified.get(stream)
            if rolling.at is None and target is not None:
                problem = self._begin(stream, rolling)
                if problem is not None:
                    found.append(problem)
                    rolling.index, rolling.at = rolling.index + 1, None
                    continue
            at = EMPTY if rolling.at is None else rolling.at
            if target is None or at.seq >= target.seq:
                # A verified head inside the archive is the file checks' to vouch for.
                problem = None if target is None or at.seq > target.seq \
                    else self._meets(stream, at, target)
                found += [problem] if problem is not None else []
                rolling.index, rolling.at = rolling.index + 1, None
                continue
            until = min(target.seq, at.seq + left)
            walk = walk_links(self.store, stream, at, until=until)
            left -= max(walk.events, 1)
            self.walked_rolling += walk.events
            if walk.problem is None and walk.end.seq < until:
                walk.problem = Problem(stream, walk.end.seq + 1, "deleted",
                                       f"events {walk.end.seq + 1}-{until} are missing from "
                                       "the verified history")
            if walk.problem is not None:
                found.append(walk.problem)
                rolling.index, rolling.at = rolling.index + 1, None
                continue
            rolling.at = walk.end
        if rolling.index >= len(rolling.streams):
            left, problems = self._check_files(rolling, left, skip)
            found += problems
        if rolling.index >= len(rolling.streams) and rolling.files is not None \
                and rolling.file_index >= len(rolling.files):
            self.passes += 1
            self._pass = None
        return found

    def _begin(self, stream: str, rolling: _Pass) -> Problem | None:
        """Start a stream's pass at its last archived link, once the index's spans are seen
        to link to one another from the stream's start (no file is read here)."""
        spans = self.store.archive_spans(stream)
        at = EMPTY
        for span in spans:
            if span.first != at.seq + 1 or span.first_prev != at.hash or span.last < span.first:
                return Problem(stream, at.seq + 1, "archive",
                               f"the archive index does not link: seqs {span.first}-"
                               f"{span.last} ({Path(span.file).name}) do not follow seq "
                               f"{at.seq}")
            rolling.archived.setdefault(span.mac, []).append(span)
            at = span.end
        rolling.at = at
        return None

    def _check_files(self, rolling: _Pass, left: int, skip: Container[str]
                     ) -> tuple[int, list[Problem]]:
        """Check archive files in steps, up to ``left`` events' worth of bytes."""
        if rolling.files is None:
            rolling.files = [FileCheck(Path(spans[0].file), self.store.key or b"", mac, spans)
                             for mac, spans in rolling.archived.items()]
        found: list[Problem] = []
        while left > 0 and rolling.file_index < len(rolling.files):
            check = rolling.files[rolling.file_index]
            try:
                used = check.step(left * ARCHIVE_BYTES_PER_EVENT)
            except ArchiveError as e:
                found += [Problem(s.stream, s.first, "archive", e.message)
                          for s in check.spans if s.stream not in skip]
                rolling.file_index += 1
                continue
            self.checked_archive_bytes += used
            left -= max(1, -(-used // ARCHIVE_BYTES_PER_EVENT))
            if check.done:
                rolling.file_index += 1
        return left, found

    @staticmethod
    def _still_there(stream: str, start: Head, rows: Iterator[StoredEvent]) -> Problem | None:
        """Whether the verified head's own event is still stored as it was verified (one
        row read: a log cut back at its end, its recorded head left, is found at once)."""
        if not start.seq:
            return None
        first = next(rows, None)
        if first is None or first.seq != start.seq:
            return Problem(stream, start.seq, "deleted", f"the verified event {start.seq} is "
                                                         "no longer stored")
        if first.hash != start.hash:
            return Problem(stream, start.seq, "altered", f"the event stored at seq {start.seq} "
                                                         "is not the one verified")
        return None

    @staticmethod
    def _meets(stream: str, end: Head, target: Head) -> Problem | None:
        if end == target:
            return None
        return Problem(stream, target.seq, "altered",
                       f"the history re-verified ends at seq {end.seq}, not at the verified "
                       f"head seq {target.seq} (the log before it was rewritten)")
