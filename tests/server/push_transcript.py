"""Every connection's hello and pushes over a few rounds, as the bytes each one is sent.

A small floor's table with more players, rich and poor (their controls are cut to their
balance), a dealer, staff with no role there, a player who joins and leaves, and one who only
watches; over fixed rolls: line bets and their odds, come bets travelling to their numbers
with odds behind them, place bets, the field, hardways, a seven-out and a new shooter's
come-out. ``transcript`` is what each connection received, with the clock's instants
written as ``T`` (the only thing that differs from one run to the next).

``test_push_bytes`` holds every push to the digests of the bytes the code before the push's
rework sent for the same rounds (``tests/fixtures/push_transcript.json``). To write that file
again from another tree's code (when a view is meant to change)::

    PYTHONPATH=OTHER/src:. python -m tests.server.push_transcript \
        > tests/fixtures/push_transcript.json
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from dicetable.application.accounts import Kind
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.server.floor import Chore, Given, Hub, Watcher
from tests.server.pipeline_helpers import T, account, bet, small_floor

_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")

CROWD = {f"c{i:02d}": chips for i, chips in enumerate(
    [21_00, 16_00, 23_00, 47_00, 95_00, 190_00, 380_00, 760_00, 1_500_00, 20_000_00])}
"""Players besides alice, bob and carol, from a few dollars (most rungs cut away) to
plenty (none)."""

VIEWERS = [account("dee", Kind.STAFF), account("pat", Kind.STAFF), account("alice"),
           account("bob"), account("carol"), account("una"), account("zed"),
           *[account(name) for name in CROWD]]


def transcript() -> dict[str, list[str]]:
    """Each viewer's hello, then each push, in order (instants written as ``T``)."""
    floor = small_floor(chips=500_00)

    class InlineLoop:
        def is_closed(self) -> bool:
            return False

        def call_soon_threadsafe(self, callback: Callable[..., object], *args: object) -> None:
            callback(*args)

    crowd: list[g.Command] = []
    for seat, (name, chips) in enumerate(CROWD.items(), start=4):
        crowd += [g.JoinTable(actor=name, role=Role.PLAYER, player=name,
                              seat=seat if seat <= 11 else None),
                  g.BuyChips(actor="table", role=Role.SYSTEM, player=name, amount=chips)]
    floor.submit(T, Chore(lambda: crowd)).result()
    hub = Hub(floor, send_buffer=100_000)
    hub.bind(InlineLoop())  # type: ignore[arg-type]
    floor.listen(hub.publish)
    joined: dict[str, tuple[Watcher, str]] = {}
    for viewer in VIEWERS:
        joined[viewer.username] = hub.join(T, viewer, 0)
    info = floor.tables[T]

    def run(*commands: g.Command) -> None:
        floor.submit(T, Chore(lambda: list(commands))).result()

    def player(who: str, wager: str, amount: int, base: str | None = None) -> None:
        if info.table.state.balance(who) < amount:
            return  # broke: not a bet this player can make
        floor.submit(T, Given(account(who), bet(wager, amount, base), g.PlaceBet)).result(10)

    def newest(who: str, wager: str) -> str:
        mine = [b for b in info.table.state.bets_of(who) if b.wager == wager]
        return mine[-1].id

    def roll(faces: str) -> None:
        run(g.CloseBetting(actor="table", role=Role.SYSTEM),
            info.table.command("roll", roll=faces, actor="table", role=Role.SYSTEM))
        floor.submit(T, Chore(advance=lambda table: table.automate())).result()

    everyone = ["alice", "bob", "carol", *CROWD]
    for who in everyone:
        player(who, "pass", 5_00)
    player("bob", "dontpass", 10_00)
    player("carol", "field", 5_00)
    roll("2-2")  # point 4
    for who in ("alice", "c05", "c09"):
        player(who, "odds", 10_00, newest(who, "pass"))
    for who in everyone:
        player(who, "come", 5_00)
    player("alice", "place6", 6_00)
    player("c09", "place8", 12_00)
    player("carol", "hard8", 1_00)
    run(g.JoinTable(actor="una", role=Role.PLAYER, player="una", seat=12),
        g.BuyChips(actor="table", role=Role.SYSTEM, player="una", amount=50_00))
    player("una", "any7", 1_00)
    roll("3-3")  # the come bets travel to the 6; place 6 wins
    for who in ("alice", "c09", "c07"):
        player(who, "odds", 10_00, newest(who, "come"))
    player("bob", "dontcome", 5_00)
    player("c01", "field", 5_00)
    roll("5-4")  # the don't come travels to the 9
    for who in ("alice", "c08"):
        player(who, "come", 5_00)
    roll("1-1")  # field wins double, come bets lose on craps
    run(g.LeaveTable(actor="una", role=Role.PLAYER, player="una"))
    roll("4-4")  # hard 8
    roll("5-2")  # seven-out
    for who in everyone:
        player(who, "pass", 5_00)
    roll("6-5")  # a winner on the come-out
    for who in everyone:
        if not any(b.wager == "pass" for b in info.table.state.bets_of(who)):
            player(who, "pass", 5_00)
    roll("6-4")  # point 10
    for who in ("alice", "c05", "c09"):
        player(who, "odds", 5_00, newest(who, "pass"))
    roll("5-5")  # the point made
    floor.submit(T, Chore(list)).result()
    out = {name: [_INSTANT.sub("T", hello)] + [_INSTANT.sub("T", text)
                                              for _, text in watcher.buffer]
           for name, (watcher, hello) in joined.items()}
    floor.close()
    return out


def digests(texts: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: [hashlib.sha256(t.encode()).hexdigest()[:24] for t in sent]
            for name, sent in texts.items()}


if __name__ == "__main__":
    print(json.dumps(digests(transcript()), indent=1, sort_keys=True))
