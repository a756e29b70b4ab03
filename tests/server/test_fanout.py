"""WebSocket fan-out: a slow viewer is dropped without slowing the table, and catches up with
``after=SEQ``; each event is serialised once per privacy class, not once per viewer."""

from __future__ import annotations

import asyncio
import json

from dicetable.application.accounts import Kind
from dicetable.games import commands as g
from dicetable.server.floor import TOO_SLOW, Given, Hub
from tests.server.pipeline_helpers import T, account, bet, run_async, small_floor


class StuckSocket:
    """A connection whose client stops reading after ``reads`` messages."""

    def __init__(self, reads: int) -> None:
        self.reads = reads
        self.sent: list[str] = []
        self.closed: tuple[int, str | None] | None = None
        self.never = asyncio.Event()

    async def send_text(self, data: str) -> None:
        if len(self.sent) >= self.reads:
            await self.never.wait()  # the client's buffer is full: the send never completes
        self.sent.append(data)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed = (code, reason)


def test_a_slow_viewer_is_dropped_without_slowing_the_table_and_catches_up() -> None:
    floor = small_floor(chips=1000_00)
    hub = Hub(floor, send_buffer=3)
    floor.listen(hub.publish)
    dee = account("dee", Kind.STAFF)
    wagers = ["field", "any7", "anycraps", "hard4", "hard6", "hard8", "hard10", "two", "three",
              "eleven"]

    slow_watchers: list[object] = []

    async def scenario() -> tuple[StuckSocket, StuckSocket, int, int]:
        hub.bind(asyncio.get_running_loop())
        slow_w, hello = await asyncio.to_thread(hub.join, T, dee, 0)
        slow_watchers.append(slow_w)
        fast_w, _ = await asyncio.to_thread(hub.join, T, dee, 0)
        start = json.loads(hello)["view"]["seq"]
        slow, fast = StuckSocket(reads=1), StuckSocket(reads=10**6)
        pumps = [asyncio.create_task(hub.pump(slow_w, slow)),
                 asyncio.create_task(hub.pump(fast_w, fast))]
        for wager in wagers:  # one batch each: every one is answered, the slow viewer or not
            reply = await asyncio.wrap_future(
                floor.submit(T, Given(account("alice"), bet(wager, 1_00), g.PlaceBet)))
            assert reply["events"][0]["type"] == "BetPlaced"
        for _ in range(5000):  # let the loop deliver what the table already committed
            if slow.closed is not None and len(fast.sent) == len(wagers):
                break
            await asyncio.sleep(0.001)
        fast_w.closed = True
        fast_w.wake.set()
        await asyncio.gather(*pumps, return_exceptions=True)
        return slow, fast, start, slow_w.seq

    slow, fast, start, last_sent = run_async(scenario)
    head = floor.tables[T].table.state.seq
    assert head == start + len(wagers)  # the table went on: every bet committed
    assert [json.loads(m)["seq"] for m in fast.sent] == list(range(start + 1, head + 1))
    assert len(slow.sent) == 1
    assert slow.closed is not None
    code, reason = slow.closed
    assert code == TOO_SLOW
    assert reason == f"too slow; reconnect with after={last_sent}"
    assert last_sent == start + 1
    assert hub.dropped == 1
    assert slow_watchers[0] not in hub.watchers
    # Reconnecting with after=SEQ brings every event it missed, then pushes resume.
    again, hello = hub.join(T, dee, last_sent)
    caught = json.loads(hello)
    assert [e["seq"] for e in caught["events"]] == list(range(last_sent + 1, head + 1))
    assert caught["view"]["seq"] == head == again.seq
    floor.close()


def test_each_event_is_serialised_once_per_privacy_class_not_per_viewer() -> None:
    floor = small_floor()
    hub = Hub(floor)
    floor.listen(hub.publish)
    viewers = [account(p) for p in ("alice", "bob", "carol")] * 50  # 150 connections

    async def scenario() -> list[list[str]]:
        hub.bind(asyncio.get_running_loop())
        joined = [await asyncio.to_thread(hub.join, T, v, 0) for v in viewers]
        sockets = [StuckSocket(reads=10**6) for _ in joined]
        pumps = [asyncio.create_task(hub.pump(w, s)) for (w, _), s in zip(joined, sockets,
                                                                             strict=True)]
        before = hub.serialised
        await asyncio.wrap_future(
            floor.submit(T, Given(account("alice"), bet("field", 1_00), g.PlaceBet)))
        for _ in range(5000):  # the push follows the answer: wait until it is delivered
            if all(s.sent for s in sockets):
                break
            await asyncio.sleep(0.001)
        assert hub.serialised - before == 1  # alice's private BetPlaced: one text, for staff
        # and alice alike; nobody else sees it
        for w, _ in joined:
            w.closed = True
            w.wake.set()
        await asyncio.gather(*pumps, return_exceptions=True)
        return [s.sent for s in sockets]

    sent = run_async(scenario)
    by_viewer = {v.username: json.loads(s[0]) for v, s in zip(viewers, sent, strict=True)}
    assert [e["player"] for e in by_viewer["alice"]["events"]] == ["alice"]
    assert by_viewer["bob"]["events"] == by_viewer["carol"]["events"] == []
    # The push's merge patch: alice's own part changed, bob's did not (no "me" at all).
    assert by_viewer["alice"]["patch"]["me"]["balance"] == 99_00
    assert "me" not in by_viewer["bob"]["patch"]
    floor.close()
