"""Transport and request-origin checks, and the per-client limit on failed logins.

- ``OriginCheck``: a request that authenticates by the session *cookie* (a browser) and
  changes something must come from this server's own origin: a page elsewhere cannot ride
  the cookie (cross-site request forgery). Requests that carry ``Authorization: Bearer`` are
  not ridden by a browser and pass. A WebSocket upgrade is checked without exception: one
  that names another origin (or that a browser marks cross-site) is refused whatever it
  carries - a ``token`` in its query, a cookie, or neither.
- ``FailureLimiter``: at most ``limit`` failed logins per client in ``window`` seconds;
  more are answered 429 without a password check (the clock is injectable: tests count).
- the session cookie is ``Secure`` when the server is reached over TLS
  (``dicetable serve --certfile/--keyfile``).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from dicetable.server.accounts import TooManyAttempts

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def _origin_of(scope: Scope) -> str:
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1")
    scheme = {"https": "https", "wss": "https", "ws": "http"}.get(scope.get("scheme", "http"),
                                                                  "http")
    return f"{scheme}://{host}"


class OriginCheck:
    def __init__(self, app: ASGIApp, cookie: str, allowed: frozenset[str] = frozenset()
                 ) -> None:
        self.app = app
        self.cookie = cookie.encode()
        self.allowed = allowed

    def _refused(self, scope: Scope) -> bool:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and (scope.get("method", "GET") in SAFE
                                        or headers.get(b"authorization", b"")
                                        .lower().startswith(b"bearer ")):
            return False
        if scope["type"] == "websocket":
            return self._foreign(scope, headers)
        if self.cookie + b"=" not in headers.get(b"cookie", b""):
            return False  # not cookie-authenticated: nothing for another site to ride
        return self._foreign(scope, headers)

    def _foreign(self, scope: Scope, headers: dict[bytes, bytes]) -> bool:
        """Does the request come from a page of another origin?"""
        origin = headers.get(b"origin")
        if origin is None:
            # Browsers send Origin on every cross-origin write and on WebSocket upgrades;
            # Sec-Fetch-Site tells a cross-site request even when they do not.
            return bool(headers.get(b"sec-fetch-site", b"") == b"cross-site")
        text = origin.decode("latin-1")
        return text != _origin_of(scope) and text not in self.allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or not self._refused(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 4403,
                        "reason": "cross-origin upgrade refused"})
            return
        body = json.dumps({"error": "RoleNotPermitted", "message": "a cookie-authenticated "
                           "request must come from this server's own pages (Origin)",
                           "rule": "security.origin", "citation": ""}).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class FailureLimiter:
    """Failed logins per client in a sliding window."""

    def __init__(self, limit: int = 10, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str) -> deque[float]:
        now = self.clock()
        seen = self._seen.setdefault(client, deque())
        while seen and seen[0] <= now - self.window:
            seen.popleft()
        if not seen:
            self._seen.pop(client, None)
        return seen

    def check(self, client: str) -> None:
        with self._lock:
            if len(self._recent(client)) >= self.limit:
                raise TooManyAttempts(f"too many failed logins from this client; wait "
                                      f"{int(self.window)} s", rule="accounts.rate_limit")

    def failed(self, client: str) -> None:
        with self._lock:
            self._recent(client)
            self._seen.setdefault(client, deque()).append(self.clock())
