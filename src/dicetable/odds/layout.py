"""Exact figures of several wagers made together: a line bet with odds, a bet layout.

The wagers are placed at once and the layout is followed until every one of them is decided (a
winning place bet counts as decided: its first decision is what is measured). The joint chain is
over the wagers' own states, so correlations between them (a pass bet and a place bet on the
same roll) are exact.

Two models:

* ``table=False`` (the default): every wager in action on every roll, as ``exact.wager_odds``
  does; come bets start in the come box.
* ``table=True``: the wagers follow the table's puck and the pack's working rules
  (``working.comeout.*``): a place, buy or hardway bet made on the come-out is off until a
  point is set; odds behind a come bet are off on the come-out and come back, neither won
  nor lost, when their come bet is decided by a come-out roll. The per-roll figures are then
  per *table* roll.

>>> from dicetable.rules.loader import load_preset
>>> pack = load_preset("pa-craps")
>>> two = layout_odds(pack, [LayoutBet("pass", odds=Fraction(2))])
>>> two.staked, two.house_edge                    # 1 flat + 2 x (2/3 chance of a point)
(Fraction(7, 3), Fraction(1, 165))
>>> three45 = line_with_odds(pack, "pass")        # the pack's 3-4-5x odds
>>> three45.house_edge
Fraction(7, 1870)
>>> layout_odds(pack, [LayoutBet("place6")], table=True).expected_rolls   # off until a point
Fraction(1815516, 351461)
>>> both = layout_odds(pack, [LayoutBet("pass"), LayoutBet("dontpass")])
>>> both.expected, both.house_edge                # only the barred 12 separates them
(Fraction(-1, 36), Fraction(1, 72))
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from dicetable.core.dice import ALL_ROLLS
from dicetable.core.errors import IllegalWager
from dicetable.odds.exact import PerRoll, commission_terms, default_start, resolve_code
from dicetable.odds.markov import Chain, Transition
from dicetable.rules.model import RulePack
from dicetable.rules.variants import points_of
from dicetable.wagers.compile import (
    ODDS_LAY,
    ODDS_TAKE,
    CompiledWager,
    Outcome,
    compile_pack,
    odds_code_for,
)

STANDING = frozenset({"place", "buy", "lay", "lose", "hard", "big"})
"""Families whose come-out working status a pack sets (``working.comeout.<family>``)."""

ODDS_345X: dict[int, Fraction] = {4: Fraction(3), 5: Fraction(4), 6: Fraction(5),
                                  8: Fraction(5), 9: Fraction(4), 10: Fraction(3)}


@dataclass(frozen=True)
class LayoutBet:
    """One wager of a layout: its code, its amount, and odds behind it as a multiple of it."""

    code: str
    amount: Fraction = Fraction(1)
    odds: Fraction | Mapping[int, Fraction] | None = None
    """Odds taken or laid behind a line or put bet, per point (a flat multiple or per number)."""

    def odds_multiple(self, point: int) -> Fraction:
        if self.odds is None:
            return Fraction(0)
        if isinstance(self.odds, Mapping):
            return Fraction(self.odds.get(point, 0))
        return Fraction(self.odds)


@dataclass(frozen=True)
class LayoutOdds(PerRoll):
    """Exact figures of a layout, in the units of its amounts."""

    expected: Fraction
    """Expected net result, commissions included."""
    staked: Fraction
    """Expected money put up: the wagers, odds added later, commissions paid up front."""
    variance: Fraction
    expected_rolls: Fraction
    """Rolls until every wager is decided (table rolls when modelled with the table)."""

    @property
    def house_edge(self) -> Fraction:
        return -self.expected / self.staked


def max_odds(pack: RulePack, lay: bool = False) -> dict[int, Fraction]:
    """The most odds per point as a multiple of the flat bet (``odds.limit.*``).

    Laid odds are capped by what they win (the same multiple of the flat bet), so 3-4-5x lets a
    don't player lay 6x on every point.

    >>> from dicetable.rules.loader import load_preset
    >>> max_odds(load_preset("pa-craps"))[5], max_odds(load_preset("pa-craps"), lay=True)[5]
    (Fraction(4, 1), Fraction(6, 1))
    """
    if pack.value("odds.limit.mode") == "345x":
        take = dict(ODDS_345X)
    else:
        take = dict.fromkeys(points_of(pack), Fraction(int(pack.value("odds.limit.multiple"))))
    if not lay:
        return take
    return {n: m / pack.net(f"paytable.odds.lay.{n}") for n, m in take.items()}


def _number(wager: CompiledWager, state: int) -> int | None:
    digits = wager.states[state].split()[-1]
    return int(digits) if digits.isdigit() and wager.family in ("line", "put") else None


_Part = tuple[int, bool] | None
"""An item's state in the joint chain: (wager state, odds on?), or None once decided."""
_Move = tuple[Fraction, Fraction, _Part]
"""What one roll does to an item: net, money put up, its next part."""


@dataclass(frozen=True)
class _Item:
    bet: LayoutBet
    wager: CompiledWager
    start: int
    odds_table: CompiledWager | None
    fee_on_win: Fraction
    fee_up_front: Fraction
    off_rule: str | None
    """The ``working.comeout.*`` rule of the wager itself, for the table model."""
    odds_off_rule: str | None


def _items(pack: RulePack, bets: Sequence[LayoutBet], point: int | None,
           table: bool) -> list[_Item]:
    menu = compile_pack(pack)
    items = []
    for bet in bets:
        wager = resolve_code(pack, bet.code)
        if wager.code in (ODDS_TAKE, ODDS_LAY):
            raise IllegalWager("odds stand behind a line or put bet: give them as its odds",
                               rule="wagers.odds", citation=pack.cite("menu.odds"))
        if table:
            if not wager.placeable(point):
                when = "on the come-out" if point is None else f"with the point on {point}"
                raise IllegalWager(f"{wager.name} cannot be made {when}",
                                   rule=f"menu.{wager.family}",
                                   citation=pack.cite(f"menu.{wager.family}"))
            start = wager.start[point]
        else:
            start = default_start(wager)
        odds_table = None
        odds_off = None
        if bet.odds is not None:
            if wager.family not in ("line", "put") or not pack.offers("odds"):
                raise IllegalWager(f"odds cannot stand behind {wager.name}", rule="wagers.odds",
                                   citation=pack.cite("menu.odds"))
            odds_table = menu[odds_code_for(wager.code)]
            if wager.code == "dontcome":
                odds_off = "working.comeout.dontcome_odds"
            elif wager.code == "come" or wager.family == "put":
                odds_off = "working.comeout.come_odds"
        fee_win, fee_front, _ = commission_terms(pack, wager)
        off = f"working.comeout.{wager.family}" if wager.family in STANDING else None
        items.append(_Item(bet, wager, start, odds_table, fee_win, fee_front, off, odds_off))
    return items


def layout_odds(pack: RulePack, bets: Sequence[LayoutBet], point: int | None = None,
                table: bool = False) -> LayoutOdds:
    """Exact figures of ``bets`` made together (with the puck at ``point`` when ``table``)."""
    items = _items(pack, bets, point, table)

    def works(rule: str | None, puck: int | None) -> bool:
        return not table or puck is not None or rule is None or pack.flag(rule, True)

    cache: dict[tuple[int, int, bool, bool, bool], list[_Move]] = {}

    def item_moves(k: int, s: int, odds_on: bool, base_works: bool,
                   odds_works: bool) -> list[_Move]:
        """What each of the 36 rolls does to item ``k``: net, money put up, its next part."""
        key = (k, s, odds_on, base_works, odds_works)
        hit = cache.get(key)
        if hit is not None:
            return hit
        item = items[k]
        amount = item.bet.amount
        zero = Fraction(0)
        moves: list[_Move] = []
        for roll in ALL_ROLLS:
            if not base_works:
                moves.append((zero, zero, (s, odds_on)))
                continue
            st = item.wager.steps[s][roll.index]
            if st.decided:
                fee = item.fee_on_win if st.outcome is Outcome.WIN else zero
                net = amount * (st.payout - fee)
                n = _number(item.wager, s)
                if odds_on and n is not None and item.odds_table is not None and odds_works:
                    odds_state = item.odds_table.state_index(f"on {n}")
                    odds_step = item.odds_table.steps[odds_state][roll.index]
                    net += amount * item.bet.odds_multiple(n) * odds_step.payout
                moves.append((net, zero, None))
                continue
            n = _number(item.wager, st.next_state)
            if item.odds_table is not None and n is not None and not odds_on:
                moves.append((zero, amount * item.bet.odds_multiple(n), (st.next_state, True)))
            else:
                moves.append((zero, zero, (st.next_state, odds_on)))
        cache[key] = moves
        return moves

    def step(state: Hashable) -> list[Transition]:
        puck, parts = cast(tuple[int | None, tuple[_Part, ...]], state)
        per_item = [
            None if part is None else item_moves(k, part[0], part[1],
                                                  works(items[k].off_rule, puck),
                                                  works(items[k].odds_off_rule, puck))
            for k, part in enumerate(parts)
        ]
        out: list[Transition] = []
        for roll in ALL_ROLLS:
            net = Fraction(0)
            put = Fraction(0)
            after: list[_Part] = []
            for moves in per_item:
                if moves is None:
                    after.append(None)
                    continue
                n_, p_, part = moves[roll.index]
                if n_:
                    net += n_
                if p_:
                    put += p_
                after.append(part)
            nxt = _puck(puck, roll.total, points) if table else None
            done = all(a is None for a in after)
            out.append((1, net, put, None if done else (nxt, tuple(after))))
        return out

    points = points_of(pack)
    initial_parts: list[tuple[int, bool]] = []
    staked0 = Fraction(0)
    net0 = Fraction(0)
    for item in items:
        n = _number(item.wager, item.start)
        odds_on = item.odds_table is not None and n is not None  # a put bet takes odds at once
        staked0 += item.bet.amount * (1 + item.fee_up_front)
        net0 -= item.bet.amount * item.fee_up_front
        if odds_on and n is not None:
            staked0 += item.bet.amount * item.bet.odds_multiple(n)
        initial_parts.append((item.start, odds_on))
    moments = Chain((point if table else None, tuple(initial_parts)), step).moments()
    return LayoutOdds(expected=net0 + moments.net, staked=staked0 + moments.staked,
                      variance=moments.variance, expected_rolls=moments.rolls)


def _puck(point: int | None, total: int, points: tuple[int, ...]) -> int | None:
    if point is None:
        return total if total in points else None
    return None if total in (7, point) else point


def line_with_odds(pack: RulePack, code: str,
                   multiple: Fraction | Mapping[int, Fraction] | None = None) -> LayoutOdds:
    """A line (or put) bet with odds behind it as one combined bet, per unit of the flat bet.

    ``multiple`` defaults to the most the pack allows (``max_odds``).
    """
    if multiple is None:
        multiple = max_odds(pack, lay=code.startswith("dont"))
    return layout_odds(pack, [LayoutBet(code, Fraction(1), multiple)])


__all__ = ["LayoutBet", "LayoutOdds", "layout_odds", "line_with_odds", "max_odds"]
