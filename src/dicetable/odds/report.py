"""Every wager of a pack, exactly, as rows ready for a table, JSON or CSV.

Fractions are written ``"num/den"``; each is accompanied by a float for reading.

>>> from dicetable.rules.loader import load_preset
>>> rows = pack_report(load_preset("pa-craps"))
>>> row = next(r for r in rows if r["wager"] == "pass")
>>> row["house_edge"], row["house_edge_pct"]
('7/495', 1.4141414141414141)
>>> next(r for r in rows if r["wager"] == "buy4")["other_commission"]["house_edge"]
'1/60'
>>> next(r for r in rows if r["wager"] == "pass+odds")["odds"]
'3-4-5x'
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from dicetable.odds.exact import WagerOdds, alternative_commission, pack_odds
from dicetable.odds.layout import (
    STANDING,
    LayoutBet,
    LayoutOdds,
    layout_odds,
    line_with_odds,
    max_odds,
)
from dicetable.rules.model import RulePack, family_of

CSV_FIELDS = ("wager", "name", "start", "commission", "house_edge", "house_edge_pct",
              "edge_per_roll", "edge_per_roll_pct", "p_win", "p_lose", "p_push",
              "p_resolve_next_roll", "p_decided_per_roll", "expected_rolls", "variance",
              "std_dev", "odds", "table_expected_rolls", "table_edge_per_roll_pct")


def exact(x: Fraction) -> str:
    """A fraction as ``num/den`` (``0/1`` for zero): exact and machine-readable."""
    return f"{x.numerator}/{x.denominator}"


def _wager_row(w: WagerOdds) -> dict[str, Any]:
    fam = "odds" if w.code.startswith("odds:") else family_of(w.code)
    return {
        "wager": w.code, "name": w.name, "family": fam, "start": w.start,
        "commission": w.commission, "fee": exact(w.fee),
        "house_edge": exact(w.house_edge), "house_edge_pct": float(w.house_edge * 100),
        "edge_per_roll": exact(w.edge_per_roll), "edge_per_roll_pct": float(w.edge_per_roll * 100),
        "p_win": exact(w.p_win), "p_lose": exact(w.p_lose), "p_push": exact(w.p_push),
        "p_resolve_next_roll": exact(w.p_resolve_next_roll),
        "p_decided_per_roll": exact(w.p_decided_per_roll),
        "expected_rolls": exact(w.expected_rolls), "expected_rolls_float": float(w.expected_rolls),
        "variance": exact(w.variance), "std_dev": w.std_dev,
    }


def _layout_fields(lay: LayoutOdds) -> dict[str, Any]:
    return {
        "house_edge": exact(lay.house_edge), "house_edge_pct": float(lay.house_edge * 100),
        "edge_per_roll": exact(lay.edge_per_roll),
        "edge_per_roll_pct": float(lay.edge_per_roll * 100),
        "expected_rolls": exact(lay.expected_rolls),
        "expected_rolls_float": float(lay.expected_rolls),
        "staked": exact(lay.staked), "variance": exact(lay.variance), "std_dev": lay.std_dev,
    }


def _odds_label(pack: RulePack) -> str:
    if pack.value("odds.limit.mode") == "345x":
        return "3-4-5x"
    return f"{pack.value('odds.limit.multiple')}x"


def pack_report(pack: RulePack) -> list[dict[str, Any]]:
    """One row per wager (the odds once per point), then each line bet with the most odds.

    Standing wagers also carry ``table``: the same wager made on the come-out and followed with
    the table's puck under the pack's working rules (``odds.layout``), per table roll.
    """
    rows: list[dict[str, Any]] = []
    for w in pack_odds(pack):
        row = _wager_row(w)
        other = alternative_commission(pack, w)
        if other is not None:
            row["other_commission"] = {
                "commission": other.commission, "house_edge": exact(other.house_edge),
                "house_edge_pct": float(other.house_edge * 100),
            }
        if row["family"] in STANDING:
            joint = layout_odds(pack, [LayoutBet(w.code)], point=None, table=True)
            row["table"] = {
                "placed": "on the come-out", "expected_rolls": exact(joint.expected_rolls),
                "expected_rolls_float": float(joint.expected_rolls),
                "edge_per_roll": exact(joint.edge_per_roll),
                "edge_per_roll_pct": float(joint.edge_per_roll * 100),
            }
        rows.append(row)
    if pack.offers("odds"):
        for code in ("pass", "dontpass", "come", "dontcome"):
            if not pack.offers(code):
                continue
            combined = line_with_odds(pack, code, max_odds(pack, lay=code.startswith("dont")))
            rows.append({"wager": f"{code}+odds", "name": f"{code} with the most odds",
                         "family": "line+odds", "start": "", "commission": "",
                         "odds": _odds_label(pack), **_layout_fields(combined)})
    return rows


def csv_row(row: dict[str, Any]) -> dict[str, Any]:
    """The flat CSV view of a report row."""
    table = row.get("table", {})
    out = {k: row.get(k, "") for k in CSV_FIELDS}
    out["expected_rolls"] = row.get("expected_rolls", "")
    out["table_expected_rolls"] = table.get("expected_rolls", "")
    out["table_edge_per_roll_pct"] = table.get("edge_per_roll_pct", "")
    return out


__all__ = ["CSV_FIELDS", "csv_row", "exact", "pack_report"]
