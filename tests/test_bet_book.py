"""The table's book of bets keeps its indexes through every write (issue 28: deciding a
command asks them for one player's bets instead of scanning all of that player's): whatever
is placed, replaced, moved, taken down, copied or cleared, each index says what a scan of the
book says."""

from __future__ import annotations

import copy
import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.games.state import Bet, BetBook

PLAYERS = ("ann", "bob")
IDS = tuple(f"b{i}" for i in range(1, 7))


def _bet(key: str, player: str, wager: str, state: int, base: str | None) -> Bet:
    return Bet(id=key, player=player, wager=wager, amount=500, state=state, base=base)


bets = st.builds(_bet, st.sampled_from(IDS), st.sampled_from(PLAYERS),
                 st.sampled_from(("pass", "come", "odds:take")), st.integers(0, 2),
                 st.sampled_from((None, "b1", "b2")))
writes = st.lists(st.one_of(
    st.tuples(st.just("set"), bets),
    st.tuples(st.just("del"), st.sampled_from(IDS)),
    st.tuples(st.just("pop"), st.sampled_from(IDS)),
    st.tuples(st.just("update"), st.lists(bets, max_size=3)),
    st.tuples(st.just("copy"), st.none()),
    st.tuples(st.just("clear"), st.none())), max_size=30)


def _agrees(book: BetBook) -> None:
    every = list(dict.values(book))
    for player in PLAYERS:
        mine = book.of(player)
        assert {b.id for b in mine} == {b.id for b in every if b.player == player}
        for base in (*IDS, None):
            if base is not None:  # a player's odds behind a bet, in that player's order
                assert [b for b in book.behind(base) if b.player == player] == \
                    [b for b in mine if b.base == base]
            for wager in ("pass", "come", "odds:take"):
                for state in (0, 1, 2):
                    assert {b.id for b in book.on_spot(player, wager, state, base)} == \
                        {b.id for b in mine if (b.wager, b.state, b.base) == (wager, state, base)}


@settings(max_examples=150)
@given(writes)
def test_issue_28_every_index_of_the_book_says_what_a_scan_says(steps: list[tuple[str, object]]
                                                                ) -> None:
    book = BetBook()
    for op, arg in steps:
        if op == "set":
            assert isinstance(arg, Bet)
            book[arg.id] = arg
        elif op in ("del", "pop"):
            if arg in book:
                if op == "del":
                    del book[str(arg)]
                else:
                    book.pop(str(arg))
        elif op == "update":
            assert isinstance(arg, list)
            book.update({b.id: b for b in arg})
        elif op == "copy":
            book = [book.copy(), copy.deepcopy(book), pickle.loads(pickle.dumps(book))][
                len(book) % 3]
        else:
            book.clear()
        _agrees(book)


def test_issue_28_a_bet_replaced_where_it_stood_keeps_its_place() -> None:
    book = BetBook()
    for key in ("b1", "b2", "b3"):
        book[key] = _bet(key, "ann", "come", 0, None)
    book["b4"] = _bet("b4", "ann", "odds:take", 0, "b1")
    book["b5"] = _bet("b5", "ann", "odds:take", 0, "b1")
    book["b1"] = _bet("b1", "ann", "come", 2, None)  # the come bet travels to its point
    book["b4"] = _bet("b4", "ann", "odds:take", 2, "b1")  # and its odds with it
    assert [b.id for b in book.of("ann")] == ["b1", "b2", "b3", "b4", "b5"]
    assert [b.id for b in book.behind("b1")] == ["b4", "b5"]
    assert [b.id for b in book.on_spot("ann", "come", 2, None)] == ["b1"]
    assert book.on_spot("ann", "come", 0, None) == [book["b2"], book["b3"]]
    del book["b4"]
    assert [b.id for b in book.behind("b1")] == ["b5"]
