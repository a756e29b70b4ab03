"""A rule pack: frozen, validated data where every rule names its authority.

The names of every wager the system knows, grouped into families.

Rule packs choose which families a table offers; ``dicetable.wagers`` gives each code its meaning.
A code round-trips through scripts and the API: ``place6``, ``hard8``, ``hop2-3``.

>>> family_of("place6"), family_of("hop2-3"), family_of("double4")
('place', 'hop', 'double')
>>> display_name("lose4"), display_name("double4"), display_name("hop1-2")
('Place 4 to Lose', 'Four the Hardway', 'Hop 1-2')
>>> len([c for c in CODES if family_of(c) == "hop"])
21

Where a rule comes from, and how much weight it carries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from functools import cached_property
from types import MappingProxyType
from typing import Any

from dicetable.core.dice import COMBINATIONS, POINTS
from dicetable.core.errors import IllegalWager
from dicetable.core.money import CommissionRounding, Odds, Rounding, percent
from dicetable.core.roles import Role


class Status(StrEnum):
    """The authority behind a rule (DESIGN.md, 'Rules whose text is missing')."""

    REGULATION = "regulation"
    """Pennsylvania or Indiana regulation text held in ``spec/regulations.md``."""

    OTHER_JURISDICTION = "other-jurisdiction"
    """Another regulator's rule standing in for PA/IN text we lack.

    See ``spec/model-regulations.md``.
    """

    INDUSTRY_DEFAULT = "industry-default"
    """Common practice (``spec/regulations.md`` Appendix A); no regulator's text behind it."""

    @property
    def configurable(self) -> bool:
        """Only stand-ins may be changed by an operator; regulation text may not.

        >>> Status.REGULATION.configurable, Status.INDUSTRY_DEFAULT.configurable
        (False, True)
        """
        return self is not Status.REGULATION


@dataclass(frozen=True, slots=True)
class Citation:
    """A rule's source text reference and its status."""

    text: str
    status: Status

    def __str__(self) -> str:
        return f"{self.text} [{self.status}]"


_NUMBER_WORDS = {2: "Two", 4: "Four", 6: "Six", 8: "Eight", 10: "Ten", 12: "Twelve"}


def _build() -> dict[str, tuple[str, str]]:
    names: dict[str, tuple[str, str]] = {}

    def add(code: str, family: str, name: str) -> None:
        names[code] = (family, name)

    add("pass", "line", "Pass Line")
    add("dontpass", "line", "Don't Pass Bar")
    add("come", "line", "Come")
    add("dontcome", "line", "Don't Come Bar")
    add("odds", "odds", "Odds")
    # Place and Buy on 2, 3, 11 and 12 are Crapless Craps' numbers (every total but 7 a point).
    for n in (2, 3):
        add(f"place{n}", "place", f"Place {n} to Win")
        add(f"buy{n}", "buy", f"Buy {n}")
    for n in POINTS:
        add(f"put{n}", "put", f"Put {n}")
        add(f"place{n}", "place", f"Place {n} to Win")
        add(f"lose{n}", "lose", f"Place {n} to Lose")
        add(f"buy{n}", "buy", f"Buy {n}")
        add(f"lay{n}", "lay", f"Lay {n}")
    for n in (11, 12):
        add(f"place{n}", "place", f"Place {n} to Win")
        add(f"buy{n}", "buy", f"Buy {n}")
    add("big6", "big", "Big 6")
    add("big8", "big", "Big 8")
    add("field", "field", "Field")
    for n in (4, 6, 8, 10):
        add(f"hard{n}", "hard", f"Hard {n}")
    add("any7", "prop", "Any Seven")
    add("anycraps", "prop", "Any Craps")
    add("two", "prop", "Two (Aces)")
    add("three", "prop", "Three (Ace-Deuce)")
    add("eleven", "prop", "Eleven (Yo)")
    add("twelve", "prop", "Twelve (Boxcars)")
    add("horn", "prop", "Horn")
    for n in (2, 3, 11, 12):
        add(f"hornhigh{n}", "prop", f"Horn High {n}")
    add("world", "prop", "World (Whirl)")
    add("ce", "prop", "C & E")
    for a, b in COMBINATIONS:
        add(f"hop{a}-{b}", "hop", f"Hop {a}-{b}")
    add("fire", "fire", "Fire Bet")
    add("allsmall", "bonus", "All Small")
    add("alltall", "bonus", "All Tall")
    add("makeemall", "bonus", "Make 'Em All")
    # Props & Hops: the Double Wagers of 58 Pa. Code 668a.2(d) and the one-roll menu.
    for n in (2, 4, 6, 8, 10, 12):
        add(f"double{n}", "double", f"{_NUMBER_WORDS[n]} the Hardway")
    add("anydouble", "prop", "Any Double")
    return names


_NAMES = _build()

CODES: tuple[str, ...] = tuple(_NAMES)
"""Every wager code, in layout order."""

FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(fam for fam, _ in _NAMES.values()))
"""Every wager family, in layout order."""

def is_code(code: str) -> bool:
    return code in _NAMES


def family_of(code: str) -> str:
    return _NAMES[code][0]


def display_name(code: str) -> str:
    return _NAMES[code][1]


def codes_of(family: str) -> tuple[str, ...]:
    return tuple(c for c, (fam, _) in _NAMES.items() if fam == family)


ONE_ROLL_FAMILIES = frozenset({"field", "prop", "hop", "double"})
"""Families decided by the very next roll."""

MULTI_ROLL_FAMILIES = frozenset(
    {"line", "odds", "put", "place", "lose", "buy", "lay", "big", "hard", "fire", "bonus"}
)


THROW_FACTS: dict[str, str] = {
    "die-off-table": "one or both dice went off the table",
    "die-on-die": "one die came to rest on top of the other",
    "more-than-two-dice": "more than two dice were thrown",
    "die-not-flat": "a die did not come to rest flat",
    "die-on-chips": "a die came to rest on or against chips on the layout",
    "die-on-bank": "a die came to rest on the Craps bank in front of the boxperson",
    "die-in-bowl": "a die came to rest in the dice bowl",
    "die-in-cup": "a die came to rest in the dice cup in front of the stickperson or dealer",
    "die-on-rail": "a die came to rest on a rail",
    "not-released-together": "the dice did not leave the shooter's hand together",
    "far-end-not-reached": "a die did not strike the end of the table farthest from the shooter",
    "no-good-faith-attempt": "the shooter made no good-faith attempt to hit the backboard",
    "wrong-direction": "the dice were thrown in the wrong direction",
    "slid": "the dice were slid and did not roll or tumble",
    "thrown-by-non-shooter": "a patron other than the shooter threw the dice",
    "top-face-indeterminable": "the uppermost face of a die cannot be determined",
    "die-fell-out": "a die fell out of the shaker as it was uncovered",
    "cocked-on-chips": "a die came to rest tilted on chips, not flat on the layout "
                       "(68 IAC 10-4-4(c)(9): 'do not fall flat ... but rest on the chips')",
}
"""Physical facts a recorded throw may carry (spec/regulations.md §§1.2, 2.3, 4.2)."""

FACT_IMPLIES: dict[str, tuple[str, ...]] = {
    "cocked-on-chips": ("die-on-chips", "die-not-flat"),
}
"""Facts that say several things at once: one fact in a script, every ground it supports."""

def expand_facts(facts: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``facts`` with what each implies, in order, each once.

    >>> expand_facts(("cocked-on-chips",))
    ('cocked-on-chips', 'die-on-chips', 'die-not-flat')
    """
    out: list[str] = []
    for fact in facts:
        for f in (fact, *FACT_IMPLIES.get(fact, ())):
            if f not in out:
                out.append(f)
    return tuple(out)

NO_ROLL_GROUNDS: dict[str, str] = THROW_FACTS | {
    "cheating": "a cheating, crooked or fixed device or technique was used",
    "improper-throw": "the authorised employee considers the throw improper",
    "no-line-bet": "the shooter has not placed a pass or don't pass bet",
    "no-good-faith-and-short": "no good-faith attempt to hit the backboard, and the dice "
                               "travelled less than half the table's length",
}
"""Every ground on which a roll may be declared void, in any pack."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: its id, value, the text it comes from and how binding that text is."""

    id: str
    value: Any
    citation: str
    status: Status
    note: str = ""
    source: str = ""
    """The pack that set this value (a preset, or the house pack that overrode it)."""

    @property
    def configurable(self) -> bool:
        return self.status.configurable

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "value": self.value,
            "citation": self.citation,
            "status": self.status.value,
            "configurable": self.configurable,
        }
        if self.note:
            out["note"] = self.note
        if self.source:
            out["source"] = self.source
        return out

    @property
    def cite(self) -> Citation:
        return Citation(self.citation, self.status)


@dataclass(frozen=True)
class Limits:
    minimum: int
    maximum: int
    unit: int


@dataclass(frozen=True, eq=False)
class RulePack:
    """The rules a table runs under. Build one with ``dicetable.rules.load_pack``.

    Packs compare by identity (each is compiled once); compare ``digest`` for equal rules.
    """

    id: str
    name: str
    rules: Mapping[str, Rule]
    base: str | None = None
    _menu: frozenset[str] = field(init=False, repr=False, compare=False)
    _roles: dict[str, frozenset[Role]] = field(init=False, repr=False, compare=False)
    _cites: dict[str, str] = field(init=False, repr=False, compare=False)
    _limits: dict[str, tuple[Limits, str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", MappingProxyType(dict(self.rules)))
        menu = frozenset(
            code
            for rule_id, rule in self.rules.items()
            if rule_id.startswith("menu.")
            for code in rule.value
        )
        object.__setattr__(self, "_menu", menu)
        object.__setattr__(self, "_roles", {})
        object.__setattr__(self, "_cites", {})
        object.__setattr__(self, "_limits", {})

    # -- generic access --------------------------------------------------------------------
    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules.values())

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self.rules

    def rule(self, rule_id: str) -> Rule:
        return self.rules[rule_id]

    def value(self, rule_id: str) -> Any:
        return self.rules[rule_id].value

    def get(self, rule_id: str, default: Any = None) -> Any:
        rule = self.rules.get(rule_id)
        return default if rule is None else rule.value

    def cite(self, rule_id: str) -> str:
        """``"<citation> [<status>]"`` for error messages and events (each written once per
        pack: every decision cites its rules)."""
        found = self._cites.get(rule_id)
        if found is None:
            rule = self.rules.get(rule_id)
            found = self._cites[rule_id] = str(rule.cite) if rule else ""
        return found

    # -- typed accessors ---------------------------------------------------------------------
    @property
    def game(self) -> str:
        return str(self.value("game"))

    @property
    def jurisdiction(self) -> str:
        return str(self.value("jurisdiction"))

    def odds(self, rule_id: str) -> Odds:
        return Odds.parse(self.value(rule_id))

    def net(self, rule_id: str) -> Fraction:
        return self.odds(rule_id).net

    def flag(self, rule_id: str, default: bool = False) -> bool:
        return bool(self.get(rule_id, default))

    def rate(self, rule_id: str) -> Fraction:
        return percent(self.value(rule_id))

    @property
    def menu(self) -> frozenset[str]:
        """Every wager code this table offers."""
        return self._menu

    @property
    def menu_in_order(self) -> tuple[str, ...]:
        return tuple(c for c in CODES if c in self._menu)

    def offers(self, code: str) -> bool:
        return code in self._menu

    def require_offered(self, code: str) -> None:
        if code not in self._menu:
            raise self.not_offered(code)

    def not_offered(self, code: str) -> IllegalWager:
        """The refusal of a wager that is not on this table's menu."""
        family = family_of(code) if code in CODES else None
        rule_id = f"menu.{family}" if family else "menu"
        return IllegalWager(f"{code!r} is not on this table's wager menu",
                            rule=rule_id, citation=self.cite(rule_id))

    def limits(self, code: str) -> tuple[Limits, str]:
        """The limits that apply to a wager, and the rule id they come from (found once per
        pack and code: every wager checks them)."""
        found = self._limits.get(code)
        if found is not None:
            return found
        family = family_of(code)
        for rule_id in (f"limits.{code}", f"limits.{family}", "limits.default"):
            if rule_id in self.rules:
                v = self.value(rule_id)
                found = self._limits[code] = Limits(v["minimum"], v["maximum"], v["unit"]), \
                    rule_id
                return found
        raise KeyError("limits.default")  # validation guarantees limits.default exists

    @cached_property
    def payout_rounding(self) -> Rounding:
        return Rounding(self.get("payout.inexact", "refuse"))

    @property
    def payout_unit(self) -> int:
        return int(self.get("payout.unit", 1))

    def commission_rounding(self, kind: str) -> CommissionRounding:
        return CommissionRounding(self.value(f"commission.{kind}.rounding"))

    def roles(self, rule_id: str) -> frozenset[Role]:
        found = self._roles.get(rule_id)
        if found is None:  # a pack's rules never change: each list read once
            found = self._roles[rule_id] = frozenset(Role(r) for r in self.get(rule_id, []))
        return found

    # -- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "base": self.base,
            "rules": {rule_id: rule.to_dict() for rule_id, rule in sorted(self.rules.items())},
        }

    @cached_property
    def digest(self) -> str:
        """SHA-256 of the pack's rules: which exact rules a table ran under."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()
