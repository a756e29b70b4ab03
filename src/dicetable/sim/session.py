"""A session's bankroll and limits (a module of its own: the simulator's run and report need
it without the strategy checker's imports)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionSpec:
    bankroll: int | None = None
    """Cents brought to the table; None: unlimited (nothing is ever short)."""
    max_rolls: int | None = None
    stop_win: int | None = None
    """Stop betting once the session is up this much."""
    stop_loss: int | None = None
    """Stop betting once the session is down this much."""
