"""A game's rule packs: load the presets shipped with the package, derive house packs from
them, and check each against its game's variant (the rules its game needs, the wagers it has,
its point numbers), which the rules layer below cannot know.

>>> pack = load_pack("pa-craps")
>>> pack.odds("paytable.place.6")
Odds(win=7, stake=6, basis=<OddsBasis.TO: 'to'>)
>>> pack.rule("noroll.callers").status
<Status.REGULATION: 'regulation'>
>>> house = derive_pack(pack, "my-house", {"paytable.field.12": "3 to 1"})
>>> house.value("paytable.field.12"), house.rule("paytable.field.12").source
('3 to 1', 'my-house')
>>> derive_pack(pack, "bad", {"noroll.callers": ["dealer"], "paytable.place.6": "lots"})
Traceback (most recent call last):
...
dicetable.core.errors.RulePackInvalid: rule pack 'bad' is invalid (2 problems): ...
>>> points_of(load_preset("crapless-craps"))
(2, 3, 4, 5, 6, 8, 9, 10, 11, 12)
>>> sorted(compile_pack(pack)["place6"].payouts)
[Fraction(7, 6)]
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from dicetable.core.dice import POINTS
from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.games.catalogue import Variant, known_variant, variants
from dicetable.rules.model import Rule, RulePack, Status, family_of
from dicetable.rules.packfile import override_rules, pack_file, preset_data, rule_from
from dicetable.rules.validation import Problem, on_a_point, validate_rules
from dicetable.wagers import compile as wagers
from dicetable.wagers.compile import CompiledWager

PRESETS = ("pa-craps", "pa-mini-craps", "pa-props-and-hops", "in-craps", "crapless-craps")
"""The rule packs shipped with dicetable."""


def points_of(pack: RulePack) -> tuple[int, ...]:
    """The point numbers of the pack's game (its variant's)."""
    variant = known_variant(str(pack.value("game")))
    return variant.points if variant is not None else POINTS


def compile_pack(pack: RulePack) -> Mapping[str, CompiledWager]:
    """Every wager on the pack's menu, compiled for its game (cached: once a pack)."""
    return wagers.compile_pack(pack, points_of(pack))


def menu_wager(pack: RulePack, code: str) -> CompiledWager:
    """One wager of the pack's menu compiled alone for its game (``KeyError`` when the pack
    does not offer it)."""
    return wagers.menu_wager(pack, code, points_of(pack))


def validate_pack(rules: Mapping[str, Rule]) -> list[Problem]:
    """Every problem with a complete set of rules, as (rule id, message): the rules layer's
    checks with the game's point numbers, and what the game's variant asks of its pack."""
    game = rules["game"].value if "game" in rules else None
    variant = known_variant(str(game))
    if variant is None:
        unknown = [] if game is None else [
            ("game", f"expected one of {', '.join(v.name for v in variants())}")]
        return [*unknown, *validate_rules(rules, POINTS)]
    problems = _fits_the_game(rules, variant)
    return problems + [p for p in validate_rules(rules, variant.points, variant.required_rules)
                       if p not in problems]


def _fits_the_game(rules: Mapping[str, Rule], variant: Variant) -> list[Problem]:
    """Values that name what the game does not have: a wager on its menu, a family that stays
    up after a win, odds multiples for other points, a seat of reference for offering the
    dice."""
    out: list[Problem] = []
    codes = [c for rid, r in rules.items() if rid.startswith("menu.") and isinstance(r.value, list)
             for c in r.value if isinstance(c, str)]
    for code in codes:
        fam = family_of(code) if code else ""
        if not variant.offers_code(code, fam):
            out.append((f"menu.{fam}", f"{code!r} is not a {variant.title} wager"))
        elif on_a_point(fam) and int("".join(ch for ch in code if ch.isdigit())) \
                not in variant.points:
            out.append((f"menu.{fam}", f"{code!r} is not a {variant.title} wager "
                                       "(its number is not a point of the game)"))
    stays = rules.get("winning.stays_up")
    if stays is not None and isinstance(stays.value, list):
        missing = [f for f in stays.value if isinstance(f, str) and not variant.offers(f)]
        if missing:
            out.append(("winning.stays_up", f"{variant.title} has no {', '.join(missing)} "
                                            "wagers"))
    mode = rules.get("odds.limit.mode")
    if mode is not None and mode.value == "345x" and set(variant.points) != set(POINTS):
        out.append(("odds.limit.mode", f"3-4-5x odds name multiples for 4, 5, 6, 8, 9 and 10 "
                                       f"only; {variant.title} states a flat multiple"))
    first = rules.get("shooter.first_offer")
    if first is not None and variant.offer_references \
            and first.value not in variant.offer_references:
        out.append(("shooter.first_offer", f"a {variant.title} table offers the dice first "
                                           f"{' or '.join(sorted(variant.offer_references))}"))
    return out


def _read_preset_file(name: str) -> dict[str, Any]:
    return preset_data("dicetable.rules", name, known=PRESETS)


_rule_from = rule_from  # one rule builder for every pack kind (``dicetable.rules.packfile``)


@cache
def _preset_rules(name: str) -> tuple[str, dict[str, Rule], str | None]:
    data = _read_preset_file(name)
    parent = data.get("extends")
    rules: dict[str, Rule] = dict(_preset_rules(parent)[1]) if parent else {}
    problems: list[tuple[str, str]] = []
    for rule_id, raw in data.get("rules", {}).items():
        made = _rule_from(rule_id, raw, name, None)
        if isinstance(made, str):
            problems.append((rule_id, made))
        else:
            rules[rule_id] = made
    if problems:
        raise RulePackInvalid(name, problems)
    return str(data.get("name", name)), rules, parent


def shipped_pack_title(name: str) -> str | None:
    """The title of a pack shipped with dicetable (the presets and the bases they extend), or
    None for any other name.

    >>> shipped_pack_title("_craps-base")
    'Craps rules common to the PA and IN presets (stand-ins for missing text)'
    """
    try:
        return _preset_rules(name)[0]
    except InvalidInput:
        return None


@cache
def load_preset(name: str) -> RulePack:
    """One of ``PRESETS``, validated."""
    if name.startswith("_") or name not in PRESETS:
        raise InvalidInput(f"no rule pack named {name!r}; presets: {', '.join(PRESETS)}",
                           rule="rules.pack")
    title, rules, parent = _preset_rules(name)
    problems = validate_pack(rules)
    if problems:
        raise RulePackInvalid(name, problems)
    return RulePack(name, title, rules, parent)


def derive_pack(base: RulePack, pack_id: str, overrides: Mapping[str, Any],
                name: str | None = None) -> RulePack:
    """A house pack: ``base`` with some configurable rules changed.

    A rule whose status is ``regulation`` cannot be changed. Every problem is reported at once.
    """
    rules, problems = override_rules(base.rules, pack_id, overrides)
    problems += [p for p in validate_pack(rules) if p not in problems]
    if problems:
        raise RulePackInvalid(pack_id, problems)
    return RulePack(pack_id, name or pack_id, rules, base.id)


def pack_from_data(data: Mapping[str, Any]) -> RulePack:
    """A house pack from its JSON form: ``{"id", "name", "extends", "overrides"}``."""
    problems: list[tuple[str, str]] = []
    pack_id = data.get("id")
    if not isinstance(pack_id, str) or not pack_id:
        problems.append(("id", "a house pack needs an id"))
        pack_id = "(unnamed)"
    base_name = data.get("extends")
    if base_name not in PRESETS:
        problems.append(("extends", f"must name a preset: {', '.join(PRESETS)}"))
    overrides = data.get("overrides", {})
    if not isinstance(overrides, dict):
        problems.append(("overrides", "expected an object of rule id -> value"))
        overrides = {}
    unknown = sorted(set(data) - {"id", "name", "extends", "overrides", "description"})
    problems += [(key, "unknown field in a house pack") for key in unknown]
    if problems:
        if base_name in PRESETS and isinstance(overrides, dict):
            try:
                derive_pack(load_preset(str(base_name)), pack_id, overrides)
            except RulePackInvalid as e:
                problems += e.problems
        raise RulePackInvalid(pack_id, problems)
    return derive_pack(load_preset(str(base_name)), pack_id, overrides,
                       str(data.get("name", pack_id)))


def load_pack(name_or_path: str | Path) -> RulePack:
    """A preset by name, or a house pack from a JSON file."""
    if isinstance(name_or_path, str) and name_or_path in PRESETS:
        return load_preset(name_or_path)
    path = Path(name_or_path)
    if not _exists(path):
        raise InvalidInput(f"no preset or file named {str(name_or_path)!r}; presets: "
                           f"{', '.join(PRESETS)}", rule="rules.pack")
    return pack_from_data(pack_file(path))


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL
        return False


_BY_DIGEST: dict[str, RulePack] = {}


def pack_from_dict(data: Mapping[str, Any], digest: str | None = None) -> RulePack:
    """Rebuild a pack from ``RulePack.to_dict()`` (as stored in a table's first event).

    With ``digest``, the rebuilt pack must match it (the log's rules were not altered), and a
    pack already rebuilt with that digest is reused, so each distinct pack compiles once.
    """
    if digest is not None and digest in _BY_DIGEST:
        return _BY_DIGEST[digest]
    pack = _pack_from_dict(data)
    if digest is not None:
        if pack.digest != digest:
            raise InvalidInput(f"rule pack {pack.id!r} does not match its digest",
                               rule="rules.digest")
        _BY_DIGEST[digest] = pack
    return pack


def _pack_from_dict(data: Mapping[str, Any]) -> RulePack:
    rules = {
        rule_id: Rule(rule_id, raw["value"], raw["citation"], Status(raw["status"]),
                      raw.get("note", ""), raw.get("source", ""))
        for rule_id, raw in data["rules"].items()
    }
    # A pack stored before a rule was written is read as its table ran: the engine reads
    # such a rule with the value every table had then (its default), and the stored pack's
    # digest must not change, so the rule is not added to it.
    problems = [p for p in validate_pack(rules)
                if not (p[0] in WRITTEN_SINCE and p[0] not in rules)]
    if problems:
        raise RulePackInvalid(str(data.get("id")), problems)
    return RulePack(str(data["id"]), str(data.get("name", data["id"])), rules, data.get("base"))


WRITTEN_SINCE = frozenset({"noroll.window"})
"""Rules every pack now defines that a table's stored pack may lack (its log predates them);
the engine reads each with the default that matches how those tables ran."""
