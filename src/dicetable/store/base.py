"""The one store interface every backend implements (DESIGN.md lesson 9).

A table's log is appended in batches keyed on (table, sequence number): a batch must start
right after the head its writer last saw, or the append is refused with ``StaleVersion`` and
nothing is written. Nothing is ever overwritten.

The client request in progress on this thread (its idempotency key), for the store.

The server's idempotency layer sets it around a command; every append the command makes
records it in the same transaction as the events (``EventStore.append``), so after a crash
a retry can tell whether its command was applied.

Streams of every aggregate in one store: which kind of aggregate a stream id names.

A stream id is ``KIND:NAME`` for every aggregate but a table (``custody:river`` is the dice
custody ledger of the site ``river``); a table's stream id is its table id, as it always was,
so the logs of existing floors read unchanged. Each kind registers an ``Aggregate``: how to
fold its events into a state, how a snapshot of that state is written and read, and what must
hold after a replay (a table conserves money). The hash chain, snapshots, audit, recall and
export work on every registered kind; a new kind (accounts, staff assignments) registers
itself the same way.

>>> kind_of("craps-pa-1"), kind_of("custody:river"), stream_id("custody", "river")
('table', 'custody', 'custody:river')
>>> name_of("custody:river"), kind_of("odd:name")
('river', 'table')
"""

from __future__ import annotations

import gc
import logging
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from dicetable.core.errors import InvalidInput, StaleVersion
from dicetable.core.events import Event
from dicetable.games.events import Event as TableEvent
from dicetable.store.archive_file import (
    ArchiveBlocks,
    ArchiveError,
    Raw,
    Span,
    read_verified,
    stream_rows,
)
from dicetable.store.chain import (
    EMPTY,
    Head,
    Snapshot,
    StoredEvent,
    decode_body,
    encode,
    key_id,
    make_snapshot,
)

log = logging.getLogger(__name__)


class _Pauses:
    """How many threads have the cycle collector paused (``collector_paused``), and whether
    it was on before the first of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held = 0
        self.resume = False


_PAUSES = _Pauses()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while the block runs: for work that makes many
    containers that are all kept until it ends, or freed by reference counting as soon as
    it ends (a day's rounds rebuilt: some 10^5 events; a roll's push to 1,000 players: some
    25,000 patches, parts and texts), which the collector would otherwise walk again and
    again (a third of a day's rebuild; a tenth of a push, finding nothing to free). Nothing
    built there is left in a cycle. Several threads may hold it at once (two tables
    pushing): the collector is on again once the last one ends, unless it was off before
    the first began."""
    with _PAUSES.lock:
        if _PAUSES.held == 0:
            _PAUSES.resume = gc.isenabled()
            gc.disable()
        _PAUSES.held += 1
    try:
        yield
    finally:
        with _PAUSES.lock:
            _PAUSES.held -= 1
            if _PAUSES.held == 0 and _PAUSES.resume:
                gc.enable()


@dataclass(frozen=True, slots=True)
class Notice:
    """Stream ``table`` (a table id, or ``KIND:NAME`` for another aggregate) now has events up
    to ``seq`` (what a subscriber is told)."""

    table: str
    seq: int


Listener = Callable[[Notice], None]


class Subscription:
    """A registered listener; ``close()`` stops the notices."""

    def __init__(self, on_close: Callable[[], None]) -> None:
        self._on_close = on_close
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._on_close()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A client request whose events were committed: table and the seqs it wrote."""

    request: str
    table: str
    first_seq: int
    last_seq: int


def key_mismatch(recorded: str, mine: str, location: str) -> InvalidInput:
    have = f"key {mine}" if mine else "no key"
    want = f"key {recorded}" if recorded else "no key (an unkeyed chain)"
    return InvalidInput(f"the log at {location} is chained with {want}; this process has "
                        f"{have} (dicetable keys init / --key)", rule="store.key")


@dataclass(slots=True)
class AppendRequest:
    """One writer's batch, encoded and checked for shape, waiting to be written."""

    table: str
    expected: int
    kinds: list[str]
    bodies: list[str]
    request: str | None = None
    """The client's request (idempotency) key: recorded with the events, in their commit."""
    spans: tuple[tuple[str, int, int], ...] = ()
    """Several requests' keys in one batch (a table's pipelined commands): each key with
    the first and last seq its command wrote, recorded in the same commit."""

    def records(self, first: int, last: int) -> list[tuple[str, int, int]]:
        """Every request key this append records, with the seqs it wrote."""
        out = [(self.request, first, last)] if self.request else []
        return out + list(self.spans)


def stale(table: str, expected: int, head: Head) -> StaleVersion:
    return StaleVersion(f"table {table!r} is at seq {head.seq}; this writer expected "
                        f"{expected} (reload the table and decide again)", rule="store.sequence")


def prepare(table: str, events: Sequence[Event], expected: int | None,
            request: str | None = None,
            spans: Sequence[tuple[str, int, int]] = ()) -> AppendRequest:
    """Check a batch's shape and encode it. Raises ``InvalidInput`` on a malformed batch.

    ``table`` is the stream id: a table id, or ``KIND:NAME`` for another aggregate.
    """
    if not table:
        raise InvalidInput("a stream id is required", rule="store.table")
    agg = aggregate(table)
    if not events:
        raise InvalidInput("nothing to append", rule="store.append")
    first = events[0].seq
    if expected is None:
        expected = first - 1
    for i, e in enumerate(events):
        if not isinstance(e, agg.event_type) or e.stream != table:
            raise InvalidInput(f"event {e.kind} belongs to stream {_stream_of(e)!r}, not "
                               f"{table!r}", rule="store.table")
        if e.seq != expected + 1 + i:
            raise InvalidInput(f"event {e.kind} has seq {e.seq}; expected {expected + 1 + i}",
                               rule="store.sequence")
    kinds: list[str] = []
    bodies: list[str] = []
    for e in events:
        kind, body = encode(e)
        kinds.append(kind)
        bodies.append(body)
    return AppendRequest(table, expected, kinds, bodies, request, tuple(spans))


def _stream_of(event: Event) -> str:
    try:
        return event.stream
    except NotImplementedError:
        return "(none)"


class EventStore(ABC):
    """An append-only, hash-chained log of every stream's events, with snapshots: one stream
    per aggregate (each table, the site's custody ledger; ``dicetable.store.base``)."""

    key: bytes | None = None
    """The chain key (HMAC-SHA256), or None for the plain SHA-256 chain."""

    def __init__(self) -> None:
        self._listeners: dict[int, Listener] = {}
        self._listener_lock = threading.Lock()
        self._next_listener = 0
        self._archive_files: OrderedDict[str, _HeldArchive] = OrderedDict()
        self._archive_lock = threading.Lock()
        self._spans_seen: dict[str, list[Span]] = {}

    # -- writing ------------------------------------------------------------------------------
    def append(self, table: str, events: Sequence[Event], expected: int | None = None,
               request: str | None = None,
               spans: Sequence[tuple[str, int, int]] = ()) -> list[StoredEvent]:
        """Durably append ``events`` after seq ``expected`` (default: the first event's seq
        less one). Returns the stored rows once they are committed.

        ``request`` (default: the one ``current_request`` says is in progress) is recorded
        in the same transaction, so a retried request can learn that it was applied;
        ``spans`` records several requests' keys (key, first seq, last seq) in one append.
        Raises ``StaleVersion`` when the table's head is not ``expected``.
        """

        return self._append(prepare(table, events, expected,
                                    request if request is not None else current_request(),
                                    spans))

    def request_record(self, request: str) -> RequestRecord | None:
        """Where the events of client request ``request`` were committed, if they were."""
        return None

    @property
    def key_id(self) -> str:
        """The id of the key this store's chain is written with ('' when unkeyed)."""
        return key_id(self.key)

    def recorded_key_id(self) -> str | None:
        """The key id the log itself records (None: the log does not say)."""
        return None

    def legacy_tables(self) -> list[str]:
        """Tables of an older layout that hold rows outside the event log (accounts,
        sessions, the old side streams): never trusted, never migrated (``application.accounts``
        refuses such a store)."""
        return []

    @abstractmethod
    def _append(self, request: AppendRequest) -> list[StoredEvent]: ...

    @abstractmethod
    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` (it replaces any earlier one at the same seq)."""

    def snapshot(self, table: str, seq: int, data: dict[str, Any], *,
                 of: type[Any] | None = None) -> Snapshot:
        """Store ``data`` as the state of ``table`` after event ``seq`` (``of``: the record
        type whose fields it holds, ``make_snapshot``)."""
        rows = list(self.records(table, after=seq - 1, until=seq))
        if not rows:
            raise InvalidInput(f"table {table!r} has no event {seq}", rule="store.snapshot")
        snap = make_snapshot(table, seq, rows[0].hash, data, self.key, of=of)
        self.save_snapshot(snap)
        return snap

    # -- reading ------------------------------------------------------------------------------
    @abstractmethod
    def stream_ids(self) -> list[str]:
        """Every stream (of any aggregate) with at least one event, sorted."""

    def streams(self, kind: str | None = None) -> list[str]:
        """Every stream, or those of one aggregate kind (``table``, ``custody``), sorted."""
        ids = self.stream_ids()
        return ids if kind is None else [s for s in ids if kind_of(s) == kind]

    def tables(self) -> list[str]:
        """Every table with at least one event, sorted."""
        return self.streams(TABLE)

    @abstractmethod
    def head(self, table: str) -> Head:
        """The table's recorded head (``EMPTY`` when it has no events)."""

    def heads_for(self, tables: Iterable[str]) -> dict[str, Head]:
        """Each table's recorded head (``head``), read together where the store can: many
        streams' heads asked at once (the sessions read again ahead of their trust's end,
        ``application.accounts``) in a few reads rather than one each."""
        return {table: self.head(table) for table in tables}

    def records(self, table: str, after: int = 0,
                until: int | None = None) -> Iterator[StoredEvent]:
        """The stored rows with ``after < seq <= until``, in order - those moved to archive
        files read from them (verified), the rest from the live log."""
        spans = self._spans_known(table)
        if spans and after < spans[-1].last:
            yield from self._archived(spans, table, after, until)
            if until is not None and until <= spans[-1].last:
                return
            after = spans[-1].last
        live = self._records(table, after, until)
        first = next(live, None)
        if first is None or first.seq > after + 1:
            # Archived since this process last looked (by another process, or this one)?
            fresh = self._spans_known(table, refresh=True)
            if fresh != spans and fresh and fresh[-1].last > after:
                yield from self.records(table, after, until)
                return
        if first is not None:
            yield first
            yield from live

    def _spans_known(self, table: str, *, refresh: bool = False) -> list[Span]:
        """The archive spans of ``table`` as last read (archives only ever grow, and a read
        that finds the live log starting later than asked reads them again)."""
        with self._archive_lock:
            held = None if refresh else self._spans_seen.get(table)
        if held is None:
            held = self.archive_spans(table)
            with self._archive_lock:
                self._spans_seen[table] = held
        return held

    @abstractmethod
    def _records(self, table: str, after: int = 0,
                 until: int | None = None) -> Iterator[StoredEvent]:
        """The live log's rows with ``after < seq <= until``, in order."""

    def bodies(self, table: str, after: int = 0, until: int | None = None) -> Iterator[str]:
        """Just the events' JSON with ``after < seq <= until`` (the replay fast path)."""
        spans = self.archive_spans(table)
        if spans and after < spans[-1].last:
            for span, first, last in _overlapping(spans, after, until):
                yield from self._archive_bodies(span, first, last)
            if until is not None and until <= spans[-1].last:
                return
            after = spans[-1].last
        if until is None:
            yield from self._bodies(table, after)
            return
        for row in self._records(table, after, until):
            yield row.body

    def _bodies(self, table: str, after: int = 0) -> Iterator[str]:
        for row in self._records(table, after):
            yield row.body

    def events(self, table: str, after: int = 0) -> Iterator[Event]:
        """The decoded events (of any aggregate) of a stream after seq ``after``, in order."""
        for body in self.bodies(table, after):
            yield decode_body(body)

    def table_events(self, table: str, after: int = 0) -> Iterator[TableEvent]:
        """A table's events after seq ``after``; an event of another aggregate is an error."""
        for event in self.events(table, after):
            if not isinstance(event, TableEvent):
                raise InvalidInput(f"{table!r} holds a {event.kind}, not a table event",
                                   rule="store.stream")
            yield event

    def seqs_of(self, table: str, kinds: Iterable[str]) -> list[int]:
        """The seqs of the table's events of the given kinds (used to find rounds)."""
        wanted = set(kinds)
        spans = self.archive_spans(table)
        archived = [r.seq for r in self._archived(spans, table, 0, None) if r.kind in wanted]
        return archived + self._seqs_of(table, wanted)

    def _seqs_of(self, table: str, kinds: set[str]) -> list[int]:
        return [r.seq for r in self._records(table) if r.kind in kinds]

    # -- archives -----------------------------------------------------------------------------
    def archive_spans(self, table: str) -> list[Span]:
        """The spans of ``table`` moved out of the live log into archive files, oldest first."""
        return []

    def move_to_archive(self, spans: list[Span]) -> None:
        """Record ``spans`` in the index and drop their events from the live log, in one
        transaction; refused (nothing changes) unless each span's live events are exactly
        those the archive holds - the same seqs, ending at the same hash."""
        raise InvalidInput(f"the store at {self.location} keeps no archives",
                           rule="archive.store")

    def _archived(self, spans: list[Span], table: str, after: int,
                  until: int | None) -> Iterator[StoredEvent]:
        for span, first, last in _overlapping(spans, after, until):
            yield from self._archive_rows(span, first, last)

    def _held(self, span: Span) -> _HeldArchive:
        """The file of ``span`` as kept since it was opened (opened again once the file on
        disk changes): its signed manifest, matched with the index, for a file written in
        blocks; otherwise nothing yet (it is read whole when a stream of it is read)."""
        from pathlib import Path

        path = Path(span.file)
        try:
            st = path.stat()
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            stamp = None
        with self._archive_lock:
            held = self._archive_files.get(span.mac)
            if held is not None and held.stamp == stamp:
                self._archive_files.move_to_end(span.mac)
                return held
        held = _HeldArchive(stamp, None, {}, ArchiveBlocks.open(path, self.key), {})
        with self._archive_lock:
            self._archive_files[span.mac] = held
            while len(self._archive_files) > ARCHIVE_FILES_KEPT:
                self._archive_files.popitem(last=False)
        return held

    def _archive_rows(self, span: Span, first: int, last: int) -> list[StoredEvent]:
        """Rows ``first``..``last`` of a span, verified under the key (``_archive_raw``)."""
        raw = self._archive_raw(span, first, last)
        if raw is None:
            return [r for r in self._whole_stream(self._held(span), span)
                    if first <= r.seq <= last]
        at = first - raw[0][1]
        return [StoredEvent(*r) for r in raw[at:at + last - first + 1]]

    def _archive_bodies(self, span: Span, first: int, last: int) -> list[str]:
        """The bodies of rows ``first``..``last`` of a span (no row object built for each)."""
        raw = self._archive_raw(span, first, last)
        if raw is None:
            return [r.body for r in self._whole_stream(self._held(span), span)
                    if first <= r.seq <= last]
        at = first - raw[0][1]
        return [r[3] for r in raw[at:at + last - first + 1]]

    def _archive_raw(self, span: Span, first: int, last: int) -> list[Raw] | None:
        """The rows (as their lines hold them) of the blocks holding seqs ``first``..``last``
        of a span, from a file written in blocks: the manifest's signature and the index's
        span checked once, each block's signed digest as it is read. None: the file is read
        whole instead (written without blocks, or a block does not read - the whole file's
        checks then name what is wrong, or find it whole: the header's offsets are unsigned)."""
        held = self._held(span)
        blocks = held.blocks
        if blocks is None or not blocks.matches(span):
            return None
        out: list[Raw] = []
        try:
            for n in blocks.wanted(span, first, last):
                with self._archive_lock:
                    rows = held.parsed.get(n)
                if rows is None:
                    rows = blocks.rows(n)
                    with self._archive_lock:
                        held.parsed[n] = rows
                out += rows
        except ArchiveError:
            return None
        if not out or out[0][1] > first or out[-1][1] < last or (
                out[0][1] == span.first and out[0][4] != span.first_prev) or (
                out[-1][1] == span.last and out[-1][5] != span.last_hash):
            raise ArchiveError(f"archive {span.file} does not hold {span.stream} seqs "
                               f"{span.first}-{span.last} as the store's index records them",
                               rule="archive.index")
        return out

    def _whole_stream(self, held: _HeldArchive, span: Span) -> list[StoredEvent]:
        from pathlib import Path

        if held.body is None:
            manifest, body = read_verified(Path(span.file), self.key)
            if manifest["mac"] != span.mac:
                raise ArchiveError(f"archive {span.file} is not the file the store's index "
                                   "names (another signed file stands in its place)",
                                   rule="archive.index")
            with self._archive_lock:
                held.body = body
        with self._archive_lock:
            rows = held.streams.get(span.stream)
        if rows is None:  # only this stream's lines are parsed, once
            rows = stream_rows(held.body, span.stream)
            with self._archive_lock:
                held.streams[span.stream] = rows
        if not rows or (rows[0].seq, rows[0].prev_hash, rows[-1].seq, rows[-1].hash) != (
                span.first, span.first_prev, span.last, span.last_hash):
            raise ArchiveError(f"archive {span.file} does not hold {span.stream} seqs "
                               f"{span.first}-{span.last} as the store's index records them",
                               rule="archive.index")
        return rows

    @abstractmethod
    def snapshots(self, table: str) -> list[Snapshot]:
        """The table's snapshots, oldest first."""

    def latest_snapshot(self, table: str, at_or_before: int | None = None) -> Snapshot | None:
        best: Snapshot | None = None
        for snap in self.snapshots(table):
            if at_or_before is None or snap.seq <= at_or_before:
                best = snap
        return best

    # -- notices ------------------------------------------------------------------------------
    @property
    def hearing(self) -> int:
        """A number for the unbroken span over which every append made, by any process,
        reaches this store's subscribers as a notice (PostgreSQL's, while its LISTEN holds:
        a new number each time it is made again); 0 while not so (another process may
        write a SQLite file unannounced): then a reader must ask for the head."""
        return 0

    def subscribe(self, listener: Listener) -> Subscription:
        """Call ``listener`` with a ``Notice`` after each committed append.

        In-process for memory and SQLite; PostgreSQL delivers notices from every process
        sharing the database (LISTEN/NOTIFY).
        """
        with self._listener_lock:
            key = self._next_listener
            self._next_listener += 1
            self._listeners[key] = listener

        def remove() -> None:
            with self._listener_lock:
                self._listeners.pop(key, None)

        return Subscription(remove)

    def _notify(self, notices: Iterable[Notice]) -> None:
        with self._listener_lock:
            listeners = list(self._listeners.values())
        for notice in notices:
            for listener in listeners:
                try:
                    listener(notice)
                except Exception:  # a listener's fault must never fail a committed append
                    log.exception("store listener failed on %s", notice)

    # -- lifetime -----------------------------------------------------------------------------
    def close(self) -> None:  # noqa: B027 (the memory store has nothing to release)
        """Release connections and threads."""

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the log lives, for messages (a path, a URL without secrets, ``memory``)."""

def check_head(request: AppendRequest, head: Head) -> None:
    if head.seq != request.expected:
        raise stale(request.table, request.expected, head)


def _overlapping(spans: list[Span], after: int, until: int | None
                 ) -> Iterator[tuple[Span, int, int]]:
    """Each span holding seqs after ``after`` (up to ``until``), with the first and last of
    them it holds."""
    for span in spans:
        if span.last <= after:
            continue
        if until is not None and span.first > until:
            return
        yield span, max(span.first, after + 1), span.last if until is None \
            else min(span.last, until)


ARCHIVE_FILES_KEPT = 8
"""Archive files kept verified in memory (a recall or a start reads a few days back, each
table in turn; a table's rows are parsed from a file only when that table is read)."""


@dataclass
class _HeldArchive:
    """An archive file as opened: its stamp on disk, and what was verified and parsed of it."""

    stamp: tuple[int, int, int] | None
    body: bytes | None
    """The whole file's rows' text, verified (a file written without blocks)."""
    streams: dict[str, list[StoredEvent]]
    blocks: ArchiveBlocks | None
    """The file's signed manifest and where its blocks lie (a file written in blocks)."""
    parsed: dict[int, list[Raw]]
    """The blocks read, by number."""

LEGACY_TABLES = ("accounts", "sessions", "stream_log")
"""Where accounts, sessions and the side streams were kept before they were streams of the
event log."""

__all__ = [
    "EMPTY",
    "LEGACY_TABLES",
    "AppendRequest",
    "EventStore",
    "Head",
    "Listener",
    "Notice",
    "RequestRecord",
    "Snapshot",
    "StoredEvent",
    "Subscription",
    "check_head",
    "key_mismatch",
    "prepare",
    "stale",
]


_CURRENT: ContextVar[str | None] = ContextVar("dicetable_request", default=None)


def current_request() -> str | None:
    return _CURRENT.get()


@contextmanager
def request_in_progress(request: str | None) -> Iterator[None]:
    token = _CURRENT.set(request)
    try:
        yield
    finally:
        _CURRENT.reset(token)


TABLE = "table"
SEPARATOR = ":"


@dataclass(frozen=True)
class Aggregate:
    """What the store needs to know of one kind of aggregate."""

    kind: str
    event_type: type[Event]
    """The base class of its events: an event of another aggregate is never appended."""
    owner_field: str
    """The event field naming the aggregate (``table``, ``site``)."""
    new_state: Callable[[], Any]
    fold: Callable[[Any, Event], None]
    """Apply one event to the state (the state is the fold of the stream)."""
    encode_state: Callable[[Any], dict[str, Any]]
    """The state as the JSON data a snapshot keeps."""
    decode_state: Callable[[dict[str, Any], Event], Any]
    """The state a snapshot holds, given the stream's first event (its rules)."""
    invariants: Callable[[Any], list[str]] = field(default=lambda state: [])
    """What is wrong with a replayed state (empty when nothing is)."""
    roundtrips: Callable[[Any], bool] | None = None


_KINDS: dict[str, Aggregate] = {}
"""Filled by the modules that declare aggregates (``dicetable.store.aggregates``, which the
package imports), so this registry imports none of them."""

def register(aggregate: Aggregate) -> None:
    _KINDS[aggregate.kind] = aggregate


def kind_of(stream: str) -> str:
    """The aggregate kind a stream id names (``table`` for a bare id)."""
    prefix, sep, _ = stream.partition(SEPARATOR)
    if sep and prefix != TABLE and prefix in _KINDS:
        return prefix
    return TABLE


def name_of(stream: str) -> str:
    """The aggregate's own name: a table id, a site."""
    kind = kind_of(stream)
    return stream if kind == TABLE else stream[len(kind) + 1:]


def stream_id(kind: str, name: str) -> str:
    if not name:
        raise InvalidInput(f"a {kind} stream needs a name", rule="store.stream")
    return name if kind == TABLE else f"{kind}{SEPARATOR}{name}"


def aggregate(stream_or_kind: str) -> Aggregate:
    """The registered aggregate of a stream id or a kind name."""
    kind = stream_or_kind if stream_or_kind in _KINDS else kind_of(stream_or_kind)
    return _KINDS[kind]


def claimed_stream(kind: str, data: dict[str, Any]) -> str | None:
    """The stream an event's own data says it belongs to."""
    owner = data.get(aggregate(kind).owner_field)
    if not isinstance(owner, str) or not owner:
        return None
    return stream_id(kind, owner)


def kinds() -> list[str]:
    return sorted(_KINDS)


def check_table_id(table_id: str) -> None:
    """A table id may not look like another aggregate's stream."""
    if kind_of(table_id) != TABLE:
        raise InvalidInput(f"{table_id!r} names a {kind_of(table_id)} stream, not a table",
                           rule="store.stream")
