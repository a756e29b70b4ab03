"""spec/table-bank.md §5 "Ratings": player, table, seat, start and stop, every wager with its
working rolls; a session is a seated period at one table (PlayerJoined to PlayerLeft)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dicetable.core.errors import InvalidInput
from dicetable.ratings.fold import RatingsFold
from dicetable.ratings.formula import GamingDay
from tests.ratings.helpers import rate, table, throw


def test_5_a_session_runs_from_joining_to_leaving_and_a_return_is_a_new_one() -> None:
    t, clock = table(players=("alice", "bob"))
    t.bet("alice", "field", 5_00)
    clock.advance(minutes=20)
    throw(t, "1-2")
    t.leave("alice")
    clock.advance(minutes=10)
    t.join("alice", 5)
    t.bet("alice", "field", 10_00)
    clock.advance(minutes=5)
    throw(t, "3-4")
    rated = {(r.player, r.session): r for r in rate(t)}
    first, second, bob = rated["alice", 1], rated["alice", 2], rated["bob", 1]
    assert (first.player, first.session, first.seat, first.seconds) == ("alice", 1, 1, 20 * 60)
    assert first.ended is not None
    assert first.theo == 5_00 * Fraction(1, 18)
    assert (second.session, second.seat, second.ended) == (2, 5, None)
    assert second.seconds == 5 * 60
    assert second.theo == 10_00 * Fraction(1, 18)
    assert bob.player == "bob"
    assert bob.rolls == 0
    assert bob.theo == 0
    assert bob.average_bet == 0


def test_5_the_fold_read_in_pieces_rates_as_the_whole() -> None:
    """The server folds a table's new events as they come: the result is the same."""
    t, _ = table()
    line = t.bet("alice", "pass", 10_00)
    throw(t, "2-3")
    t.odds("alice", line, 20_00)
    t.bet("alice", "place6", 6_00)
    throw(t, "3-3", "1-1", "4-3")
    whole = rate(t)
    pieces = RatingsFold()
    for i, e in enumerate(t.log):
        pieces.feed(e)
        if i % 3 == 0:
            pieces.ratings()
    assert pieces.ratings() == whole


def test_5_a_gaming_day_takes_the_sessions_started_in_it() -> None:
    t, _ = table()  # 2026-03-02 12:00 UTC
    t.bet("alice", "field", 5_00)
    throw(t, "1-2")
    fold = RatingsFold()
    fold.feed_all(t.log)
    assert len(fold.ratings(day=GamingDay.parse("2026-03-02"))) == 1
    assert fold.ratings(day=GamingDay.parse("2026-03-01")) == []
    # 07:00 New York is 12:00 UTC: the day that began at 06:00 local on 2 March
    assert len(fold.ratings(day=GamingDay.parse("2026-03-02", "America/New_York"))) == 1
    assert fold.ratings(day=GamingDay.parse("2026-03-02", "America/New_York", "08:00")) == []
    for bad in (("2026-13-01",), ("2026-03-02", "Mars/Base"), ("2026-03-02", "UTC", "25:00")):
        with pytest.raises(InvalidInput):
            GamingDay.parse(*bad)
