"""PNG plots of a simulation (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dicetable.sim.report import SimReport, Z


def edge_points(report: SimReport) -> list[tuple[str, float, float, float | None]]:
    """What ``edges.png`` draws, per wager decided at least once: label, realised edge and
    the half-width of its 95% interval, exact edge (percent of money wagered)."""
    out = []
    for w in report.wagers:
        if not w.decisions:
            continue
        half = Z * w.edge_se * 100 if np.isfinite(w.edge_se) else 0.0
        exact = None if w.exact_edge is None else float(w.exact_edge) * 100
        out.append((w.label, w.edge * 100, half, exact))
    return out


def write_plots(report: SimReport, folder: Path) -> list[Path]:
    """``bankroll_bands.png`` (percentile bands along the session), ``results.png`` and
    ``edges.png`` (each wager's realised edge with its 95% interval against the exact edge)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    what = "bankroll" if report.bankroll is not None else "net result"
    if report.bands and report.checkpoints:
        x = np.array(report.checkpoints)
        b = {k: np.array(v) / 100 for k, v in report.bands.items()}
        fig, ax = plt.subplots(figsize=(8, 4.5))
        ax.fill_between(x, b[5], b[95], alpha=0.2, label="5th-95th percentile")
        ax.fill_between(x, b[25], b[75], alpha=0.4, label="25th-75th percentile")
        ax.plot(x, b[50], linewidth=1.5, label="median")
        if report.bankroll is not None:
            ax.axhline(report.bankroll / 100, color="grey", linewidth=0.8, linestyle="--")
        ax.set_xlabel("roll")
        ax.set_ylabel(f"{what} ($)")
        ax.set_title(f"{report.strategy}: {what} along the {report.mode}")
        ax.legend(loc="upper left")
        fig.tight_layout()
        path = folder / "bankroll_bands.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    if report.final.size:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        dollars = report.final / 100
        ax.hist(dollars, bins=min(100, max(10, int(np.sqrt(dollars.size)))), alpha=0.8)
        ax.axvline(float(dollars.mean()), color="black", linewidth=1, label="mean")
        ax.set_xlabel(f"final {what} ($)")
        ax.set_ylabel("sessions" if report.mode == "sessions" else "lanes")
        ax.set_title(f"{report.strategy}: distribution of results "
                     f"(edge {report.edge * 100:.3f}%)")
        ax.legend()
        fig.tight_layout()
        path = folder / "results.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    points = edge_points(report)
    if points:
        fig, ax = plt.subplots(figsize=(10, 1.4 + 0.45 * len(points)))
        y = np.arange(len(points))[::-1]
        edge = np.array([p[1] for p in points])
        half = np.array([p[2] for p in points])
        ax.errorbar(edge, y, xerr=half, fmt="o", capsize=3, label="realised, 95% interval")
        exact = [(p[3], yy) for p, yy in zip(points, y, strict=True) if p[3] is not None]
        if exact:
            ax.scatter([e for e, _ in exact], [yy for _, yy in exact], marker="|", s=300,
                       color="black", zorder=3, label="exact")
        ax.axvline(0, color="grey", linewidth=0.6)
        ax.set_yticks(y, [p[0] for p in points])
        ax.set_xlabel("house edge (% of money wagered)")
        ax.set_title(f"{report.strategy}: realised edge per wager, {report.rolls:,} rolls")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        fig.tight_layout()
        path = folder / "edges.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


__all__ = ["edge_points", "write_plots"]
