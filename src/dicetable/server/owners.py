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

import os
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dicetable.server.table_owners import TableOwners

FORWARDED = "x-dicetable-forwarded"
DECIDED_BY = "x-dicetable-decided-by"


_HOP = frozenset((b"connection", b"keep-alive", b"transfer-encoding", b"content-length"))


class Forwarder:
    """Hands a command to the process that owns its table (``server.door`` decides when) and
    brings its answer back: (status, headers, body)."""

    def __init__(self) -> None:
        self._client: Any = None

    async def forward(self, url: str, scope: Any, body: bytes
                      ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=30)
        path = scope["path"] + (("?" + scope["query_string"].decode())
                                if scope.get("query_string") else "")
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"]
                   if k.lower() not in (b"host", b"content-length", b"connection")]
        headers.append((FORWARDED, "1"))
        reply = await self._client.request(scope["method"], url + path, headers=headers,
                                           content=body)
        out = [(k, v) for k, v in reply.headers.raw if k.lower() not in _HOP]
        out.append((b"content-length", str(len(reply.content)).encode()))
        return reply.status_code, out, reply.content


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
                                log_level="warning", access_log=False, proxy_headers=False)
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
