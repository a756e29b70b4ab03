"""A table's rules and payouts as a player reads them: every wager in the order of the layout
with what it pays, its minimum and maximum, any commission, its exact house edge (from the
odds engine) and the rules it is read from.

Served as ``GET /api/tables/{id}/rules-sheet`` and shown by the ``/rules?table=ID`` page.

>>> from dicetable.games.packs import load_preset
>>> sheet = rules_sheet(load_preset("pa-craps"))
>>> place6 = next(w for w in sheet["wagers"] if w["code"] == "place6")
>>> place6["pays"], place6["house_edge"], place6["house_edge_text"]
('7 to 6', '1/66', '1.515%')
>>> sheet["odds"][0].split(": ")[1]
'up to three times the bet on 4 and 10, four times on 5 and 9, five times on 6 and 8.'
>>> next(w for w in sheet["wagers"] if w["code"] == "buy4")["commission"]
'5% of the wager, paid when the bet is made, rounded down to $1.00, at least $1.00'
"""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any

from fastapi import APIRouter, Request

from dicetable.core.money import format_cents
from dicetable.games.paytable import paytable_of
from dicetable.odds.exact import pack_odds
from dicetable.odds.layout import max_odds
from dicetable.rules.model import RulePack, display_name, family_of
from dicetable.server.floor import Floor
from dicetable.server.session_reads import Identify
from dicetable.wagers.compile import ODDS_LAY, ODDS_TAKE

_WORDS = {1: "once", 2: "twice", 3: "three times", 4: "four times", 5: "five times",
          6: "six times", 7: "seven times", 8: "eight times", 9: "nine times", 10: "ten times"}

_STATUS_WORDS = {
    "regulation": "the jurisdiction's regulation",
    "other-jurisdiction": "a house rule modelled on another regulator's rule (configurable)",
    "industry-default": "a house rule, common practice (configurable)",
}


def times(multiple: Fraction) -> str:
    """A multiple in words: ``three times``, ``2 1/2 times``."""
    if multiple.denominator == 1 and int(multiple) in _WORDS:
        return _WORDS[int(multiple)]
    whole, rest = divmod(multiple, 1)
    return f"{int(whole)} {rest} times" if whole else f"{rest} times"


def percent_text(x: Fraction) -> str:
    """An exact fraction as a percentage to three places, rounded half up (no float)."""
    thousandths = (abs(x) * 100_000 + Fraction(1, 2)) // 1
    sign = "-" if x < 0 else ""
    return f"{sign}{thousandths // 1000}.{thousandths % 1000:03d}%"


def _listed(points: list[int]) -> str:
    names = [str(p) for p in points]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _odds_words(pack: RulePack, lay: bool) -> str:
    """The odds allowed behind a bet, in words (``3-4-5x`` as a player hears it)."""
    allowed = max_odds(pack, lay=lay)
    by_multiple: dict[Fraction, list[int]] = {}
    for point, multiple in allowed.items():
        by_multiple.setdefault(multiple, []).append(point)
    side = "Odds laid behind a Don't bet" if lay else "Odds taken behind a line bet"
    if len(by_multiple) == 1:
        return f"{side}: up to {times(next(iter(by_multiple)))} the bet on every point."
    parts = [f"{times(m)} on {_listed(points)}" for m, points in by_multiple.items()]
    parts[0] = parts[0].replace(" on ", " the bet on ", 1)
    return f"{side}: up to {', '.join(parts)}."


def _commission(pack: RulePack, family: str) -> str:
    if family not in ("buy", "lay"):
        return ""
    rule = f"commission.{family}"
    of = "the wager" if family == "buy" else "the win"
    when = ("paid when the bet is made" if pack.value(f"{rule}.when") == "up-front"
            else "taken from the win")
    text = f"{pack.value(f'{rule}.rate')} of {of}, {when}"
    if pack.get(f"{rule}.rounding", "") == "floor-to-unit":
        text += f", rounded down to {format_cents(int(pack.value(f'{rule}.unit')))}"
    minimum = pack.get(f"{rule}.minimum")
    if minimum:
        text += f", at least {format_cents(int(minimum))}"
    return text


def _sources(lines: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: dict[str, dict[str, str]] = {}
    for line in lines:
        seen.setdefault(line["rule"], {"rule": line["rule"], "status": line["status"],
                                       "status_text": _STATUS_WORDS.get(line["status"], ""),
                                       "citation": line["citation"]})
    return list(seen.values())


@functools.lru_cache(maxsize=16)  # the odds engine solves each wager once per pack
def rules_sheet(pack: RulePack) -> dict[str, Any]:
    """The sheet of one pack (see the module's doc)."""
    table = paytable_of(pack)
    edges: dict[str, list[tuple[str, Fraction]]] = {}
    for w in pack_odds(pack):
        edges.setdefault(w.code, []).append((w.start, w.house_edge))
    wagers: list[dict[str, Any]] = []
    for code in pack.menu_in_order:
        codes = [(ODDS_TAKE, "odds"), (ODDS_LAY, "odds:lay")] if code == "odds" \
            else [(code, code)]
        limits, _ = pack.limits(code)
        for engine_code, key in codes:
            if key not in table:
                continue
            pays = table[key]
            edge = [e for _, e in edges.get(engine_code, [])]
            one = edge[0] if len(set(edge)) == 1 else None
            family = "odds" if code == "odds" else family_of(code)
            wagers.append({
                "code": key, "name": "Lay odds" if key == "odds:lay" else (
                    "Odds" if key == "odds" else display_name(code)),
                "family": family, "pays": pays["pays"], "lines": pays["lines"],
                "note": pays["note"],
                "minimum": format_cents(limits.minimum), "maximum": format_cents(limits.maximum),
                "commission": _commission(pack, family),
                "house_edge": f"{one.numerator}/{one.denominator}" if one is not None else "",
                "house_edge_text": percent_text(one) if one is not None else " · ".join(
                    f"{start}: {percent_text(e)}" for start, e in edges.get(engine_code, [])),
                "sources": _sources(pays["lines"]),
            })
    odds = []
    if pack.offers("odds"):
        odds.append(_odds_words(pack, lay=False))
        if any(c.startswith("dont") for c in pack.menu_in_order):
            odds.append(_odds_words(pack, lay=True))
    return {"pack": pack.id, "name": str(pack.get("table.description", pack.id)),
            "jurisdiction": pack.jurisdiction, "wagers": wagers, "odds": odds,
            "edge_note": "The house edge is the average the house keeps of each wager, worked "
                         "out exactly from the paytable (each wager counted from when it is "
                         "made until it is decided)."}


def router(account: Identify) -> APIRouter:
    """The rules sheet's route (mounted by ``create_app``, which gives the session's account)."""
    api = APIRouter(tags=["tables"])

    @api.get("/api/tables/{table_id}/rules-sheet")
    def sheet(table_id: str, request: Request) -> dict[str, Any]:
        """The table's rules and payouts for players: every wager in the layout's order with
        what it pays, its limits, any commission and its exact house edge."""
        floor: Floor = request.app.state.floor
        account(request)
        return {"table": table_id, **rules_sheet(floor.get(table_id).table.pack)}

    return api


__all__ = ["percent_text", "router", "rules_sheet", "times"]
