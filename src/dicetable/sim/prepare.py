"""A compiled strategy made plain for the run and the report (``Prepared``), with each
wager's exact house edge."""

from __future__ import annotations

from fractions import Fraction

from dicetable.odds.exact import wager_odds
from dicetable.sim.automaton import CompiledStrategy
from dicetable.sim.prepared import Prepared


def exact_edges(compiled: CompiledStrategy) -> tuple[Fraction | None, ...]:
    out: list[Fraction | None] = []
    for code in compiled.codes:
        if code.startswith("odds:"):
            out.append(Fraction(0))
            continue
        try:
            out.append(wager_odds(compiled.strategy.pack, code).house_edge)
        except (ValueError, KeyError):
            out.append(None)
    return tuple(out)


def prepare(compiled: CompiledStrategy) -> Prepared:
    strategy = compiled.strategy
    return Prepared(name=strategy.name, pack=strategy.pack.id, labels=compiled.labels,
                    codes=compiled.codes, exact_edges=exact_edges(compiled),
                    opening_cost=compiled.opening_cost, tables=compiled.kernel(),
                    session=strategy.session)
