"""A command for a table another process owns is forwarded to it (``owners.Forwarder``):
HTTP/1.1 on connections kept open to each owner, the command's own headers and body, the
owner's answer brought back whole. Tested against a real socket server on this loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from dicetable.server.owners import FORWARDED, Forwarder
from tests.server.pipeline_helpers import run_async

Answer = Callable[[bytes], bytes]
"""What the owner writes back for a request (its head and body, as read)."""

PLAIN = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 12\r\n"
         b"x-dicetable-decided-by: 7\r\n\r\n{\"ok\": true}")


class Owner:
    """A socket server that reads each request (head, then content-length bytes) and writes
    what ``answer`` says; ``close_after`` requests on a connection, it closes it."""

    def __init__(self, answer: Answer, close_after: int | None = None) -> None:
        self.answer = answer
        self.close_after = close_after
        self.requests: list[bytes] = []
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                writer.write(self.answer(request))
                await writer.drain()
                served += 1
                if self.close_after is not None and served >= self.close_after:
                    break
        except asyncio.IncompleteReadError:
            pass
        writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()


def _scope(path: str = "/api/tables/craps-pa-1/bets", query: bytes = b"",
           method: str = "POST") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
            "query_string": query,
            "headers": [(b"host", b"floor.example"), (b"authorization", b"Bearer t.alice"),
                        (b"content-type", b"application/json"), (b"content-length", b"2"),
                        (b"connection", b"keep-alive"), (b"idempotency-key", b"k-1")]}


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    run_async(test)  # on a thread of its own: a browser test's loop may hold this one


def test_a_forwarded_command_reaches_its_owner_with_its_own_headers_and_body() -> None:
    async def main() -> None:
        owner = Owner(lambda request: PLAIN)
        async with owner as url:
            forwarder = Forwarder()
            status, headers, body = await forwarder.forward(
                url, _scope(query=b"x=1"), b"{}")
            forwarder.close()
        assert status == 200
        assert body == b'{"ok": true}'
        assert (b"x-dicetable-decided-by", b"7") in headers
        assert (b"content-length", b"12") in headers
        head, _, sent = owner.requests[0].partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        assert lines[0] == b"POST /api/tables/craps-pa-1/bets?x=1 HTTP/1.1"
        assert f"{FORWARDED}: 1".encode() in lines
        assert b"authorization: Bearer t.alice" in lines
        assert b"idempotency-key: k-1" in lines
        assert b"content-length: 2" in lines
        assert not any(line.startswith((b"connection", b"host: floor")) for line in lines)
        assert sent == b"{}"

    run(main)


def test_one_connection_carries_the_commands_forwarded_one_after_another() -> None:
    async def main() -> None:
        owner = Owner(lambda request: PLAIN)
        async with owner as url:
            forwarder = Forwarder()
            for _ in range(5):
                status, _, _ = await forwarder.forward(url, _scope(), b"{}")
                assert status == 200
            forwarder.close()
        assert (forwarder.opened, owner.connections, len(owner.requests)) == (1, 1, 5)

    run(main)


def test_commands_forwarded_at_once_each_have_a_connection_then_share_them() -> None:
    async def main() -> None:
        owner = Owner(lambda request: PLAIN)
        async with owner as url:
            forwarder = Forwarder()
            replies = await asyncio.gather(*(forwarder.forward(url, _scope(), b"{}")
                                             for _ in range(4)))
            assert [r[0] for r in replies] == [200] * 4
            await forwarder.forward(url, _scope(), b"{}")
            forwarder.close()
        assert forwarder.opened == 4  # the fifth went on one of the four

    run(main)


def test_a_chunked_answer_is_brought_back_whole() -> None:
    chunked = (b"HTTP/1.1 422 Unprocessable Entity\r\ntransfer-encoding: chunked\r\n\r\n"
               b"5\r\n{\"a\":\r\n3;x=y\r\n 1}\r\n0\r\ntrailer: t\r\n\r\n")

    async def main() -> None:
        owner = Owner(lambda request: chunked)
        async with owner as url:
            forwarder = Forwarder()
            status, headers, body = await forwarder.forward(url, _scope(), b"{}")
            again, _, _ = await forwarder.forward(url, _scope(), b"{}")
            forwarder.close()
        assert (status, body, again) == (422, b'{"a": 1}', 422)
        assert not any(name == b"transfer-encoding" for name, _ in headers)
        assert forwarder.opened == 1

    run(main)


def test_an_owner_that_says_close_gets_a_new_connection_next_time() -> None:
    closing = PLAIN.replace(b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 200 OK\r\nconnection: close\r\n")

    async def main() -> None:
        owner = Owner(lambda request: closing, close_after=1)
        async with owner as url:
            forwarder = Forwarder()
            for _ in range(3):
                assert (await forwarder.forward(url, _scope(), b"{}"))[0] == 200
            forwarder.close()
        assert (forwarder.opened, owner.connections) == (3, 3)

    run(main)


def test_a_connection_the_owner_closed_while_idle_is_not_used_again() -> None:
    async def main() -> None:
        owner = Owner(lambda request: PLAIN, close_after=1)  # closes without saying so
        async with owner as url:
            forwarder = Forwarder()
            assert (await forwarder.forward(url, _scope(), b"{}"))[0] == 200
            (kept,) = [conn for pool in forwarder._idle.values() for conn, _ in pool]
            for _ in range(500):  # until this loop has read the owner's close
                if kept[0].at_eof():
                    break
                await asyncio.sleep(0.01)
            assert kept[0].at_eof()
            assert (await forwarder.forward(url, _scope(), b"{}"))[0] == 200
            forwarder.close()
        assert (forwarder.opened, len(owner.requests)) == (2, 2)

    run(main)


def test_an_idle_connection_past_its_time_is_closed_not_used() -> None:
    now = [0.0]

    async def main() -> None:
        owner = Owner(lambda request: PLAIN)
        async with owner as url:
            forwarder = Forwarder(idle=60.0, clock=lambda: now[0])
            await forwarder.forward(url, _scope(), b"{}")
            now[0] = 61.0
            await forwarder.forward(url, _scope(), b"{}")
            forwarder.close()
        assert forwarder.opened == 2

    run(main)


def test_an_owner_that_does_not_answer_raises_for_the_door_to_decide_here() -> None:
    async def main() -> None:
        owner = Owner(lambda request: b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}",
                      close_after=1)  # cut off mid-body
        async with owner as url:
            forwarder = Forwarder()
            with pytest.raises(asyncio.IncompleteReadError):
                await forwarder.forward(url, _scope(), b"{}")
            assert forwarder._idle == {}  # nothing kept of a broken connection
        with pytest.raises(OSError):  # nobody listening there any more
            await forwarder.forward(url, _scope(), b"{}")

    run(main)


def test_an_owner_address_that_is_not_http_is_refused() -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="http://host:port"):
            await Forwarder().forward("https://127.0.0.1:1", _scope(), b"{}")

    run(main)
