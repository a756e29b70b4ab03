"""Transport and request-origin checks, and the per-client limit on failed logins.

- ``origin_refused``: a request that authenticates by the session *cookie* (a browser) and
  changes something must come from this server's own origin: a page elsewhere cannot ride
  the cookie (cross-site request forgery). Requests that carry ``Authorization: Bearer`` are
  not ridden by a browser and pass. A WebSocket upgrade is checked without exception: one
  that names another origin (or that a browser marks cross-site) is refused whatever it
  carries - a ``token`` in its query, a cookie, or neither.
- ``FailureLimiter``: at most ``limit`` failed logins per client in ``window`` seconds;
  more are answered 429 without a password check (the clock is injectable: tests count).
- ``Proxies``: ``X-Forwarded-For``/``-Proto`` honoured only from the proxies named;
- the session cookie is ``Secure`` when the server is reached over TLS
  (``dicetable serve --certfile/--keyfile``).
"""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from collections import deque
from collections.abc import Callable

from starlette.types import Scope

from dicetable.server.accounts import TooManyAttempts

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def _origin_of(scope: Scope, headers: dict[bytes, bytes]) -> str:
    host = headers.get(b"host", b"").decode("latin-1")
    scheme = {"https": "https", "wss": "https", "ws": "http"}.get(scope.get("scheme", "http"),
                                                                  "http")
    return f"{scheme}://{host}"


ORIGIN_REFUSED = json.dumps({"error": "RoleNotPermitted", "message": "a cookie-authenticated "
                             "request must come from this server's own pages (Origin)",
                             "rule": "security.origin", "citation": ""}).encode()
"""The 403's body for a cookie-authenticated write from another origin."""


def origin_refused(scope: Scope, headers: dict[bytes, bytes], cookie: str,
                   allowed: frozenset[str] = frozenset()) -> bool:
    """Is this request (``headers`` as parsed once) refused for its origin? A WebSocket upgrade
    from another origin always is; an HTTP write only when it authenticates by the session
    ``cookie`` (a ``Bearer`` token is never ridden by a browser)."""
    if scope["type"] == "websocket":
        return _foreign(scope, headers, allowed)
    if scope.get("method", "GET") in SAFE \
            or headers.get(b"authorization", b"").lower().startswith(b"bearer "):
        return False
    if cookie.encode() + b"=" not in headers.get(b"cookie", b""):
        return False  # not cookie-authenticated: nothing for another site to ride
    return _foreign(scope, headers, allowed)


def _foreign(scope: Scope, headers: dict[bytes, bytes], allowed: frozenset[str]) -> bool:
    """Does the request come from a page of another origin?"""
    origin = headers.get(b"origin")
    if origin is None:
        # Browsers send Origin on every cross-origin write and on WebSocket upgrades;
        # Sec-Fetch-Site tells a cross-site request even when they do not.
        return bool(headers.get(b"sec-fetch-site", b"") == b"cross-site")
    text = origin.decode("latin-1")
    return text != _origin_of(scope, headers) and text not in allowed


class Proxies:
    """The proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are honoured
    (``dicetable serve --forwarded-allow-ips``: addresses or networks; none by default).
    From one of them, the client is the nearest address in ``X-Forwarded-For`` that is not
    itself a named proxy (each proxy appends the peer it saw), and the scheme is the one it
    forwards; from anyone else both headers are ignored.

    >>> scope = {"type": "http", "client": ("10.0.0.5", 4000), "scheme": "http"}
    >>> Proxies("10.0.0.0/24").apply(scope, {b"x-forwarded-for": b"203.0.113.9, 10.0.0.7",
    ...                                      b"x-forwarded-proto": b"https"})
    >>> scope["client"], scope["scheme"]
    (('203.0.113.9', 0), 'https')
    """

    def __init__(self, named: str) -> None:
        self.addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.names: set[str] = set()
        for item in (p.strip() for p in named.split(",")):
            if not item:
                continue
            try:
                if "/" in item:
                    self.networks.append(ipaddress.ip_network(item, strict=False))
                else:
                    self.addresses.add(ipaddress.ip_address(item))
            except ValueError:
                self.names.add(item)  # not an address: a literal (a unix socket's name)

    def __bool__(self) -> bool:
        return bool(self.addresses or self.networks or self.names)

    def trusts(self, host: str | None) -> bool:
        if not host:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return host in self.names
        return address in self.addresses or any(address in net for net in self.networks)

    def apply(self, scope: Scope, headers: dict[bytes, bytes]) -> None:
        """Rewrite ``scope``'s client and scheme as a named proxy forwards them."""
        client = scope.get("client")
        if not self.trusts(client[0] if client else None):
            return
        proto = headers.get(b"x-forwarded-proto")
        if proto is not None:
            scheme = proto.decode("latin-1").strip()
            if scheme in ("http", "https", "ws", "wss"):
                scope["scheme"] = scheme.replace("http", "ws") \
                    if scope["type"] == "websocket" else scheme
        forwarded = headers.get(b"x-forwarded-for")
        if forwarded is None:
            return
        hosts = [h.strip() for h in forwarded.decode("latin-1").split(",")]
        for host in reversed(hosts):
            if not self.trusts(host):
                break
        else:
            host = hosts[0]  # every hop a named proxy: the first is the client
        if host:
            scope["client"] = (host, 0)


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
