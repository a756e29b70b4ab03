"""Server processes for the tests (``dicetable serve`` or uvicorn on the app factory), each on
a port of its own, waited for until they answer.

Tests run in parallel (pytest-xdist) beside other programs on the machine, so no port is fixed:
a ``uvicorn`` process gets a socket already bound and listening in the test (``--fd``: no other
process can take the port in between); ``dicetable serve`` takes a free port and, in the rare
case another process bound it first, is started again on another. Readiness is a condition
(the server answers), polled quickly; the long deadline is a guard against a hang only, since a
fresh process compiles every table's rules first and a loaded machine makes that slow.
"""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

import httpx

from dicetable.server.demo import DEMO_PASSWORD

STARTUP_GUARD = 300.0
"""Seconds a server may take to answer before the test fails (a guard, not a measurement)."""


def free_port() -> int:
    """A port nothing listens on now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A server process, the port it listens on, and its stderr (kept in a file: a pipe nobody
    reads could fill and stall the server)."""

    proc: subprocess.Popen[bytes]
    port: int
    stderr: IO[bytes]
    sock: socket.socket | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def stop(self, *, kill: bool = False, timeout: float = 20) -> None:
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.stderr.close()


class AddressTaken(Exception):
    """Another process bound the port between our choice and the server's bind."""


def until(done: Callable[[], bool], what: str, *, tries: int = 2000, pause: float = 0.01
          ) -> None:
    """Wait (bounded: ``tries`` looks, ``pause`` apart) for a server or its threads to have
    done something countable; fail naming ``what`` it never did."""
    for _ in range(tries):
        if done():
            return
        time.sleep(pause)
    raise AssertionError(f"the server never {what}")


def wait_until_serving(server: Server, *, path: str = "/healthz",
                       scheme: str = "http", verify: ssl.SSLContext | bool = True) -> None:
    """Until the server answers ``path`` (any status); fails at once if the process exits.
    ``/healthz`` answers from outside the app: asking it builds nothing (``/openapi.json``
    would have the server build its whole OpenAPI schema first, about 0.2 CPU-s a start)."""
    deadline = time.monotonic() + STARTUP_GUARD
    pause = 0.02
    url = f"{scheme}://127.0.0.1:{server.port}{path}"
    while True:
        code = server.proc.poll()
        if code is not None:
            err = server.errors()
            if "address already in use" in err.lower():
                raise AddressTaken(err)
            raise AssertionError(f"the server on {server.port} exited ({code}): {err}")
        try:
            httpx.get(url, timeout=5, verify=verify)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise AssertionError(f"the server on {server.port} did not answer within "
                                     f"{STARTUP_GUARD:.0f} s: {server.errors()}") from None
            time.sleep(pause)
            pause = min(pause * 1.5, 0.25)


def start_uvicorn_factory(env: dict[str, str], *, wait: bool = True) -> Server:
    """``uvicorn --factory dicetable.server.main:app_from_env`` on a socket bound here."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.set_inheritable(True)
    fd = sock.fileno()
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by Server.stop)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "dicetable.server.main:app_from_env",
         "--fd", str(fd), "--log-level", "warning"],
        env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=stderr, pass_fds=(fd,))
    server = Server(proc, int(sock.getsockname()[1]), stderr, sock)
    if wait:
        try:
            wait_until_serving(server)
        except BaseException:
            server.stop(kill=True)
            raise
    return server


TIMEOUT = httpx.Timeout(60.0)
"""For requests to a server process: generous, since a loaded machine answers late."""


def start_serve(args: Sequence[str], *, port: int | None = None, attempts: int = 5,
                ready: Callable[[Server], None] = wait_until_serving) -> Server:
    """``dicetable serve ARGS --port P``, waited for; on another free port where P was taken."""
    for attempt in range(attempts):
        chosen = port if port is not None and attempt == 0 else free_port()
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by Server.stop)
        proc = subprocess.Popen(
            [sys.executable, "-m", "dicetable.cli.main", "serve", *args, "--port", str(chosen)],
            stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ})
        server = Server(proc, chosen, stderr)
        try:
            ready(server)
        except AddressTaken:
            server.stop(kill=True)
            continue
        except BaseException:
            server.stop(kill=True)
            raise
        return server
    raise AssertionError(f"no free port in {attempts} attempts")


@contextmanager
def running(servers: Sequence[Server]) -> Iterator[Sequence[Server]]:
    """Wait until every server answers (they start side by side), and stop them all when the
    block ends, however it ends."""
    try:
        for server in servers:
            wait_until_serving(server)
        yield servers
    finally:
        for server in servers:
            server.stop()


def login(port: int, user: str) -> str:
    reply = httpx.post(f"http://127.0.0.1:{port}/api/login",
                       json={"username": user, "password": DEMO_PASSWORD}, timeout=TIMEOUT)
    reply.raise_for_status()
    token: str = reply.json()["token"]
    return token
