"""Fold a table's event log into player ratings (spec/table-bank.md §5 "Ratings", §7 item 3).

**A session** is a player's seated period at one table: from ``PlayerJoined`` to
``PlayerLeft``; a player who acts at a table without having joined it (a bare engine) starts a
session at that first act. A session still open is rated up to the last event of the log read
so far. A wager belongs to the session it was placed in, and so do the rolls it works.

For each session the fold keeps, as integers: the rolls in which the player had a wager in
action, the sum over those rolls of the money in action (its mean is the **average bet**, as a
floorperson would see it on the layout: odds included), the amount wagered, the player's actual
result, and for the theo the cent-rolls of each per-roll wager and the cents held in each state
of each held wager (``rates``). The theo itself is worked out only when asked, exactly.

>>> from dicetable.table import Table
>>> from dicetable.core.dice_sources import ScriptedDice
>>> t = Table.open("pa-craps", "t1", mode="bare")
>>> _ = t.join("alice", 1), t.buy_in("alice", 100_00), t.bet("alice", "pass", 10_00)
>>> _ = t.roll("2-2"); _ = t.settle()          # the point is 4
>>> six = t.bet("alice", "place6", 12_00)
>>> for roll in ("1-2", "5-6", "3-4"):        # two rolls the 6 works, then a seven-out
...     _ = t.roll(roll); _ = t.settle()
>>> fold = RatingsFold()
>>> for e in t.log:
...     fold.feed(e)
>>> r = fold.ratings()[0]
>>> r.player, r.rolls, r.theo == 10_00 * Fraction(7, 495) + 12_00 * 3 * Fraction(1, 216)
('alice', 4, True)
>>> r.result, r.average_bet
(-2200, Fraction(1900, 1))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from typing import Any

from dicetable.core.events import Event
from dicetable.games import events as ev
from dicetable.games.engine import is_working
from dicetable.games.fold import apply
from dicetable.games.state import Bet, TableState
from dicetable.ratings.formula import DISPLAY_ROUNDING, GamingDay, IndustryFormula, display_cents
from dicetable.ratings.rates import TheoRates
from dicetable.table.events import NoRollOverturned


@dataclass
class SessionBook:
    """The running counts of one session (integers only; see the module's docstring)."""

    player: str
    number: int
    seat: int | None
    started: str
    ended: str | None = None
    rolls: int = 0
    stake_rolls: int = 0
    wagered: int = 0
    wagers: int = 0
    result: int = 0
    per_roll: dict[str, int] = field(default_factory=dict)
    """Wager code -> the sum over the rolls it worked of the amount in action (cent-rolls)."""
    held: dict[tuple[str, int], int] = field(default_factory=dict)
    """(wager code, state) -> cents booked there (placed or increased, less taken down)."""


@dataclass(frozen=True)
class Rating:
    """One player's rating for one session at one table."""

    table: str
    player: str
    session: int
    """The player's sessions at this table, counted from 1."""
    seat: int | None
    started: str
    ended: str | None
    """None while the player is still seated."""
    seconds: int
    rolls: int
    """Rolls in which the player had a wager in action."""
    average_bet: Fraction
    """Cents in action per such roll, on average."""
    wagered: int
    wagers: int
    result: int
    """The player's actual win (+) or loss (-) on this session's wagers, in cents."""
    theo: Fraction
    """Exact theoretical loss in cents: each wager at its own edge (``rates``)."""
    theo_by_wager: tuple[tuple[str, Fraction], ...]
    industry_theo: Fraction
    """average bet x decisions per hour x hours x one edge (``IndustryFormula``)."""

    @property
    def hours(self) -> Fraction:
        return Fraction(self.seconds, 3600)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: exact figures as fraction strings beside their display cents."""
        return {
            "table": self.table, "player": self.player, "session": self.session,
            "seat": self.seat, "started": self.started, "ended": self.ended,
            "seconds": self.seconds, "rolls": self.rolls,
            "average_bet": display_cents(self.average_bet),
            "average_bet_exact": str(self.average_bet),
            "wagered": self.wagered, "wagers": self.wagers, "result": self.result,
            "theo": display_cents(self.theo), "theo_exact": str(self.theo),
            "theo_by_wager": {code: display_cents(v) for code, v in self.theo_by_wager},
            "industry_theo": display_cents(self.industry_theo),
            "industry_theo_exact": str(self.industry_theo),
            "rounding": DISPLAY_ROUNDING,
        }


def _seconds(start: str, end: str) -> int:
    return max(0, int((datetime.fromisoformat(end) - datetime.fromisoformat(start))
                      .total_seconds()))


class RatingsFold:
    """Feed a table's events in order; ask for ``ratings`` at any point."""

    def __init__(self) -> None:
        self.state = TableState()
        self.rates: TheoRates | None = None
        self.sessions: list[SessionBook] = []
        self._open: dict[str, SessionBook] = {}
        self._count: dict[str, int] = {}
        self._of_bet: dict[str, SessionBook] = {}
        self._working: list[tuple[SessionBook, str, int]] | None = None
        """The wagers in action on the roll just thrown, credited when it is complete."""
        self._voided_working: list[tuple[SessionBook, str, int]] | None = None
        """Those of a roll declared a no roll, until the next throw (it may be overturned)."""
        self.last_at = ""
        self.seq = 0

    # -- folding -----------------------------------------------------------------------------
    def feed_all(self, events: Iterable[ev.Event]) -> None:
        for event in events:
            self.feed(event)

    def feed(self, event: ev.Event) -> None:
        """Fold one event (before the table's own fold, which then updates the bets)."""
        kind = type(event)
        handler = _BEFORE.get(kind)
        if handler is not None:
            handler(self, event)
        apply(self.state, event)
        self.seq = event.seq
        self.last_at = event.at
        if kind is ev.TableOpened:
            self.rates = TheoRates(self.state.rules())

    def _session(self, player: str, at: str) -> SessionBook:
        book = self._open.get(player)
        if book is None:  # acting without having joined: a session starts here
            book = self._start(player, None, at)
        return book

    def _start(self, player: str, seat: int | None, at: str) -> SessionBook:
        number = self._count[player] = self._count.get(player, 0) + 1
        book = SessionBook(player, number, seat, at)
        self.sessions.append(book)
        self._open[player] = book
        return book

    def _joined(self, e: ev.Event) -> None:
        assert isinstance(e, ev.PlayerJoined)
        if e.player in self._open:  # moving seats: the same session
            self._open[e.player].seat = e.seat
            return
        self._start(e.player, e.seat, e.at)

    def _left(self, e: ev.Event) -> None:
        assert isinstance(e, ev.PlayerLeft)
        book = self._open.pop(e.player, None)
        if book is not None:
            book.ended = e.at

    def _placed(self, e: ev.Event) -> None:
        assert isinstance(e, ev.BetPlaced)
        assert self.rates is not None
        book = self._session(e.player, e.at)
        self._of_bet[e.bet] = book
        book.wagered += e.amount
        book.wagers += 1
        book.result -= e.commission
        if not self.rates.rated_per_roll(e.wager):
            key = (e.wager, e.state)
            book.held[key] = book.held.get(key, 0) + e.amount

    def _book_of(self, bet: Bet) -> SessionBook:
        book = self._of_bet.get(bet.id)
        if book is None:  # a log read from its middle: the bet's session starts now
            book = self._of_bet[bet.id] = self._session(bet.player, self.last_at)
        return book

    def _held_change(self, bet: Bet, delta: int) -> None:
        assert self.rates is not None
        if delta and not self.rates.rated_per_roll(bet.wager):
            book = self._book_of(bet)
            key = (bet.wager, bet.state)
            book.held[key] = book.held.get(key, 0) + delta

    def _changed(self, e: ev.Event) -> None:
        assert isinstance(e, ev.BetChanged)
        bet = self.state.bets[e.bet]
        book = self._book_of(bet)
        book.wagered += max(0, e.amount - bet.amount)
        book.result -= e.commission
        self._held_change(bet, e.amount - bet.amount)

    def _removed(self, e: ev.Event) -> None:
        assert isinstance(e, ev.BetRemoved)
        bet = self.state.bets[e.bet]
        self._book_of(bet).result += e.commission_returned
        self._held_change(bet, -bet.amount)
        self._of_bet.pop(e.bet, None)

    def _returned(self, e: ev.Event) -> None:
        assert isinstance(e, ev.WagersReturned)
        for item in e.items:
            bet = self.state.bets[item.bet]
            self._book_of(bet).result += item.commission
            self._held_change(bet, -bet.amount)
            self._of_bet.pop(item.bet, None)

    def _collected(self, e: ev.Event) -> None:
        assert isinstance(e, ev.LosersCollected)
        for item in e.items:
            bet = self.state.bets.get(item.bet)
            if bet is not None:
                self._book_of(bet).result -= item.amount
                self._of_bet.pop(item.bet, None)

    def _paid(self, e: ev.Event) -> None:
        assert isinstance(e, ev.WinnersPaid)
        for item in e.items:
            bet = self.state.bets.get(item.bet)
            if bet is not None:
                self._book_of(bet).result += item.win - item.commission
                if item.stake_returned >= bet.amount:  # decided and off the layout
                    self._of_bet.pop(item.bet, None)

    def _rolled(self, e: ev.Event) -> None:
        assert isinstance(e, ev.DiceRolled)
        self._voided_working = None
        if e.roll is None:
            self._working = None
            return
        # Who is in action is decided before the roll's own fold: the layout as the dice
        # left the shooter's hand.
        state = self.state
        self._working = [(self._book_of(bet), bet.wager, bet.amount)
                         for bet in state.bets.values() if is_working(state, bet)]

    def _voided(self, e: ev.Event) -> None:
        self._voided_working, self._working = self._working, None

    def _overturned(self, e: Event) -> None:
        # The declaration is overturned: the roll counts after all, and is settled.
        self._working, self._voided_working = self._voided_working, None

    def _finished(self, e: ev.Event) -> None:
        if isinstance(e, ev.RoundCompleted) and e.total is None:
            self._working = None
        working, self._working = self._working, None
        if not working:
            return
        assert self.rates is not None
        per_roll = self.rates.per_roll
        seen: set[int] = set()
        for book, code, amount in working:
            if id(book) not in seen:
                seen.add(id(book))
                book.rolls += 1
            book.stake_rolls += amount
            if per_roll(code) is not None:
                book.per_roll[code] = book.per_roll.get(code, 0) + amount

    # -- reading -----------------------------------------------------------------------------
    def ratings(self, formula: IndustryFormula | None = None,
                day: GamingDay | None = None) -> list[Rating]:
        """Every session's rating (those started in ``day`` only, when given)."""
        formula = formula or IndustryFormula()
        return [self.rate(book, formula) for book in self.sessions
                if day is None or day.holds(book.started)]

    def rate(self, book: SessionBook, formula: IndustryFormula) -> Rating:
        assert self.rates is not None
        rates = self.rates
        by_wager: dict[str, Fraction] = {}
        for code, cent_rolls in book.per_roll.items():
            rate = rates.per_roll(code)
            assert rate is not None
            by_wager[code] = by_wager.get(code, Fraction(0)) + cent_rolls * rate
        for (code, state), cents in book.held.items():
            by_wager[code] = by_wager.get(code, Fraction(0)) + cents * rates.held(code, state)
        theo = sum(by_wager.values(), Fraction(0))
        seconds = _seconds(book.started, book.ended or self.last_at or book.started)
        average = Fraction(book.stake_rolls, book.rolls) if book.rolls else Fraction(0)
        return Rating(
            table=self.state.table_id, player=book.player, session=book.number,
            seat=book.seat, started=book.started, ended=book.ended, seconds=seconds,
            rolls=book.rolls, average_bet=average, wagered=book.wagered, wagers=book.wagers,
            result=book.result, theo=theo,
            theo_by_wager=tuple(sorted(by_wager.items())),
            industry_theo=formula.theo(average, Fraction(seconds, 3600)))


_BEFORE: dict[type[Event], Callable[[RatingsFold, Any], None]] = {
    ev.PlayerJoined: RatingsFold._joined,
    ev.PlayerLeft: RatingsFold._left,
    ev.BetPlaced: RatingsFold._placed,
    ev.BetChanged: RatingsFold._changed,
    ev.BetRemoved: RatingsFold._removed,
    ev.WagersReturned: RatingsFold._returned,
    ev.LosersCollected: RatingsFold._collected,
    ev.WinnersPaid: RatingsFold._paid,
    ev.DiceRolled: RatingsFold._rolled,
    ev.NoRollCalled: RatingsFold._voided,
    NoRollOverturned: RatingsFold._overturned,
    ev.PuckMoved: RatingsFold._finished,
    ev.RoundCompleted: RatingsFold._finished,
}
"""What the ratings read from each event, before the table's fold applies it."""


def rate_log(events: Iterable[ev.Event], formula: IndustryFormula | None = None,
             day: GamingDay | None = None) -> list[Rating]:
    """The ratings of one table's whole log."""
    fold = RatingsFold()
    fold.feed_all(events)
    return fold.ratings(formula, day)
