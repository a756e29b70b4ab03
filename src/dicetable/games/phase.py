"""Where a table is in its round: the one fact of the state that the variants also name (the
phase after a no roll), so it sits below both."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a table is in its round."""

    NEW = "new"
    """Not opened yet."""
    BETTING = "betting"
    """Wagers may be made and changed."""
    CLOSED = "closed"
    """'No more bets': the dice are being shaken or thrown."""
    SETTLING = "settling"
    """A valid roll is on the table; the dealer collects, pays, then moves on."""
