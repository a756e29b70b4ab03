"""What a simulation found: results, realised house edge with its confidence interval, risk of
ruin, bankroll percentiles, and the breakdown per wager beside its exact edge.

Confidence intervals are 95% (normal). The edge's comes from batch means over independent lane
groups (32 per shard), so bets that span rolls and correlated wagers are accounted for.

>>> from statistics import NormalDist
>>> Z == NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
True
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from dicetable.core.money import format_cents, fraction_text
from dicetable.sim.engine import REASONS, RUIN
from dicetable.sim.kernel import DECISIONS, HANDLE, NET, PUSHES, WINS
from dicetable.sim.prepared import Prepared
from dicetable.sim.runner import RunResult

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from dicetable.sim.automaton import CompiledStrategy

CONFIDENCE = 0.95
Z = 1.9599639845400536
"""The normal quantile of ``CONFIDENCE``, written out (the module's doctest checks it) rather
than worked out by ``statistics``, which a run does not otherwise import."""
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
BANDS = (5, 25, 50, 75, 95)


def ratio_ci(net: NDArray[np.int64], handle: NDArray[np.int64],
             z: float = Z) -> tuple[float, float]:
    """Realised edge -sum(net)/sum(handle) and its standard error from independent batches."""
    total = float(handle.sum())
    if total == 0:
        return math.nan, math.nan
    edge = -float(net.sum()) / total
    b = len(net)
    if b < 2:
        return edge, math.nan
    resid = -net.astype(np.float64) - edge * handle.astype(np.float64)
    se = math.sqrt(b / (b - 1) * float((resid * resid).sum())) / total
    return edge, se


@dataclass
class WagerLine:
    label: str
    wager: str
    decisions: int
    wins: int
    pushes: int
    handle: int
    net: int
    edge: float
    edge_se: float
    exact_edge: Fraction | None

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.edge - Z * self.edge_se, self.edge + Z * self.edge_se
        return {
            "label": self.label, "wager": self.wager, "decisions": self.decisions,
            "wins": self.wins, "pushes": self.pushes, "handle_cents": self.handle,
            "net_cents": self.net, "edge_pct": self.edge * 100,
            "edge_ci_pct": [lo * 100, hi * 100],
            "exact_edge": None if self.exact_edge is None
            else fraction_text(self.exact_edge),
            "exact_edge_pct": None if self.exact_edge is None else float(self.exact_edge * 100),
        }


@dataclass
class SimReport:
    strategy: str
    pack: str
    mode: str
    sessions: int
    rolls: int
    seconds: float
    seed: int
    engine: str
    workers: int
    shards: int
    bankroll: int | None
    total_net: int
    total_handle: int
    edge: float
    edge_se: float
    mean_result: float
    mean_se: float
    risk_of_ruin: float
    reasons: dict[str, int]
    percentiles: dict[int, int]
    wagers: list[WagerLine]
    checkpoints: list[int] = field(default_factory=list)
    bands: dict[int, list[int]] = field(default_factory=dict)
    final: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def rolls_per_second(self) -> float:
        return self.rolls / self.seconds if self.seconds else math.inf

    def to_dict(self) -> dict[str, Any]:
        ci = [(self.edge - Z * self.edge_se) * 100, (self.edge + Z * self.edge_se) * 100]
        return {
            "strategy": self.strategy, "pack": self.pack, "mode": self.mode,
            "sessions": self.sessions, "rolls": self.rolls, "seconds": self.seconds,
            "rolls_per_second": self.rolls_per_second, "seed": self.seed,
            "engine": self.engine, "workers": self.workers, "shards": self.shards,
            "confidence": CONFIDENCE, "bankroll_cents": self.bankroll,
            "total_net_cents": self.total_net, "total_wagered_cents": self.total_handle,
            "house_edge_pct": self.edge * 100, "house_edge_ci_pct": ci,
            "mean_result_cents": self.mean_result,
            "mean_result_ci_cents": [self.mean_result - Z * self.mean_se,
                                     self.mean_result + Z * self.mean_se],
            "risk_of_ruin": self.risk_of_ruin, "stopped": self.reasons,
            "final_bankroll_percentiles_cents": {str(k): v for k, v in self.percentiles.items()},
            "wagers": [w.to_dict() for w in self.wagers],
            "bands": {"rolls": self.checkpoints,
                      **{f"p{k}": v for k, v in self.bands.items()}},
        }

    def to_csv(self) -> str:
        """The per-wager breakdown, then a total row."""
        import csv  # only for this

        buffer = io.StringIO()
        fields = ["label", "wager", "decisions", "wins", "pushes", "handle_cents", "net_cents",
                  "edge_pct", "edge_ci_low_pct", "edge_ci_high_pct", "exact_edge",
                  "exact_edge_pct"]
        writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for w in self.wagers:
            row = w.to_dict()
            lo, hi = row.pop("edge_ci_pct")
            writer.writerow({**row, "edge_ci_low_pct": lo, "edge_ci_high_pct": hi})
        lo, hi = (self.edge - Z * self.edge_se) * 100, (self.edge + Z * self.edge_se) * 100
        writer.writerow({"label": "TOTAL", "wager": self.strategy,
                         "handle_cents": self.total_handle, "net_cents": self.total_net,
                         "edge_pct": self.edge * 100, "edge_ci_low_pct": lo,
                         "edge_ci_high_pct": hi})
        return buffer.getvalue()

    def summary_lines(self) -> list[str]:
        """Plain-language headline figures."""
        unit = "session" if self.mode == "sessions" else "lane"
        lines = [
            f"{self.strategy} on {self.pack}: {self.sessions:,} {unit}s, {self.rolls:,} rolls "
            f"in {self.seconds:.2f} s ({self.rolls_per_second / 1e6:.1f} M rolls/s)",
            f"house edge realised: {self.edge * 100:.4f}% ± {Z * self.edge_se * 100:.4f}% "
            f"(95%) of {format_cents(self.total_handle)} wagered",
            f"mean result per {unit}: {format_cents(round(self.mean_result))} " + (
                f"± {format_cents(round(Z * self.mean_se))}" if math.isfinite(self.mean_se)
                else f"(one {unit}: no interval)"),
        ]
        if self.mode == "sessions":
            lines.append(f"risk of ruin: {self.risk_of_ruin * 100:.2f}%; stopped: "
                         + ", ".join(f"{k} {v:,}" for k, v in self.reasons.items() if v))
        what = "final bankroll" if self.bankroll is not None else "final result"
        lines.append(f"{what} percentiles: " + ", ".join(
            f"p{k} {format_cents(v)}" for k, v in self.percentiles.items()))
        lines.append(f"seed {self.seed} (repeat with --seed)")
        return lines


def build_report(compiled: Prepared | CompiledStrategy, result: RunResult,
                 mode: str) -> SimReport:
    if not isinstance(compiled, Prepared):
        from dicetable.sim.prepare import prepare  # the exact odds, only when not prepared

        compiled = prepare(compiled)
    groups = result.groups  # (batches, labels, fields)
    wagers = []
    for k, (label, code, exact_edge) in enumerate(zip(compiled.labels, compiled.codes,
                                                      compiled.exact_edges, strict=True)):
        g = groups[:, k, :]
        edge, se = ratio_ci(g[:, NET], g[:, HANDLE])
        wagers.append(WagerLine(label, code, int(g[:, DECISIONS].sum()), int(g[:, WINS].sum()),
                                int(g[:, PUSHES].sum()), int(g[:, HANDLE].sum()),
                                int(g[:, NET].sum()), edge, se, exact_edge))
    total_net = groups[:, :, NET].sum(axis=1)
    total_handle = groups[:, :, HANDLE].sum(axis=1)
    edge, se = ratio_ci(total_net, total_handle)
    final = result.final_net
    n = len(final)
    mean = float(final.mean()) if n else 0.0
    mean_se = float(final.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
    bankroll = compiled.session.bankroll if mode == "sessions" else None
    money = final + (bankroll or 0)
    percentiles = {p: int(v) for p, v in zip(
        PERCENTILES, np.quantile(money, [p / 100 for p in PERCENTILES], method="inverted_cdf"),
        strict=True)} if n else {}
    reasons = {REASONS[i]: int(c) for i, c in enumerate(np.bincount(result.reason,
                                                                      minlength=len(REASONS)))}
    bands: dict[int, list[int]] = {}
    if result.trace.size:
        traced = result.trace + (bankroll or 0)
        qs = np.quantile(traced, [b / 100 for b in BANDS], axis=0, method="inverted_cdf")
        bands = {b: [int(v) for v in row] for b, row in zip(BANDS, qs, strict=True)}
    return SimReport(
        strategy=compiled.name, pack=compiled.pack, mode=mode,
        sessions=n, rolls=result.rolls_thrown, seconds=result.seconds, seed=result.entropy,
        engine=result.engine, workers=result.workers, shards=len(result.plans),
        bankroll=bankroll, total_net=int(final.sum()), total_handle=int(total_handle.sum()),
        edge=edge, edge_se=se, mean_result=mean, mean_se=mean_se,
        risk_of_ruin=reasons.get(REASONS[RUIN], 0) / n if n else 0.0, reasons=reasons,
        percentiles=percentiles, wagers=wagers, checkpoints=[int(c) for c in
                                                             result.checkpoints],
        bands=bands, final=money)


__all__ = ["CONFIDENCE", "SimReport", "WagerLine", "build_report", "ratio_ci"]
