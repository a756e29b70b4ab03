"""Exact absorbing-chain values over a compiled wager table.

A wager's states form a Markov chain driven by the 36 equally likely rolls; a decided step
absorbs. For a per-state reward ``a`` this solves ``x(s) = a(s) + sum p(r) x(next)`` over the
undecided steps exactly, one strongly connected component at a time (most components are a
single state with a self-loop, so this stays fast even for Make 'Em All's 1,023 states).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from dicetable.wagers.compiled import CompiledWager, Step

P_ROLL = Fraction(1, 36)


def _successors(wager: CompiledWager) -> list[list[int]]:
    return [sorted({st.next_state for st in row if not st.decided}) for row in wager.steps]


def _components(succ: Sequence[Sequence[int]]) -> list[list[int]]:
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


def _solve(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction]:
    """Gauss-Jordan elimination over exact fractions."""
    n = len(rhs)
    a = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[pivot] = a[pivot], a[col]
        inv = 1 / a[col][col]
        a[col] = [v * inv for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [vr - f * vc for vr, vc in zip(a[r], a[col], strict=True)]
    return [a[i][n] for i in range(n)]


def absorbing_values(wager: CompiledWager, reward: Callable[[Step], Fraction],
                     per_roll: Fraction = Fraction(0)) -> list[Fraction]:
    """For every state, the expected total of ``reward`` over decided steps plus ``per_roll``
    for every roll until the wager is decided."""
    steps = wager.steps
    a = [per_roll + P_ROLL * sum((reward(st) for st in row if st.decided), Fraction(0))
         for row in steps]
    x: list[Fraction | None] = [None] * len(steps)
    for comp in _components(_successors(wager)):
        members = {s: i for i, s in enumerate(comp)}
        size = len(comp)
        matrix = [[Fraction(0)] * size for _ in range(size)]
        rhs = [Fraction(0)] * size
        for s, i in members.items():
            matrix[i][i] += 1
            rhs[i] = a[s]
            for st in steps[s]:
                if st.decided:
                    continue
                j = members.get(st.next_state)
                if j is not None:
                    matrix[i][j] -= P_ROLL
                else:
                    known = x[st.next_state]
                    assert known is not None
                    rhs[i] += P_ROLL * known
        if size == 1:
            x[comp[0]] = rhs[0] / matrix[0][0]
        else:
            for s, v in zip(comp, _solve(matrix, rhs), strict=True):
                x[s] = v
    return [v if v is not None else Fraction(0) for v in x]
