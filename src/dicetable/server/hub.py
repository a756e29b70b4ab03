"""WebSocket push: every batch of a table's events goes to the browsers watching that table.

The floor tells the hub on the table's own thread, its lock held, right after the commit. The
hub serialises each event once per privacy class (staff; everyone else; a player's own
private events - ``live_views.Fanout``). A connection's hello carries the whole view; each
push after it carries only a merge patch (``merge_patch``) from the view that connection was
last sent (``Watcher.base``) to the view now, worked out from the parts kept from events
(``live_views.LiveViews``, ``live_views.Patches``): the public part's patch once for every
connection that had the previous push, a player's own part only when it was rebuilt, the pack's
fixed members - limits, rules - never. Most connections get the very same text. The finished
texts go to the event loop in one call. Each connection has a bounded
send buffer: a client that does not keep up is dropped (close code 4408, the reason naming the
last seq it was sent), never waited for; it reconnects with ``after=SEQ`` and the hello brings
what it missed. The table is never slowed by a viewer.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from dicetable.games.events import Event
from dicetable.server.accounts import Account, Kind
from dicetable.server.live_views import Fanout, Patches, Sent, dumps, same

if TYPE_CHECKING:
    from dicetable.server.floor import Floor

SEND_BUFFER = 64
"""Messages one connection may have waiting before it is dropped (industry-default)."""
TOO_SLOW = 4408
"""Close code for a connection dropped for not keeping up."""
FAULTED = 4423
"""Close code for a table whose log failed verification (the HTTP 423 of ``TableFaulted``)."""


class Socket(Protocol):
    async def send_text(self, data: str) -> None: ...
    async def close(self, code: int = 1000, reason: str | None = None) -> None: ...


@dataclass(eq=False)
class Watcher:
    table: str
    account: Account
    limit: int = SEND_BUFFER
    buffer: deque[tuple[int, str]] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    seq: int = 0
    """The last seq this connection was sent (or had in its hello)."""
    dropped: bool = False
    closed: bool = False
    faulted: bool = False
    """The table's log failed verification: nothing more is served from it."""
    sent: int = 0
    base: Sent | None = None
    """The view's parts as of the last message this connection was given (its hello or a
    push): the base of its next push's patch. Set on the table's thread, its lock held."""
    task: asyncio.Task[None] | None = None
    """The connection's pump: cancelled when dropped, even in the middle of a send that the
    client is not reading."""

    @property
    def staff(self) -> bool:
        return self.account.kind is Kind.STAFF

    @property
    def viewer(self) -> str | None:
        return self.account.username if self.account.kind is Kind.PLAYER else None

    def offer(self, seq: int, text: str) -> None:
        """On the event loop: queue a message, or drop a connection that is too far behind."""
        if self.closed or self.dropped:
            return
        if len(self.buffer) >= self.limit:
            self.dropped = True
            self.buffer.clear()
            if self.task is not None:
                self.task.cancel()
        else:
            self.buffer.append((seq, text))
        self.wake.set()


class Hub:
    def __init__(self, floor: Floor | None = None, *, send_buffer: int = SEND_BUFFER) -> None:
        self.floor = floor
        self.send_buffer = send_buffer
        self.loop: asyncio.AbstractEventLoop | None = None
        self._by_table: dict[str, set[Watcher]] = {}
        self._lock = threading.Lock()
        self.dropped = 0
        self.batches = 0
        self.serialised = 0
        """Event texts made (once per event and privacy class, not per viewer)."""
        self.patched = 0
        """Merge patches worked out (once per part and base, not per viewer)."""

    @property
    def watchers(self) -> set[Watcher]:
        with self._lock:
            return {w for ws in self._by_table.values() for w in ws}

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    # -- connections --------------------------------------------------------------------------
    def watch(self, table: str, account: Account) -> Watcher:
        watcher = Watcher(table, account, limit=self.send_buffer)
        with self._lock:
            self._by_table.setdefault(table, set()).add(watcher)
        return watcher

    def join(self, table: str, account: Account, after: int) -> tuple[Watcher, str]:
        """A new connection and its hello (the events after ``after`` and the view), taken
        under the table's lock so that no batch falls between the hello and the pushes.
        Called off the event loop."""
        floor = self._floor()
        info = floor.get(table)
        # The bulk of what it missed is read before the table's lock is taken (a reconnection
        # from far back must not hold the table up); under the lock, only the rest.
        missed = list(floor.store.table_events(table, after=after)) if after else []
        with info.lock:
            floor.catch_up(table)
            watcher = self.watch(table, account)
            seen = missed[-1].seq if missed else after
            if after and info.table.state.seq > seen:
                missed += list(floor.store.table_events(table, after=seen))
            events = floor.events_for(table, account, missed)
            staff, viewer = watcher.staff, watcher.viewer
            extra = floor.extra(table, account)
            info.views.pin(info.table)  # the text and the patches' base: the same parts
            try:
                view = info.views.view_text(info.table, info.history, viewer, staff, extra)
                watcher.seq = info.table.state.seq
                watcher.base = info.views.sent(info.table, info.history, viewer, staff, extra,
                                               watcher.seq)
            finally:
                info.views.pin(None)
        return watcher, '{"type":"hello","events":' + dumps(events) + ',"view":' + view + "}"

    def leave(self, watcher: Watcher) -> None:
        watcher.closed = True
        with self._lock:
            group = self._by_table.get(watcher.table)
            if group is not None:
                group.discard(watcher)
                if not group:
                    del self._by_table[watcher.table]

    async def pump(self, watcher: Watcher, ws: Socket) -> None:
        """Send the connection's messages in order; close it when it fell behind."""
        watcher.task = asyncio.current_task()
        try:
            while not watcher.closed and not watcher.dropped and not watcher.faulted:
                await watcher.wake.wait()
                watcher.wake.clear()
                while watcher.buffer and not watcher.dropped:
                    seq, text = watcher.buffer.popleft()
                    await ws.send_text(text)
                    watcher.seq = seq
                    watcher.sent += 1
        except asyncio.CancelledError:
            if not watcher.dropped:
                raise
        if watcher.faulted:
            self.leave(watcher)
            with contextlib.suppress(Exception):
                await ws.close(code=FAULTED, reason="the table's log failed verification")
        if watcher.dropped:
            self.dropped += 1
            self.leave(watcher)
            with contextlib.suppress(Exception):
                await ws.close(code=TOO_SLOW,
                               reason=f"too slow; reconnect with after={watcher.seq}")

    # -- batches ------------------------------------------------------------------------------
    def publish(self, table: str, events: list[Event]) -> None:
        """Called by the floor on the table's thread, its lock held, after the commit."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        with self._lock:
            group = list(self._by_table.get(table, ()))
        if not group:
            return
        if not events:  # a table faulted (integrity): its viewers are closed, not served
            if self.floor is not None and table in self.floor.faults.open:
                loop.call_soon_threadsafe(self._faulted, group)
            return
        floor = self._floor()
        info = floor.get(table)
        fan = Fanout.of(events, info.owners)
        self.batches += 1
        self.serialised += fan.made
        out: list[tuple[Watcher, str]] = []
        info.views.pin(info.table)
        try:
            self._texts(floor, table, info, fan, group, out)
        finally:
            info.views.pin(None)
        seq = fan.seq
        loop.call_soon_threadsafe(self._deliver, seq, out)

    def _texts(self, floor: Floor, table: str, info: Any, fan: Fanout, group: list[Watcher],
               out: list[tuple[Watcher, str]]) -> None:
        """Each connection's push: the events it may see and the merge patch from the view
        it was last sent to the view now. Most connections share one text."""
        head = '{"type":"events","seq":' + str(fan.seq) + ',"events":'
        patches = Patches()
        views = info.views
        public = views.public(info.table, info.history, lean=True)[0]
        staff_part = views.staff(info.table)[0] if any(w.staff for w in group) else None
        texts: dict[tuple[str, str], str] = {}
        extras: dict[tuple[Any, ...], dict[str, Any]] = {}  # one object per class: one patch
        for w in group:
            base = w.base
            if w.closed or base is None or base.seq >= fan.seq:
                continue  # a batch its hello already had
            key = floor.extra_class(table, w.account)
            extra = extras.get(key)
            if extra is None:
                extra = extras[key] = floor.extra(table, w.account)
            if same(extra, base.extra):
                extra = base.extra  # unchanged: no patch to work out
            mine = views.me_part(info.table, w.viewer) if w.viewer is not None else None
            now = Sent(fan.seq, public, staff_part if w.staff else None, mine, extra)
            patch = patches.text(base, now)
            events = fan.events_text(w.viewer, w.staff)
            message = texts.get((events, patch))
            if message is None:
                message = texts[(events, patch)] = head + events + "," + patch + "}"
            w.base = now
            out.append((w, message))
        self.patched += patches.made

    @staticmethod
    def _faulted(group: list[Watcher]) -> None:
        for watcher in group:
            watcher.faulted = True
            watcher.wake.set()

    @staticmethod
    def _deliver(seq: int, out: list[tuple[Watcher, str]]) -> None:
        for watcher, text in out:
            watcher.offer(seq, text)

    def _floor(self) -> Floor:
        if self.floor is None:
            raise RuntimeError("the hub has no floor")
        return self.floor
