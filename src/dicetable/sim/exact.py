"""Exact session outcomes from the simulator's own tables, and the simulator's estimate of each
beside it (``dicetable odds --session``).

``chain_of`` joins a compiled strategy's components into one table over the states the dice
reach together and hands it, as plain integers, to ``dicetable.odds.session`` (standard
library, Fractions; python-flint's dense solver for the systems that fill in, when installed).
``estimate`` runs the simulator on the same session and gives each figure
with its 99% interval.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from statistics import NormalDist
from typing import Any

import numpy as np

from dicetable.core.errors import InvalidInput
from dicetable.odds.session import Chain, DenseSolver, Rhs, Rows, SessionOdds, session_odds
from dicetable.sim.automaton import CONTINUE, STOP, CompiledStrategy, Component, merge
from dicetable.sim.engine import REASONS, RUIN, STOP_LOSS, STOP_WIN
from dicetable.sim.runner import plan_sessions, run
from dicetable.sim.session import SessionSpec

CONFIDENCE = 0.99
Z99 = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
MAX_JOINT_STATES = 20_000
DENSE_LIMIT = 5_000
"""Unknowns a dense exact solve is tried on (FLINT: about 6 s at 1,300)."""
UNLIMITED_ROLLS = 1_000_000
"""The simulator's stand-in for 'however long it takes': sessions longer than this are
counted apart (reason 'length') and reported."""


def chain_of(compiled: CompiledStrategy) -> Chain:
    """The strategy's tables as one ``Chain`` (its components joined)."""
    joined: Component = compiled.components[0]
    for other in compiled.components[1:]:
        merged = merge(joined, other, MAX_JOINT_STATES, accounts=1 << 40)
        if merged is None:
            raise InvalidInput(f"the strategy has more than {MAX_JOINT_STATES:,} joint states: "
                               "too many for an exact session", rule="odds.session")
        joined = merged
    need = joined.on_table[joined.nxt[CONTINUE]] - joined.delta[CONTINUE]

    def rows(a: Any) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(int(v) for v in row) for row in np.asarray(a).tolist())

    return Chain(joined.n, joined.start, joined.empty,
                 (rows(joined.nxt[CONTINUE]), rows(joined.nxt[STOP])),
                 (rows(joined.delta[CONTINUE]), rows(joined.delta[STOP])),
                 rows(joined.settled), rows(need), compiled.initial_net)


def flint_solver() -> DenseSolver | None:
    """python-flint's exact dense rational solve (FLINT, in C), if installed."""
    try:
        flint: Any = importlib.import_module("flint")
    except ImportError:
        return None

    def solve(rows: Rows, rhs: Rhs, width: int) -> list[Fraction]:
        n = len(rows)
        if n > DENSE_LIMIT:
            raise InvalidInput(f"{n:,} (money, state) pairs fill in past what an exact solve "
                               f"can take here (a dense solve is done to {DENSE_LIMIT:,}): "
                               "use a smaller bankroll or goal, or bigger bets",
                               rule="odds.session")
        a = flint.fmpq_mat(n, n)
        b = flint.fmpq_mat(n, width)
        for u, row in rows.items():
            a[u, u] = 1
            for v, c in row.items():
                a[u, v] = a[u, v] - flint.fmpq(c.numerator, c.denominator)
            for i, value in enumerate(rhs[u]):
                b[u, i] = flint.fmpq(value.numerator, value.denominator)
        x = a.solve(b)
        return [Fraction(int(x[0, i].p), int(x[0, i].q)) for i in range(width)]

    return solve


def exact_session(compiled: CompiledStrategy, bankroll: int, goal: int,
                  stop_loss: int | None, rolls: int) -> SessionOdds:
    if bankroll < compiled.opening_cost:
        raise InvalidInput(f"a bankroll of {bankroll / 100:.2f} does not cover the opening "
                           f"bets ({compiled.opening_cost / 100:.2f})", rule="sim.bankroll")
    return session_odds(chain_of(compiled), bankroll, goal, stop_loss, rolls, flint_solver())


@dataclass
class Estimate:
    value: float
    low: float
    high: float

    def holds(self, exact: Fraction | float) -> bool:
        return self.low <= float(exact) <= self.high


def proportion(hits: int, n: int) -> Estimate:
    """A proportion with its 99% Wilson interval (sound near 0 and 1)."""
    p = hits / n
    z2 = Z99 * Z99
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z99 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Estimate(p, max(0.0, centre - half), min(1.0, centre + half))


def mean(values: np.ndarray[Any, Any]) -> Estimate:
    m = float(values.mean())
    half = Z99 * float(values.std(ddof=1)) / math.sqrt(values.size) if values.size > 1 else 0.0
    return Estimate(m, m - half, m + half)


@dataclass
class SessionEstimate:
    sessions: int
    p_goal: Estimate
    p_ruin: Estimate
    p_stop_loss: Estimate
    expected_rolls: Estimate
    unfinished: int
    """Unlimited sessions still going after ``UNLIMITED_ROLLS`` rolls."""
    after: np.ndarray[Any, np.dtype[np.int64]]
    """Each N-roll session's bankroll when it is over."""
    mean_after: Estimate
    seconds: float


def estimate(compiled: CompiledStrategy, bankroll: int, goal: int, stop_loss: int | None,
             rolls: int, sessions: int, seed: int | None) -> SessionEstimate:
    """The simulator on the same sessions: unlimited (goal, ruin, length) and N rolls."""
    spec = SessionSpec(bankroll, UNLIMITED_ROLLS, goal - bankroll, stop_loss)
    strategy = replace(compiled.strategy, session=spec)
    compiled = replace(compiled, strategy=strategy)
    long_run = run(compiled, plan_sessions(sessions, spec), seed)
    reasons = np.bincount(long_run.reason, minlength=len(REASONS))
    short_spec = replace(spec, max_rolls=rolls)
    short = run(compiled, plan_sessions(sessions, short_spec), seed)
    after = short.final_net + bankroll
    return SessionEstimate(
        sessions, proportion(int(reasons[STOP_WIN]), sessions),
        proportion(int(reasons[RUIN]), sessions), proportion(int(reasons[STOP_LOSS]), sessions),
        mean(long_run.rolls.astype(np.float64)), int(sessions - reasons[1:4].sum()), after,
        mean(after.astype(np.float64)), long_run.seconds + short.seconds)


def bands(exact: SessionOdds, count: int = 8) -> list[tuple[int, int, Fraction]]:
    """The final bankroll cut into about ``count`` ranges of similar exact probability."""
    out: list[tuple[int, int, Fraction]] = []
    items = sorted(exact.after.items())
    lo: int | None = None
    acc = Fraction(0)
    for i, (amount, p) in enumerate(items):
        if lo is None:
            lo = amount
        acc += p
        if acc >= Fraction(1, count) or i == len(items) - 1:
            out.append((lo, amount, acc))
            lo, acc = None, Fraction(0)
    return out


__all__ = ["CONFIDENCE", "Estimate", "SessionEstimate", "bands", "chain_of", "estimate",
           "exact_session", "flint_solver", "proportion"]
