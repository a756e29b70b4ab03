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

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dicetable.bank.calendar import gaming_day
from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.core.money import percent
from dicetable.core.roles import Role
from dicetable.rules.model import Rule
from dicetable.rules.packfile import (
    SitePack,
    override_rules,
    pack_file,
    preset_data,
    rule_from,
)

PRESETS = {"pa": "bank-pa", "in": "bank-in"}
AND_ABOVE = "+"
DROP_ITEMS = ("currency", "counter-check", "chips", "coupon")
"""What a drop box may hold, typed (601a.9(c)(3); 68 IAC 1-1-25)."""
ACTIONS = ("count", "observe", "prepare-request", "sign-request", "issue-slip", "carry",
           "receive", "collect-drop", "count-drop")

Checker = Callable[[Any], str | None]
_CLOCK = re.compile(r"\A([01][0-9]|2[0-3]):[0-5][0-9]\Z")


def _roles(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a non-empty list of roles"
    bad = [r for r in v if not isinstance(r, str)
           or r.removesuffix(AND_ABOVE) not in {x.value for x in Role}]
    return f"unknown roles: {bad}" if bad else None


def _groups(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a list of role groups (one signature from each)"
    return next((p for p in (_roles(g) for g in v) if p), None)


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "expected true or false"


def _cents(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10**9
    return None if ok else "expected an amount in cents, 0 or more"


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "expected some text"


def _clock(v: Any) -> str | None:
    return None if isinstance(v, str) and _CLOCK.match(v) else "expected a time HH:MM"


def _clocks(v: Any) -> str | None:
    if not isinstance(v, list) or not v or any(_clock(x) for x in v):
        return "expected a list of times HH:MM"
    return None if len(set(v)) == len(v) else "each shift starts once"


def _zone(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "expected an IANA time zone such as 'America/New_York'"
    try:
        ZoneInfo(v)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {v!r}"
    return None


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
    "jurisdiction": _text,
    "site.time_zone": _zone,
    "gaming_day.start": _clock,
    "shifts.starts": _clocks,
    "staff.ranks": _roles,
    "chips.denominations": _denominations,
    "chips.retired_refused": _bool,
    "inventory.reasons": _strings("cash-exchange", "counter-check", "wager-settlement",
                                  "colour-change", "fill-credit", "vigorish"),
    "inventory.redeem_at_cage_only": _bool,
    "count.counter_roles": _roles,
    "count.observer_roles": _roles,
    "count.closed_table_daily_slip": _bool,
    "count.shift_slips": _bool,
    "discrepancy.notify": _strings("floorperson+", "security", "surveillance", "regulator",
                                   "shift-manager"),
    "discrepancy.written_report_over": _cents,
    "discrepancy.regulator_copy_at": _cents,
    "fill.preparer_roles": _roles,
    "fill.signer_roles": _roles,
    "fill.electronic": _bool,
    "fill.carrier_roles": _roles,
    "fill.surveillance_notice": _bool,
    "fill.same_officer": _bool,
    "credit.signatures": _groups,
    "credit.surveillance_notice": _bool,
    "slips.cashier_roles": _roles,
    "slips.receiver_roles": _roles,
    "slips.serial_sequence": _bool,
    "slips.void_only": _bool,
    "drop.included": _strings(*DROP_ITEMS),
    "drop.team_roles": _roles,
    "drop.team_min": _people,
    "hold.band_percent": _percent,
    "staffing.craps": _counts("dealers", "stickpersons", "boxpersons"),
    "staffing.mini_craps": _counts("dealers", "stickpersons", "boxpersons"),
    "staffing.floor_span": _counts("craps", "craps_with_others", "mini_craps_dealer_only",
                                   "mini_craps_with_stickperson"),
    "duties.distinct": _pairs,
    "report.roles": _roles,
    "win.chip_float_adjustment": _bool,
    "chips.breakdown": _strings_one("largest-first"),
    "ratings.industry.decisions_per_hour": _per_hour,
    "ratings.industry.edge": _rate,
}
"""Every bank rule id and the check its value must pass. Every id is required."""


def validate(rules: Mapping[str, Rule]) -> list[tuple[str, str]]:
    problems = [(rid, "missing") for rid in SCHEMA if rid not in rules]
    problems += [(rid, "unknown bank rule") for rid in rules if rid not in SCHEMA]
    for rid, rule in rules.items():
        check = SCHEMA.get(rid)
        problem = check(rule.value) if check else None
        if problem:
            problems.append((rid, problem))
    return problems


class BankPack(SitePack):
    """The table-bank rules a site runs under."""

    def expand(self, names: Iterable[str]) -> frozenset[Role]:
        ranks = tuple(Role(r) for r in self.value("staff.ranks"))
        out: set[Role] = set()
        for name in names:
            if name.endswith(AND_ABOVE):
                base = Role(name.removesuffix(AND_ABOVE))
                out.update(ranks[ranks.index(base):] if base in ranks else (base,))
            else:
                out.add(Role(name))
        return frozenset(out)

    def roles(self, rule_id: str) -> frozenset[Role]:
        return self.expand(self.value(rule_id))

    def groups(self, rule_id: str) -> tuple[frozenset[Role], ...]:
        return tuple(self.expand(g) for g in self.value(rule_id))

    @property
    def jurisdiction(self) -> str:
        return str(self.value("jurisdiction"))

    @property
    def time_zone(self) -> ZoneInfo:
        return ZoneInfo(str(self.value("site.time_zone")))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name,
                "rules": {rid: rule.to_dict() for rid, rule in sorted(self.rules.items())}}

    @property
    def digest(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def pack_from_dict(data: Mapping[str, Any]) -> BankPack:
    pack_id = str(data.get("id", ""))
    raw_rules = data.get("rules")
    if not pack_id or not isinstance(raw_rules, dict):
        raise InvalidInput("a bank pack has an id and rules", rule="bank.pack")
    rules: dict[str, Rule] = {}
    problems: list[tuple[str, str]] = []
    shipped = _shipped_for(raw_rules)
    if shipped is not None:
        raw_rules = {**{rid: shipped.rules[rid].to_dict() for rid in WRITTEN_SINCE
                        if rid not in raw_rules and rid in shipped.rules}, **raw_rules}
    for rule_id, raw in raw_rules.items():
        made = rule_from(rule_id, raw, "", None)
        if isinstance(made, str):
            problems.append((rule_id, made))
        else:
            rules[rule_id] = made
    problems += validate(rules)
    if problems:
        raise RulePackInvalid(pack_id, problems)
    return BankPack(pack_id, str(data.get("name", pack_id)), rules)


def _shipped_for(raw_rules: Mapping[str, Any]) -> BankPack | None:
    """The shipped pack of a stored pack's jurisdiction, when it lacks a newer rule."""
    if all(rid in raw_rules for rid in WRITTEN_SINCE):
        return None
    raw = raw_rules.get("jurisdiction")
    key = str(raw.get("value", "") if isinstance(raw, dict) else "").lower()
    return _preset(PRESETS[key]) if key in PRESETS else None


@cache
def _preset(file: str) -> BankPack:
    return pack_from_dict(preset_data("dicetable.rules", file, what="bank pack",
                                      known=tuple(PRESETS)))


def derive_bank_pack(base: BankPack, pack_id: str, overrides: Mapping[str, Any],
                     name: str | None = None) -> BankPack:
    """A house pack: ``base`` with stand-ins changed; regulation text cannot be changed."""
    rules, problems = override_rules(base.rules, pack_id, overrides, allow_new=False,
                                     unknown="unknown bank rule")
    problems += [p for p in validate(rules) if p not in problems]
    if problems:
        raise RulePackInvalid(pack_id, problems)
    return BankPack(pack_id, name or f"{base.name} (house: {pack_id})", rules)


def load_bank_pack(name: str | Path) -> BankPack:
    """``pa``, ``in`` (or ``bank-pa``...), or a house pack file ``{"extends": "pa", ...}``."""
    key = str(name).lower() if str(name).lower() in PRESETS else str(name)
    if key in PRESETS or key in PRESETS.values():
        return _preset(PRESETS.get(key, key))
    path = Path(key)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):
        is_file = False
    if not is_file:
        raise InvalidInput(f"no bank pack {key!r}; presets: {', '.join(PRESETS)}",
                           rule="bank.pack")
    data = pack_file(path, what="bank pack")
    if str(data.get("extends", "")) not in PRESETS:
        raise InvalidInput(f"a house bank pack extends one of {', '.join(PRESETS)}",
                           rule="bank.pack")
    return derive_bank_pack(_preset(PRESETS[data["extends"]]), str(data.get("id", path.stem)),
                            data.get("overrides", {}), data.get("name"))


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
