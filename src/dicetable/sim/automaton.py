"""A strategy compiled to lookup tables over (state, roll), built from the compiled wagers.

Every bet of a strategy (``sim.entry.Entry``) is explored once, breadth first, over all its
reachable states; each (state, roll) gets its next state and the money moved, both when the
session carries on (settle, then bet) and when it stops on that roll (settle, then wind down).
Bets are then merged into as few components as a state budget allows, by exploring the pairs of
states the dice actually reach together, so that the simulator does a handful of array
operations per roll whatever the strategy.

Rows ``0 .. n*36`` of the flat tables are 'carry on'; rows ``n*36 .. 2*n*36`` are 'stop now'.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from dicetable.core.dice import ALL_ROLLS
from dicetable.sim.entry import FIELDS, WOUND_UP, Entry, Flow, State
from dicetable.sim.kernel import FlatComponent, Kernel, Part
from dicetable.sim.strategy import Strategy

CONTINUE, STOP = 0, 1
STATE_BUDGET = 2048
"""Most states a merged component may have (tables stay in cache, histograms stay small)."""
ACCOUNT_BUDGET = 16_384
"""Most states x member bets in a component: what folding its row counts back onto each
member's own tables costs at the end of a shard."""

I32 = NDArray[np.int32]
I64 = NDArray[np.int64]


@dataclass
class Tables:
    """One bet's tables, indexed [row kind, state, roll]."""

    entry: Entry
    states: list[State]
    nxt: I32          # (2, n, 36)
    delta: I64        # (2, n, 36) net money moved by the roll and the chore after it
    settled: I64      # (n, 36) net money moved by the settlement alone
    acc: I64          # (2, n, 36, labels, fields)
    on_table: I64     # (n,)
    start: int
    empty: int
    initial: Flow

    @property
    def n(self) -> int:
        return len(self.states)


@dataclass
class Component:
    """Bets simulated together: one state per lane, one table lookup per roll."""

    n: int
    nxt: I32
    delta: I64
    settled: I64
    on_table: I64
    start: int
    empty: int
    parts: list[tuple[Tables, I32]] = field(default_factory=list)
    """Each member bet's tables and the map from this component's states to its own."""

    # -- flat views for the simulator ------------------------------------------------------
    def flat(self) -> FlatComponent:
        rows = self.n * 36
        nxt36 = (self.nxt.astype(np.int64) * 36).astype(np.int32).reshape(2 * rows)
        need = self.on_table[self.nxt[CONTINUE]] - self.delta[CONTINUE]
        return FlatComponent(rows, nxt36, self.delta.reshape(2 * rows).copy(),
                             self.settled.reshape(rows).copy(), need.reshape(rows),
                             self.start * 36, self.empty * 36)




def _roll_classes(entry: Entry) -> list[list[int]]:
    """Rolls that no state of this bet can tell apart (same total, same table columns)."""
    groups: dict[tuple[object, ...], list[int]] = defaultdict(list)
    odds = entry.odds
    for r in ALL_ROLLS:
        key: tuple[object, ...] = (r.total, tuple(row[r.index] for row in entry.wager.steps))
        if odds is not None:
            key += (tuple(row[r.index] for row in odds.steps),)
        groups[key].append(r.index)
    return list(groups.values())


def tabulate(entry: Entry, limit: int = 200_000) -> Tables:
    """Explore every state of one bet reachable from its first come-out."""
    labels = len(entry.labels)
    start_state, initial = entry.initial()
    index: dict[State, int] = {start_state: 0, WOUND_UP: 1}
    states = [start_state, WOUND_UP]
    classes = _roll_classes(entry)
    nxt: list[list[list[int]]] = []
    delta: list[list[list[int]]] = []
    settled: list[list[int]] = []
    acc: list[list[list[list[list[int]]]]] = []
    todo = 0
    while todo < len(states):
        state = states[todo]
        todo += 1
        n_row = [[0] * 36, [0] * 36]
        d_row = [[0] * 36, [0] * 36]
        s_row = [0] * 36
        a_row: list[list[list[list[int]]]] = [[[] for _ in range(36)] for _ in range(2)]
        for members in classes:
            settled_state, f1 = entry.settle(state, ALL_ROLLS[members[0]])
            for kind, chore in ((CONTINUE, entry.bet), (STOP, entry.wind_down)):
                after, f2 = chore(settled_state)
                j = index.get(after)
                if j is None:
                    if len(states) >= limit:
                        raise ValueError(f"{entry.spec.label}: more than {limit} states")
                    j = index[after] = len(states)
                    states.append(after)
                total = [[a + b for a, b in zip(x, y, strict=True)]
                         for x, y in zip(f1.acc, f2.acc, strict=True)]
                moved = f1.net + f2.net
                for r in members:
                    n_row[kind][r] = j
                    d_row[kind][r] = moved
                    a_row[kind][r] = total
            for r in members:
                s_row[r] = f1.settled
        nxt.append(n_row)
        delta.append(d_row)
        settled.append(s_row)
        acc.append(a_row)
    n = len(states)
    nxt_arr = np.array(nxt, dtype=np.int32).transpose(1, 0, 2).copy()
    delta_arr = np.array(delta, dtype=np.int64).transpose(1, 0, 2).copy()
    acc_arr = np.array(acc, dtype=np.int64).reshape(n, 2, 36, labels, len(FIELDS))
    acc_arr = acc_arr.transpose(1, 0, 2, 3, 4).copy()
    on_table = np.array([entry.on_table(s) for s in states], dtype=np.int64)
    return Tables(entry, states, nxt_arr, delta_arr, np.array(settled, dtype=np.int64),
                  acc_arr, on_table, 0, 1, initial)


def component_of(tables: Tables) -> Component:
    return Component(tables.n, tables.nxt, tables.delta, tables.settled, tables.on_table,
                     tables.start, tables.empty, [(tables, np.arange(tables.n, dtype=np.int32))])


def merge(a: Component, b: Component, budget: int = STATE_BUDGET,
          accounts: int = ACCOUNT_BUDGET) -> Component | None:
    """The pairs of states of ``a`` and ``b`` the dice reach together, or None if too many."""
    budget = min(budget, accounts // (len(a.parts) + len(b.parts)))
    width = b.n
    seen: dict[int, int] = {a.start * width + b.start: 0}
    order = [a.start * width + b.start]
    frontier = np.array(order, dtype=np.int64)
    while frontier.size:
        ia, ib = frontier // width, frontier % width
        found = []
        for kind in (CONTINUE, STOP):
            codes = a.nxt[kind][ia].astype(np.int64) * width + b.nxt[kind][ib]
            found.append(np.unique(codes))
        fresh = []
        for code in np.unique(np.concatenate(found)).tolist():
            if code not in seen:
                seen[code] = len(order)
                order.append(code)
                fresh.append(code)
                if len(order) > budget:
                    return None
        frontier = np.array(fresh, dtype=np.int64)
    codes_arr = np.array(order, dtype=np.int64)
    ia, ib = codes_arr // width, codes_arr % width
    lookup = np.full(a.n * width, -1, dtype=np.int32) if a.n * width <= 50_000_000 else None

    def index_of(codes: NDArray[np.int64]) -> I32:
        if lookup is not None:
            return lookup[codes]
        return np.array([seen[c] for c in codes.ravel().tolist()],
                        dtype=np.int32).reshape(codes.shape)

    if lookup is not None:
        lookup[codes_arr] = np.arange(len(order), dtype=np.int32)
    nxt = np.stack([index_of(a.nxt[k][ia].astype(np.int64) * width + b.nxt[k][ib])
                    for k in (CONTINUE, STOP)])
    delta = np.stack([a.delta[k][ia] + b.delta[k][ib] for k in (CONTINUE, STOP)])
    parts = [(t, m[ia]) for t, m in a.parts] + [(t, m[ib]) for t, m in b.parts]
    empty = seen[a.empty * width + b.empty]
    return Component(len(order), nxt.astype(np.int32), delta, a.settled[ia] + b.settled[ib],
                     a.on_table[ia] + b.on_table[ib], 0, empty, parts)






@dataclass
class CompiledStrategy:
    """A strategy's tables, ready for the simulator (picklable, shipped to workers)."""

    strategy: Strategy
    components: list[Component]
    labels: tuple[str, ...]
    codes: tuple[str, ...]
    initial_net: int
    """Net money moved before the first roll (commissions paid up front on the first bets)."""
    initial_acc: I64
    """(labels, fields) moved before the first roll."""
    opening_cost: int = 0
    """Cash the first bets take: stakes plus commissions paid up front."""

    def kernel(self) -> Kernel:
        offsets = label_offsets(self)
        parts = tuple(
            tuple(Part(t.acc, mapping, first) for (t, mapping), first in zip(c.parts, offs,
                                                                              strict=True))
            for c, offs in zip(self.components, offsets, strict=True))
        return Kernel(tuple(c.flat() for c in self.components), parts, self.labels,
                      self.initial_net, self.initial_acc)

    @property
    def states(self) -> int:
        return sum(c.n for c in self.components)


def compile_strategy(strategy: Strategy, budget: int = STATE_BUDGET) -> CompiledStrategy:
    tables = [tabulate(Entry(strategy.pack, spec)) for spec in strategy.bets]
    components: list[Component] = []
    current: Component | None = None
    for t in tables:
        comp = component_of(t)
        if current is None:
            current = comp
            continue
        merged = merge(current, comp, budget)
        if merged is None:
            components.append(current)
            current = comp
        else:
            current = merged
    assert current is not None
    components.append(current)
    labels = tuple(lab for t in tables for lab in t.entry.labels)
    codes = tuple(code for t in tables for code in t.entry.codes)
    initial_acc = np.array([row for t in tables for row in t.initial.acc], dtype=np.int64)
    initial_net = sum(t.initial.net for t in tables)
    opening = sum(int(t.on_table[t.start]) for t in tables) - initial_net
    return CompiledStrategy(strategy, components, labels, codes, initial_net, initial_acc,
                            opening)


def label_offsets(compiled: CompiledStrategy) -> list[list[int]]:
    """For each component, each member's first label index in ``compiled.labels``."""
    offsets: list[list[int]] = []
    order: Sequence[Tables] = [t for c in compiled.components for t, _ in c.parts]
    at = 0
    where: dict[int, int] = {}
    for t in order:
        where[id(t)] = at
        at += len(t.entry.labels)
    for c in compiled.components:
        offsets.append([where[id(t)] for t, _ in c.parts])
    return offsets


__all__ = ["STATE_BUDGET", "CompiledStrategy", "Component", "FlatComponent", "Kernel", "Part",
           "Tables",
           "compile_strategy", "label_offsets", "merge", "tabulate"]
