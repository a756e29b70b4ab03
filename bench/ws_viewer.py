"""A WebSocket viewer that costs the generator next to nothing: an ``asyncio.Protocol`` that
reads the frames as they arrive and timestamps each message when its last byte is read.

A viewer built on a WebSocket library (a task per connection, each message decoded and
handed through an ``async for``) took the generator twice the CPU over the rolls (6-8% of its
core against 3%), and each message's timestamp waited for its task's turn. Here each read is
one callback, a message is the bytes of one text frame (server frames are not masked), and a
ping is answered with its pong (the server closes a connection that does not answer). What
is left of the first-to-last spread is the server's: writing 1,001 messages took its event
loop 22-60 ms (a trace of its sends).

    viewer = await Viewer.open("127.0.0.1", port, "/ws/tables/arena?token=...", on_message)
    hello = await viewer.hello
    ...
    viewer.close()
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
from collections.abc import Callable
from typing import cast

from bench.loadgen import now

OnMessage = Callable[[float, bytes], None]
"""Called with when the message's last byte was read (by the viewer's ``clock``) and its
bytes."""

_TEXT, _CONTINUATION, _CLOSE, _PING, _PONG = 0x1, 0x0, 0x8, 0x9, 0xA


class Viewer(asyncio.Protocol):
    """One WebSocket connection, read without a task."""

    def __init__(self, on_message: OnMessage, clock: Callable[[], float] = now) -> None:
        loop = asyncio.get_running_loop()
        self.on_message = on_message
        self.clock = clock
        self.transport: asyncio.Transport | None = None
        self.upgraded: asyncio.Future[None] = loop.create_future()
        self.hello: asyncio.Future[bytes] = loop.create_future()
        """The first message (the server's hello)."""
        self.closed: asyncio.Future[None] = loop.create_future()
        self._buffer = bytearray()
        self._open = False
        self._fragments: list[bytes] = []

    @classmethod
    async def open(cls, host: str, port: int, path: str, on_message: OnMessage,
                   clock: Callable[[], float] = now) -> Viewer:
        loop = asyncio.get_running_loop()
        transport, viewer = await loop.create_connection(lambda: cls(on_message, clock),
                                                         host, port)
        viewer.transport = transport  # uvloop calls connection_made after this returns
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        await viewer.upgraded
        return viewer

    # -- asyncio.Protocol -----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not ``asyncio.Transport`` subclasses: no isinstance here
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        t = self.clock()
        self._buffer += data
        if not self._open:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._buffer[:end])
            del self._buffer[:end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(ConnectionError(head.split(b"\r\n", 1)[0]
                                                            .decode("latin-1")))
                self.close()
                return
            self._open = True
            self.upgraded.set_result(None)
        self._frames(t)

    def connection_lost(self, exc: Exception | None) -> None:
        for waiting in (self.upgraded, self.hello):
            if not waiting.done():
                waiting.set_exception(exc or ConnectionError("closed"))
        if not self.closed.done():
            self.closed.set_result(None)

    # -- frames -----------------------------------------------------------------------------------
    def _frames(self, t: float) -> None:
        buf = self._buffer
        pos = 0
        while len(buf) - pos >= 2:
            first, second = buf[pos], buf[pos + 1]
            length, head = second & 0x7F, 2
            if length == 126:
                if len(buf) - pos < 4:
                    break
                length, head = struct.unpack_from("!H", buf, pos + 2)[0], 4
            elif length == 127:
                if len(buf) - pos < 10:
                    break
                length, head = struct.unpack_from("!Q", buf, pos + 2)[0], 10
            if len(buf) - pos < head + length:
                break  # the rest of this frame is still to come
            payload = bytes(buf[pos + head:pos + head + length])
            pos += head + length
            opcode = first & 0x0F
            if opcode == _PING:
                self._send(_PONG, payload)
            elif opcode == _CLOSE:
                self._send(_CLOSE, payload[:2])
                self.close()
            elif opcode in (_TEXT, _CONTINUATION):
                self._fragments.append(payload)
                if first & 0x80:  # the last frame of the message
                    message = b"".join(self._fragments)
                    self._fragments = []
                    if not self.hello.done():
                        self.hello.set_result(message)
                    else:
                        self.on_message(t, message)
        del buf[:pos]

    def _send(self, opcode: int, payload: bytes) -> None:
        """A client frame: masked, as RFC 6455 requires of a client."""
        if self.transport is None or self.transport.is_closing():
            return
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        self.transport.write(head + mask + masked)

    def close(self) -> None:
        """Say goodbye (a close frame, code 1000) and hang up."""
        if self.transport is not None and not self.transport.is_closing():
            self._send(_CLOSE, struct.pack("!H", 1000))
            self.transport.close()
