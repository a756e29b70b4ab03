"""Connections that cannot be held open: bounded in number, with read deadlines.

A request costs the floor's capacity only once it has arrived whole (``refusing_http`` admits
a command when its body is read, never at its headers), so a client that sends headers and
never finishes is no more than an open connection. Those are bounded here:

- ``MAX_CONNECTIONS`` open at once in the server, ``MAX_PER_CLIENT`` from one peer address
  (a proxy named in ``--forwarded-allow-ips`` is many clients: only the total bounds it); a
  connection past either is answered 503 and closed as it is accepted, before anything is read;
- a request's headers must arrive within ``HEADER_TIMEOUT`` seconds of its first byte (of the
  connection, for its first request), its body within ``BODY_TIMEOUT`` of its headers;
  past either the connection is answered 408 and closed;
- a request's line and headers are at most ``MAX_HEAD`` bytes (400 and close).

An idle keep-alive connection is closed by uvicorn's own ``timeout_keep_alive``.

>>> guard = ConnectionGuard(most=2, per_client=1)
>>> [guard.enter("10.0.0.1"), guard.enter("10.0.0.1"), guard.enter("10.0.0.2"),
...  guard.enter("10.0.0.3")]
[True, False, True, False]
>>> guard.leave("10.0.0.1"); guard.enter("10.0.0.3")
True
"""

from __future__ import annotations

import json

HEADER_TIMEOUT = 10.0
"""Seconds a request's headers may take to arrive (industry-default; ``dicetable serve
--header-timeout``, ``DICETABLE_HEADER_TIMEOUT``)."""
BODY_TIMEOUT = 10.0
"""Seconds a request's body may take to arrive after its headers, the whole of it
(industry-default; a command's body is a few hundred bytes; ``--body-timeout``,
``DICETABLE_BODY_TIMEOUT``)."""
MAX_CONNECTIONS = 4096
"""Connections open at once, in all (industry-default; ``--max-connections``,
``DICETABLE_MAX_CONNECTIONS``)."""
MAX_PER_CLIENT = 256
"""Connections open at once from one peer address (industry-default: a browser opens six,
a busy terminal a few dozen; ``--max-connections-per-client``,
``DICETABLE_MAX_CONNECTIONS_PER_CLIENT``)."""

MAX_HEAD = 64 * 1024
"""Bytes of a request's line and headers together (industry-default); more are refused with
400 and the connection closed, whatever the path or header holds."""

GUARD_STATE = "dicetable.connection_guard"
"""The ASGI lifespan state's key for the server's ``ConnectionGuard``."""


def _error(kind: str, message: str, rule: str) -> bytes:
    return json.dumps({"error": kind, "message": message, "rule": rule, "citation": ""},
                      separators=(",", ":")).encode()


class ConnectionGuard:
    """Open connections, in all and per peer address, and the read deadlines."""

    def __init__(self, *, most: int = MAX_CONNECTIONS, per_client: int = MAX_PER_CLIENT,
                 header_timeout: float = HEADER_TIMEOUT, body_timeout: float = BODY_TIMEOUT,
                 proxies: frozenset[str] = frozenset()) -> None:
        if most < 1 or per_client < 1:
            raise ValueError("connection limits must be at least 1")
        if not header_timeout > 0 or not body_timeout > 0:
            raise ValueError("read deadlines must be positive seconds")
        self.most = most
        self.per_client = per_client
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.proxies = proxies
        """Peer addresses of the operator's proxies: bounded only by the total."""
        self.open = 0
        self._of: dict[str, int] = {}
        self.refused = 0
        """Connections refused as they were accepted (over either bound)."""
        self.expired = 0
        """Connections closed because a request's headers or body came too late."""
        self.refusal = _error("TooManyConnections", "too many connections are open; retry "
                              "shortly", "server.connections")

    def enter(self, client: str | None) -> bool:
        """Count a connection from ``client`` in (True), or refuse it (False)."""
        if self.open >= self.most:
            self.refused += 1
            return False
        if client is not None and client not in self.proxies and "*" not in self.proxies:
            held = self._of.get(client, 0)
            if held >= self.per_client:
                self.refused += 1
                return False
            self._of[client] = held + 1
        self.open += 1
        return True

    def leave(self, client: str | None) -> None:
        """A connection counted in by ``enter`` is gone."""
        self.open -= 1
        if client is not None and client in self._of:
            held = self._of[client] - 1
            if held:
                self._of[client] = held
            else:
                del self._of[client]

    def late(self, what: str, seconds: float) -> bytes:
        """The 408's body for a request whose ``what`` did not arrive within ``seconds``."""
        self.expired += 1
        return _error("RequestTimeout", f"the request's {what} did not arrive within "
                      f"{seconds:g} s", "server.read_deadline")
