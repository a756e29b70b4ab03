"""spec/table-bank.md §5 "Ratings", over random sessions: the ratings account for every cent
the players won or lost, a theo is never negative unless a don't bet was given up, and a
roll is counted only for the players with a wager in action on it."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.core.dice_sources import SeededDice
from dicetable.core.errors import DicetableError
from dicetable.ratings.fold import RatingsFold
from tests.ratings.helpers import table

WAGERS = ("pass", "dontpass", "come", "dontcome", "place6", "place8", "buy4", "lay10",
          "field", "hard8", "any7", "hop1-2", "fire", "big6")
PLAYERS = ("alice", "bob")
AMOUNTS = (1_00, 5_00, 6_00, 10_00, 12_00, 20_00, 41_00)

action = st.one_of(
    st.tuples(st.just("bet"), st.sampled_from(PLAYERS), st.sampled_from(WAGERS),
              st.sampled_from(AMOUNTS)),
    st.tuples(st.just("bet"), st.sampled_from(PLAYERS), st.sampled_from(WAGERS),
              st.sampled_from(AMOUNTS)),
    st.tuples(st.just("odds"), st.sampled_from(PLAYERS), st.integers(1, 3)),
    st.tuples(st.just("remove"), st.sampled_from(PLAYERS), st.integers(0, 5)),
    st.tuples(st.just("press"), st.sampled_from(PLAYERS), st.integers(0, 5)),
    st.tuples(st.just("roll"), st.integers(1, 4)),
    st.tuples(st.just("leave"), st.sampled_from(PLAYERS)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), actions=st.lists(action, min_size=20, max_size=80))
def test_5_ratings_account_for_every_cent_and_every_roll(
        seed: int, actions: list[tuple[Any, ...]]) -> None:
    t, _ = table(players=PLAYERS)
    dice = SeededDice(seed)
    gave_up: set[str] = set()
    for a in actions:
        try:
            if a[0] == "bet":
                t.bet(a[1], a[2], a[3])
            elif a[0] == "odds":
                line = [b for b in t.state.bets_of(a[1])
                        if b.wager in ("pass", "come", "dontpass", "dontcome") and b.state]
                if line:
                    t.odds(a[1], line[0].id, a[2] * 10_00)
            elif a[0] in ("remove", "press"):
                bets = t.state.bets_of(a[1])
                if bets:
                    bet = bets[a[2] % len(bets)]
                    if a[0] == "remove":
                        t.remove(bet.id)
                        if bet.wager.startswith("dont") and bet.state:
                            gave_up.add(a[1])
                    else:
                        t.change(bet.id, bet.amount * 2)
            elif a[0] == "roll":
                for _ in range(a[1]):
                    t.roll(dice)
                    t.settle()
            elif a[0] == "leave":
                t.leave(a[1])
                t.join(a[1])
        except DicetableError:
            pass  # refused, and nothing changed: the rating must not see it either
    fold = RatingsFold()
    fold.feed_all(t.log)
    ratings = fold.ratings()
    standing = t.state.on_layout()
    # every cent: the players' results are the house's, stakes still standing aside
    assert sum(r.result for r in ratings) == -t.state.house
    assert sum(t.balances.values()) + standing == 2 * 10_000_00 + sum(
        r.result for r in ratings)
    rolls = sum(1 for e in t.log if type(e).__name__ == "PuckMoved")
    for r in ratings:
        assert 0 <= r.rolls <= rolls
        if r.player not in gave_up:
            assert r.theo >= 0
        assert (r.rolls == 0) == (r.average_bet == 0)
