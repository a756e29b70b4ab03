"""PNG plots of a simulation (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dicetable.sim.report import SimReport


def write_plots(report: SimReport, folder: Path) -> list[Path]:
    """``bankroll_bands.png`` (percentile bands along the session) and ``results.png``."""
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
    return written


__all__ = ["write_plots"]
