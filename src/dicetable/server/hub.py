"""WebSocket push: every batch of a table's events goes to the browsers watching that table.

The floor tells the hub from whichever thread executed the command; the hub hands the batch to
the event loop, and each connection filters it for its viewer (a player sees only their own
wagers) and sends it with the table's fresh view.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from dicetable.games.events import Event
from dicetable.server.accounts import Account


@dataclass(eq=False)
class Watcher:
    table: str
    account: Account
    queue: asyncio.Queue[list[Event]] = field(default_factory=asyncio.Queue)


class Hub:
    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.watchers: set[Watcher] = set()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def watch(self, table: str, account: Account) -> Watcher:
        watcher = Watcher(table, account)
        self.watchers.add(watcher)
        return watcher

    def leave(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)

    def publish(self, table: str, events: list[Event]) -> None:
        """Called by the floor, from any thread."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        for watcher in list(self.watchers):
            if watcher.table == table:
                loop.call_soon_threadsafe(watcher.queue.put_nowait, events)
