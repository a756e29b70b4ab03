"""Exact absorbing Markov chains driven by the 36 equally likely rolls.

Two solvers share one strongly-connected-component walk (most components are a single state
with a self-loop, so both stay fast even for Make 'Em All's 1,023 states):

* ``absorption`` pushes probability mass forward from one start state through a compiled wager
  table and returns the exact distribution of the wager's decision and its expected rolls;
* ``Chain`` solves backwards, for every state, the expected total reward and its second moment
  along the path to absorption, for chains whose transitions carry rewards (a bet layout, a line
  bet with odds, a wager modelled jointly with the table's puck).

>>> from dicetable.rules.loader import load_preset
>>> from dicetable.wagers.compile import compile_pack
>>> place6 = compile_pack(load_preset("pa-craps"))["place6"]
>>> dist, rolls = absorption(place6, 0)
>>> for (outcome, payout), p in sorted(dist.items()):
...     print(outcome.name, payout, p)
WIN 7/6 5/11
LOSE -1 6/11
>>> rolls
Fraction(36, 11)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from dicetable.wagers.compile import CompiledWager, Outcome

P_ROLL = Fraction(1, 36)
ROLLS = 36

Decision = tuple[Outcome, Fraction]
"""How a wager was decided: its outcome and its net payout per unit staked."""


def components(succ: Sequence[Sequence[int]]) -> list[list[int]]:
    """Tarjan's strongly connected components, sinks first (iterative)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(len(succ)):
        if root in index:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            recurse = False
            for j in range(i, len(succ[v])):
                w = succ[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp: list[int] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def solve(matrix: list[list[Fraction]], rhs: list[list[Fraction]]) -> list[list[Fraction]]:
    """Gauss-Jordan elimination over exact fractions, for several right-hand sides at once."""
    n = len(matrix)
    a = [[*row, *rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[pivot] = a[pivot], a[col]
        inv = 1 / a[col][col]
        a[col] = [v * inv for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [vr - f * vc for vr, vc in zip(a[r], a[col], strict=True)]
    return [row[n:] for row in a]


# -- forward: one wager's decision distribution ------------------------------------------------

_GROUPED: dict[int, tuple[CompiledWager, list[Counter[int]], list[Counter[Decision]]]] = {}


def _grouped(wager: CompiledWager) -> tuple[list[Counter[int]], list[Counter[Decision]]]:
    """Each state's 36 steps grouped: undecided successors and decisions, with roll counts.

    Cached per compiled wager (packs compile once and live as long as the process).
    """
    hit = _GROUPED.get(id(wager))
    if hit is not None and hit[0] is wager:
        return hit[1], hit[2]
    moves: list[Counter[int]] = []
    ends: list[Counter[Decision]] = []
    for row in wager.steps:
        m: Counter[int] = Counter()
        e: Counter[Decision] = Counter()
        for st in row:
            if st.decided:
                e[(st.outcome, st.payout)] += 1
            else:
                m[st.next_state] += 1
        moves.append(m)
        ends.append(e)
    _GROUPED[id(wager)] = (wager, moves, ends)
    return moves, ends


def _reachable(moves: Sequence[Counter[int]], start: int) -> set[int]:
    seen = {start}
    todo = [start]
    while todo:
        s = todo.pop()
        for t in moves[s]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def absorption(wager: CompiledWager, start: int) -> tuple[dict[Decision, Fraction], Fraction]:
    """The exact distribution of how ``wager`` is decided from ``start``, and the expected rolls.

    Mass flows from the start through the components in topological order; inside a component
    the expected visits solve ``v (I - Q) = arrivals``.
    """
    moves, ends = _grouped(wager)
    live = sorted(_reachable(moves, start))
    local = {s: i for i, s in enumerate(live)}
    succ = [[local[t] for t in moves[s]] for s in live]
    arrival: list[Fraction] = [Fraction(0)] * len(live)
    arrival[local[start]] = Fraction(1)
    dist: dict[Decision, Fraction] = {}
    rolls = Fraction(0)
    for comp in reversed(components(succ)):  # sources first
        if len(comp) == 1:
            i = comp[0]
            stay = moves[live[i]].get(live[i], 0)
            visits = {i: arrival[i] * ROLLS / (ROLLS - stay)}
        else:
            members = {c: k for k, c in enumerate(comp)}
            size = len(comp)
            # Transposed system: (I - Q)^T v = arrivals.
            matrix = [[Fraction(int(r == c)) for c in range(size)] for r in range(size)]
            for i, k in members.items():
                for t, count in moves[live[i]].items():
                    j = members.get(local[t])
                    if j is not None:
                        matrix[j][k] -= Fraction(count, ROLLS)
            sol = solve(matrix, [[arrival[c]] for c in comp])
            visits = {c: sol[k][0] for c, k in members.items()}
        for i, v in visits.items():
            rolls += v
            s = live[i]
            for t, count in moves[s].items():
                j = local[t]
                if j not in visits:
                    arrival[j] += v * count / ROLLS
            for decision, count in ends[s].items():
                dist[decision] = dist.get(decision, Fraction(0)) + v * count / ROLLS
    return dist, rolls


# -- backward: chains with rewards on their transitions ------------------------------------------

Transition = tuple[int, Fraction, Fraction, Hashable | None]
"""(rolls out of 36, net reward, money put up, next state or None when absorbed)."""


@dataclass(frozen=True)
class Moments:
    """Expected figures from one state until absorption."""

    net: Fraction
    """Expected total net reward."""
    net_squared: Fraction
    """Expected square of the total net reward."""
    staked: Fraction
    """Expected total money put up."""
    rolls: Fraction
    """Expected rolls until absorbed."""

    @property
    def variance(self) -> Fraction:
        return self.net_squared - self.net * self.net


class Chain:
    """A chain over hashable states, explored from ``start`` by ``step``.

    ``step(state)`` lists the transitions out of a state: how many of the 36 rolls take each,
    the net reward and the money put up on that transition, and the next state (``None`` once
    everything is decided). Equal transitions may be listed separately; they are merged.

    >>> def coin(state):  # a 1-to-1 bet decided half the time, rolled again otherwise
    ...     return [(9, Fraction(1), Fraction(0), None), (9, Fraction(-1), Fraction(0), None),
    ...             (18, Fraction(0), Fraction(0), state)]
    >>> m = Chain("up", coin).moments()
    >>> m.net, m.variance, m.rolls
    (Fraction(0, 1), Fraction(1, 1), Fraction(2, 1))
    """

    def __init__(self, start: Hashable, step: Callable[[Hashable], Sequence[Transition]],
                 limit: int = 200_000) -> None:
        self.states: list[Hashable] = [start]
        index: dict[Hashable, int] = {start: 0}
        self.moves: list[list[tuple[Fraction, Fraction, Fraction, int | None]]] = []
        todo = 0
        while todo < len(self.states):
            merged: Counter[tuple[Fraction, Fraction, int | None]] = Counter()
            for count, net, put, nxt in step(self.states[todo]):
                j: int | None = None
                if nxt is not None:
                    j = index.get(nxt)
                    if j is None:
                        if len(self.states) >= limit:
                            raise ValueError(f"chain has more than {limit} states")
                        j = index[nxt] = len(self.states)
                        self.states.append(nxt)
                merged[(net, put, j)] += count
            if sum(merged.values()) != ROLLS:
                raise ValueError(f"state {self.states[todo]!r}: transitions cover "
                                 f"{sum(merged.values())} of 36 rolls")
            self.moves.append([(Fraction(c, ROLLS), net, put, j)
                               for (net, put, j), c in merged.items()])
            todo += 1

    def moments(self) -> Moments:
        """Expected net, its second moment, money put up and rolls, from the start state."""
        n = len(self.states)
        succ = [sorted({j for _, _, _, j in row if j is not None}) for row in self.moves]
        m1: list[Fraction] = [Fraction(0)] * n
        m2: list[Fraction] = [Fraction(0)] * n
        put: list[Fraction] = [Fraction(0)] * n
        rolls: list[Fraction] = [Fraction(0)] * n
        for comp in components(succ):  # sinks first: successors outside are known
            members = {s: k for k, s in enumerate(comp)}
            size = len(comp)
            matrix = [[Fraction(int(r == c)) for c in range(size)] for r in range(size)]
            rhs1 = [[Fraction(0), Fraction(0), Fraction(1)] for _ in range(size)]
            for s, k in members.items():
                for p, net, money, j in self.moves[s]:
                    rhs1[k][0] += p * net
                    rhs1[k][1] += p * money
                    if j is None:
                        continue
                    inner = members.get(j)
                    if inner is not None:
                        matrix[k][inner] -= p
                    else:
                        rhs1[k][0] += p * m1[j]
                        rhs1[k][1] += p * put[j]
                        rhs1[k][2] += p * rolls[j]
            first = _solve_small(matrix, rhs1)
            for s, k in members.items():
                m1[s], put[s], rolls[s] = first[k]
            # Second moment: E[(c + T')^2] = c^2 + 2 c m1(next) + m2(next).
            rhs2 = [[Fraction(0)] for _ in range(size)]
            for s, k in members.items():
                for p, net, _, j in self.moves[s]:
                    after = Fraction(0) if j is None else m1[j]
                    rhs2[k][0] += p * (net * net + 2 * net * after)
                    if j is not None and j not in members:
                        rhs2[k][0] += p * m2[j]
            second = _solve_small(matrix, rhs2)
            for s, k in members.items():
                m2[s] = second[k][0]
        return Moments(m1[0], m2[0], put[0], rolls[0])


def _solve_small(matrix: list[list[Fraction]], rhs: list[list[Fraction]]) -> list[list[Fraction]]:
    if len(matrix) == 1:
        d = matrix[0][0]
        return [[v / d for v in rhs[0]]]
    return solve(matrix, rhs)
