"""Exact session outcomes for a fixed strategy: risk of ruin, the bankroll after a session of N
rolls and the expected session length, as Fractions, by dynamic programming over
(money, strategy state).

The strategy comes in as its per-roll tables (``Chain``): for each strategy state and each of
the 36 rolls, the next state and the money moved when the session carries on and when it stops
on that roll, what the settlement alone moved, and the cash it needs to carry on. These are
the simulator's own tables (``dicetable.sim.exact.chain_of`` builds a ``Chain`` from a compiled
strategy), so the two count the same session the same way:

* after each roll's settlement, the session stops at its stop-loss (down ``stop_loss`` or
  more), at its goal (up to ``goal`` or more: a win) or at ruin (its cash cannot cover the next
  bets); else, in a session of N rolls, after the N-th roll;
* once stopped it makes no new bets and takes down what may be taken down; what rides is
  decided by the following rolls, which count in the session's length.

The probability of reaching the goal before ruin and the expected length have no limit on the
number of rolls: they solve linear systems over the (money, state) pairs the session can
reach, by exact sparse elimination (the state with the fewest links first, so that a point
state, entered without money changing hands, is folded into the come-out before the money
levels are). The bankroll after N rolls is the forward distribution of whole roll counts
(integers over 36^N), the bets still riding after the last roll decided exactly.

Standard library only (the domain's rule): integers and ``fractions.Fraction``.

A bet of 1 that wins or loses 1 on each roll, 18 rolls to 18, from 2 to a goal of 4, is the
gambler's ruin: 1/2, and 2 x 2 = 4 rolls expected (it needs 1 on the layout after each roll,
less what the roll paid: 0 after a win, 2 after a loss):

>>> money, none = (1,) * 18 + (-1,) * 18, (0,) * 36
>>> coin = Chain(n=2, start=0, empty=1, nxt=(((0,) * 36, (1,) * 36), ((1,) * 36, (1,) * 36)),
...              delta=((money, none), (money, none)), settled=(money, none),
...              need=((0,) * 18 + (2,) * 18, (0,) * 36))
>>> out = session_odds(coin, bankroll=2, goal=4, rolls=2)
>>> out.p_goal, out.p_ruin, out.expected_rolls
(Fraction(1, 2), Fraction(1, 2), Fraction(4, 1))
>>> sorted(out.after.items())
[(0, Fraction(1, 4)), (2, Fraction(1, 2)), (4, Fraction(1, 4))]
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from dicetable.core.errors import InvalidInput

CONTINUE, STOP = 0, 1
MAX_STATES = 400_000
"""Most (money, state) pairs an exact computation explores before refusing."""

SPARSE_BUDGET = 300_000
"""Multiply-adds the sparse elimination may spend before handing over to a dense solver
(where one is given): a strategy whose bets win without leaving (place bets) links many money
levels, and the sparse rows fill in."""

Row = tuple[int, ...]
Rows = dict[int, dict[int, Fraction]]
Rhs = dict[int, list[Fraction]]
DenseSolver = Callable[[Rows, Rhs, int], list[Fraction]]
"""Solves x_u = sum_v rows[u][v] x_v + rhs[u] exactly; returns x_0 (e.g. python-flint's)."""


class _TooBig(Exception):
    pass


@dataclass(frozen=True)
class Chain:
    """A strategy's per-roll tables, as plain integers (money in cents)."""

    n: int
    start: int
    empty: int
    """The state where the session is over: stopped, nothing left on the layout."""
    nxt: tuple[tuple[Row, ...], tuple[Row, ...]]
    """[carry on | stop][state][roll] -> next state."""
    delta: tuple[tuple[Row, ...], tuple[Row, ...]]
    """[carry on | stop][state][roll] -> money moved by the roll and the chore after it."""
    settled: tuple[Row, ...]
    """[state][roll] -> money moved by the settlement alone (what the stop rules look at)."""
    need: tuple[Row, ...]
    """[state][roll] -> cash needed before the roll to carry on after it."""
    initial_net: int = 0
    """Money moved before the first roll (a commission paid up front)."""


@dataclass(frozen=True)
class _Class:
    """Rolls a state cannot tell apart: how many of the 36, and what they do."""

    count: int
    settled: int
    need: int
    go: tuple[int, int]
    """(state, money moved) when carrying on."""
    stop: tuple[int, int]


@dataclass
class SessionOdds:
    bankroll: int
    goal: int
    stop_loss: int | None
    rolls: int
    """N: the betting rolls of the session whose final bankroll is ``after``."""
    p_goal: Fraction
    """Reaching the goal before ruin (or the stop-loss), however long it takes."""
    p_ruin: Fraction
    p_stop_loss: Fraction
    expected_rolls: Fraction
    """Rolls until the session is over (goal, ruin or stop-loss; its last bets decided)."""
    after: dict[int, Fraction] = field(default_factory=dict)
    """Bankroll (cents) -> probability, when a session of at most N rolls is over."""
    states: int = 0
    """(money, state) pairs the unlimited session can be in before a roll."""

    @property
    def mean_after(self) -> Fraction:
        return sum((Fraction(v) * p for v, p in self.after.items()), Fraction(0))


def _classes(chain: Chain) -> list[list[_Class]]:
    out = []
    for s in range(chain.n):
        groups: dict[tuple[int, ...], int] = defaultdict(int)
        for r in range(36):
            key = (chain.settled[s][r], chain.need[s][r], chain.nxt[CONTINUE][s][r],
                   chain.delta[CONTINUE][s][r], chain.nxt[STOP][s][r], chain.delta[STOP][s][r])
            groups[key] += 1
        out.append([_Class(c, k[0], k[1], (k[2], k[3]), (k[4], k[5]))
                    for k, c in groups.items()])
    return out


class _Rules:
    """The stop rules, in the simulator's order: stop-loss, goal, ruin."""

    def __init__(self, bankroll: int, goal: int, stop_loss: int | None) -> None:
        self.bankroll = bankroll
        self.win = goal - bankroll
        self.stop_loss = stop_loss

    def why(self, net: int, c: _Class) -> int:
        """0: carry on; 1: goal; 2: stop-loss; 3: ruin (engine.REASONS)."""
        after = net + c.settled
        if self.stop_loss is not None and after <= -self.stop_loss:
            return 2
        if after >= self.win:
            return 1
        if self.bankroll + net < c.need:
            return 3
        return 0


def _solve(rows: Rows, rhs: Rhs, width: int,
           budget: int | None = None) -> dict[int, list[Fraction]]:
    """Solve x_u = sum_v rows[u][v] x_v + rhs[u] exactly (each x a vector of ``width``).

    Gaussian elimination on the sparse rows, the unknown with the fewest links first
    (Markowitz); a self-link is divided out as it appears. ``budget``: raise ``_TooBig``
    after that many multiply-adds.
    """
    spent = 0
    cols: dict[int, set[int]] = defaultdict(set)
    for u, row in rows.items():
        for v in row:
            cols[v].add(u)
    zero = [Fraction(0)] * width

    def normalise(u: int) -> None:
        row = rows[u]
        loop = row.pop(u, None)
        if loop is None:
            return
        cols[u].discard(u)
        rest = 1 - loop
        if rest == 0:
            raise InvalidInput("the session can go on for ever without reaching its goal, "
                               "ruin or stop-loss: no exact answer", rule="odds.session")
        for v in row:
            row[v] /= rest
        rhs[u] = [b / rest for b in rhs.get(u, zero)]

    for u in list(rows):
        normalise(u)
    heap = [(len(rows[u]) * len(cols[u]), u) for u in rows]
    heapq.heapify(heap)
    done: set[int] = set()
    order: list[int] = []
    while heap:
        cost, p = heapq.heappop(heap)
        if p in done:
            continue
        now = len(rows[p]) * len(cols[p])
        if now != cost:
            heapq.heappush(heap, (now, p))
            continue
        done.add(p)
        order.append(p)
        row_p = rows[p]
        b_p = rhs.get(p, zero)
        for u in list(cols[p]):
            if u in done:
                continue
            row_u = rows[u]
            c = row_u.pop(p)
            spent += len(row_p) + width
            if budget is not None and spent > budget:
                raise _TooBig
            for v, cv in row_p.items():
                if v in row_u:
                    row_u[v] += c * cv
                else:
                    row_u[v] = c * cv
                    cols[v].add(u)
            b_u = rhs.get(u, zero)
            rhs[u] = [x + c * y for x, y in zip(b_u, b_p, strict=True)]
            normalise(u)
            heapq.heappush(heap, (len(row_u) * len(cols[u]), u))
        for v in row_p:
            cols[v].discard(p)
    x: dict[int, list[Fraction]] = {}
    for p in reversed(order):
        value = list(rhs.get(p, zero))
        for v, cv in rows[p].items():
            xv = x[v]
            for i in range(width):
                value[i] += cv * xv[i]
        x[p] = value
    return x


def _wind_down(chain: Chain, classes: list[list[_Class]], start: int
               ) -> tuple[dict[int, Fraction], Fraction]:
    """From a stopped state: the money still to move (distribution) and the rolls it takes."""
    if start == chain.empty:
        return {0: Fraction(1)}, Fraction(0)
    index: dict[tuple[int, int], int] = {(start, 0): 0}
    todo = [(start, 0)]
    ends: dict[int, int] = {}
    edges: list[list[tuple[Fraction, int | None, int]]] = []
    while todo:
        s, d = todo.pop()
        out: list[tuple[Fraction, int | None, int]] = []
        for c in classes[s]:
            t, moved = c.stop
            p = Fraction(c.count, 36)
            if t == chain.empty:
                ends.setdefault(d + moved, len(ends))
                out.append((p, None, d + moved))
                continue
            key = (t, d + moved)
            if key not in index:
                if len(index) >= MAX_STATES:
                    raise InvalidInput("the bets left riding after the stop are too many to "
                                       "follow exactly", rule="odds.session")
                index[key] = len(index)
                todo.append(key)
            out.append((p, index[key], 0))
        while len(edges) <= index[(s, d)]:
            edges.append([])
        edges[index[(s, d)]] = out
    width = len(ends) + 1  # one column per final amount, and the rolls
    rows: dict[int, dict[int, Fraction]] = {}
    rhs: dict[int, list[Fraction]] = {}
    for u, out in enumerate(edges):
        row: dict[int, Fraction] = defaultdict(Fraction)
        b = [Fraction(0)] * width
        b[-1] = Fraction(1)
        for p, v, amount in out:
            if v is None:
                b[ends[amount]] += p
            else:
                row[v] += p
        rows[u] = dict(row)
        rhs[u] = b
    x = _solve(rows, rhs, width)[0]
    return {amount: x[i] for amount, i in ends.items() if x[i]}, x[-1]


def _solve_first(rows: Rows, rhs: Rhs, width: int, dense: DenseSolver | None) -> list[Fraction]:
    """x_0: sparse elimination, or (past its budget) the dense solver when one is given."""
    if dense is None:
        return _solve(rows, rhs, width)[0]
    copy = {u: dict(row) for u, row in rows.items()}
    try:
        return _solve(copy, {u: list(b) for u, b in rhs.items()}, width, SPARSE_BUDGET)[0]
    except _TooBig:
        return dense(rows, rhs, width)


def session_odds(chain: Chain, bankroll: int, goal: int, stop_loss: int | None = None,
                 rolls: int = 200, dense: DenseSolver | None = None) -> SessionOdds:
    """The exact session outcomes of ``chain`` from ``bankroll`` to ``goal`` (cents).

    ``dense``: an exact dense solver for the systems that fill in (see ``SPARSE_BUDGET``).
    """
    if goal <= bankroll:
        raise InvalidInput("the goal is above the bankroll", rule="odds.session")
    if bankroll <= 0:
        raise InvalidInput("the bankroll is a positive amount", rule="odds.session")
    if rolls < 1:
        raise InvalidInput("a session has at least one roll", rule="odds.session")
    if stop_loss is not None and stop_loss <= 0:
        raise InvalidInput("the stop-loss is a positive amount", rule="odds.session")
    rules = _Rules(bankroll, goal, stop_loss)
    classes = _classes(chain)
    winding: dict[int, tuple[dict[int, Fraction], Fraction]] = {}

    def wind(s: int) -> tuple[dict[int, Fraction], Fraction]:
        if s not in winding:
            winding[s] = _wind_down(chain, classes, s)
        return winding[s]

    # -- unlimited session: P(goal), P(stop-loss), expected rolls -----------------------------
    start = (chain.initial_net, chain.start)
    index = {start: 0}
    todo = [start]
    rows: dict[int, dict[int, Fraction]] = {}
    rhs: dict[int, list[Fraction]] = {}
    while todo:
        net, s = todo.pop()
        u = index[(net, s)]
        row: dict[int, Fraction] = defaultdict(Fraction)
        b = [Fraction(0), Fraction(0), Fraction(1)]  # goal, stop-loss, rolls (this one)
        for c in classes[s]:
            p = Fraction(c.count, 36)
            why = rules.why(net, c)
            if why:
                if why in (1, 2):
                    b[why - 1] += p
                b[2] += p * wind(c.stop[0])[1]
                continue
            key = (net + c.go[1], c.go[0])
            v = index.get(key)
            if v is None:
                if len(index) >= MAX_STATES:
                    raise InvalidInput(f"more than {MAX_STATES:,} (bankroll, state) pairs: "
                                       "use a smaller bankroll or goal", rule="odds.session")
                v = index[key] = len(index)
                todo.append(key)
            row[v] += p
        rows[u] = dict(row)
        rhs[u] = b
    states = len(index)
    p_goal, p_loss, expected = _solve_first(rows, rhs, 3, dense)

    # -- a session of at most N rolls: the bankroll when it is over ---------------------------
    scale = 36 ** rolls
    final: dict[int, int] = defaultdict(int)        # amount -> count / 36^N, decided
    riding: dict[tuple[int, int], int] = defaultdict(int)  # (net, stopped state) -> count
    mass: dict[tuple[int, int], int] = {start: 1}
    for t in range(rolls):
        last = t == rolls - 1
        weight = 36 ** (rolls - t - 1)
        nxt_mass: dict[tuple[int, int], int] = defaultdict(int)
        for (net, s), count in mass.items():
            for c in classes[s]:
                k = count * c.count
                if last or rules.why(net, c):
                    riding[(net + c.stop[1], c.stop[0])] += k * weight
                else:
                    nxt_mass[(net + c.go[1], c.go[0])] += k
        mass = nxt_mass
    after: dict[int, Fraction] = defaultdict(Fraction)
    for (net, s), count in riding.items():
        if s == chain.empty:
            final[bankroll + net] += count
            continue
        moves, _ = wind(s)
        for amount, p in moves.items():
            after[bankroll + net + amount] += p * count
    for amount, count in final.items():
        after[amount] += count
    dist = {a: p / scale for a, p in sorted(after.items()) if p}
    return SessionOdds(bankroll, goal, stop_loss, rolls, p_goal, 1 - p_goal - p_loss, p_loss,
                       expected, dist, states)


__all__ = ["SPARSE_BUDGET", "Chain", "DenseSolver", "Rhs", "Rows", "SessionOdds", "session_odds"]
