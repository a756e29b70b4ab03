"""Custody rule packs: what PA and IN require of dice custody, as cited data.

Every rule has a value, a citation and a status, exactly as the game packs do
(``dicetable.rules.model.Rule``), and is read by the same loader
(``dicetable.rules.packfile``). ``custody-pa`` and ``custody-in`` ship with dicetable;
a house pack may change only the stand-ins (``other-jurisdiction``, ``industry-default``).

>>> pa = load_custody_pack("pa")
>>> sorted(r.value for r in pa.keys()[Key.TABLE_GAMES])  # 'assistant-shift-manager+'
['assistant-shift-manager', 'shift-manager', 'table-games-manager']
>>> pa.rule("storage.keys").status, pa.cite("storage.keys")
(<Status.REGULATION: 'regulation'>, '58 Pa. Code § 603a.13(c) [regulation]')
>>> load_custody_pack("in").inches("dice.size.maximum_in")
Decimal('0.775')
>>> derive_custody_pack(pa, "house", {"storage.keys": {}})
Traceback (most recent call last):
...
dicetable.core.errors.RulePackInvalid: rule pack 'house' is invalid (1 problems): storage.keys: ...
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.core.roles import Role
from dicetable.custody.model import CancelMethod, Key, parse_inches
from dicetable.rules.loader import PRESETS as GAME_PRESETS
from dicetable.rules.loader import load_preset
from dicetable.rules.model import Rule, RulePack, Status
from dicetable.rules.packfile import (
    SitePack,
    override_rules,
    pack_file,
    preset_data,
    rule_from,
)

PRESETS = {"pa": "custody-pa", "in": "custody-in"}
"""Shipped custody packs, by jurisdiction."""

Checker = Callable[[Any], str | None]


AND_ABOVE = "+"
"""``pit-boss+`` in a role list: that rank and every rank above it in ``staff.ranks``."""


def _roles(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a non-empty list of roles"
    bad = [r for r in v if not isinstance(r, str)
           or r.removesuffix(AND_ABOVE) not in {x.value for x in Role}]
    return f"unknown roles: {bad}" if bad else None


def _ranks(v: Any) -> str | None:
    problem = _roles(v)
    if problem:
        return problem
    if any(r.endswith(AND_ABOVE) for r in v) or len(set(v)) != len(v):
        return "expected each rank once, lowest first, without '+'"
    return None


def _time_zone(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "expected an IANA time zone such as 'America/New_York'"
    try:
        ZoneInfo(v)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long
        return f"unknown time zone {v!r}"
    return None


def _groups(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a list of role groups (one person from each)"
    for g in v:
        problem = _roles(g)
        if problem:
            return problem
    return None


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "expected true or false"


def _inches(v: Any) -> str | None:
    if not isinstance(v, str):
        return "expected inches as a string such as '0.750' or '1/4'"
    try:
        parse_inches(v)
    except InvalidInput as e:
        return e.message
    return None


def _positive(hi: int) -> Checker:
    def check(v: Any) -> str | None:
        ok = isinstance(v, int) and not isinstance(v, bool) and 0 < v <= hi
        return None if ok else f"expected a whole number from 1 to {hi}"

    return check


def _days(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 365
    return None if ok else "expected a whole number of days from 0 (none) to 365"


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "expected some text"


def _names(v: Any) -> str | None:
    ok = isinstance(v, list) and v and all(isinstance(x, str) and x for x in v)
    return None if ok else "expected a non-empty list of names"


def _keys(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != {k.value for k in Key}:
        return f"expected the roles for each key: {', '.join(k.value for k in Key)}"
    for roles in v.values():
        problem = _roles(roles)
        if problem:
            return problem
    return None


def _methods(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a list of cancellation methods"
    bad = [m for m in v if m not in {x.value for x in CancelMethod}]
    return f"unknown methods: {bad}" if bad else None


SCHEMA: dict[str, Checker] = {
    "jurisdiction": _text,
    "site.time_zone": _time_zone,
    "staff.ranks": _ranks,
    "receipt.roles": _groups,
    "receipt.seal_check": _bool,
    "receipt.open_failed_seals": _bool,
    "receipt.record_manufacturer": _bool,
    "storage.keys": _keys,
    "storage.source_only": _bool,
    "storage.areas": _names,
    "storage.locked": _bool,
    "issue.day_roles": _groups,
    "inspection.required_before_play": _bool,
    "inspection.roles": _roles,
    "inspection.surveillance": _bool,
    "inspection.tools": _names,
    "dice.size.minimum_in": _inches,
    "dice.size.maximum_in": _inches,
    "dice.cube.tolerance_in": _inches,
    "dice.check.logo": _bool,
    "dice.check.serial": _bool,
    "dice.check.flat_faces": _bool,
    "dice.check.square_edges": _bool,
    "dice.check.balanced": _bool,
    "dice.check.no_magnetic_load": _bool,
    "dice.check.opposite_faces": _bool,
    "dice.check.finish": _bool,
    "dice.check.spots": _bool,
    "play.issue_roles": _roles,
    "play.receive_roles": _roles,
    "play.never_unattended": _bool,
    "play.shaker_loader": _groups,
    "removal.roles": _roles,
    "removal.tamper_roles": _roles,
    "removal.tamper_recipient": _text,
    "removal.envelope.signs": _bool,
    "removal.envelope.licensees": _bool,
    "cancellation.required": _bool,
    "cancellation.methods": _methods,
    "cancellation.min_hole_in": _inches,
    "cancellation.surveillance": _bool,
    "cancellation.roles": _roles,
    "logs.pit_manager_roles": _roles,
    "logs.licence_numbers": _bool,
    "inventory.interval_months": _positive(12),
    "inventory.report_to": _text,
    "inventory.roles": _groups,
    "alerts.roles": _roles,
    "transport.notice_days": _days,
    "transport.receipt_proof": _bool,
    "transport.roles": _roles,
    "receipt.delivery_witness": _bool,
}
"""Every custody rule id and the check its value must pass. Every id is required."""


def validate(rules: Mapping[str, Rule]) -> list[tuple[str, str]]:
    """Every problem at once: missing rules, unknown rules, bad values, inconsistent sizes."""
    problems = [(rid, "missing") for rid in SCHEMA if rid not in rules]
    problems += [(rid, "unknown custody rule") for rid in rules if rid not in SCHEMA]
    for rid, rule in rules.items():
        check = SCHEMA.get(rid)
        problem = check(rule.value) if check else None
        if problem:
            problems.append((rid, problem))
    lo, hi = rules.get("dice.size.minimum_in"), rules.get("dice.size.maximum_in")
    if lo and hi and not _inches(lo.value) and not _inches(hi.value) \
            and parse_inches(lo.value) > parse_inches(hi.value):
        problems.append(("dice.size.minimum_in", "is larger than dice.size.maximum_in"))
    ranks = rules.get("staff.ranks")
    if ranks is not None and not _ranks(ranks.value):
        for rid, rule in rules.items():
            unranked = sorted({r for r in _role_values(rule.value)
                               if r.endswith(AND_ABOVE)
                               and r.removesuffix(AND_ABOVE) not in ranks.value})
            if unranked:
                problems.append((rid, f"{', '.join(unranked)}: not a rank in staff.ranks"))
    return problems


def _role_values(value: Any) -> list[str]:
    """Every role string in a rule value (lists, lists of lists, the key map)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [r for item in value for r in _role_values(item)]
    if isinstance(value, dict):
        return [r for item in value.values() for r in _role_values(item)]
    return []


class CustodyPack(SitePack):
    """The custody rules a site runs under, with typed accessors."""

    def inches(self, rule_id: str) -> Decimal:
        return parse_inches(self.value(rule_id))

    def ranks(self) -> tuple[Role, ...]:
        """The supervisory ranks, lowest first (``staff.ranks``)."""
        return tuple(Role(r) for r in self.value("staff.ranks"))

    def expand(self, names: Iterable[str]) -> frozenset[Role]:
        """Roles as a rule lists them: ``assistant-shift-manager+`` is that rank or above."""
        ranks = self.ranks()
        out: set[Role] = set()
        for name in names:
            if name.endswith(AND_ABOVE):
                base = Role(name.removesuffix(AND_ABOVE))
                out.update(ranks[ranks.index(base):])
            else:
                out.add(Role(name))
        return frozenset(out)

    def roles(self, rule_id: str) -> frozenset[Role]:
        return self.expand(self.value(rule_id))

    def groups(self, rule_id: str) -> tuple[frozenset[Role], ...]:
        """Role groups: one distinct person from each must take part."""
        return tuple(self.expand(g) for g in self.value(rule_id))

    def keys(self) -> dict[Key, frozenset[Role]]:
        return {Key(k): self.expand(v) for k, v in self.value("storage.keys").items()}

    @property
    def time_zone(self) -> ZoneInfo:
        """The site's time zone: calendar days and months are counted in it."""
        return ZoneInfo(str(self.value("site.time_zone")))

    @property
    def jurisdiction(self) -> str:
        return str(self.value("jurisdiction"))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name,
                "rules": {rid: rule.to_dict() for rid, rule in sorted(self.rules.items())}}

    @property
    def digest(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


RETIRED = {"inventory.interval_days": "inventory.interval_months",
           "play.max_hours.shaker": "dice.max_hours", "play.max_hours.table": "dice.max_hours"}
"""Rule ids of earlier versions and the rule that replaced them (92 days became 3 months; the
time dice may stay at a table is one rule, the game pack's ``dice.max_hours``, read by the
table and by custody alike: ``dice_limit``)."""


def _retired(overrides: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A house pack that sets a retired rule is refused, naming where the rule went (a stored
    log's pack is upcast instead: ``_upcast``)."""
    out = []
    for rid in sorted(set(overrides) & set(RETIRED)):
        now = RETIRED[rid]
        where = ("the game pack (the table's rules), one value read by the table and by "
                 "custody alike") if now == "dice.max_hours" else "this custody pack"
        out.append((rid, f"retired: set {now} in {where}"))
    return out


def dice_limit(jurisdiction: str, game: str,
               site_packs: Iterable[RulePack] = ()) -> tuple[int, str]:
    """The hours dice may stay at a ``game`` table of a ``jurisdiction`` site, and the rule's
    citation: the game pack's ``dice.max_hours`` (58 Pa. Code 585.3(b)(1) / 668a.3(b)(1) for
    dice in a Props & Hops shaker; stand-ins for Craps), read from the site's own pack of that
    game and jurisdiction (``site_packs``: a house pack sets its own limit), else the shipped
    one, else the shipped pack of that game elsewhere as a stand-in.

    >>> dice_limit("PA", "props-and-hops")
    (24, '58 Pa. Code § 585.3(b)(1); § 668a.3(b)(1) [regulation]')
    >>> dice_limit("IN", "props-and-hops")[1]
    '58 Pa. Code § 585.3(b)(1); § 668a.3(b)(1), standing in for IN [other-jurisdiction]'
    """
    packs = [*site_packs, *(load_preset(name) for name in GAME_PRESETS)]
    same_game = [p for p in packs if p.game == game]
    if not same_game:
        raise InvalidInput(f"no rule pack for the game {game!r}", rule="custody.game")
    here = [p for p in same_game if p.jurisdiction.upper() == jurisdiction.upper()]
    rule = (here or same_game)[0].rule("dice.max_hours")
    if here:
        return int(rule.value), str(rule.cite)
    return int(rule.value), (f"{rule.citation}, standing in for {jurisdiction.upper()} "
                             f"[{Status.OTHER_JURISDICTION.value}]")


def _upcast(raw_rules: dict[str, Any]) -> dict[str, Any]:
    """A pack stored by an earlier version: retired rules dropped, rules added since then
    taken from the shipped pack of its jurisdiction, so an old custody log still replays."""
    if not any(rid in raw_rules for rid in RETIRED) and all(rid in raw_rules for rid in SCHEMA):
        return raw_rules
    juris = raw_rules.get("jurisdiction")
    code = str(juris.get("value", "") if isinstance(juris, dict) else "").lower()
    if code not in PRESETS:
        return raw_rules
    shipped = _preset(PRESETS[code])
    out = {rid: raw for rid, raw in raw_rules.items() if rid not in RETIRED}
    for rid in SCHEMA:
        if rid not in out:
            out[rid] = shipped.rule(rid).to_dict()
    return out


def pack_from_dict(data: Mapping[str, Any]) -> CustodyPack:
    """A complete custody pack from its JSON form (``CustodyPack.to_dict``)."""
    pack_id = str(data.get("id", ""))
    raw_rules = data.get("rules")
    if not pack_id or not isinstance(raw_rules, dict):
        raise InvalidInput("a custody pack has an id and rules", rule="custody.pack")
    raw_rules = _upcast(raw_rules)
    rules: dict[str, Rule] = {}
    problems: list[tuple[str, str]] = []
    for rule_id, raw in raw_rules.items():
        made = rule_from(rule_id, raw, "", None)
        if isinstance(made, str):
            problems.append((rule_id, made))
        else:
            rules[rule_id] = made
    problems += validate(rules)
    if problems:
        raise RulePackInvalid(pack_id, problems)
    return CustodyPack(pack_id, str(data.get("name", pack_id)), rules)


@cache
def _preset(file: str) -> CustodyPack:
    return pack_from_dict(preset_data("dicetable.custody", file, what="custody pack",
                                      known=tuple(PRESETS)))


def derive_custody_pack(base: CustodyPack, pack_id: str, overrides: Mapping[str, Any],
                        name: str | None = None) -> CustodyPack:
    """A house pack: ``base`` with stand-ins changed. Regulation text cannot be changed."""
    retired = _retired(overrides)
    rules, problems = override_rules(base.rules, pack_id,
                                     {k: v for k, v in overrides.items() if k not in RETIRED},
                                     allow_new=False, unknown="unknown custody rule")
    problems += retired + [p for p in validate(rules) if p not in problems]
    if not problems and "staff.ranks" in overrides:
        problems += _ranks_keep_regulation(base, CustodyPack(pack_id, pack_id, rules))
    if problems:
        raise RulePackInvalid(pack_id, problems)
    return CustodyPack(pack_id, name or f"{base.name} (house: {pack_id})", rules)


def _ranks_keep_regulation(base: CustodyPack, house: CustodyPack) -> list[tuple[str, str]]:
    """A house ladder may not change whom a regulation rule admits ("or above" stays put)."""
    problems = []
    for rule in base:
        if rule.status is not Status.REGULATION:
            continue
        names = _role_values(rule.value)
        if any(n.endswith(AND_ABOVE) for n in names) \
                and base.expand(names) != house.expand(names):
            problems.append(("staff.ranks", f"would change who {rule.id} admits "
                                            f"({rule.citation})"))
    return problems


def load_custody_pack(name: str | Path) -> CustodyPack:
    """``pa``, ``in`` (or ``custody-pa``...), or a house pack file ``{"extends": "pa", ...}``."""
    key = str(name)
    if key in PRESETS or key in PRESETS.values():
        return _preset(PRESETS.get(key, key))
    path = Path(key)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL
        is_file = False
    if not is_file:
        raise InvalidInput(f"no custody pack {key!r}; presets: {', '.join(PRESETS)}",
                           rule="custody.pack")
    data = pack_file(path, what="custody pack")
    if str(data.get("extends", "")) not in PRESETS:
        raise InvalidInput(f"a house custody pack extends one of {', '.join(PRESETS)}",
                           rule="custody.pack")
    return derive_custody_pack(_preset(PRESETS[data["extends"]]), str(data.get("id", path.stem)),
                               data.get("overrides", {}), data.get("name"))
