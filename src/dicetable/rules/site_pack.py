"""What the site's packs of other kinds (custody, the table bank) share: the pack with its
accessors, the checks of their common values (roles, role groups, flags, text, the time
zone), and one way to build, check and load them (``SiteKind``). Each kind declares its
schema and adds its own typed accessors.

>>> check_roles(["pit-boss+", "dealer"]), check_roles(["croupier"])
(None, "unknown roles: ['croupier']")
>>> check_time_zone("Mars/Olympus")
"unknown time zone 'Mars/Olympus'"
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Generic, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.core.roles import Role
from dicetable.rules.model import Rule
from dicetable.rules.packfile import Problems, override_rules, pack_file, preset_data, rule_from

Checker = Callable[[Any], str | None]

AND_ABOVE = "+"
"""``pit-boss+`` in a role list: that rank and every rank above it in ``staff.ranks``."""


def check_roles(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a non-empty list of roles"
    bad = [r for r in v if not isinstance(r, str)
           or r.removesuffix(AND_ABOVE) not in {x.value for x in Role}]
    return f"unknown roles: {bad}" if bad else None


def check_groups(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a list of role groups (one person from each)"
    return next((p for p in (check_roles(g) for g in v) if p), None)


def check_bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "expected true or false"


def check_text(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "expected some text"


def check_time_zone(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "expected an IANA time zone such as 'America/New_York'"
    try:
        ZoneInfo(v)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long
        return f"unknown time zone {v!r}"
    return None


@dataclass(frozen=True, eq=False)
class SitePack:
    """A site's pack of one kind of rules (custody, the table bank): its rules by id, read
    through the same accessors; each kind adds its own typed ones."""

    id: str
    name: str
    rules: Mapping[str, Rule]

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", MappingProxyType(dict(self.rules)))

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules.values())

    def rule(self, rule_id: str) -> Rule:
        return self.rules[rule_id]

    def value(self, rule_id: str) -> Any:
        return self.rules[rule_id].value

    def cite(self, rule_id: str) -> str:
        """``"<citation> [<status>]"`` for errors and events."""
        return str(self.rules[rule_id].cite)

    def flag(self, rule_id: str) -> bool:
        return bool(self.value(rule_id))

    def number(self, rule_id: str) -> int:
        return int(self.value(rule_id))

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
                out.update(ranks[ranks.index(base):] if base in ranks else (base,))
            else:
                out.add(Role(name))
        return frozenset(out)

    def roles(self, rule_id: str) -> frozenset[Role]:
        return self.expand(self.value(rule_id))

    def groups(self, rule_id: str) -> tuple[frozenset[Role], ...]:
        """Role groups: one distinct person from each must take part."""
        return tuple(self.expand(g) for g in self.value(rule_id))

    @property
    def jurisdiction(self) -> str:
        return str(self.value("jurisdiction"))

    @property
    def time_zone(self) -> ZoneInfo:
        """The site's time zone: calendar days and months are counted in it."""
        return ZoneInfo(str(self.value("site.time_zone")))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name,
                "rules": {rid: rule.to_dict() for rid, rule in sorted(self.rules.items())}}

    @property
    def digest(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


P = TypeVar("P", bound=SitePack)


def _no_more(rules: Mapping[str, Rule]) -> Problems:
    return []


@dataclass(frozen=True, eq=False)
class SiteKind(Generic[P]):
    """One kind of site pack: its presets, its schema (every id required, none other), what
    else its rules must satisfy, and how a pack of it is made."""

    kind: str
    """``custody`` or ``bank``: names the kind in refusals and its rule (``custody.pack``)."""
    package: str
    """Where its presets ship (``packs/<file>.json``)."""
    presets: Mapping[str, str]
    """Jurisdiction -> preset file."""
    schema: Mapping[str, Checker]
    make: Callable[[str, str, Mapping[str, Rule]], P]
    also: Callable[[Mapping[str, Rule]], Problems] = field(default=_no_more)

    def validate(self, rules: Mapping[str, Rule]) -> Problems:
        """Every problem at once: missing rules, unknown rules, bad values, and the kind's own."""
        problems = [(rid, "missing") for rid in self.schema if rid not in rules]
        problems += [(rid, f"unknown {self.kind} rule") for rid in rules
                     if rid not in self.schema]
        for rid, rule in rules.items():
            check = self.schema.get(rid)
            problem = check(rule.value) if check else None
            if problem:
                problems.append((rid, problem))
        return problems + self.also(rules)

    def from_dict(self, data: Mapping[str, Any],
                  upcast: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> P:
        """A complete pack from its JSON form (``to_dict``)."""
        pack_id = str(data.get("id", ""))
        raw_rules = data.get("rules")
        if not pack_id or not isinstance(raw_rules, dict):
            raise InvalidInput(f"a {self.kind} pack has an id and rules",
                               rule=f"{self.kind}.pack")
        rules: dict[str, Rule] = {}
        problems: Problems = []
        for rule_id, raw in (upcast(raw_rules) if upcast else raw_rules).items():
            made = rule_from(rule_id, raw, "", None)
            if isinstance(made, str):
                problems.append((rule_id, made))
            else:
                rules[rule_id] = made
        problems += self.validate(rules)
        if problems:
            raise RulePackInvalid(pack_id, problems)
        return self.make(pack_id, str(data.get("name", pack_id)), rules)

    def preset(self, file: str) -> P:
        made: P = _preset(self, file)
        return made

    def shipped_for(self, raw_rules: Mapping[str, Any]) -> P | None:
        """The shipped preset of the jurisdiction a stored pack's rules name (None: none is
        shipped for it), which upcasting takes rules added since the pack was stored from."""
        raw = raw_rules.get("jurisdiction")
        key = str(raw.get("value", "") if isinstance(raw, dict) else "").lower()
        return self.preset(self.presets[key]) if key in self.presets else None

    def overridden(self, base: P, pack_id: str, overrides: Mapping[str, Any]
                   ) -> tuple[dict[str, Rule], Problems]:
        """``base``'s rules with stand-ins changed (regulation text cannot be), and every
        problem with them."""
        rules, problems = override_rules(base.rules, pack_id, overrides, allow_new=False,
                                         unknown=f"unknown {self.kind} rule")
        return rules, problems + [p for p in self.validate(rules) if p not in problems]

    def load(self, name: str | Path, derive: Callable[[P, str, Mapping[str, Any], Any], P]
             ) -> P:
        """A preset by jurisdiction (``pa``) or file (``custody-pa``), or a house pack file
        ``{"extends": "pa", ...}`` made by ``derive``."""
        key = str(name)
        if key in self.presets or key in self.presets.values():
            return self.preset(self.presets.get(key, key))
        path = Path(key)
        try:
            is_file = path.is_file()
        except (OSError, ValueError):  # a name too long for the file system, or with a NUL
            is_file = False
        presets = ", ".join(self.presets)
        if not is_file:
            raise InvalidInput(f"no {self.kind} pack {key!r}; presets: {presets}",
                               rule=f"{self.kind}.pack")
        data = pack_file(path, what=f"{self.kind} pack")
        if str(data.get("extends", "")) not in self.presets:
            raise InvalidInput(f"a house {self.kind} pack extends one of {presets}",
                               rule=f"{self.kind}.pack")
        return derive(self.preset(self.presets[data["extends"]]),
                      str(data.get("id", path.stem)), data.get("overrides", {}),
                      data.get("name"))


@cache
def _preset(kind: SiteKind[Any], file: str) -> Any:
    return kind.from_dict(preset_data(kind.package, file, what=f"{kind.kind} pack",
                                      known=tuple(kind.presets)))
