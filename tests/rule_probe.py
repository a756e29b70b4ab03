# ruff: noqa: B023  (each lambda runs at once, inside the iteration that made it)
"""A behaviour fingerprint of a rule pack: what a table under it does, seen from outside.

Two packs that differ in a rule the code reads give different fingerprints; the test in
``test_every_rule_is_read.py`` derives, for every configurable rule of every preset, a pack
with another legal value and compares.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Iterator
from fractions import Fraction
from itertools import zip_longest
from typing import Any

from dicetable.core.clock import FixedClock
from dicetable.core.dice import ALL_ROLLS, Roll
from dicetable.core.errors import DicetableError
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.engine import commission_for
from dicetable.games.packs import compile_pack
from dicetable.rules.model import NO_ROLL_GROUNDS, THROW_FACTS, Rule, RulePack, Status
from dicetable.rules.schema import SPECS
from dicetable.table import Table
from dicetable.table import commands as t
from dicetable.table.catalogue import CATALOGUE

STAFF = {"fl": Role.FLOORPERSON, "pb": Role.PIT_BOSS, "sp": Role.STICKPERSON,
         "bx": Role.BOXPERSON, "dl": Role.DEALER}


def _compiled(pack: RulePack) -> list[Any]:
    out: list[Any] = []
    for code, w in sorted(compile_pack(pack).items()):
        out.append((code, w))  # compiled wagers compare by their tables (shared when equal)
        with contextlib.suppress(Exception):
            limit = "odds" if w.family == "odds" else code
            out.append(("limits", code, pack.limits(limit)))
        if w.family in ("buy", "lay"):
            out.append(("commission", code, [commission_for(pack, w, a)
                                              for a in (2_00, 10_00, 25_00, 39_00, 100_00)]))
    return out


def _authority(pack: RulePack) -> list[Any]:
    return [(e.name, sorted(pack.roles(e.authority)) if e.authority in pack else None)
            for e in CATALOGUE if e.authority is not None]


def _record(table: Table, out: list[Any], action: Any) -> None:
    try:
        events = action()
    except ValueError as e:
        out.append(("refused", type(e).__name__, getattr(e, "rule", ""), str(e),
                    getattr(e, "citation", "")))
        return
    for ev in events or ():
        out.append({f.name: getattr(ev, f.name) for f in dataclasses.fields(ev)
                    if f.name not in ("at", "table", "seq")})


def _session(pack: RulePack, mode: str, seed: int, steps: int) -> Iterator[Any]:
    """A seeded session: people try everything, refusals included (its records as they are
    made: a comparison stops at the first that differs)."""
    rng = random.Random(seed)
    clock = FixedClock()
    out: list[Any] = []
    staff = dict(STAFF) if mode == "live" else {}
    table = Table.open(pack, "probe", mode=mode, clock=clock, actor="fl",
                       role=Role.FLOORPERSON, staff={k: v for k, v in staff.items()
                                                     if k != "fl"})
    players = ("ann", "ben", "cat")
    for seat, p in enumerate(players, start=1):
        _record(table, out, lambda p=p, seat=seat: table.execute(
            g.JoinTable(actor=p, role=Role.PLAYER, player=p, seat=seat)))
        _record(table, out, lambda p=p: table.execute(
            g.BuyChips(actor="dl" if mode == "live" else "dealer", role=Role.DEALER,
                       player=p, amount=1_000_00)))
    menu = sorted(pack.menu)
    serials = ("S1", "S2", "S3", "S4", "S5", "S6")
    roles = list(STAFF.items()) if mode == "live" else [("dealer", Role.DEALER),
                                                        ("stick", Role.STICKPERSON)]
    for _ in range(steps):
        p = rng.choice(players)
        who, role = rng.choice(roles)
        bets = sorted(table.state.bets)
        bet = rng.choice(bets) if bets else "b1"
        roll = rng.choice(ALL_ROLLS)
        choice = rng.randrange(22)
        actions: list[Any] = [
            lambda: table.execute(g.PlaceBet(actor=p, role=Role.PLAYER, player=p,
                                             wager=rng.choice(menu),
                                             amount=rng.choice((1_00, 3_00, 5_00, 6_00, 10_00,
                                                                25_00, 30_00)),
                                             working=rng.choice((None, True, False)),
                                             medium=rng.choice(("chips", "chips", "cash",
                                                                "plaques")))),
            lambda: table.execute(g.PlaceBet(actor=p, role=Role.PLAYER, player=p,
                                             wager="odds", base=bet,
                                             amount=rng.choice((5_00, 10_00, 30_00, 60_00)))),
            lambda: table.execute(g.ChangeBet(actor=p, role=Role.PLAYER, bet=bet,
                                              amount=rng.choice((5_00, 15_00, 50_00)))),
            lambda: table.execute(g.RemoveBet(actor=p, role=Role.PLAYER, bet=bet)),
            lambda: table.execute(g.SetWorking(actor=p, role=Role.PLAYER, bet=bet,
                                               working=rng.random() < 0.5)),
            lambda: table.execute(g.RecordRoll(actor=who, role=role, roll=roll,
                                               facts=tuple(rng.sample(sorted(THROW_FACTS),
                                                                      rng.choice((0, 0, 1)))),
                                               distance=Fraction(rng.randrange(5), 4),
                                               thrower=rng.choice((None, p)))),
            lambda: table.execute(g.RecordRoll(actor=who, role=role, roll=roll)),
            lambda: table.execute(g.RecordRoll(actor=who, role=role, roll=roll)),
            lambda: table.execute(g.CallNoRoll(actor=who, role=role, grounds=(
                rng.choice(sorted(NO_ROLL_GROUNDS)),))),
            lambda: table.settle(actor=who, role=role),
            lambda: table.settle(actor=who, role=role),
            lambda: table.execute(g.CloseBetting(actor=who, role=role)),
            lambda: table.execute(g.LeaveTable(actor=p, role=Role.PLAYER, player=p)),
            lambda: table.execute(g.JoinTable(actor=p, role=Role.PLAYER, player=p,
                                              seat=rng.choice((None, 1, 2, 3, 9)))),
            lambda: table.execute(g.CashOut(actor=who, role=role, player=p, amount=10_00)),
            lambda: table.execute(t.BringDice(actor=who, role=role,
                                              serials=tuple(rng.sample(serials,
                                                                       rng.choice((2, 5)))),
                                              witness=rng.choice((None, "dl")))),
            lambda: table.execute(t.OfferDice(actor=who, role=role, patron=p,
                                              serials=tuple(table.procedure.bowl))),
            lambda: table.execute(t.SelectDice(actor=p, role=Role.PLAYER,
                                               serials=tuple(table.procedure.offered[:2]))),
            lambda: table.execute(t.RemoveShooter(actor=who, role=role, ground=rng.choice(
                ("continual-invalid-rolls", "unreasonable-delay", "violation")))),
            lambda: table.execute(rng.choice((t.RelinquishDice(actor=p, role=Role.PLAYER),
                                              t.OverturnNoRoll(actor=who, role=role),
                                              t.RelieveStaff(actor="fl", role=Role.FLOORPERSON,
                                                             person=who, staff_role=role),
                                              t.RemoveDice(actor=who, role=role,
                                                           serials=serials[:2])))),
            lambda: _shaker(table, rng, p, who, role),
            lambda: (clock.advance(hours=rng.choice((1, 7, 13))),
                     table.execute(t.Tick(actor="table", role=Role.SYSTEM)))[1],
        ]
        _record(table, out, actions[choice])
        yield from out
        out.clear()
    yield ("balances", table.balances, table.state.house)


def _shaker(table: Table, rng: random.Random, p: str, who: str, role: Role) -> Any:
    step = rng.choice((t.ShakeShaker(actor=who, role=role),
                       t.OfferShaker(actor=who, role=role, player=p),
                       t.PlayerShake(actor=p, role=Role.PLAYER, times=rng.choice((1, 2, 3))),
                       t.ReturnShaker(actor=p, role=Role.PLAYER),
                       t.UncoverShaker(actor=who, role=role),
                       t.RemoveLid(actor=p, role=Role.PLAYER)))
    return table.execute(step)


_ROLLS = ("2-2", "3-3", "4-4", "1-1", "6-6", "5-6", "2-3", "4-6", "3-4", "1-3", "5-5", "3-4",
          "2-4", "4-5", "1-2", "3-4")


def _scenario(pack: RulePack, mode: str) -> Iterator[Any]:
    """A fixed walk over the game: every wager tried at many amounts between rolls, then
    called on and off, reduced, raised and taken down; odds behind every line bet; a no roll;
    the shooter's and the shaker's steps; players at every position; the clock run on. Its
    records as they are made, roll by roll."""
    clock = FixedClock()
    out: list[Any] = []
    staff = {k: v for k, v in STAFF.items() if k != "fl"} if mode == "live" else {}
    table = Table.open(pack, "probe", mode=mode, clock=clock, actor="fl",
                       role=Role.FLOORPERSON, staff=staff)
    for seat in range(1, 32, 5):
        _record(table, out, lambda seat=seat: table.execute(g.JoinTable(
            actor=f"p{seat}", role=Role.PLAYER, player=f"p{seat}", seat=seat)))
    for p in ("ann", "ben"):
        _record(table, out, lambda p=p: table.execute(
            g.JoinTable(actor=p, role=Role.PLAYER, player=p, seat=None if mode == "bare"
                        else {"ann": 2, "ben": 3}[p])))
        _record(table, out, lambda p=p: table.execute(g.BuyChips(
            actor="dl" if mode == "live" else "dealer", role=Role.DEALER, player=p,
            amount=100_000_00)))
    if mode == "live":
        for cmd_ in (t.BringDice(actor="bx", role=Role.BOXPERSON, serials=("S1", "S2", "S3",
                                                                          "S4", "S5")),
                     t.BringDice(actor="fl", role=Role.FLOORPERSON, serials=("S1", "S2", "S3",
                                                                            "S4", "S5")),
                     t.BringDice(actor="fl", role=Role.FLOORPERSON, serials=("S1", "S2"),
                                 witness="dl")):
            _record(table, out, lambda c=cmd_: table.execute(c))
    menu = sorted(pack.menu - {"odds"})
    for n, faces in enumerate(_ROLLS):
        p = ("ann", "ben")[n % 2]
        if mode == "live":
            _record(table, out, lambda: table.execute(t.ShakeShaker(actor="dl",
                                                                    role=Role.DEALER)))
            for who in ("ann", "ben"):
                _record(table, out, lambda who=who: table.execute(t.OfferDice(
                    actor="sp", role=Role.STICKPERSON, patron=who,
                    serials=tuple(table.procedure.bowl))))
                _record(table, out, lambda who=who: table.execute(t.SelectDice(
                    actor=who, role=Role.PLAYER, serials=tuple(table.procedure.offered[:2]))))
        for code in menu:
            for amount in (1_00, 5_00, 6_00, 25_00, 30_00, 40_00):
                _record(table, out, lambda c=code, a=amount: table.execute(g.PlaceBet(
                    actor=p, role=Role.PLAYER, player=p, wager=c, amount=a,
                    working=(None, True, False)[a % 3])))
        for bet in sorted(table.state.bets):
            owner = table.state.bets[bet].player
            for amount in (5_00, 10_00, 50_00, 100_00, 150_00, 200_00, 300_00):
                _record(table, out, lambda b=bet, a=amount, o=owner: table.execute(g.PlaceBet(
                    actor=o, role=Role.PLAYER, player=o, wager="odds", base=b, amount=a)))
        for k, bet in enumerate(sorted(table.state.bets)):
            if bet not in table.state.bets:
                continue  # came down with the bet it stood behind
            owner = table.state.bets[bet].player
            action = (g.SetWorking(actor=owner, role=Role.PLAYER, bet=bet, working=k % 2 == 0),
                      g.ChangeBet(actor=owner, role=Role.PLAYER, bet=bet, amount=1_00 + k),
                      g.ChangeBet(actor=owner, role=Role.PLAYER, bet=bet, amount=60_00),
                      g.RemoveBet(actor=owner, role=Role.PLAYER, bet=bet))[(k + n) % 4]
            if n % 3 == 0:
                _record(table, out, lambda a=action: table.execute(a))
        if mode == "live":
            for c in (g.CloseBetting(actor="dl", role=Role.DEALER),
                      t.OfferShaker(actor="dl", role=Role.DEALER, player="ann"),
                      t.OfferShaker(actor="dl", role=Role.DEALER, player="p1"),
                      t.PlayerShake(actor="ann", role=Role.PLAYER, times=2),
                      t.ReturnShaker(actor="ann", role=Role.PLAYER),
                      t.PlayerShake(actor="ann", role=Role.PLAYER, times=2),
                      t.ReturnShaker(actor="ann", role=Role.PLAYER),
                      t.UncoverShaker(actor="dl", role=Role.DEALER)):
                _record(table, out, lambda c=c: table.execute(c))
        else:
            _record(table, out, lambda: table.execute(g.CloseBetting(actor="dealer",
                                                                     role=Role.DEALER)))
        facts = ("die-off-table",) if n == 9 else ()
        roller = ("sp", Role.STICKPERSON) if mode == "live" else ("stick", Role.STICKPERSON)
        _record(table, out, lambda f=faces, x=facts: table.execute(g.RecordRoll(
            actor=roller[0], role=roller[1], roll=Roll.parse(f), facts=x)))
        if n == 5:
            for who, role in ((roller[0], roller[1]), ("fl", Role.FLOORPERSON)):
                _record(table, out, lambda w=who, r=role: table.execute(g.CallNoRoll(
                    actor=w, role=r, grounds=("dice-in-cup",))))
        _record(table, out, lambda: table.settle(
            actor="dl" if mode == "live" else "dealer", role=Role.DEALER))
        if mode == "live" and n in (7, 12):
            shooter = table.procedure.shooter or "ann"
            steps: tuple[g.Command, ...] = (
                t.RelinquishDice(actor=shooter, role=Role.PLAYER),
                t.RemoveShooter(actor="bx", role=Role.BOXPERSON, ground="violation"),
                t.RemoveShooter(actor="fl", role=Role.FLOORPERSON, ground="unreasonable-delay"))
            for step in steps:
                _record(table, out, lambda c=step: table.execute(c))
        if mode == "live":
            clock.advance(hours=5)
            _record(table, out, lambda: table.execute(t.Tick(actor="table", role=Role.SYSTEM)))
            if n == 14:
                for person, role in (("bx", Role.BOXPERSON), ("sp", Role.STICKPERSON),
                                     ("dl", Role.DEALER), ("pb", Role.PIT_BOSS)):
                    _record(table, out, lambda x=person, r=role: table.execute(t.RelieveStaff(
                        actor="fl", role=Role.FLOORPERSON, person=x, staff_role=r)))
        yield from out
        out.clear()
    yield ("balances", table.balances, table.state.house)


def _situations(pack: RulePack) -> list[Any]:
    """Short walks straight to the moments a few rules decide: a come-out roll with wagers
    standing on their default working status, a seat past the last position, the offer of
    the dice and the shooter's end, the last person leaving the dice."""
    out: list[Any] = []
    _comeout(pack, out)
    _shooters(pack, out)
    return out


def _comeout(pack: RulePack, out: list[Any]) -> None:
    """Bare: wagers of every standing family and odds behind come bets, left on their
    default working status (working.comeout.*), then a point made and a come-out 7; a bonus
    wager after that 7 (bonus.placement); a seat at every position (table.positions)."""
    table = Table.open(pack, "probe", mode="bare", clock=FixedClock())

    def do(command: g.Command) -> None:
        _record(table, out, lambda: table.execute(command))

    def bet(code: str, amount: int, base: str | None = None) -> None:
        do(g.PlaceBet(actor="ann", role=Role.PLAYER, player="ann", wager=code, amount=amount,
                      base=base))

    def roll(faces: str) -> None:
        do(g.RecordRoll(actor="stick", role=Role.STICKPERSON, roll=Roll.parse(faces)))

    for seat in range(1, 32):
        do(g.JoinTable(actor=f"s{seat}", role=Role.PLAYER, player=f"s{seat}", seat=seat))
    do(g.JoinTable(actor="ann", role=Role.PLAYER, player="ann"))
    do(g.BuyChips(actor="dealer", role=Role.DEALER, player="ann", amount=100_000_00))
    bet("pass", 10_00)
    roll("2-2")
    for code in ("place6", "buy4", "lay10", "lose5", "hard6", "hard8", "big6", "come",
                 "dontcome"):
        bet(code, 30_00)
    roll("4-5")
    for b in sorted(table.state.bets):
        bet("odds", 30_00, base=b)
    roll("2-2")
    roll("3-4")
    for code in ("allsmall", "alltall", "makeemall"):
        bet(code, 5_00)
    out.append(("bets", sorted((b.id, b.wager, b.amount) for b in table.state.bets.values())))
    out.append(("balances", table.balances, table.state.house))


def _shooters(pack: RulePack, out: list[Any]) -> None:
    """Live: the dice offered round the table from the first position (shooter.first_offer),
    a shooter who gives them up (shooter.may_relinquish), the offer going on from the last
    shooter or starting again (shooter.next_offer), a shooter removed on each ground
    (shooter.removal_grounds), then every person relieved while dice are at the table
    (dice.never_unattended)."""
    staff = {k: v for k, v in STAFF.items() if k != "fl"}
    table = Table.open(pack, "probe", mode="live", clock=FixedClock(), actor="fl",
                       role=Role.FLOORPERSON, staff=staff)
    if not table.state.variant.has_shooter:
        return

    def do(command: g.Command) -> None:
        _record(table, out, lambda: table.execute(command))

    positions = int(pack.value("table.positions"))
    seats = sorted({1, 2, positions // 2, positions // 2 + 2, positions})
    players = [f"p{seat}" for seat in seats]
    for seat, p in zip(seats, players, strict=True):
        do(g.JoinTable(actor=p, role=Role.PLAYER, player=p, seat=seat))
        do(g.BuyChips(actor="dl", role=Role.DEALER, player=p, amount=1_000_00))
        do(g.PlaceBet(actor=p, role=Role.PLAYER, player=p, wager="pass", amount=10_00))
    who, role = table.who(t.BringDice)
    do(t.BringDice(actor=who, role=role, serials=("S1", "S2", "S3", "S4", "S5", "S6"),
                   witness="pb" if who != "pb" else "fl"))
    for end in ([t.RelinquishDice], [t.RemoveShooter] * 3):
        for k, ending in enumerate(end):
            for p in players:  # whom the dice go to first
                do(t.OfferDice(actor="sp", role=Role.STICKPERSON, patron=p,
                               serials=tuple(table.procedure.bowl)))
            offered = table.procedure.offer_to
            if offered is not None:
                do(t.SelectDice(actor=offered, role=Role.PLAYER,
                                serials=tuple(table.procedure.offered[:2])))
            shooter = table.procedure.shooter or "nobody"
            if ending is t.RelinquishDice:
                do(t.RelinquishDice(actor=shooter, role=Role.PLAYER))
            else:
                ground = ("continual-invalid-rolls", "unreasonable-delay", "violation")[k]
                who, role = table.who(t.RemoveShooter)
                do(t.RemoveShooter(actor=who, role=role, ground=ground))
    # The floorperson relieves the crew, the pit boss the floorperson, then the pit boss goes.
    for by, person, role in (*(("fl", p, r) for p, r in staff.items() if p != "pb"),
                             ("pb", "fl", Role.FLOORPERSON), ("sm", "pb", Role.PIT_BOSS)):
        by_role = {"fl": Role.FLOORPERSON, "pb": Role.PIT_BOSS}.get(by, Role.SHIFT_MANAGER)
        do(t.RelieveStaff(actor=by, role=by_role, person=person, staff_role=role))
    out.append(("procedure", table.procedure.shooter, table.procedure.last_shooter,
                sorted(table.procedure.staff)))


def _money(pack: RulePack) -> list[Any]:
    """What the player's money rules allow: wallet buy-ins of probe amounts, a dealer's sale,
    a unit to press by, at an electronic and a live table."""
    from dicetable.table.player_money import PlayerMoneyRules

    rules, out = PlayerMoneyRules.from_pack(pack), list[Any]()
    for mode in ("electronic", "live"):
        for amount in (1_00, 19_99, 20_00, 20_01, 99_99, 100_00, 4_999_99, 5_000_00,
                       5_000_01, 10_000_00):
            try:
                rules.check_buy_in(mode, amount, wallet=10**9)
                out.append((mode, amount, "ok"))
            except DicetableError as e:
                out.append((mode, amount, e.rule))
        try:
            rules.check_sale(mode, Role.DEALER)
            out.append((mode, "sale", "ok"))
        except DicetableError as e:
            out.append((mode, "sale", e.rule))
    out.append(("press", rules.press_unit(first=6_00, step=1_00)))
    return out


_END = object()
"""Past the end of the shorter of two parts' records."""

PARTS = (("compiled", None, 0), ("authority", None, 0), ("money", None, 0),
         ("situations", None, 0),
         ("scenario-bare", None, 0),
         ("scenario-live", None, 0),
         *((mode, seed, 200) for seed in (1, 2, 3) for mode in ("bare", "live")))
"""The fingerprint's parts, cheapest first: a rule is usually seen in the first ones."""


def part(pack: RulePack, which: tuple[str, int | None, int]) -> list[Any]:
    return list(records(pack, which))


def records(pack: RulePack, which: tuple[str, int | None, int]) -> Iterator[Any]:
    """One part's records (the walks' as they are made)."""
    name, seed, steps = which
    if name == "compiled":
        return iter(_compiled(pack))
    if name == "authority":
        return iter(_authority(pack))
    if name == "money":
        return iter(_money(pack))
    if name == "situations":
        return iter(_situations(pack))
    if name.startswith("scenario-"):
        return _scenario(pack, name.removeprefix("scenario-"))
    assert seed is not None
    return _session(pack, name, seed, steps)


class Fingerprint:
    """A pack's parts, each worked out the first time it is compared."""

    def __init__(self, pack: RulePack) -> None:
        self.pack = pack
        self._parts: dict[tuple[str, int | None, int], list[Any]] = {}

    def __getitem__(self, which: tuple[str, int | None, int]) -> list[Any]:
        if which not in self._parts:
            self._parts[which] = part(self.pack, which)
        return self._parts[which]

    def differs(self, other: Fingerprint) -> str | None:
        """The first part in which the two packs behave differently, or None. ``other``'s
        parts are compared as they are made, up to the first record that differs: most rules
        show early in a walk, and walking on to its end showed nothing more."""
        for which in PARTS:
            made = other._parts.get(which)
            theirs = made if made is not None else records(other.pack, which)
            if any(a != b for a, b in zip_longest(self[which], theirs, fillvalue=_END)):
                return which[0]
        return None


_BASES: dict[tuple[str, str | None], Fingerprint] = {}


def base(key: tuple[str, str | None], pack: RulePack) -> Fingerprint:
    """The fingerprint of a preset's ``pack`` (``key``: the preset, and the condition it was
    put under, if any), made once per test process: the rule tests compare every derived
    pack with it, and the citation tests read its refusals."""
    return _BASES.setdefault(key, Fingerprint(pack))


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A refusal a walk met, as its record keeps it."""

    rule: str
    citation: str
    text: str


def refusals(fingerprint: Fingerprint) -> list[Refusal]:
    """Every refusal met in all of ``fingerprint``'s parts, in order."""
    return [Refusal(r[2], r[4], r[3]) for which in PARTS for r in fingerprint[which]
            if isinstance(r, tuple) and r and r[0] == "refused"]


def _other_list(value: list[Any], choices: list[Any]) -> list[Any]:
    if len(value) > 1:
        return value[:-1]
    extra = [c for c in choices if c not in value]
    return [*value, extra[0]] if extra else []


def changed_values(rule: Rule) -> list[Any]:
    """Other legal values for ``rule``, by its schema (empty when it admits no other)."""
    spec = SPECS[rule.id]
    v = rule.value
    candidates: list[Any] = []
    if isinstance(v, bool):
        candidates = [not v]
    elif isinstance(v, int):
        candidates = [v + 1, v - 1, v * 2, 2, 12, 24, 50, 10, 5, 1]
    elif spec.kind == "odds":
        win, _, stake = str(v).partition(" to ")
        candidates = [f"{int(win) + 1} to {stake}" if win.isdigit() else "2 to 1",
                      f"{win} for {stake}", "3 to 1"]
    elif spec.kind == "rate":
        candidates = ["4%", "2%", "0%"]
    elif spec.kind == "limits":
        candidates = [{**v, "minimum": v["minimum"] + v["unit"]}, {**v, "unit": v["unit"] * 5,
                                                                   "minimum": v["unit"] * 5,
                                                                   "maximum": v["unit"] * 5000}]
    elif spec.kind in ("roles",):
        candidates = [_other_list(list(v), [r.value for r in Role]), ["floorperson"],
                      ["pit-boss"]]
    elif spec.kind == "odds-table" and isinstance(v, dict):
        candidates = [{k: ("1000 to 1" if k == max(v) else o) for k, o in v.items()}]
    elif isinstance(v, list):
        pools: dict[str, list[Any]] = {
            "families": ["line", "place", "buy", "hard"], "totals": [2, 3, 4, 9, 10, 11, 12],
            "codes": [], "list": [*sorted(NO_ROLL_GROUNDS), "plaques", "cash", "chips",
                                  "continual-invalid-rolls", "unreasonable-delay", "violation"]}
        candidates = [_other_list(list(v), pools.get(spec.kind, [])), []]
    elif isinstance(v, str):
        candidates = [c for c in _choices(rule.id) if c != v]
    return [c for c in candidates if c != v and spec.check(c) is None]


def _choices(rule_id: str) -> list[Any]:
    """The options of a choice rule, read off its checker's complaint (the games are the
    variant registry's, which the rules layer's checker cannot list)."""
    if rule_id == "game":
        from dicetable.games.catalogue import variants
        return [v.name for v in variants()]
    message = SPECS[rule_id].check(object()) or ""
    _, _, listed = message.partition("expected one of ")
    return [x.strip() for x in listed.split(",") if x.strip()]


def derived(pack: RulePack, rule_id: str, value: Any) -> RulePack:
    """``pack`` with one rule's value changed (status and citation kept)."""
    rule = pack.rule(rule_id)
    rules = {**pack.rules, rule_id: dataclasses.replace(rule, value=value)}
    assert rule.status is not Status.REGULATION
    return RulePack(pack.id, pack.name, rules, pack.base)  # same id: messages name it




def conditioned(pack: RulePack, rule_id: str) -> RulePack:
    """``pack`` with the other rule set under which alone ``rule_id`` is read
    (``rules.schema.READ_WHEN``); ``pack`` itself when the rule is always read."""
    when = SPECS[rule_id].when
    if when is None:
        return pack
    other, value = when
    rules = {**pack.rules, other: dataclasses.replace(pack.rule(other), value=value)}
    return RulePack(pack.id, pack.name, rules, pack.base)


def _for_wagers_the_game_lacks(pack: RulePack) -> set[str]:
    """Rules that only wagers the pack's game does not have would read (Crapless Craps: the
    Don't side, Put, Lay, Fire, the bonus bets), checked against what its menu needs."""
    from dicetable.games.catalogue import known_variant
    from dicetable.rules.model import CODES, family_of
    from dicetable.rules.validation import required_rules

    facts = known_variant(pack.game)
    if facts is None or not facts.not_offered_codes:
        return set()  # a game that drops whole families only: its packs carry no such rules
    lacking = [c for c in CODES if not facts.offers_code(c, family_of(c))]
    menus = {f"{kind}.{family}" for family in facts.not_offered for kind in ("menu", "limits")}
    # odds beside them: what only odds laid behind a Don't bet would read
    return menus | (required_rules([*lacking, "odds"], facts.points, facts.required_rules)
                     - required_rules(pack.menu_in_order, facts.points, facts.required_rules))


def moot(pack: RulePack, rule_id: str) -> str | None:
    """Why no table under ``pack`` can show ``rule_id``'s value, checked here, or None.

    The payout unit and what to do with an inexact payout matter only where some payout is
    not a whole number of the units staked: a pack whose every payout is a whole multiple
    of every betting unit (Props & Hops: whole-dollar stakes at whole odds) pays every
    accepted amount exactly, in any payout unit that divides its betting units."""
    unoffered = _for_wagers_the_game_lacks(pack)
    if rule_id in unoffered:
        return f"only wagers {pack.game} does not have read it"
    if rule_id not in ("payout.unit", "payout.inexact"):
        return None
    nets = {net for w in compile_pack(pack).values() for net in w.payouts}
    units = {r.value["unit"] for r in pack if r.id.startswith("limits.")
             and isinstance(r.value, dict)}
    if all(net.denominator == 1 for net in nets) and all(u % 100 == 0 for u in units):
        return "every payout is a whole number of dollars on a whole-dollar stake"
    return None
