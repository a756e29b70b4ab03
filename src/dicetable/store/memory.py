"""The in-memory store: the same contract as the durable ones, for tests and simulations.

>>> from dicetable.table import Table
>>> store = MemoryStore()
>>> t = Table.open("pa-craps", "t1", sink=lambda evs: store.append("t1", evs))
>>> _ = t.join("alice")
>>> [r.kind for r in store.records("t1")]
['TableOpened', 'PlayerJoined']
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from dicetable.core.errors import InvalidInput
from dicetable.store.archive_file import Span
from dicetable.store.base import AppendRequest, EventStore, Notice, RequestRecord, check_head
from dicetable.store.chain import EMPTY, Head, Snapshot, StoredEvent, chain


class MemoryStore(EventStore):
    """Lists in a dict, behind a lock. ``rows`` is exposed so tests can tamper with it."""

    def __init__(self, *, key: bytes | None = None) -> None:
        super().__init__()
        self.key = key
        self.requests: dict[str, RequestRecord] = {}
        self._lock = threading.Lock()
        self.rows: dict[str, list[StoredEvent]] = {}
        self.heads: dict[str, Head] = {}
        self._snapshots: dict[str, dict[int, Snapshot]] = {}
        self.spans: dict[str, list[Span]] = {}

    @property
    def location(self) -> str:
        return "memory"

    def _append(self, request: AppendRequest) -> list[StoredEvent]:
        with self._lock:
            head = self.heads.get(request.table, EMPTY)
            check_head(request, head)
            rows = chain(request.table, head, request.kinds, request.bodies, self.key)
            self.rows.setdefault(request.table, []).extend(rows)
            for key, first, last in request.records(rows[0].seq, rows[-1].seq):
                old = self.requests.get(key)
                self.requests[key] = RequestRecord(
                    key, request.table, old.first_seq if old else first, last)
            self.heads[request.table] = Head(rows[-1].seq, rows[-1].hash)
        self._notify([Notice(request.table, rows[-1].seq)])
        return rows

    def request_record(self, request: str) -> RequestRecord | None:
        with self._lock:
            return self.requests.get(request)

    def recorded_key_id(self) -> str | None:
        return self.key_id

    def save_snapshot(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._snapshots.setdefault(snapshot.table, {})[snapshot.seq] = snapshot

    def stream_ids(self) -> list[str]:
        with self._lock:
            return sorted({t for t, rows in self.rows.items() if rows}
                          | {t for t, h in self.heads.items() if h.seq})

    def head(self, table: str) -> Head:
        with self._lock:
            return self.heads.get(table, EMPTY)

    def _records(self, table: str, after: int = 0,
                 until: int | None = None) -> Iterator[StoredEvent]:
        with self._lock:
            rows = sorted(self.rows.get(table, []), key=lambda r: r.seq)
        for row in rows:
            if row.seq > after and (until is None or row.seq <= until):
                yield row

    def archive_spans(self, table: str) -> list[Span]:
        with self._lock:
            return list(self.spans.get(table, []))

    def move_to_archive(self, spans: list[Span]) -> None:
        with self._lock:
            for span in spans:
                live = [r for r in self.rows.get(span.stream, [])
                        if span.first <= r.seq <= span.last]
                if len(live) != span.last - span.first + 1 or live[-1].hash != span.last_hash:
                    raise InvalidInput(f"{span.stream} seqs {span.first}-{span.last} are not "
                                       "the events archived", rule="archive.move")
            for span in spans:
                self.rows[span.stream] = [r for r in self.rows[span.stream]
                                          if not span.first <= r.seq <= span.last]
                self.spans.setdefault(span.stream, []).append(span)
                self.spans[span.stream].sort(key=lambda s: s.first)

    def snapshots(self, table: str) -> list[Snapshot]:
        with self._lock:
            return [s for _, s in sorted(self._snapshots.get(table, {}).items())]
