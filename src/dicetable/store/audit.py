"""``audit verify``: walk each stream's hash chain and name the first event that is wrong.

Every stream is checked the same way, whatever its aggregate (a table, the custody ledger).
What is checked, stream by stream (spec/standards.md MEM-2, anchor 6):

- every event's hash is SHA-256 of its predecessor's hash and its own canonical JSON;
- every event links to the one before it, sequence numbers run 1, 2, 3... with no gap, and
  each event's own ``seq``/``table`` agree with where it is stored;
- the chain ends at the head the store recorded with the last append (so events cut from,
  or added to, the end are found too);
- each snapshot is intact, bound to the event it follows, and (unless ``replay=False``) equal
  to the state a replay of the log reaches there; the replayed table conserves money.

A problem is one of ``altered``, ``deleted``, ``inserted``, ``reordered`` (an event) or
``snapshot`` / ``money`` (derived data). The walk stops at a table's first problem: past a
broken link nothing later can be trusted.

>>> from dicetable.store.memory import MemoryStore
>>> from dicetable.store.durable import DurableTable
>>> store = MemoryStore()
>>> t = DurableTable.open(store, "pa-craps", "t1").table
>>> _ = t.join("alice"), t.buy_in("alice", 100_00)
>>> [r.ok for r in verify_store(store)]
[True]
>>> import dataclasses
>>> rows = store.rows["t1"]
>>> rows[2] = dataclasses.replace(rows[2], body=rows[2].body.replace("10000", "99900"))
>>> print(verify_store(store)[0].problems[0])
t1 seq 3: altered - its content does not match its hash
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dicetable.store import base
from dicetable.store.archive_file import ArchiveError, FileCheck, Span
from dicetable.store.base import EventStore, key_mismatch
from dicetable.store.chain import GENESIS, Head, StoredEvent, decode, link_hash

_RECENT = 256
"""How far back a link is looked for when naming an inserted event."""


@dataclass(frozen=True)
class Problem:
    table: str
    seq: int
    what: str
    detail: str

    def __str__(self) -> str:
        return f"{self.table} seq {self.seq}: {self.what} - {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "seq": self.seq, "what": self.what, "detail": self.detail}


@dataclass
class TableReport:
    table: str
    events: int = 0
    head: Head | None = None
    snapshots: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "ok": self.ok, "events": self.events,
                "head": None if self.head is None else {"seq": self.head.seq,
                                                        "hash": self.head.hash},
                "snapshots": self.snapshots,
                "problems": [p.to_dict() for p in self.problems]}


class _Peek:
    def __init__(self, rows: Iterable[StoredEvent]) -> None:
        self._it: Iterator[StoredEvent] = iter(rows)
        self._next: StoredEvent | None = next(self._it, None)

    def pop(self) -> StoredEvent | None:
        row = self._next
        if row is not None:
            self._next = next(self._it, None)
        return row

    def peek(self) -> StoredEvent | None:
        return self._next


def _data(row: StoredEvent) -> dict[str, Any] | None:
    try:
        value = json.loads(row.body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _claimed_seq(data: dict[str, Any] | None) -> int | None:
    seq = data.get("seq") if data is not None else None
    return seq if isinstance(seq, int) else None


def _diagnose(table: str, row: StoredEvent, nxt: StoredEvent | None, expected: int, prev: str,
              recent: OrderedDict[str, int], kind: str = base.TABLE,
              key: bytes | None = None) -> Problem | None:
    def problem(what: str, detail: str, seq: int | None = None) -> Problem:
        return Problem(table, row.seq if seq is None else seq, what, detail)

    data = _data(row)
    claimed = _claimed_seq(data)
    if row.seq > expected and row.prev_hash != prev:
        gap = f"seq {expected}" if row.seq == expected + 1 else f"seqs {expected}-{row.seq - 1}"
        return problem("deleted", f"{gap} missing: the chain jumps from {expected - 1} to "
                                  f"{row.seq}", expected)
    if data is None:
        return problem("altered", "its content is not a JSON event")
    if link_hash(row.prev_hash, row.body, key) != row.hash:
        if claimed is not None and claimed != row.seq:
            return problem("reordered", f"the content of event {claimed} is stored at seq "
                                        f"{row.seq}")
        return problem("altered", "its content does not match its hash")
    if row.prev_hash != prev:
        if row.prev_hash in recent:
            j = recent[row.prev_hash]
            return problem("inserted", f"events {j + 1}-{row.seq - 1} are not in the chain "
                                       f"(seq {row.seq} links to seq {j})", j + 1)
        if claimed is not None and claimed != row.seq:
            shift = claimed - row.seq
            if shift > 0 and nxt is not None and nxt.prev_hash == row.hash \
                    and _claimed_seq(_data(nxt)) == nxt.seq + shift:
                return problem("deleted", f"{shift} event(s) before seq {claimed} were removed "
                                          "and the later ones renumbered")
            return problem("reordered", f"event {claimed} is stored at seq {row.seq}")
        if nxt is not None and nxt.prev_hash == prev:
            return problem("inserted", "it is not in the chain (the next event links past it)")
        # Each row is self-consistent but the link between them is not: the earlier one was
        # rewritten and re-hashed (its successor still names the original).
        return problem("altered", f"event {expected - 1} was rewritten: event {row.seq} is "
                                  f"chained to a different event {expected - 1}", expected - 1)
    if row.seq != expected:
        return problem("altered", f"stored as seq {row.seq} but the chain continues from "
                                  f"{expected - 1}")
    owner = base.claimed_stream(kind, data)
    if claimed != row.seq or owner != table:
        return problem("reordered" if claimed != row.seq else "altered",
                       f"the event says stream {owner!r} seq {claimed}, but is "
                       f"stored as {table!r} seq {row.seq}")
    if data.get("type") != row.kind:
        return problem("altered", f"stored kind {row.kind!r} but the event is "
                                  f"{data.get('type')!r}")
    return None


def verify_table(store: EventStore, table: str, *, replay: bool = True) -> TableReport:
    """Check one stream's chain, head and snapshots (a table's, or any other aggregate's)."""
    kind = base.kind_of(table)
    agg = base.aggregate(kind)
    report = TableReport(table)
    keyed = key_problem(store)
    if keyed is not None:
        report.problems.append(Problem(table, 0, "key", keyed))
        return report
    recorded = store.head(table)
    report.head = recorded
    snaps = {s.seq: s for s in store.snapshots(table)}
    report.snapshots = len(snaps)
    hashes_at: dict[int, str] = {}
    states_at: dict[int, dict[str, Any]] = {}
    state = agg.new_state()
    recent: OrderedDict[str, int] = OrderedDict()
    expected, prev = 1, GENESIS
    last: StoredEvent | None = None
    unreplayable: Problem | None = None  # reported after the chain checks, which name more
    try:
        _check_archive_files(store, table)
        rows = _Peek(store.records(table))
        while (row := rows.pop()) is not None:
            found = _diagnose(table, row, rows.peek(), expected, prev, recent, kind, store.key)
            if found is not None:
                report.problems.append(found)
                return report
            if replay and unreplayable is None:
                try:
                    event = decode(json.loads(row.body))
                    if not isinstance(event, agg.event_type):
                        raise ValueError(f"a {event.kind} is not a {kind} event")
                    agg.fold(state, event)
                except Exception as e:  # the chain holds, but the event is not a valid one
                    unreplayable = Problem(table, row.seq, "altered",
                                           f"the event cannot be replayed: {e}")
            if row.seq in snaps:
                hashes_at[row.seq] = row.hash
                if replay:
                    states_at[row.seq] = agg.encode_state(state)
            recent[row.hash] = row.seq
            if len(recent) > _RECENT:
                recent.popitem(last=False)
            report.events += 1
            expected, prev, last = row.seq + 1, row.hash, row
    except ArchiveError as e:  # an archive file missing, altered or not the one indexed
        report.problems.append(Problem(table, expected, "archive", e.message))
        return report
    report.problems += _check_end(table, last, recorded)
    if unreplayable is not None and not report.problems:
        report.problems.append(unreplayable)
    if report.problems:
        return report
    for seq, snap in sorted(snaps.items()):
        sound = snap.sound(store.key)
        report.problems += _check_snapshot(table, seq, sound, snap.event_hash,
                                           hashes_at.get(seq), snap.data() if sound
                                           else None, states_at.get(seq), replay)
    if replay and report.events and unreplayable is None:
        what = "money" if kind == base.TABLE else "state"
        report.problems += [Problem(table, state.seq, what, detail)
                            for detail in agg.invariants(state)]
    return report


def key_problem(store: EventStore) -> str | None:
    """Why this store's chain cannot be checked with the key in hand (None: it can)."""
    recorded = store.recorded_key_id()
    if (recorded or "") == store.key_id:
        return None
    if recorded is None:
        return ("the log does not record the key its chain is written with (its key record "
                "was removed?)")
    return str(key_mismatch(recorded, store.key_id, store.location).message)


def _check_end(table: str, last: StoredEvent | None, head: Head) -> list[Problem]:
    last_seq = last.seq if last is not None else 0
    if last_seq < head.seq:
        return [Problem(table, last_seq + 1, "deleted",
                        f"events {last_seq + 1}-{head.seq} missing from the end (the store "
                        f"recorded head seq {head.seq})")]
    if last is not None and last_seq > head.seq:
        return [Problem(table, head.seq + 1, "inserted",
                        f"events {head.seq + 1}-{last_seq} were added outside the store (its "
                        f"recorded head is seq {head.seq})")]
    if last is not None and last.hash != head.hash:
        return [Problem(table, last_seq, "altered",
                        "the chain does not end at the hash the store recorded (the log was "
                        "rewritten)")]
    return []


def _check_snapshot(table: str, seq: int, intact: bool, bound: str, actual: str | None,
                    data: dict[str, Any] | None, replayed: dict[str, Any] | None,
                    replay: bool) -> list[Problem]:
    if not intact:
        return [Problem(table, seq, "snapshot", "the snapshot's content does not match its "
                                                "digest")]
    if actual is None or actual != bound:
        return [Problem(table, seq, "snapshot", "the snapshot is not bound to the stored "
                                                f"event {seq}")]
    if replay and data != replayed:
        return [Problem(table, seq, "snapshot", "the snapshot differs from the state a "
                                                "replay of the log reaches")]
    return []


def _check_archive_files(store: EventStore, table: str) -> None:
    """Each archive file of the stream checked whole - its manifest's signature, that it is
    the file the index names, its rows' digest - as the rolling pass does: a read of some seqs
    checks only the blocks it reads, the audit the files themselves (``ArchiveError``)."""
    by_file: dict[str, list[Span]] = {}
    for span in store.archive_spans(table):
        by_file.setdefault(span.mac, []).append(span)
    for spans in by_file.values():
        check = FileCheck(Path(spans[0].file), store.key or b"", spans[0].mac, spans)
        while not check.done:
            check.step(1 << 24)


def verify_store(store: EventStore, tables: Iterable[str] | None = None, *,
                 replay: bool = True) -> list[TableReport]:
    """Check every stream of every aggregate (or the ones named)."""
    names = sorted(tables) if tables is not None else store.streams()
    return [verify_table(store, t, replay=replay) for t in names]


@dataclass
class Walk:
    """What a walk of part of a stream's chain found: its end, how many events it read, and
    its first problem (None: every link held)."""

    end: Head
    events: int = 0
    problem: Problem | None = None


def walk_links(store: EventStore, table: str, start: Head, *, until: int | None = None,
               rows: Iterable[StoredEvent] | None = None) -> Walk:
    """Check the links of ``table`` after ``start`` - a head already verified (``EMPTY``: the
    whole chain) - up to seq ``until`` (default: every stored row). Stops at the first
    problem; what lies before ``start`` is taken as verified.

    >>> from dicetable.store.memory import MemoryStore
    >>> from dicetable.store.durable import DurableTable
    >>> from dicetable.store.chain import EMPTY
    >>> store = MemoryStore()
    >>> t = DurableTable.open(store, "pa-craps", "t1").table
    >>> _ = t.join("alice"); mark = store.head("t1"); _ = t.buy_in("alice", 100_00)
    >>> w = walk_links(store, "t1", mark); (w.events, w.end == store.head("t1"), w.problem)
    (1, True, None)
    """
    kind = base.kind_of(table)
    recent: OrderedDict[str, int] = OrderedDict()
    expected, prev = start.seq + 1, start.hash
    end, count = start, 0
    try:
        peek = _Peek(rows if rows is not None else store.records(table, after=start.seq,
                                                                 until=until))
        while (row := peek.pop()) is not None:
            found = _diagnose(table, row, peek.peek(), expected, prev, recent, kind, store.key)
            if found is not None:
                return Walk(end, count, found)
            recent[row.hash] = row.seq
            if len(recent) > _RECENT:
                recent.popitem(last=False)
            count += 1
            expected, prev, end = row.seq + 1, row.hash, Head(row.seq, row.hash)
    except ArchiveError as e:  # an archive file missing, altered or not the one indexed
        return Walk(end, count, Problem(table, expected, "archive", e.message))
    return Walk(end, count)


def end_problem(table: str, end: Head, head: Head, start: Head) -> Problem | None:
    """Whether a walk that ended at ``end`` (having started at ``start``) meets the head the
    store recorded: nothing cut from the end, added past it or rewritten at it."""
    if head.seq < start.seq:
        return Problem(table, head.seq + 1, "truncated",
                       f"the store's head is seq {head.seq}, behind seq {start.seq} that was "
                       "verified (events were dropped from the end and the head moved back)")
    last = None if end.seq == 0 else StoredEvent(table, end.seq, "", "", "", end.hash)
    found = _check_end(table, last, head)
    return found[0] if found else None
