"""The load benchmark's WebSocket viewer reads what a server sends as RFC 6455 frames it: a
hello, messages of every length encoding, split across reads and fragmented, pings answered
with masked pongs, a close answered."""

from __future__ import annotations

import asyncio
import struct
import threading

from bench.ws_viewer import Viewer


def _frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        return head + bytes([n]) + payload
    if n < 1 << 16:
        return head + bytes([126]) + struct.pack("!H", n) + payload
    return head + bytes([127]) + struct.pack("!Q", n) + payload


async def _client_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    first, second = await reader.readexactly(2)
    assert second & 0x80, "a client's frames are masked"
    n = second & 0x7F
    if n == 126:
        n = struct.unpack("!H", await reader.readexactly(2))[0]
    mask = await reader.readexactly(4)
    data = await reader.readexactly(n)
    return first & 0x0F, bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def test_the_viewer_reads_every_frame_and_answers_pings_and_close() -> None:
    big = b"x" * 70_000  # a 64-bit length
    mid = b"y" * 300  # a 16-bit length

    async def main() -> tuple[bytes, list[bytes], list[tuple[int, bytes]]]:
        answered: list[tuple[int, bytes]] = []
        done = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            request = await reader.readuntil(b"\r\n\r\n")
            assert b"Upgrade: websocket" in request
            writer.write(b"HTTP/1.1 101 Switching Protocols\r\n\r\n" + _frame(1, b"hello"))
            stream = (_frame(1, mid) + _frame(9, b"are you there") + _frame(1, b"frag", False)
                      + _frame(0, b"mented") + _frame(1, big))
            for i in range(0, len(stream), 997):  # split across reads anywhere
                writer.write(stream[i:i + 997])
                await writer.drain()
            answered.append(await _client_frame(reader))  # the pong
            writer.write(_frame(8, struct.pack("!H", 1000)))
            answered.append(await _client_frame(reader))  # the close, answered
            done.set()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        got: list[bytes] = []
        viewer = await Viewer.open("127.0.0.1", port, "/ws", lambda t, m: got.append(m))
        hello = await viewer.hello
        await asyncio.wait_for(done.wait(), 10)
        await asyncio.wait_for(viewer.closed, 10)
        server.close()
        return hello, got, answered

    results: list[tuple[bytes, list[bytes], list[tuple[int, bytes]]]] = []
    # on a thread of its own: this one may hold another test's running loop
    runner = threading.Thread(target=lambda: results.append(asyncio.run(main())))
    runner.start()
    runner.join()
    hello, got, answered = results[0]
    assert hello == b"hello"
    assert got == [mid, b"fragmented", big]
    assert answered == [(0xA, b"are you there"), (0x8, struct.pack("!H", 1000))]
