"""Table-bank rule packs (``rules/packs/bank-pa.json``, ``bank-in.json``): every rule of the
table inventory, counts, fills and credits, the drop and table win, as cited data read by the
same loader as the game and custody packs. A house pack may change only the stand-ins.

>>> pa = load_bank_pack("pa")
>>> rule = pa.rule("discrepancy.written_report_over")
>>> rule.value, rule.status.value
(2500, 'other-jurisdiction')
>>> sorted(r.value for r in pa.roles("fill.preparer_roles"))[:3]
['assistant-shift-manager', 'floorperson', 'pit-boss']
>>> load_bank_pack("in").value("drop.included")
['currency', 'counter-check', 'chips']
>>> derive_bank_pack(pa, "house", {"fill.preparer_roles": ["dealer"]})
Traceback (most recent call last):
...
dicetable.core.errors.RulePackInvalid: rule pack 'house' is invalid (1 problems): ...
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from dicetable.bank.calendar import gaming_day
from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.core.money import percent
from dicetable.rules import site_pack as site
from dicetable.rules.site_pack import Checker, SiteKind, SitePack

PRESETS = {"pa": "bank-pa", "in": "bank-in"}
DROP_ITEMS = ("currency", "counter-check", "chips", "coupon")
"""What a drop box may hold, typed (601a.9(c)(3); 68 IAC 1-1-25)."""
ACTIONS = ("count", "observe", "prepare-request", "sign-request", "issue-slip", "carry",
           "receive", "collect-drop", "count-drop")

_CLOCK = re.compile(r"\A([01][0-9]|2[0-3]):[0-5][0-9]\Z")


def _cents(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10**9
    return None if ok else "expected an amount in cents, 0 or more"


def _clock(v: Any) -> str | None:
    return None if isinstance(v, str) and _CLOCK.match(v) else "expected a time HH:MM"


def _clocks(v: Any) -> str | None:
    if not isinstance(v, list) or not v or any(_clock(x) for x in v):
        return "expected a list of times HH:MM"
    return None if len(set(v)) == len(v) else "each shift starts once"


def _denominations(v: Any) -> str | None:
    ok = isinstance(v, list) and v and all(isinstance(d, int) and not isinstance(d, bool)
                                           and d > 0 for d in v)
    return None if ok and len(set(v)) == len(v) else \
        "expected denominations in cents, each once"


def _strings(*allowed: str) -> Checker:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or any(x not in allowed for x in v):
            return f"expected a list of: {', '.join(allowed)}"
        return None
    return check


def _counts(*keys: str) -> Checker:
    def check(v: Any) -> str | None:
        ok = isinstance(v, dict) and set(v) == set(keys) and all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 20 for n in v.values())
        return None if ok else f"expected whole numbers for {', '.join(keys)}"
    return check


def _pairs(v: Any) -> str | None:
    ok = isinstance(v, list) and all(isinstance(p, list) and len(p) == 2
                                     and all(a in ACTIONS for a in p) for p in v)
    return None if ok else f"expected pairs of actions from: {', '.join(ACTIONS)}"


def _people(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10
    return None if ok else "expected 1 to 10 people"


def _percent(v: Any) -> str | None:
    return None if v in (90, 95, 99) else "expected 90, 95 or 99"


def _strings_one(*allowed: str) -> Checker:
    def check(v: Any) -> str | None:
        return None if v in allowed else f"expected one of: {', '.join(allowed)}"
    return check


def _per_hour(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10_000
    return None if ok else "expected a whole number of decisions an hour, 1 to 10,000"


def _rate(v: Any) -> str | None:
    try:
        rate = percent(str(v))
    except InvalidInput:
        return "expected a rate such as 1.41% or 7/495"
    return None if 0 <= rate < 1 else "expected a rate from 0 to 1"


WRITTEN_SINCE = ("chips.breakdown", "ratings.industry.decisions_per_hour",
                 "ratings.industry.edge")
"""Rules added after banks were first stored: a stored pack without them takes the
jurisdiction's shipped rule (its citation and status with it)."""


SCHEMA: dict[str, Checker] = {
    "jurisdiction": site.check_text,
    "site.time_zone": site.check_time_zone,
    "gaming_day.start": _clock,
    "shifts.starts": _clocks,
    "staff.ranks": site.check_roles,
    "chips.denominations": _denominations,
    "chips.retired_refused": site.check_bool,
    "inventory.reasons": _strings("cash-exchange", "counter-check", "wager-settlement",
                                  "colour-change", "fill-credit", "vigorish"),
    "inventory.redeem_at_cage_only": site.check_bool,
    "count.counter_roles": site.check_roles,
    "count.observer_roles": site.check_roles,
    "count.closed_table_daily_slip": site.check_bool,
    "count.shift_slips": site.check_bool,
    "discrepancy.notify": _strings("floorperson+", "security", "surveillance", "regulator",
                                   "shift-manager"),
    "discrepancy.written_report_over": _cents,
    "discrepancy.regulator_copy_at": _cents,
    "fill.preparer_roles": site.check_roles,
    "fill.signer_roles": site.check_roles,
    "fill.electronic": site.check_bool,
    "fill.carrier_roles": site.check_roles,
    "fill.surveillance_notice": site.check_bool,
    "fill.same_officer": site.check_bool,
    "credit.signatures": site.check_groups,
    "credit.surveillance_notice": site.check_bool,
    "slips.cashier_roles": site.check_roles,
    "slips.receiver_roles": site.check_roles,
    "slips.serial_sequence": site.check_bool,
    "slips.void_only": site.check_bool,
    "drop.included": _strings(*DROP_ITEMS),
    "drop.team_roles": site.check_roles,
    "drop.team_min": _people,
    "hold.band_percent": _percent,
    "staffing.craps": _counts("dealers", "stickpersons", "boxpersons"),
    "staffing.mini_craps": _counts("dealers", "stickpersons", "boxpersons"),
    "staffing.floor_span": _counts("craps", "craps_with_others", "mini_craps_dealer_only",
                                   "mini_craps_with_stickperson"),
    "duties.distinct": _pairs,
    "report.roles": site.check_roles,
    "win.chip_float_adjustment": site.check_bool,
    "chips.breakdown": _strings_one("largest-first"),
    "ratings.industry.decisions_per_hour": _per_hour,
    "ratings.industry.edge": _rate,
}
"""Every bank rule id and the check its value must pass. Every id is required."""


class BankPack(SitePack):
    """The table-bank rules a site runs under."""


KIND = SiteKind("bank", "dicetable.rules", PRESETS, SCHEMA, BankPack)
validate = KIND.validate


def pack_from_dict(data: Mapping[str, Any]) -> BankPack:
    return KIND.from_dict(data, upcast=_with_newer_rules)


def _with_newer_rules(raw_rules: dict[str, Any]) -> dict[str, Any]:
    """A stored pack that predates a rule of ``WRITTEN_SINCE`` takes its jurisdiction's
    shipped rule."""
    if all(rid in raw_rules for rid in WRITTEN_SINCE):
        return raw_rules
    shipped = KIND.shipped_for(raw_rules)
    if shipped is None:
        return raw_rules
    return {**{rid: shipped.rules[rid].to_dict() for rid in WRITTEN_SINCE
               if rid not in raw_rules and rid in shipped.rules}, **raw_rules}


def derive_bank_pack(base: BankPack, pack_id: str, overrides: Mapping[str, Any],
                     name: str | None = None) -> BankPack:
    """A house pack: ``base`` with stand-ins changed; regulation text cannot be changed."""
    rules, problems = KIND.overridden(base, pack_id, overrides)
    if problems:
        raise RulePackInvalid(pack_id, problems)
    return BankPack(pack_id, name or f"{base.name} (house: {pack_id})", rules)


def load_bank_pack(name: str | Path) -> BankPack:
    """``pa``, ``in`` (or ``bank-pa``...), or a house pack file ``{"extends": "pa", ...}``."""
    lower = str(name).lower()
    return KIND.load(lower if lower in PRESETS else name, derive_bank_pack)


def site_gaming_day(jurisdiction: str, at: datetime) -> str:
    """The gaming day ``at`` falls in at a site of ``jurisdiction``: its bank pack's time zone
    and gaming-day start (PA's when none is shipped for it). The dice room and the pit's
    books count the same day.

    >>> from datetime import UTC
    >>> site_gaming_day("PA", datetime(2026, 1, 2, 4, 58, tzinfo=UTC))  # 23:58 EST
    '2026-01-01'
    """
    key = jurisdiction.lower()
    pack = load_bank_pack(key if key in PRESETS else "pa")
    return gaming_day(at, pack.time_zone, str(pack.value("gaming_day.start")))
