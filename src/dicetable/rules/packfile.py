"""The one rule-pack loader every pack kind shares: game packs (``dicetable.rules.loader``) and
custody packs (``dicetable.custody.rules``) read presets, build rules and derive house packs
here, so a house pack is checked the same way whatever it configures.

A rule is written in full (``{"value", "citation", "status", "note"}``) or, in a house pack's
overrides, as a bare value replacing a configurable rule (its citation then says so). A rule
whose status is ``regulation`` cannot be overridden, and a house pack cannot present its own
rule as regulation text.

>>> base = {"x": Rule("x", 1, "N.J.A.C. 1", Status.OTHER_JURISDICTION)}
>>> rules, problems = override_rules(base, "house", {"x": 2})
>>> rules["x"].value, rules["x"].citation, problems
(2, 'house rule of house, replacing: N.J.A.C. 1', [])
>>> override_rules(base, "liar", {"x": {"value": 3, "status": "regulation"}})[1]
[('x', 'a house pack cannot add rules as regulation text, nor present one as such')]
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.core.textinput import decode_utf8, parse_json
from dicetable.rules.model import Rule, Status

Problems = list[tuple[str, str]]


def preset_data(package: str, name: str, *, what: str = "rule pack",
                known: tuple[str, ...] = ()) -> dict[str, Any]:
    """A pack shipped in ``package``'s ``packs/`` folder, as JSON data."""
    path = resources.files(package) / "packs" / f"{name}.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"no {what} named {name!r}; presets: {', '.join(known)}",
                           rule="rules.pack") from None
    return data


def pack_file(path: Path, *, what: str = "house pack") -> dict[str, Any]:
    """A house pack file's JSON object; unreadable or malformed input is ``InvalidInput``."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InvalidInput(f"cannot read {what} {path}: {e.strerror}", rule="rules.pack") \
            from None
    data = parse_json(decode_utf8(raw, str(path), rule="rules.pack"), str(path),
                      rule="rules.pack")
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: a {what} is a JSON object", rule="rules.pack")
    return data


def rule_from(rule_id: str, raw: Any, source: str, base: Rule | None) -> Rule | str:
    """Build a rule from a full definition or a bare value; a string is a problem."""
    if isinstance(raw, dict) and "value" in raw:
        try:
            status = Status(raw.get("status", base.status.value if base else ""))
        except ValueError:
            return f"status must be one of {', '.join(s.value for s in Status)}"
        citation = raw.get("citation", base.citation if base else "")
        if base is not None and "citation" not in raw:
            citation = f"house rule of {source}, replacing: {base.citation}"
        if not citation:
            return "a rule needs a citation"
        return Rule(rule_id, raw["value"], str(citation), status, str(raw.get("note", "")),
                    str(raw.get("source", source)) if base is None else source)
    if base is None:
        return "a new rule needs value, citation and status"
    return Rule(rule_id, raw, f"house rule of {source}, replacing: {base.citation}",
                base.status, base.note, source)


def override_rules(base: Mapping[str, Rule], pack_id: str, overrides: Mapping[str, Any], *,
                   allow_new: bool = True, unknown: str = "unknown rule"
                   ) -> tuple[dict[str, Rule], Problems]:
    """``base`` with a house pack's overrides, and every problem found (none raised here)."""
    rules = dict(base)
    problems: Problems = []
    for rule_id, raw in overrides.items():
        if not isinstance(rule_id, str) or not rule_id:
            problems.append(("overrides", f"{rule_id!r} is not a rule id"))
            continue
        current = rules.get(rule_id)
        if current is None and not allow_new:
            problems.append((rule_id, unknown))
            continue
        if current is not None and not current.configurable:
            problems.append((rule_id, f"is regulation text ({current.citation}) and cannot be "
                                      "changed by a house pack"))
            continue
        made = rule_from(rule_id, raw, pack_id, current)
        if isinstance(made, str):
            problems.append((rule_id, made))
            continue
        if made.status is Status.REGULATION:
            problems.append((rule_id, "a house pack cannot add rules as regulation text, nor "
                                      "present one as such"))
            continue
        rules[rule_id] = made
    return rules, problems


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
