"""Strategies as declarative data (JSON or TOML), checked against a rule pack.

A strategy names a pack, an optional bankroll and session limits, and its bets. Each bet is
kept on the layout whenever its ``when`` allows and the pack lets it be made::

    name = "Iron Cross"
    pack = "pa-craps"
    bankroll = "$500"
    [session]
    max_rolls = 200
    stop_loss = "$300"
    [[bets]]
    wager = "pass"
    amount = "$5"
    odds = 2                 # 2x odds; or "max", or {4 = 3, 5 = 4, 6 = 5, 8 = 5, 9 = 4, 10 = 3}
    [[bets]]
    wager = "place6"
    amount = "$12"
    when = "point-on"        # always (default) | point-on | come-out
    skip_point = true        # not on the number that is the point
    press = {by = "$6", max = "$30"}   # or amounts = ["$12", "$6"] to regress

After each win a bet moves to the next of its amounts (press / regress); after a loss it goes
back to the first. Money is a string (``"$12.50"``) or whole dollars (``12``); never a float.

>>> s = strategy_from_data({"name": "flat", "bets": [{"wager": "pass", "amount": 10,
...                          "odds": 2}]})
>>> s.bets[0].amounts, s.bets[0].odds_multiples[6]
((1000,), Fraction(2, 1))
>>> strategy_from_data({"bets": [{"wager": "place8", "amount": "$5"}]})
Traceback (most recent call last):
...
dicetable.core.errors.IllegalWager: bets[0] (place8): $5.00 on Place 8 to Win cannot be paid ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from dicetable.core.errors import DicetableError, IllegalWager, InvalidInput
from dicetable.core.money import Rounding, format_cents, parse_money, pays_whole
from dicetable.core.textinput import parse_json, parse_toml, read_utf8
from dicetable.games.engine import TOGGLE_FAMILIES, check_amount
from dicetable.games.packs import load_pack, menu_wager, points_of
from dicetable.odds.layout import STANDING, max_odds
from dicetable.rules.model import RulePack, family_of, is_code
from dicetable.sim.session import SessionSpec
from dicetable.wagers.compile import CompiledWager, odds_code_for

WHEN = ("always", "point-on", "come-out")
NUMBERED = frozenset({"place", "buy", "lay", "lose", "big", "hard", "put"})
TRAVELLING = frozenset({"come", "dontcome"})
_BET_KEYS = {"wager", "amount", "amounts", "press", "when", "skip_point", "working", "odds",
             "odds_working", "max_bets", "label"}
_TOP_KEYS = {"name", "description", "pack", "bankroll", "session", "bets"}
_SESSION_KEYS = {"max_rolls", "stop_win", "stop_loss"}


@dataclass(frozen=True)
class BetSpec:
    """One bet of a strategy, checked against the pack."""

    label: str
    wager: str
    amounts: tuple[int, ...]
    """Cents. The first is the opening amount; after each win the next (the last repeats)."""
    when: str = "always"
    skip_point: bool = False
    working: bool | None = None
    """The player's own call on the come-out (``working.player_may_toggle``); None: the pack's."""
    odds_multiples: Mapping[int, Fraction] = field(default_factory=dict)
    """Odds behind a line or put bet, per point, as a multiple of the flat amount."""
    odds_working: bool | None = None
    max_bets: int | None = None
    """Come and don't come: at most this many on the numbers at once."""

    def odds_amount(self, level: int, point: int) -> int:
        amount = self.amounts[level] * self.odds_multiples.get(point, Fraction(0))
        return int(amount)

    @property
    def number(self) -> int | None:
        """The box number a numbered wager stands on (place6 -> 6)."""
        if family_of(self.wager) not in NUMBERED:
            return None
        return int("".join(ch for ch in self.wager if ch.isdigit()))


@dataclass(frozen=True)
class Strategy:
    name: str
    pack: RulePack
    bets: tuple[BetSpec, ...]
    session: SessionSpec = field(default_factory=SessionSpec)


def money(value: Any, what: str) -> int:
    """Cents from ``"$12.50"``, ``"12.5"`` or whole dollars ``12``; floats are refused."""
    if isinstance(value, (bool, float)):
        raise InvalidInput(f"{what}: write money as a string ('$12.50') or whole dollars, "
                           f"not {value!r}", rule="money.format")
    if isinstance(value, int):
        return value * 100
    if isinstance(value, str):
        try:
            return parse_money(value)
        except InvalidInput as e:
            raise InvalidInput(f"{what}: {e.message}", rule=e.rule) from None
    raise InvalidInput(f"{what}: not an amount of money: {value!r}", rule="money.format")


def _problem(where: str, e: DicetableError) -> DicetableError:
    """Prefix an error with the place in the strategy it comes from."""
    return type(e)(f"{where}: {e.message}", rule=e.rule, citation=e.citation)


def _amounts(raw: Mapping[str, Any], where: str) -> tuple[int, ...]:
    given = [k for k in ("amount", "amounts", "press") if k in raw]
    if len(given) != 1 and not ({"amount", "press"} == set(given)):
        raise InvalidInput(f"{where}: give 'amount' (with an optional 'press') or 'amounts'",
                           rule="strategy.amount")
    if "amounts" in raw:
        values = raw["amounts"]
        if not isinstance(values, list) or not values:
            raise InvalidInput(f"{where}: 'amounts' is a non-empty list", rule="strategy.amount")
        return tuple(money(v, f"{where}.amounts") for v in values)
    first = money(raw["amount"], f"{where}.amount")
    press = raw.get("press")
    if press is None:
        return (first,)
    if not isinstance(press, Mapping) or set(press) - {"by", "max"} or "by" not in press:
        raise InvalidInput(f"{where}: press is {{by = money, max = money}}",
                           rule="strategy.press")
    by = money(press["by"], f"{where}.press.by")
    top = money(press.get("max", first + 10 * by), f"{where}.press.max")
    if by <= 0 or top < first:
        raise InvalidInput(f"{where}: press by a positive amount up to a max above the first",
                           rule="strategy.press")
    out = [first]
    while out[-1] + by <= top:
        out.append(out[-1] + by)
    return tuple(out)


def _odds(pack: RulePack, wager: CompiledWager, raw: Any, where: str) -> dict[int, Fraction]:
    if not pack.offers("odds") or wager.family not in ("line", "put"):
        raise IllegalWager(f"{where}: odds cannot stand behind {wager.name}", rule="wagers.odds",
                           citation=pack.cite("menu.odds"))
    lay = wager.code.startswith("dont")
    limit = max_odds(pack, lay=lay)
    if raw == "max":
        return limit
    if isinstance(raw, str) and raw.endswith("x"):
        raw = raw[:-1]
    try:
        if isinstance(raw, Mapping):
            multiples = {int(k): Fraction(str(v)) for k, v in raw.items()}
        else:
            multiples = dict.fromkeys(points_of(pack), Fraction(str(raw)))
    except (ValueError, ZeroDivisionError):
        raise InvalidInput(f"{where}: odds are a multiple ('2', '2x', 'max') or one per point",
                           rule="strategy.odds") from None
    rule = "odds.limit.mode" if pack.value("odds.limit.mode") == "345x" else "odds.limit.multiple"
    for point, m in multiples.items():
        if point not in limit or m < 0:
            raise InvalidInput(f"{where}: odds on {point}?", rule="strategy.odds")
        if m > limit[point]:
            raise IllegalWager(f"{where}: {m}x odds on {point} is over this table's "
                               f"{limit[point]}x", rule=rule, citation=pack.cite(rule))
    return multiples


def _bet(pack: RulePack, raw: Any, index: int) -> BetSpec:
    where = f"bets[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{where}: a bet is a table of fields", rule="strategy.bets")
    unknown = sorted(set(raw) - _BET_KEYS)
    if unknown:
        raise InvalidInput(f"{where}: unknown field(s) {', '.join(unknown)}",
                           rule="strategy.bets")
    code = raw.get("wager")
    if not isinstance(code, str) or not is_code(code) or code == "odds":
        raise InvalidInput(f"{where}: 'wager' is a wager code (pass, place6, hard8, hop2-3...); "
                           "odds go with their line bet", rule="strategy.wager")
    where = f"{where} ({code})"
    try:
        pack.require_offered(code)
        wager = menu_wager(pack, code)
        amounts = _amounts(raw, where)
        for amount in amounts:
            check_amount(pack, wager, amount, code)
        when = raw.get("when", "always")
        if when not in WHEN:
            raise InvalidInput(f"'when' is one of {', '.join(WHEN)}", rule="strategy.when")
        skip = bool(raw.get("skip_point", False))
        if skip and family_of(code) not in NUMBERED:
            raise InvalidInput("skip_point is for bets on a box number", rule="strategy.when")
        if skip and pack.value("removal.standing") != "between-rolls":
            raise IllegalWager("skip_point takes the bet down, and this table locks it",
                               rule="removal.standing", citation=pack.cite("removal.standing"))
        if wager.family in ("fire", "bonus") and when != "always":
            rule = f"{wager.family}.placement"
            raise IllegalWager(f"{wager.name} is made when {pack.value(rule)} allows it: "
                               "leave 'when' out", rule=rule, citation=pack.cite(rule))
        if code in TRAVELLING and len(amounts) > 1:
            raise InvalidInput("come and don't come bets are flat: one amount",
                               rule="strategy.amount")
        working = raw.get("working")
        for key, fams in (("working", TOGGLE_FAMILIES), ("odds_working", {"line", "put"})):
            value = raw.get(key)
            if value is None:
                continue
            if not isinstance(value, bool):
                raise InvalidInput(f"'{key}' is true or false", rule="strategy.working")
            if wager.family not in fams or not pack.flag("working.player_may_toggle"):
                raise IllegalWager(f"{wager.name} cannot be called on or off",
                                   rule="working.player_may_toggle",
                                   citation=pack.cite("working.player_may_toggle"))
        multiples: dict[int, Fraction] = {}
        if raw.get("odds") is not None:
            multiples = _odds(pack, wager, raw["odds"], where)
            odds_table = menu_wager(pack, odds_code_for(code))
            for amount in amounts:
                for point, m in multiples.items():
                    odds_amount = amount * m
                    if odds_amount.denominator != 1:
                        raise IllegalWager(f"{m}x odds on {format_cents(amount)} is not a "
                                           "whole number of cents", rule="odds.limit.multiple")
                    if odds_amount:
                        _check_odds(pack, odds_table, int(odds_amount), point)
        max_bets = raw.get("max_bets")
        if max_bets is not None and (code not in TRAVELLING or not isinstance(max_bets, int)
                                     or max_bets < 1):
            raise InvalidInput("max_bets (a count) is for come and don't come bets",
                               rule="strategy.max_bets")
    except DicetableError as e:
        if e.message.startswith(where):
            raise
        raise _problem(where, e) from None
    label = raw.get("label", code)
    return BetSpec(str(label), code, amounts, when, skip, working, multiples,
                   raw.get("odds_working"), max_bets)


def _check_odds(pack: RulePack, odds_table: CompiledWager, amount: int, point: int) -> None:
    limits, rule = pack.limits("odds")
    if amount % limits.unit or amount < limits.minimum:
        raise IllegalWager(f"odds of {format_cents(amount)} on {point}: the odds are at least "
                           f"{format_cents(limits.minimum)} in {format_cents(limits.unit)} units",
                           rule=rule, citation=pack.cite(rule))
    net = odds_table.steps[odds_table.state_index(f"on {point}")]
    wins = {st.payout for st in net if st.payout > 0}
    if pack.payout_rounding is Rounding.REFUSE:
        for w in wins:
            if not pays_whole(amount, w, pack.payout_unit):
                raise IllegalWager(
                    f"odds of {format_cents(amount)} on {point} cannot be paid at "
                    f"{w.numerator} to {w.denominator} in {format_cents(pack.payout_unit)} units",
                    rule="payout.inexact", citation=pack.cite("payout.inexact"))


def strategy_from_data(data: Mapping[str, Any], base: Path | None = None,
                       pack: RulePack | None = None) -> Strategy:
    """A strategy from its parsed JSON/TOML form (``base``: where a pack path is relative to)."""
    if not isinstance(data, Mapping):
        raise InvalidInput("a strategy is a table of fields", rule="strategy")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise InvalidInput(f"unknown field(s) {', '.join(unknown)}", rule="strategy")
    if pack is None:
        name = str(data.get("pack", "pa-craps"))
        path = base / name if base is not None and name.endswith(".json") else name
        pack = load_pack(path if isinstance(path, Path) else name)
    session_raw = data.get("session", {})
    if not isinstance(session_raw, Mapping) or set(session_raw) - _SESSION_KEYS:
        raise InvalidInput(f"session has {', '.join(sorted(_SESSION_KEYS))}",
                           rule="strategy.session")
    max_rolls = session_raw.get("max_rolls")
    if max_rolls is not None and (not isinstance(max_rolls, int) or max_rolls < 1):
        raise InvalidInput("session.max_rolls is a positive whole number",
                           rule="strategy.session")
    opt = {k: money(session_raw[k], f"session.{k}") for k in ("stop_win", "stop_loss")
           if session_raw.get(k) is not None}
    bankroll = money(data["bankroll"], "bankroll") if data.get("bankroll") is not None else None
    session = SessionSpec(bankroll, max_rolls, opt.get("stop_win"), opt.get("stop_loss"))
    bets_raw = data.get("bets")
    if not isinstance(bets_raw, Sequence) or isinstance(bets_raw, str) or not bets_raw:
        raise InvalidInput("a strategy has a non-empty list of bets", rule="strategy.bets")
    bets = tuple(_bet(pack, raw, i) for i, raw in enumerate(bets_raw))
    labels = [b.label for b in bets]
    if len(set(labels)) != len(labels):
        raise InvalidInput("each bet needs its own label (add label = '...')",
                           rule="strategy.bets")
    return Strategy(str(data.get("name", "strategy")), pack, bets, session)


def load_strategy(path: str | Path) -> Strategy:
    """A strategy from a ``.json`` or ``.toml`` file."""
    p = Path(path)
    text = read_utf8(p, rule="strategy", what="strategy")
    data = parse_toml(text, str(p), rule="strategy") if p.suffix == ".toml" else \
        parse_json(text, str(p), rule="strategy")
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{p}: a strategy is an object of settings", rule="strategy")
    return strategy_from_data(data, p.parent)


__all__ = ["STANDING", "BetSpec", "SessionSpec", "Strategy", "check_amount", "load_strategy",
           "money", "strategy_from_data"]
