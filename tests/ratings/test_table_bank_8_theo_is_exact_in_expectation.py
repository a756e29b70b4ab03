"""spec/table-bank.md §7 item 3 ("exact in expectation because a player can only stop a bet at
a roll boundary"), checked exactly: over every one of the 1,296 ways two rolls can fall, the
mean exact theo equals the mean loss to the cent-fraction, for a player who bets adaptively.

The player puts up a don't pass, a Place 6 (off on the come-out), the field, a hard 8 and an
Any 7, presses the field after a point is set and takes the don't pass down once it stands on
its point; after two rolls every wager still standing comes down. Every payout here is exact
at the table's units, so the loss is the wagers' own, with no rounding.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from dicetable.core.dice import Roll
from dicetable.ratings.fold import RatingsFold
from dicetable.table import Table
from tests.ratings.helpers import table

FACES = [Roll(a, b) for a, b in itertools.product(range(1, 7), repeat=2)]


def _session(first: Roll, second: Roll) -> tuple[int, Fraction, Table]:
    t, _ = table(bankroll=1_000_00)
    t.bet("alice", "dontpass", 10_00)
    t.bet("alice", "place6", 12_00)
    t.bet("alice", "hard8", 1_00)
    for roll in (first, second):
        field = 10_00 if t.point is not None else 5_00
        t.bet("alice", "field", field)
        t.bet("alice", "any7", 5_00)
        t.roll(roll)
        t.settle()
        for bet in t.state.bets_of("alice"):
            if bet.wager == "dontpass" and bet.state:
                t.remove(bet.id)  # taken down on its point: the player gives up its value
    for bet in t.state.bets_of("alice"):
        t.remove(bet.id)
    fold = RatingsFold()
    fold.feed_all(t.log)
    [rating] = fold.ratings()
    return 1_000_00 - t.balance("alice"), rating.theo, t


def test_8_mean_exact_theo_equals_mean_loss_over_every_two_roll_session() -> None:
    losses, theos = Fraction(0), Fraction(0)
    for first, second in itertools.product(FACES, FACES):
        loss, theo, t = _session(first, second)
        assert not t.state.bets
        assert t.state.conserved()
        assert all(p.rounding == 0 for e in t.log for p in getattr(e, "items", ())
                   if hasattr(p, "rounding"))
        losses += loss
        theos += theo
    assert theos / 1296 == losses / 1296
    assert losses != 0  # a real loss in expectation, not two zeros
