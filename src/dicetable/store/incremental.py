"""Verification whose cost follows the work, not the history (spec/standards.md MEM-2).

Each stream keeps the head up to which its chain is known good: verified in this process, or
signed in the newest checkpoint (``anchor``). ``check_new`` walks only the links after that
head, so a periodic check costs what the events since the last one cost. The history behind
those heads is walked again by a rolling full pass, ``ROLLING_SLICE`` events per call of
``roll``: the whole log is re-verified over several periods, and a rewrite anywhere in it is
found - in new events by ``check_new``, in old ones by the pass that reaches it. A pass ends
each stream where ``check_new`` took over (the verified head), so the two halves meet.

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
from dataclasses import dataclass

from dicetable.store.archive_file import ArchiveError
from dicetable.store.audit import Problem, end_problem, walk_links
from dicetable.store.base import EventStore
from dicetable.store.chain import EMPTY, Head, StoredEvent

ROLLING_SLICE = 50_000
"""Events the rolling full pass re-verifies per call (industry-default; the server takes
``DICETABLE_VERIFY_SLICE``): a floor of N events is re-verified in full every
N / ROLLING_SLICE periods, and each period's cost is bounded whatever the history."""


@dataclass
class _Pass:
    """Where the rolling pass stands: the streams it walks and its place in the current one."""

    streams: list[str]
    index: int = 0
    at: Head = EMPTY


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
            if target is None or rolling.at.seq >= target.seq:
                problem = None if target is None else self._meets(stream, rolling.at, target)
                found += [problem] if problem is not None else []
                rolling.index, rolling.at = rolling.index + 1, EMPTY
                continue
            until = min(target.seq, rolling.at.seq + left)
            walk = walk_links(self.store, stream, rolling.at, until=until)
            left -= max(walk.events, 1)
            self.walked_rolling += walk.events
            if walk.problem is None and walk.end.seq < until:
                walk.problem = Problem(stream, walk.end.seq + 1, "deleted",
                                       f"events {walk.end.seq + 1}-{until} are missing from "
                                       "the verified history")
            if walk.problem is not None:
                found.append(walk.problem)
                rolling.index, rolling.at = rolling.index + 1, EMPTY
                continue
            rolling.at = walk.end
        if rolling.index >= len(rolling.streams):
            self.passes += 1
            self._pass = None
        return found

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
