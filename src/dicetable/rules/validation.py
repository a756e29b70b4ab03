"""Validate a rule pack: every problem is reported at once, none is fixed silently."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dicetable.core.dice import POINTS
from dicetable.rules.model import Rule, family_of
from dicetable.rules.schema import SPECS, check_value
from dicetable.rules.variants import GAME_RULES, GameRules

Problem = tuple[str, str]

_COMMON_AUTHORITY = ("open_table", "staff", "seat", "chips", "wager", "close_betting", "dice",
                     "record_roll", "settle")

_ALWAYS = (
    "game", "jurisdiction", "limits.default", "payout.unit", "payout.inexact",
    "settlement.order", "settlement.automatic", "wagering.medium", "removal.standing",
    "winning.stays_up", "noroll.automatic", "noroll.effect", "noroll.window",
)

_ON_A_POINT = frozenset({"put", "place", "lose", "buy", "lay"})
"""Families that stand on one of the game's point numbers."""


def required_rules(codes: Iterable[str], game: str | None) -> set[str]:
    """The rules a pack must define to offer ``codes``."""
    codes = list(codes)
    need: set[str] = set(_ALWAYS)
    need |= {f"authority.{a}" for a in _COMMON_AUTHORITY} | {
        "table.positions", "noroll.grounds", "noroll.callers", "dice.max_hours",
        "dice.never_unattended"}
    variant = GAME_RULES.get(game or "")
    if variant is not None:
        need |= variant.required
    for code in codes:
        fam = family_of(code)
        n = "".join(ch for ch in code if ch.isdigit())
        if fam in ("line", "put"):
            need |= {"paytable.line", "removal.line_after_point"}
            if code.startswith("dont"):
                need |= {"line.dontpass.bar", "removal.dont_after_point"}
        elif fam == "odds":
            points = variant.points if variant is not None else POINTS
            need |= {f"paytable.odds.take.{p}" for p in points}
            if any(c.startswith("dont") for c in codes):  # odds are laid behind them
                need |= {f"paytable.odds.lay.{p}" for p in points}
            need |= {"odds.limit.mode", "working.comeout.come_odds"}
            if "dontcome" in codes:
                need.add("working.comeout.dontcome_odds")
        elif fam in ("place", "lose", "buy", "lay"):
            need |= {f"paytable.{fam}.{n}", f"working.comeout.{fam}",
                     "working.player_may_toggle"}
            if fam in ("buy", "lay"):
                need |= {f"commission.{fam}.{k}" for k in
                         ("rate", "when", "rounding", "unit", "minimum", "refund_on_removal")}
        elif fam == "big":
            need |= {"paytable.big", "working.comeout.big"}
        elif fam == "hard":
            need |= {f"paytable.hard.{n}", "working.comeout.hard"}
        elif fam == "field":
            need |= {"field.numbers", "paytable.field.2", "paytable.field.12",
                     "paytable.field.other"}
        elif fam == "hop":
            a, b = code[3:].split("-")
            need.add("paytable.hop.pair" if a == b else "paytable.hop.nonpair")
        elif fam == "double":
            need.add("paytable.double")
        elif fam == "fire":
            need |= {"paytable.fire", "fire.placement", "removal.fire"}
        elif fam == "bonus":
            need |= {f"paytable.{code}", "bonus.placement", "removal.bonus"}
        elif fam == "prop":
            need |= _prop_needs(code)
    return need


def _prop_needs(code: str) -> set[str]:
    horn_parts = {"paytable.two", "paytable.three", "paytable.eleven", "paytable.twelve"}
    if code in ("any7", "anycraps", "two", "three", "eleven", "twelve", "anydouble"):
        return {f"paytable.{code}"}
    if code == "horn":
        return {"paytable.horn.form"} | horn_parts
    if code.startswith("hornhigh"):
        return horn_parts
    if code == "world":
        return horn_parts | {"paytable.any7"}
    if code == "ce":
        return {"paytable.anycraps", "paytable.eleven"}
    return set()


def validate_rules(rules: Mapping[str, Rule]) -> list[tuple[str, str]]:
    """Every problem with a complete set of rules, as (rule id, message)."""
    problems: list[tuple[str, str]] = []
    for rule_id, rule in sorted(rules.items()):
        if rule_id not in SPECS:
            problems.append((rule_id, "unknown rule id"))
            continue
        problem = check_value(rule_id, rule.value)
        if problem:
            problems.append((rule_id, problem))
        if not rule.citation.strip():
            problems.append((rule_id, "every rule names its citation"))

    game = rules["game"].value if "game" in rules else None
    codes = [c for rid, r in rules.items() if rid.startswith("menu.") and isinstance(r.value, list)
             for c in r.value if isinstance(c, str)]
    variant = GAME_RULES.get(str(game))
    for code in codes:
        fam = family_of(code) if code else ""
        if variant is not None and not variant.offers_code(code, fam):
            problems.append((f"menu.{fam}", f"{code!r} is not a {variant.title} wager"))
        elif variant is not None and fam in _ON_A_POINT and \
                int("".join(ch for ch in code if ch.isdigit())) not in variant.points:
            problems.append((f"menu.{fam}", f"{code!r} is not a {variant.title} wager "
                                            "(its number is not a point of the game)"))
    if not codes:
        problems.append(("menu", "the table offers no wagers"))
    problems += _fits_the_game(rules, variant)
    try:
        need = required_rules(codes, game)
    except KeyError:
        need = set()
    for rule_id in sorted(need - set(rules)):
        problems.append((rule_id, "required by the wager menu but not defined"))

    if rules.get("odds.limit.mode") and rules["odds.limit.mode"].value == "flat" \
            and "odds.limit.multiple" not in rules:
        problems.append(("odds.limit.multiple", "a flat odds limit needs its multiple"))
    if "paytable.horn.form" in rules and rules["paytable.horn.form"].value == "single" \
            and "paytable.horn.single" not in rules:
        problems.append(("paytable.horn.single", "a single-bet Horn needs its payout"))
    if "limits.default" in rules and "payout.unit" in rules:
        unit = rules["payout.unit"].value
        limits = rules["limits.default"].value
        if isinstance(unit, int) and isinstance(limits, dict) and isinstance(
                limits.get("unit"), int) and unit > 0 and limits["unit"] % unit:
            problems.append(("payout.unit", f"the betting unit {limits['unit']} must be a "
                                            f"whole number of payout units ({unit})"))
    return problems


def _fits_the_game(rules: Mapping[str, Rule], variant: GameRules | None) -> list[Problem]:
    """Values that name what the game does not have: a family that stays up after a win, a
    seat of reference for offering the dice."""
    if variant is None:
        return []
    out: list[Problem] = []
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
