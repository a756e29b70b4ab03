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

from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.core.roles import Role
from dicetable.custody.model import CancelMethod, Key, parse_inches
from dicetable.games.packs import PRESETS as GAME_PRESETS
from dicetable.games.packs import load_preset
from dicetable.rules import site_pack as site
from dicetable.rules.model import Rule, RulePack, Status
from dicetable.rules.site_pack import AND_ABOVE, Checker, SiteKind, SitePack

PRESETS = {"pa": "custody-pa", "in": "custody-in"}
"""Shipped custody packs, by jurisdiction."""


def _ranks(v: Any) -> str | None:
    problem = site.check_roles(v)
    if problem:
        return problem
    if any(r.endswith(AND_ABOVE) for r in v) or len(set(v)) != len(v):
        return "expected each rank once, lowest first, without '+'"
    return None


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


def _names(v: Any) -> str | None:
    ok = isinstance(v, list) and v and all(isinstance(x, str) and x for x in v)
    return None if ok else "expected a non-empty list of names"


def _keys(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != {k.value for k in Key}:
        return f"expected the roles for each key: {', '.join(k.value for k in Key)}"
    for roles in v.values():
        problem = site.check_roles(roles)
        if problem:
            return problem
    return None


def _methods(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a list of cancellation methods"
    bad = [m for m in v if m not in {x.value for x in CancelMethod}]
    return f"unknown methods: {bad}" if bad else None


SCHEMA: dict[str, Checker] = {
    "jurisdiction": site.check_text,
    "site.time_zone": site.check_time_zone,
    "staff.ranks": _ranks,
    "receipt.roles": site.check_groups,
    "receipt.seal_check": site.check_bool,
    "receipt.open_failed_seals": site.check_bool,
    "receipt.record_manufacturer": site.check_bool,
    "storage.keys": _keys,
    "storage.source_only": site.check_bool,
    "storage.areas": _names,
    "storage.locked": site.check_bool,
    "issue.day_roles": site.check_groups,
    "inspection.required_before_play": site.check_bool,
    "inspection.roles": site.check_roles,
    "inspection.surveillance": site.check_bool,
    "inspection.tools": _names,
    "dice.size.minimum_in": _inches,
    "dice.size.maximum_in": _inches,
    "dice.cube.tolerance_in": _inches,
    "dice.check.logo": site.check_bool,
    "dice.check.serial": site.check_bool,
    "dice.check.flat_faces": site.check_bool,
    "dice.check.square_edges": site.check_bool,
    "dice.check.balanced": site.check_bool,
    "dice.check.no_magnetic_load": site.check_bool,
    "dice.check.opposite_faces": site.check_bool,
    "dice.check.finish": site.check_bool,
    "dice.check.spots": site.check_bool,
    "play.issue_roles": site.check_roles,
    "play.receive_roles": site.check_roles,
    "play.never_unattended": site.check_bool,
    "play.shaker_loader": site.check_groups,
    "removal.roles": site.check_roles,
    "removal.tamper_roles": site.check_roles,
    "removal.tamper_recipient": site.check_text,
    "removal.envelope.signs": site.check_bool,
    "removal.envelope.licensees": site.check_bool,
    "cancellation.required": site.check_bool,
    "cancellation.methods": _methods,
    "cancellation.min_hole_in": _inches,
    "cancellation.surveillance": site.check_bool,
    "cancellation.roles": site.check_roles,
    "logs.pit_manager_roles": site.check_roles,
    "logs.licence_numbers": site.check_bool,
    "inventory.interval_months": _positive(12),
    "inventory.report_to": site.check_text,
    "inventory.roles": site.check_groups,
    "alerts.roles": site.check_roles,
    "transport.notice_days": _days,
    "transport.receipt_proof": site.check_bool,
    "transport.roles": site.check_roles,
    "receipt.delivery_witness": site.check_bool,
}
"""Every custody rule id and the check its value must pass. Every id is required."""


def _consistent(rules: Mapping[str, Rule]) -> list[tuple[str, str]]:
    """Sizes that contradict each other, ``RANK+`` naming no rank of the ladder."""
    problems = []
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

    def keys(self) -> dict[Key, frozenset[Role]]:
        return {Key(k): self.expand(v) for k, v in self.value("storage.keys").items()}


KIND = SiteKind("custody", "dicetable.custody", PRESETS, SCHEMA, CustodyPack, _consistent)
validate = KIND.validate
"""Every problem at once: missing rules, unknown rules, bad values, inconsistent sizes."""


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
    shipped = KIND.shipped_for(raw_rules)
    if shipped is None:
        return raw_rules
    out = {rid: raw for rid, raw in raw_rules.items() if rid not in RETIRED}
    for rid in SCHEMA:
        if rid not in out:
            out[rid] = shipped.rule(rid).to_dict()
    return out


def pack_from_dict(data: Mapping[str, Any]) -> CustodyPack:
    """A complete custody pack from its JSON form (``CustodyPack.to_dict``)."""
    return KIND.from_dict(data, _upcast)


def derive_custody_pack(base: CustodyPack, pack_id: str, overrides: Mapping[str, Any],
                        name: str | None = None) -> CustodyPack:
    """A house pack: ``base`` with stand-ins changed. Regulation text cannot be changed."""
    rules, problems = KIND.overridden(
        base, pack_id, {k: v for k, v in overrides.items() if k not in RETIRED})
    problems = _retired(overrides) + problems
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
    return KIND.load(name, derive_custody_pack)
