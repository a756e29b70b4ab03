"""Several server processes on one PostgreSQL store split the tables between them.

Each process claims a fair share of the tables (their number over ``DICETABLE_WORKERS``) with
PostgreSQL session advisory locks, so that at most one process holds a table; it writes where
it listens for forwarded commands into ``table_owners``. A command that arrives at a process
that does not own its table is forwarded to the owner (``Forwarder``), so each table's
commands are decided and group-committed by one pipeline (``server.door`` forwards them). A
process that dies drops its locks with its connection; the others claim its tables within
``table_owners.REBALANCE_SECONDS``.

The split is for speed, not for correctness: should the owner not answer, the command is
decided where it arrived, and the store's sequence check (``StaleVersion``: catch up, decide
again) keeps two writers from ever both appending after the same head.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dicetable.server.table_owners import TableOwners

FORWARDED = "x-dicetable-forwarded"
DECIDED_BY = "x-dicetable-decided-by"


_HOP = frozenset((b"connection", b"keep-alive", b"transfer-encoding", b"content-length"))


FORWARD_TIMEOUT = 30.0
"""Seconds a forwarded command may take to be answered (industry-default)."""
IDLE_KEPT = 60.0
"""Seconds an idle connection to an owner is kept for the next forwarded command
(industry-default; the owners' private port keeps one open longer: ``Split.start``)."""
MOST_IDLE = 256
"""Idle connections kept to one owner at most."""
_NOT_FORWARDED = _HOP | {b"host", b"expect", b"upgrade", b"te"}
"""A command's headers not written to its owner: the hop-by-hop ones (``_HOP``, which the
owner's answer loses too) and those of this connection alone."""

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class Forwarder:
    """Hands a command to the process that owns its table (``server.door`` decides when) and
    brings its answer back: (status, headers, body).

    HTTP/1.1 on connections kept open to each owner, one command at a time on each: a
    forwarded command costs a write and a read, as a client's own does. (A general-purpose
    client asked, on every command, which async library runs it, and the import that answers
    that searched the whole path each time it failed; under a load spread over two processes
    they answered a tenth of what they answered routed to their owners.) Any failure raises,
    and the door decides the command where it arrived.
    """

    def __init__(self, *, timeout: float = FORWARD_TIMEOUT, idle: float = IDLE_KEPT,
                 most_idle: int = MOST_IDLE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self.idle = idle
        self.most_idle = most_idle
        self.clock = clock
        self.opened = 0
        """Connections opened to owners (tests count them)."""
        self._idle: dict[tuple[object, str, int], list[tuple[Connection, float]]] = {}

    async def forward(self, url: str, scope: Any, body: bytes
                      ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        host, port = _address(url)
        key = (asyncio.get_running_loop(), host, port)  # a connection serves its own loop
        async with asyncio.timeout(self.timeout):
            reader, writer = await self._connection(key)
            try:
                writer.write(_request(scope, body, f"{host}:{port}".encode()))
                status, headers, content, keep = await _response(reader)
            except BaseException:
                writer.close()
                raise
        pool = self._idle.setdefault(key, [])
        if keep and len(pool) < self.most_idle:
            pool.append(((reader, writer), self.clock()))
        else:
            writer.close()
        headers.append((b"content-length", str(len(content)).encode()))
        return status, headers, content

    async def _connection(self, key: tuple[object, str, int]) -> Connection:
        """An idle connection to the owner that is still open, else a new one."""
        pool = self._idle.get(key)
        now = self.clock()
        while pool:
            (reader, writer), since = pool.pop()
            if now - since < self.idle and not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.close()
        self.opened += 1
        return await asyncio.open_connection(key[1], key[2])

    def close(self) -> None:
        """Close every idle connection."""
        for pool in self._idle.values():
            for (_, writer), _since in pool:
                writer.close()
        self._idle.clear()


def _address(url: str) -> tuple[str, int]:
    """``http://host:port`` (an owner's private port, ``table_owners``) as (host, port)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.hostname is None:
        raise ValueError(f"an owner's address is http://host:port, not {url!r}")
    return parts.hostname, parts.port or 80


def _request(scope: Any, body: bytes, host: bytes) -> bytes:
    """The command as an HTTP/1.1 request to its owner: its own headers (read by the
    server, so each one line), marked forwarded, its body whole."""
    target: bytes = scope.get("raw_path") or urllib.parse.quote(scope["path"]).encode()
    query: bytes = scope.get("query_string", b"")
    if query:
        target += b"?" + query
    lines = [scope["method"].encode() + b" " + target + b" HTTP/1.1", b"host: " + host]
    lines.extend(k + b": " + v for k, v in scope["headers"] if k.lower() not in _NOT_FORWARDED)
    lines.append(FORWARDED.encode() + b": 1")
    lines.append(b"content-length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def _response(reader: asyncio.StreamReader
                    ) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
    """The owner's answer: status, its end-to-end headers, body, and whether the connection
    may carry another command."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head[:-4].split(b"\r\n")
    version, _, rest = lines[0].partition(b" ")
    status = int(rest[:3])
    keep = version == b"HTTP/1.1"
    length: int | None = None
    chunked = False
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name, value = name.strip().lower(), value.strip()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            keep = b"close" not in value.lower() and (keep or b"keep-alive" in value.lower())
        if name not in _HOP:
            headers.append((name, value))
    if chunked:
        content = await _chunked(reader)
    elif length is not None:
        content = await reader.readexactly(length)
    elif status in (204, 304):
        content = b""
    else:  # the body runs to the connection's end
        content, keep = await reader.read(), False
    return status, headers, content, keep


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


class Split:
    """The tables split for one app: started in its lifespan when ``DICETABLE_WORKERS`` > 1 on
    a PostgreSQL store. It also serves the app on a private loopback port (a thread of its
    own) where the other processes forward commands for the tables this one owns."""

    def __init__(self) -> None:
        self.owners: TableOwners | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @staticmethod
    def wanted(store: object) -> bool:
        return int(os.environ.get("DICETABLE_WORKERS", "1")) > 1 and \
            hasattr(store, "conninfo") and hasattr(store, "schema")

    def start(self, app: Any, store: Any, tables: list[str]) -> None:
        import uvicorn

        from dicetable.server.table_owners import TableOwners

        # Where the other processes reach this one: loopback unless the operator spreads the
        # processes over machines (``DICETABLE_FORWARD_HOST``, the address to listen on, and
        # ``DICETABLE_FORWARD_ADVERTISE``, the name the others use; docs/scale-out.md).
        host = os.environ.get("DICETABLE_FORWARD_HOST", "").strip() or "127.0.0.1"
        advertised = os.environ.get("DICETABLE_FORWARD_ADVERTISE", "").strip() or host
        port = int(os.environ.get("DICETABLE_FORWARD_PORT", "0") or 0)
        # the app's own door applies the named proxies; uvicorn's would trust loopback
        config = uvicorn.Config(app, host=host, port=port, lifespan="off",
                                log_level="warning", access_log=False, proxy_headers=False,
                                # open past the forwarders' own idle limit: they close first
                                timeout_keep_alive=int(IDLE_KEPT) + 15)
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(target=server.run, daemon=True,
                                        name="dicetable-forwarded")
        self._thread.start()
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        if not server.started:
            raise RuntimeError("the private port for forwarded commands did not open")
        port = server.servers[0].sockets[0].getsockname()[1]
        self.owners = TableOwners(store.conninfo, store.schema, tables,
                                  workers=int(os.environ.get("DICETABLE_WORKERS", "1")),
                                  url=f"http://{advertised}:{port}")

    def stop(self) -> None:
        if self.owners is not None:
            self.owners.close()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
