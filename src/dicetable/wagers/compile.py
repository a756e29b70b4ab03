"""Compile every wager on a pack's menu to its table, once.

>>> from dicetable.rules.loader import load_preset
>>> menu = compile_pack(load_preset("pa-craps"))
>>> place6 = menu["place6"]
>>> from dicetable.core.dice import Roll
>>> place6.step(0, Roll(3, 3))
Step(outcome=<Outcome.WIN: 1>, payout=Fraction(7, 6), next_state=0)
>>> menu["pass"].step(0, Roll(2, 2)).next_state == menu["pass"].state_index("point 4")
True
>>> menu["horn"].step(0, Roll(1, 1)).payout   # a quarter at 30 to 1, three quarters lost
Fraction(27, 4)

A wager compiled to a table: (wager state, roll) -> what happens to it.

The live engine, the exact-odds engine and the simulator all read these tables
(DESIGN.md lesson 7), so what a mathematician computes is what the table pays.
"""

from __future__ import annotations

import functools
import json
from collections import deque
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from fractions import Fraction
from functools import cache
from typing import Any, cast

from dicetable.core.dice import ALL_ROLLS, POINTS, Roll
from dicetable.core.money import Odds
from dicetable.rules.model import RulePack, display_name, family_of
from dicetable.rules.variants import points_of

LEAVES = -1
"""``next_state`` of a step after which the stake is no longer on the layout."""

class Outcome(IntEnum):
    """What one roll does to one wager."""

    STAYS = 0
    """Not decided. The wager may progress internally (a point set, a number made)."""
    WIN = 1
    """Decided in the player's favour; ``payout`` is the net win per unit staked."""
    LOSE = 2
    """Decided against the player. ``payout`` is -1, or above -1 when part is returned."""
    PUSH = 3
    """Decided as a standoff: the stake is returned, nothing won or lost."""
    MOVES = 4
    """Not decided; the wager travels to a number on the layout (come and don't come)."""


@dataclass(frozen=True, slots=True)
class Step:
    outcome: Outcome
    payout: Fraction
    """Net result per unit staked: > 0 won, 0 returned, < 0 lost (-1 the whole stake)."""
    next_state: int
    """State after the roll, or ``LEAVES``. A win that keeps its state 'stays up'."""

    @property
    def decided(self) -> bool:
        return self.outcome in (Outcome.WIN, Outcome.LOSE, Outcome.PUSH)

    @property
    def stays_up(self) -> bool:
        """A decided wager whose stake stays on the layout (a winning place bet)."""
        return self.decided and self.next_state != LEAVES


@dataclass(frozen=True)
class CompiledWager:
    """One wager's behaviour under one rule pack."""

    code: str
    name: str
    family: str
    states: tuple[str, ...]
    steps: tuple[tuple[Step, ...], ...]
    """``steps[state][roll.index]``."""
    start: Mapping[int | None, int]
    """Table point (None on the come-out) -> the state a new wager starts in.

    A point missing here means the wager cannot be made in that phase.
    """
    payout_rules: tuple[str, ...]
    """The rule ids its payouts are read from, for citations."""
    parts: int = 1
    """Equal parts the stake is split into (Horn 4, Horn High and World 5, C&E 2)."""
    one_roll: bool = False
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)
    _from: dict[int, frozenset[Fraction]] = field(init=False, repr=False, compare=False)
    """``payouts_from``, worked out once per state (it walks every step it can reach)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {name: i for i, name in enumerate(self.states)})
        object.__setattr__(self, "_from", {})
        assert len(self.steps) == len(self.states)
        assert all(len(row) == 36 for row in self.steps)

    def step(self, state: int, roll: Roll) -> Step:
        return self.steps[state][roll.index]

    def state_index(self, name: str) -> int:
        return self._index[name]

    def placeable(self, point: int | None) -> bool:
        return point in self.start

    @functools.cached_property  # asked on every amount check; the table never changes
    def payouts(self) -> frozenset[Fraction]:
        """Every net payout this wager can make on a win."""
        return frozenset(s.payout for row in self.steps for s in row if s.outcome is Outcome.WIN)

    def payouts_from(self, state: int) -> frozenset[Fraction]:
        """The net payouts a wager standing in ``state`` can still make on a win.

        Odds on the 4 are paid at 2 to 1 only; checking them against 6 to 5 (the price on
        the 5) would refuse amounts the 4 pays exactly.
        """
        known = self._from.get(state)
        if known is None:  # asked on every amount check; the wager never changes
            known = self._from[state] = self._payouts_from(state)
        return known

    def _payouts_from(self, state: int) -> frozenset[Fraction]:
        seen, todo, out = {state}, [state], set()
        while todo:
            for step in self.steps[todo.pop()]:
                if step.outcome is Outcome.WIN:
                    out.add(step.payout)
                if step.next_state != LEAVES and step.next_state not in seen:
                    seen.add(step.next_state)
                    todo.append(step.next_state)
        return frozenset(out)


ODDS_TAKE = "odds:take"
ODDS_LAY = "odds:lay"
LOSE_ALL = Fraction(-1)
ZERO = Fraction(0)


def _decided(net: Fraction, stays: int = LEAVES) -> Step:
    if net > 0:
        return Step(Outcome.WIN, net, stays)
    if net == 0:
        return Step(Outcome.PUSH, ZERO, LEAVES)
    return Step(Outcome.LOSE, net, LEAVES)


def _stay(state: int) -> Step:
    return Step(Outcome.STAYS, ZERO, state)


class _Builder:
    """Shared helpers for one pack."""

    def __init__(self, pack: RulePack) -> None:
        self.pack = pack
        self.stays_up = frozenset(pack.get("winning.stays_up", []))
        self.points = points_of(pack)

    def net(self, rule_id: str) -> Fraction:
        return self.pack.net(rule_id)

    def standing(self, code: str, win_on: Callable[[Roll], bool], lose_on: Callable[[Roll], bool],
                 payout_rule: str) -> CompiledWager:
        """A one-state multi-roll wager (place, buy, lay, big, hardway)."""
        net = self.net(payout_rule)
        stays = 0 if family_of(code) in self.stays_up else LEAVES
        row = tuple(
            _decided(net, stays) if win_on(r) else _decided(LOSE_ALL) if lose_on(r) else _stay(0)
            for r in ALL_ROLLS
        )
        return CompiledWager(code, display_name(code), family_of(code), ("up",), (row,),
                             dict.fromkeys((None, *self.points), 0), (payout_rule,))

    def one_roll(self, code: str, net_of: Callable[[Roll], Fraction],
                 payout_rules: tuple[str, ...], parts: int = 1) -> CompiledWager:
        row = tuple(_decided(net_of(r)) for r in ALL_ROLLS)
        return CompiledWager(code, display_name(code), family_of(code), ("up",), (row,),
                             dict.fromkeys((None, *self.points), 0), payout_rules, parts,
                             one_roll=True)


def _line(b: _Builder, code: str) -> CompiledWager:
    """Pass/Come and Don't Pass/Don't Come: a come-out (or come box) state, then a point.

    The game's points (``points_of``) travel; of 7 and 11 those that are not points win on the
    come-out, of 2, 3 and 12 those that are not points lose (Crapless Craps: only 7 wins).
    """
    points = b.points
    dont = code.startswith("dont")
    come = code.endswith("come")
    win = b.net("paytable.line")
    bar = int(b.pack.value("line.dontpass.bar")) if dont else 0  # a Don't bet's push
    first = "come box" if come else "come-out"
    states = (first, *[f"on {n}" if come else f"point {n}" for n in points])
    travel = Outcome.MOVES if come else Outcome.STAYS
    box_row: list[Step] = []
    for r in ALL_ROLLS:
        t = r.total
        if t in points:
            box_row.append(Step(travel, ZERO, 1 + points.index(t)))
        elif t in (7, 11):
            box_row.append(_decided(LOSE_ALL if dont else win))
        elif dont and t == bar:
            box_row.append(_decided(ZERO))
        else:  # 2, 3, 12 (craps)
            box_row.append(_decided(win if dont else LOSE_ALL))
    rows: list[tuple[Step, ...]] = [tuple(box_row)]
    for i, n in enumerate(points):
        state = 1 + i
        rows.append(tuple(
            _decided(LOSE_ALL if dont else win) if r.total == n
            else _decided(win if dont else LOSE_ALL) if r.total == 7
            else _stay(state)
            for r in ALL_ROLLS
        ))
    start: dict[int | None, int] = {None: 0}
    if come:
        start = dict.fromkeys(points, 0)
    return CompiledWager(code, display_name(code), "line", states, tuple(rows), start,
                         ("paytable.line", "line.dontpass.bar"))


def _put(b: _Builder, n: int) -> CompiledWager:
    win = b.net("paytable.line")
    row = tuple(_decided(win) if r.total == n else _decided(LOSE_ALL) if r.total == 7 else _stay(0)
                for r in ALL_ROLLS)
    return CompiledWager(f"put{n}", display_name(f"put{n}"), "put", (f"on {n}",), (row,),
                         dict.fromkeys(POINTS, 0), ("paytable.line",))


def _odds(b: _Builder, lay: bool) -> CompiledWager:
    """Odds behind a line bet: one state per point, decided with its base bet."""
    side = "lay" if lay else "take"
    rows = []
    for i, n in enumerate(b.points):
        net = b.net(f"paytable.odds.{side}.{n}")
        rows.append(tuple(
            _decided(LOSE_ALL if lay else net) if r.total == n
            else _decided(net if lay else LOSE_ALL) if r.total == 7
            else _stay(i)
            for r in ALL_ROLLS
        ))
    code = ODDS_LAY if lay else ODDS_TAKE
    return CompiledWager(code, "Odds laid" if lay else "Odds taken", "odds",
                         tuple(f"on {n}" for n in b.points), tuple(rows), {},
                         tuple(f"paytable.odds.{side}.{n}" for n in b.points))


def _horn_payouts(b: _Builder) -> dict[int, Fraction]:
    return {2: b.net("paytable.two"), 3: b.net("paytable.three"),
            11: b.net("paytable.eleven"), 12: b.net("paytable.twelve")}


def _split(parts: dict[int, int], pays: dict[int, Fraction]) -> Callable[[Roll], Fraction]:
    """A bet split in equal units over several totals, each part paid at its own odds."""
    total_units = sum(parts.values())

    def net(r: Roll) -> Fraction:
        units = parts.get(r.total, 0)
        if not units:
            return LOSE_ALL
        return (units * pays[r.total] - (total_units - units)) / total_units

    return net


def _prop(b: _Builder, code: str) -> CompiledWager:
    single: dict[str, tuple[Callable[[Roll], bool], str]] = {
        "any7": (lambda r: r.total == 7, "paytable.any7"),
        "anycraps": (lambda r: r.total in (2, 3, 12), "paytable.anycraps"),
        "two": (lambda r: r.total == 2, "paytable.two"),
        "three": (lambda r: r.total == 3, "paytable.three"),
        "eleven": (lambda r: r.total == 11, "paytable.eleven"),
        "twelve": (lambda r: r.total == 12, "paytable.twelve"),
        "anydouble": (lambda r: r.is_pair, "paytable.anydouble"),
    }
    if code in single:
        wins, rule = single[code]
        net = b.net(rule)
        return b.one_roll(code, lambda r: net if wins(r) else LOSE_ALL, (rule,))
    horn_rules = ("paytable.two", "paytable.three", "paytable.eleven", "paytable.twelve")
    if code == "horn":
        if b.pack.value("paytable.horn.form") == "single":
            net = b.net("paytable.horn.single")
            return b.one_roll(code, lambda r: net if r.total in (2, 3, 11, 12) else LOSE_ALL,
                              ("paytable.horn.form", "paytable.horn.single"))
        return b.one_roll(code, _split({2: 1, 3: 1, 11: 1, 12: 1}, _horn_payouts(b)),
                          ("paytable.horn.form", *horn_rules), parts=4)
    if code.startswith("hornhigh"):
        high = int(code[len("hornhigh"):])
        parts = {2: 1, 3: 1, 11: 1, 12: 1}
        parts[high] = 2
        return b.one_roll(code, _split(parts, _horn_payouts(b)), horn_rules, parts=5)
    if code == "world":
        pays = _horn_payouts(b) | {7: b.net("paytable.any7")}
        return b.one_roll(code, _split({2: 1, 3: 1, 11: 1, 12: 1, 7: 1}, pays),
                          (*horn_rules, "paytable.any7"), parts=5)
    if code == "ce":
        craps, eleven = b.net("paytable.anycraps"), b.net("paytable.eleven")

        def ce(r: Roll) -> Fraction:
            if r.total in (2, 3, 12):
                return (craps - 1) / 2
            if r.total == 11:
                return (eleven - 1) / 2
            return LOSE_ALL

        return b.one_roll(code, ce, ("paytable.anycraps", "paytable.eleven"), parts=2)
    raise KeyError(code)


def _field(b: _Builder) -> CompiledWager:
    numbers = set(b.pack.value("field.numbers"))
    pays = {2: b.net("paytable.field.2"), 12: b.net("paytable.field.12")}
    other = b.net("paytable.field.other")
    return b.one_roll(
        "field",
        lambda r: pays.get(r.total, other) if r.total in numbers else LOSE_ALL,
        ("field.numbers", "paytable.field.2", "paytable.field.12", "paytable.field.other"),
    )


def _hop(b: _Builder, code: str) -> CompiledWager:
    x, y = (int(f) for f in code[3:].split("-"))
    rule = "paytable.hop.pair" if x == y else "paytable.hop.nonpair"
    net = b.net(rule)
    return b.one_roll(code, lambda r: net if r.combination == (x, y) else LOSE_ALL, (rule,))


def _double(b: _Builder, code: str) -> CompiledWager:
    face = int(code[len("double"):]) // 2
    net = b.net("paytable.double")
    return b.one_roll(code, lambda r: net if r == Roll(face, face) else LOSE_ALL,
                      ("paytable.double",))


def _explore(start: Hashable, step: Callable[[Hashable, Roll], tuple[Outcome, Fraction,
                                                                          Hashable | None]],
             name: Callable[[Hashable], str]) -> tuple[tuple[str, ...], tuple[tuple[Step, ...],
                                                                               ...]]:
    """Enumerate the reachable states of a progressive wager (Fire, Bonus) breadth first."""
    index: dict[Hashable, int] = {start: 0}
    order: list[Hashable] = [start]
    queue: deque[Hashable] = deque([start])
    raw: dict[Hashable, list[tuple[Outcome, Fraction, Hashable | None]]] = {}
    while queue:
        s = queue.popleft()
        raw[s] = [step(s, r) for r in ALL_ROLLS]
        for _, _, nxt in raw[s]:
            if nxt is not None and nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
                queue.append(nxt)
    rows = tuple(
        tuple(Step(o, p, LEAVES if nxt is None else index[nxt]) for o, p, nxt in raw[s])
        for s in order
    )
    return tuple(name(s) for s in order), rows


def _fire(b: _Builder) -> CompiledWager:
    """Fire Bet: distinct points made before the seven-out. State = (points made, current point)."""
    pays = {int(k): Odds.parse(v).net for k, v in b.pack.value("paytable.fire").items()}

    def step(s: Hashable, r: Roll) -> tuple[Outcome, Fraction, Hashable | None]:
        made, point = cast(tuple[frozenset[int], int | None], s)
        t = r.total
        if point is None:
            return (Outcome.STAYS, ZERO, (made, t) if t in POINTS else s)
        if t == point:
            now = made | {t}
            if len(now) == len(POINTS) and len(POINTS) in pays:  # all six: paid at once
                return (Outcome.WIN, pays[len(POINTS)], None)
            return (Outcome.STAYS, ZERO, (now, None))
        if t == 7:
            n = len(made)
            return (Outcome.WIN, pays[n], None) if n in pays else (Outcome.LOSE, LOSE_ALL, None)
        return (Outcome.STAYS, ZERO, s)

    def name(s: Hashable) -> str:
        made, point = cast(tuple[frozenset[int], int | None], s)
        made_txt = ",".join(map(str, sorted(made))) or "none"
        return f"made {made_txt}; " + ("come-out" if point is None else f"point {point}")

    states, rows = _explore((frozenset(), None), step, name)
    return CompiledWager("fire", display_name("fire"), "fire", states, rows, {None: 0},
                         ("paytable.fire",))


_BONUS_NUMBERS = {
    "allsmall": frozenset({2, 3, 4, 5, 6}),
    "alltall": frozenset({8, 9, 10, 11, 12}),
    "makeemall": frozenset({2, 3, 4, 5, 6, 8, 9, 10, 11, 12}),
}


def _bonus(b: _Builder, code: str) -> CompiledWager:
    """All Small / All Tall / Make 'Em All: every total of a set before any 7."""
    need = _BONUS_NUMBERS[code]
    net = b.net(f"paytable.{code}")

    def step(s: Hashable, r: Roll) -> tuple[Outcome, Fraction, Hashable | None]:
        got = cast(frozenset[int], s)
        t = r.total
        if t == 7:
            return (Outcome.LOSE, LOSE_ALL, None)
        if t in need and t not in got:
            now = got | {t}
            return (Outcome.WIN, net, None) if now == need else (Outcome.STAYS, ZERO, now)
        return (Outcome.STAYS, ZERO, s)

    def name(s: Hashable) -> str:
        got = cast(frozenset[int], s)
        return "rolled " + (",".join(map(str, sorted(got))) or "none")

    states, rows = _explore(frozenset(), step, name)
    return CompiledWager(code, display_name(code), "bonus", states, rows,
                         dict.fromkeys((None, *b.points), 0), (f"paytable.{code}",))


class _Reads:
    """A pack that notes which rules a wager's compilation reads (every accessor of a
    ``RulePack`` goes through ``value`` or ``get``)."""

    def __init__(self, pack: RulePack) -> None:
        self._pack = pack
        self.read: dict[str, str] = {}

    def get(self, rule_id: str, default: Any = None) -> Any:
        value = self._pack.get(rule_id, default)
        self.read[rule_id] = _fingerprint(self._pack, rule_id)
        return value

    def value(self, rule_id: str) -> Any:
        value = self._pack.value(rule_id)
        self.read[rule_id] = _fingerprint(self._pack, rule_id)
        return value

    def odds(self, rule_id: str) -> Odds:
        return Odds.parse(self.value(rule_id))

    def net(self, rule_id: str) -> Fraction:
        return self.odds(rule_id).net


def _fingerprint(pack: RulePack, rule_id: str) -> str:
    return json.dumps(pack.get(rule_id), sort_keys=True)


_BY_READS: dict[str, list[tuple[tuple[tuple[str, str], ...], CompiledWager]]] = {}
"""code -> (the rule values its compilation read, the result): a pack that differs only in
rules a wager does not read shares that wager's table (house packs, the rule-read tests)."""
_KEEP = 64


def compile_wager(pack: RulePack, code: str) -> CompiledWager:
    """The table of one wager code under ``pack`` (``odds:take``/``odds:lay`` for odds)."""
    known = _BY_READS.setdefault(code, [])
    for reads, compiled in known:
        if all(_fingerprint(pack, rule_id) == value for rule_id, value in reads):
            return compiled
    recorder = _Reads(pack)
    compiled = _compile_wager(recorder, code)  # type: ignore[arg-type]
    known.insert(0, (tuple(sorted(recorder.read.items())), compiled))
    del known[_KEEP:]
    return compiled


def _compile_wager(pack: RulePack, code: str) -> CompiledWager:
    b = _Builder(pack)
    if code in (ODDS_TAKE, ODDS_LAY):
        return _odds(b, code == ODDS_LAY)
    fam = family_of(code)
    n = int("".join(ch for ch in code if ch.isdigit()) or 0)
    if fam == "line":
        return _line(b, code)
    if fam == "put":
        return _put(b, n)
    if fam in ("place", "buy", "lose", "lay"):
        number, seven = (lambda r: r.total == n), (lambda r: r.total == 7)
        # Place and buy win on the number before a 7; lose and lay win on a 7 first.
        win, lose = (number, seven) if fam in ("place", "buy") else (seven, number)
        return b.standing(code, win, lose, f"paytable.{fam}.{n}")
    if fam == "big":
        return b.standing(code, lambda r: r.total == n, lambda r: r.total == 7, "paytable.big")
    if fam == "hard":
        return b.standing(code, lambda r: r.total == n and r.is_pair,
                          lambda r: r.total == 7 or (r.total == n and not r.is_pair),
                          f"paytable.hard.{n}")
    if fam == "field":
        return _field(b)
    if fam == "prop":
        return _prop(b, code)
    if fam == "hop":
        return _hop(b, code)
    if fam == "double":
        return _double(b, code)
    if fam == "fire":
        return _fire(b)
    if fam == "bonus":
        return _bonus(b, code)
    raise KeyError(code)


def menu_codes(pack: RulePack) -> tuple[str, ...]:
    """The codes of the pack's menu as compiled: ``odds`` as ``odds:take`` and ``odds:lay``."""
    codes = tuple(code for code in pack.menu_in_order if code != "odds")
    if not pack.offers("odds"):
        return codes
    # Odds are laid only behind a Don't bet: a game without them has no laid odds to compile.
    laid = (ODDS_LAY,) if any(c.startswith("dont") for c in codes) else ()
    return (*codes, ODDS_TAKE, *laid)


@cache
def _compile(pack: RulePack) -> Mapping[str, CompiledWager]:
    return {code: compile_wager(pack, code) for code in menu_codes(pack)}


def compile_pack(pack: RulePack) -> Mapping[str, CompiledWager]:
    """Every wager on the pack's menu, compiled. Cached: each pack compiles once."""
    return _compile(pack)


def menu_wager(pack: RulePack, code: str) -> CompiledWager:
    """One wager of the pack's menu (``odds:take``/``odds:lay`` where odds are offered),
    compiled alone: what a simulator strategy needs, without compiling the whole menu
    (about 0.3 s a pack). ``KeyError`` when the pack does not offer it."""
    if code not in menu_codes(pack):
        raise KeyError(code)
    return compile_wager(pack, code)


def odds_code_for(base_code: str) -> str:
    """Odds behind Pass, Come or Put are taken; behind Don't Pass or Don't Come, laid."""
    return ODDS_LAY if base_code.startswith("dont") else ODDS_TAKE


def point_state_name(code: str, point: int) -> str:
    """The name of the state a line/odds wager is in when its point is ``point``."""
    if code in (ODDS_TAKE, ODDS_LAY) or code.startswith("put") or code.endswith("come"):
        return f"on {point}"
    return f"point {point}"
