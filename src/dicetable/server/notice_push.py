"""Telling an open page that something it shows has changed, as the store commits it.

A page that shows what other people change (a table's seat requests and the caller's wallet;
the pit's books; the dice room) keeps a socket open on which the server says only *that*
something changed, and which stream: the page then reads its figures again through the same
routes it would poll. Nothing on the socket is a figure, so it adds no way to read what the
routes do not already let the caller read. The notices are the store's own (``Store.subscribe``:
this process's appends, and every process's on PostgreSQL).

A burst of appends while a message is being written is told once: the page reads once for all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from dicetable.server.socket_sessions import SESSION_ENDED, OpenSocket
from dicetable.store.base import EventStore, Notice

FLOOR_KINDS = frozenset({"bank", "serials", "custody"})
"""The streams' kinds a member of staff's page may follow on ``/ws/floor``: the pit's books
(``bank``), the slip serials they use (``serials``), and the dice's custody (``custody``)."""


def floor_kinds(asked: str) -> frozenset[str] | None:
    """The kinds named in ``asked`` (comma-separated), or None when one is not followed.

    >>> sorted(floor_kinds("bank,serials"))
    ['bank', 'serials']
    >>> floor_kinds("bank,account") is None
    True
    """
    kinds = frozenset(k.strip() for k in asked.split(",") if k.strip())
    return kinds if kinds and kinds <= FLOOR_KINDS else None


async def until_disconnect(ws: WebSocket) -> None:
    """Return when the client has gone (the pages send nothing on these sockets)."""
    while (await ws.receive())["type"] != "websocket.disconnect":
        pass


async def tell_changes(ws: WebSocket, sock: OpenSocket, store: EventStore,
                       watched: Callable[[str], bool], message: dict[str, Any]) -> None:
    """Send ``message`` now and again after each committed append to a stream ``watched``
    accepts, until the client goes or its session ends (then closed with ``SESSION_ENDED``).
    The socket is already accepted; the caller leaves ``sock`` afterwards."""
    loop, changed = asyncio.get_running_loop(), asyncio.Event()

    def heard(notice: Notice) -> None:
        if watched(notice.table):
            loop.call_soon_threadsafe(changed.set)

    subscription = store.subscribe(heard)
    listening = asyncio.create_task(until_disconnect(ws))
    ending = asyncio.create_task(sock.ended.wait())
    try:
        await ws.send_json(message)
        while True:
            waiting = asyncio.create_task(changed.wait())
            done, _ = await asyncio.wait({waiting, listening, ending},
                                         return_when=asyncio.FIRST_COMPLETED)
            if waiting not in done:
                waiting.cancel()
                break
            changed.clear()
            await ws.send_json(message)
        if sock.ended.is_set():
            await ws.close(code=SESSION_ENDED,
                           reason=f"the session has ended: {sock.why}"[:120])
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        subscription.close()
        for task in (listening, ending):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, RuntimeError):
                await task
