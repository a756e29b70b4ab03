"""Tables played through the engine (bare: players act for themselves) for the ratings tests."""

from __future__ import annotations

from datetime import UTC, datetime

from dicetable.core.clock import FixedClock
from dicetable.ratings.fold import Rating, RatingsFold
from dicetable.rules.model import RulePack
from dicetable.table import Table

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def table(pack: RulePack | str = "pa-craps", players: tuple[str, ...] = ("alice",),
          bankroll: int = 10_000_00) -> tuple[Table, FixedClock]:
    clock = FixedClock(START)
    t = Table.open(pack, "rated-1", mode="bare", clock=clock)
    for seat, player in enumerate(players, 1):
        t.join(player, seat)
        t.buy_in(player, bankroll)
    return t, clock


def throw(t: Table, *rolls: str) -> None:
    for roll in rolls:
        t.roll(roll)
        t.settle()


def rate(t: Table) -> list[Rating]:
    fold = RatingsFold()
    fold.feed_all(t.log)
    return fold.ratings()


def only(t: Table, player: str = "alice") -> Rating:
    [r] = [r for r in rate(t) if r.player == player]
    return r
