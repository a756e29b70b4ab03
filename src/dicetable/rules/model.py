"""A rule pack: frozen, validated data where every rule names its authority."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from types import MappingProxyType
from typing import Any

from dicetable.core.citation import Citation, Status
from dicetable.core.errors import IllegalWager
from dicetable.core.money import CommissionRounding, Odds, Rounding, percent
from dicetable.core.roles import Role
from dicetable.rules.vocabulary import CODES, family_of


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", MappingProxyType(dict(self.rules)))
        menu = frozenset(
            code
            for rule_id, rule in self.rules.items()
            if rule_id.startswith("menu.")
            for code in rule.value
        )
        object.__setattr__(self, "_menu", menu)

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
        """``"<citation> [<status>]"`` for error messages and events."""
        rule = self.rules.get(rule_id)
        return str(rule.cite) if rule else ""

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
        """The limits that apply to a wager, and the rule id they come from."""
        family = family_of(code)
        for rule_id in (f"limits.{code}", f"limits.{family}", "limits.default"):
            if rule_id in self.rules:
                v = self.value(rule_id)
                return Limits(v["minimum"], v["maximum"], v["unit"]), rule_id
        raise KeyError("limits.default")  # validation guarantees limits.default exists

    @property
    def payout_rounding(self) -> Rounding:
        return Rounding(self.get("payout.inexact", "refuse"))

    @property
    def payout_unit(self) -> int:
        return int(self.get("payout.unit", 1))

    def commission_rounding(self, kind: str) -> CommissionRounding:
        return CommissionRounding(self.value(f"commission.{kind}.rounding"))

    def roles(self, rule_id: str) -> frozenset[Role]:
        return frozenset(Role(r) for r in self.get(rule_id, []))

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
