"""Ratings as plain data, for the pit console's route and the CLI alike."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dicetable.ratings.fold import Rating
from dicetable.ratings.formula import DISPLAY_ROUNDING, GamingDay, IndustryFormula, display_cents


def report(ratings: Iterable[Rating], formula: IndustryFormula,
           day: GamingDay | None = None) -> dict[str, Any]:
    """Every rating (exact theo beside the industry formula's), and the rule values used."""
    rows = sorted(ratings, key=lambda r: (r.table, r.player, r.session))
    return {
        "ratings": [r.to_dict() | {"difference": display_cents(r.industry_theo - r.theo)}
                    for r in rows],
        "rules": [rule.to_dict() for rule in formula.rules()]
        + ([] if day is None else [{"id": "ratings.gaming_day.start",
                                    "value": f"{day.starts:%H:%M} {day.zone}",
                                    "citation": day.citation, "status": day.status.value,
                                    "configurable": True}]),
        "day": None if day is None else day.day.isoformat(),
        "rounding": DISPLAY_ROUNDING,
    }
