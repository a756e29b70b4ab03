"""One bet of a strategy, roll by roll: the readable reference the simulator's tables come from.

An ``Entry`` keeps one strategy bet (and the odds behind it) on the layout. Its state holds
what it needs of the table (the puck, whether a new shooter is up, whether the last roll was a
seven), the bet's progression level, and the bets it has out: ``(wager state, odds on)``. Each
roll is three chores, as at the table:

* ``settle``: the roll against every bet, read from the compiled tables with the pack's
  policy (working on the come-out, commissions, payout rounding);
* ``bet``: the strategy's betting between rolls (replace what is gone, add odds, press);
* ``wind_down`` instead of ``bet`` once the session stops: take down what may be taken down
  and let the rest ride until decided.

``dicetable.sim.automaton`` enumerates every reachable state once and tabulates these chores
for NumPy; the simulator never runs this Python per roll.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from dicetable.core.dice import Roll
from dicetable.games.engine import (
    commission_for,
    commission_kind,
    commission_up_front,
    payout_amount,
)
from dicetable.games.settlement import next_point_on
from dicetable.odds.layout import STANDING
from dicetable.rules.model import RulePack
from dicetable.rules.variants import points_of
from dicetable.sim.kernel import DECISIONS, FIELDS, HANDLE, NET, PUSHES, WINS
from dicetable.sim.strategy import TRAVELLING, BetSpec
from dicetable.wagers.compile import LEAVES, CompiledWager, Outcome, menu_wager, odds_code_for

Item = tuple[int, bool]
"""A bet out on the layout: its wager state and whether odds stand behind it."""


class State(NamedTuple):
    point: int | None
    shooter_new: bool
    after_seven: bool
    level: int
    items: tuple[Item, ...]
    winding: bool


WOUND_UP = State(None, False, False, 0, (), True)
"""Stopped and nothing left on the layout: where every session ends."""


@dataclass
class Flow:
    """Money and counts one chore moves, per label (0: the bet, 1: its odds)."""

    labels: int
    settled: int = 0
    """Net money the settlement moved (before new bets and their commissions)."""
    acc: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.acc = [[0] * len(FIELDS) for _ in range(self.labels)]

    @property
    def net(self) -> int:
        return sum(row[NET] for row in self.acc)


next_puck = next_point_on
"""The puck after a roll and whether it was a seven-out (the live engine's own rule)."""


class Entry:
    """One strategy bet under one pack."""

    def __init__(self, pack: RulePack, spec: BetSpec) -> None:
        self.pack = pack
        self.spec = spec
        self.wager: CompiledWager = menu_wager(pack, spec.wager)
        self.family = self.wager.family
        self.travelling = spec.wager in TRAVELLING
        self.odds: CompiledWager | None = menu_wager(pack, odds_code_for(spec.wager)) \
            if spec.odds_multiples else None
        self.labels: tuple[str, ...] = (spec.label,)
        self.codes: tuple[str, ...] = (spec.wager,)
        if self.odds is not None:
            self.labels += (f"{spec.label} odds",)
            self.codes += (self.odds.code,)
        self.amounts = spec.amounts
        self.top = len(spec.amounts) - 1
        fam = self.family
        self.works_comeout = spec.working if spec.working is not None else (
            pack.flag(f"working.comeout.{fam}", True) if fam in STANDING else True)
        odds_rule = None
        if spec.wager == "dontcome":
            odds_rule = "working.comeout.dontcome_odds"
        elif spec.wager == "come" or fam == "put":
            odds_rule = "working.comeout.come_odds"
        self.odds_works_comeout = spec.odds_working if spec.odds_working is not None else (
            pack.flag(odds_rule, True) if odds_rule else True)
        kind = commission_kind(spec.wager)
        self.up_front = commission_up_front(pack, spec.wager)
        self.on_win = kind is not None and not self.up_front
        self.refund = kind is not None and pack.flag(f"commission.{kind}.refund_on_removal")
        self.fees = tuple(commission_for(pack, self.wager, a) for a in self.amounts)
        self.removable = fam in STANDING and pack.value("removal.standing") == "between-rolls"
        self.number = spec.number
        self.state_number: tuple[int | None, ...] = tuple(
            _number(self.wager, s) for s in range(len(self.wager.states)))
        self.points = points_of(pack)
        self.odds_state: dict[int, int] = {} if self.odds is None else {
            n: self.odds.state_index(f"on {n}") for n in self.points}
        self.box = self.wager.start.get(self.points[0]) if self.travelling else None
        # Track only what this bet needs of the table: fewer states, smaller tables.
        self.needs_shooter = fam == "fire" or (
            fam == "bonus" and pack.value("bonus.placement") == "new-shooter")
        self.needs_seven = fam == "bonus" and pack.value("bonus.placement") == "after-any-seven"
        one_roll_or_bonus = self.wager.one_roll or fam == "bonus"
        self.needs_point = self.needs_shooter or not (one_roll_or_bonus
                                                      and spec.when == "always")

    # -- the three chores -------------------------------------------------------------------
    def initial(self) -> tuple[State, Flow]:
        """The layout before the first roll: a new shooter's come-out."""
        return self.bet(State(None, self.needs_shooter, self.needs_seven, 0, (), False))

    def settle(self, state: State, roll: Roll) -> tuple[State, Flow]:
        flow = Flow(len(self.labels))
        point = state.point
        level = state.level
        kept: list[Item] = []
        for s, odds_on in state.items:
            if point is None and not self.works_comeout:
                kept.append((s, odds_on))
                continue
            st = self.wager.steps[s][roll.index]
            base = flow.acc[0]
            amount = self.amounts[level]
            if st.outcome is Outcome.WIN:
                paid, _ = payout_amount(self.pack, amount, st.payout)
                stays = st.next_state != LEAVES
                after = min(level + 1, self.top)
                fee = 0
                if self.up_front and stays:
                    fee = self.fees[after]  # the next decision's, taken from this win
                elif self.on_win:
                    fee = self.fees[level]
                base[NET] += paid - fee
                base[HANDLE] += amount + (self.fees[level] if self.up_front else 0)
                base[DECISIONS] += 1
                base[WINS] += 1
                if stays:
                    kept.append((st.next_state, odds_on))
                elif odds_on:
                    self._odds_decided(flow, s, level, point, roll)
                level = after
            elif st.outcome is Outcome.LOSE:
                base[NET] -= int(-(amount * st.payout))
                base[HANDLE] += amount + (self.fees[level] if self.up_front else 0)
                base[DECISIONS] += 1
                if odds_on:
                    self._odds_decided(flow, s, level, point, roll)
                level = 0
            elif st.outcome is Outcome.PUSH:
                base[HANDLE] += amount
                base[DECISIONS] += 1
                base[PUSHES] += 1
                if odds_on:
                    self._odds_decided(flow, s, level, point, roll)
            else:
                if odds_on and self.odds is not None and (point is not None
                                                          or self.odds_works_comeout):
                    n = self.state_number[s]
                    assert n is not None
                    odds_step = self.odds.steps[self.odds_state[n]][roll.index]
                    assert not odds_step.decided, "odds are decided with their bet"
                kept.append((st.next_state, odds_on))
        flow.settled = flow.net
        new_point, seven_out = next_puck(point, roll.total, self.points) if self.needs_point \
            else (None, False)
        return State(
            new_point if self.needs_point else None,
            seven_out if self.needs_shooter else False,
            roll.total == 7 if self.needs_seven else False,
            level, tuple(sorted(kept)), state.winding), flow

    def _odds_decided(self, flow: Flow, s: int, level: int, point: int | None,
                      roll: Roll) -> None:
        """Odds go with their bet: settled if working, else returned untouched."""
        assert self.odds is not None
        n = self.state_number[s]
        assert n is not None
        if point is None and not self.odds_works_comeout:
            return
        amount = self.spec.odds_amount(level, n)
        if not amount:
            return
        st = self.odds.steps[self.odds_state[n]][roll.index]
        assert st.decided, "odds are decided with their bet"
        acc = flow.acc[1]
        if st.outcome is Outcome.WIN:
            acc[NET] += payout_amount(self.pack, amount, st.payout)[0]
            acc[WINS] += 1
        elif st.outcome is Outcome.LOSE:
            acc[NET] -= int(-(amount * st.payout))
        else:
            acc[PUSHES] += 1
        acc[HANDLE] += amount
        acc[DECISIONS] += 1

    def allowed(self, state: State) -> bool:
        """May the strategy make a new bet now (its ``when``, the pack's placement rules)?"""
        point = state.point
        when = self.spec.when
        if (when == "point-on" and point is None) or (when == "come-out" and point is not None):
            return False
        if self.needs_point and not self.wager.placeable(point):
            return False
        if self.spec.skip_point and point == self.number:
            return False
        if self.family == "fire":
            return state.shooter_new and point is None
        if self.family == "bonus":
            return state.shooter_new if self.needs_shooter else state.after_seven
        return True

    def bet(self, state: State) -> tuple[State, Flow]:
        flow = Flow(len(self.labels))
        if state.winding:
            return (WOUND_UP if not state.items else state), flow
        items = list(state.items)
        level = state.level
        if self.spec.skip_point and state.point == self.number and items and self.removable:
            if self.up_front and self.refund:
                flow.acc[0][NET] += self.fees[level]
            items = []
        if self.allowed(state):
            if self.travelling:
                on_numbers = sum(1 for s, _ in items if s != self.box)
                cap = self.spec.max_bets or len(self.points)
                if all(s != self.box for s, _ in items) and on_numbers < cap:
                    assert self.box is not None
                    items.append((self.box, False))
            elif not items:
                items.append((self.wager.start[state.point if self.needs_point else None], False))
                if self.up_front:
                    flow.acc[0][NET] -= self.fees[level]
        if self.odds is not None:
            items = [(s, on or (self.state_number[s] is not None
                                and self.spec.odds_amount(level, self.state_number[s] or 0) > 0))
                     for s, on in items]
        return state._replace(items=tuple(sorted(items))), flow

    def wind_down(self, state: State) -> tuple[State, Flow]:
        """Stop betting: take down what may be taken down; the rest rides until decided."""
        flow = Flow(len(self.labels))
        items = list(state.items)
        if items and self.removable:
            if self.up_front and self.refund:
                flow.acc[0][NET] += self.fees[state.level]
            items = []
        if not items:
            return WOUND_UP, flow
        return state._replace(items=tuple(items), winding=True), flow

    def on_table(self, state: State) -> int:
        """Money out on the layout in ``state`` (stakes and odds; commissions are spent)."""
        total = 0
        for s, odds_on in state.items:
            total += self.amounts[state.level]
            n = self.state_number[s]
            if odds_on and n is not None:
                total += self.spec.odds_amount(state.level, n)
        return total


def _number(wager: CompiledWager, state: int) -> int | None:
    """The number a line or put bet stands on in ``state`` ('point 6', 'on 6'), if any."""
    if wager.family not in ("line", "put"):
        return None
    digits = wager.states[state].split()[-1]
    return int(digits) if digits.isdigit() else None


__all__ = ["DECISIONS", "FIELDS", "HANDLE", "NET", "PUSHES", "WINS", "WOUND_UP", "Entry", "Flow",
           "State", "next_puck"]
