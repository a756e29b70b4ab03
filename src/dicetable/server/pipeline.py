"""The HTTP door's load gate: which table commands are refused for load before they are read.

A table's own queue (``application.pipeline.StreamPipeline``) reports its load; this module
turns that into a ``503`` with ``Retry-After`` at the door, before anything else is spent on
the request. Load is shed here and nowhere else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Protocol

from dicetable.application.pipeline import RETRY_AFTER_S, Busy, StreamPipeline
from dicetable.server.shedding import Admission, Impatience


class _Piped(Protocol):
    @property
    def pipeline(self) -> StreamPipeline | None: ...


class TableHost(Protocol):
    """What the gate reads of the floor: each table's pipeline."""

    @property
    def tables(self) -> Mapping[str, _Piped]: ...


_TABLE_PATH = re.compile(r"^/api/tables/([^/]+)/")
COMMAND_METHODS = frozenset(("POST", "PATCH", "DELETE"))
"""The HTTP methods of a table's commands (every other method only reads)."""


GATE_STATE = "dicetable.load_gate"
"""The ASGI lifespan state's key for the server's ``LoadGate`` (``refusing_http`` reads it)."""


class LoadGate:
    """Which commands are refused for load: one for a table whose queue is full, or one that
    would wait too long behind the commands already in the server (``server.shedding``).
    Asked by the door and, as a request is read, by ``refusing_http.RefusingHttp``."""

    def __init__(self, floor: TableHost, admission: Admission | None = None,
                 impatience: Impatience | None = None,
                 known: Callable[[dict[bytes, bytes]], bool] | None = None) -> None:
        self.floor = floor
        self.admission = admission or Admission()
        self.impatience = impatience or Impatience()
        """Clients refused for load lately (their next 503s held, ``refusing_http``)."""
        self.known = known or (lambda headers: True)
        """Does a request (its headers) carry a session this server knows, without reading
        the database? Only such a command counts in flight: a client without a session
        cannot fill the server's capacity and so refuse the others'."""

    def pipeline(self, method: str, path: str) -> StreamPipeline | None:
        """The pipeline a command for ``path`` would queue on (None: not a table command)."""
        if method not in COMMAND_METHODS:
            return None
        match = _TABLE_PATH.match(path)
        info = self.floor.tables.get(match.group(1)) if match else None
        return info.pipeline if info is not None else None

    def refusal_at(self, pipeline: StreamPipeline) -> bytes | None:
        """The 503's body for a command that would queue on ``pipeline``, arriving now, or
        None when it is not refused for load (a refusal is counted)."""
        if pipeline.overloaded():
            pipeline.stats.busy += 1
            return TABLE_BUSY
        return SERVER_BUSY if self.admission.refuse() else None

    def admit_at(self, pipeline: StreamPipeline, *, count: bool = True) -> bytes | None:
        """``refusal_at``, and a command not refused is counted in flight at once when
        ``count`` (its ``Admission.done`` is the caller's), so that the next request read
        sees it. Asked once the command's body has arrived whole, never at its headers."""
        body = self.refusal_at(pipeline)
        if body is None and count:
            self.admission.enter()
        return body


ADMITTED = "dicetable.admitted"
"""Scope key set by ``refusing_http.RefusingHttp`` on a command it admitted as it was read,
its body whole: True when counted in flight, False when not (no session known), so that
the door does not decide it again."""


def _busy_body(message: str) -> bytes:
    """A 503's body: a ``Busy`` refusal's own shape, serialised once (refusing stays cheap)."""
    return json.dumps(Busy(message).to_dict(), separators=(",", ":")).encode()


TABLE_BUSY = _busy_body("the table has too many commands waiting; retry shortly")
SERVER_BUSY = _busy_body("the server is answering all it can; retry shortly")
"""The 503s' bodies: the table's own queue is full, or the server's (whichever layer
refuses: ``refusing_http`` writes them too)."""
RETRY_AFTER = str(RETRY_AFTER_S).encode()
