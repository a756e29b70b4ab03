"""What a page may offer one person acting for one player: each answer is the engine's own.

A spot is lit, a button enabled, only where ``Table.can`` accepts the very command the page
would send (the wager at its first legal amount, the take-down, the on/off call, the press to
the next legal amount, the odds). The amounts a wager takes come from the same check that
refuses the others (``games.amounts``), so a stack of chips snaps to an amount the engine
accepts.
"""

from __future__ import annotations

import bisect
import copy
import functools
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from dicetable.core.money import format_cents
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.engine import (
    Engine,
    change_cost,
    commission_up_front,
    is_working,
    legal_amounts,
    stake,
    stakes,
)
from dicetable.games.packs import compile_pack
from dicetable.games.state import Bet, Player, TableState
from dicetable.rules.model import RulePack, display_name
from dicetable.server.console_probes import console_probes
from dicetable.server.grouped_members import Grouped
from dicetable.server.shared_values import shared as _shared  # not a name of this module
from dicetable.table import Table
from dicetable.table import commands as tcmd
from dicetable.table.procedure import ProcedureEngine, authorize
from dicetable.wagers.compile import odds_code_for


def _game(table: Table) -> Engine | None:
    engine = table.engine
    if isinstance(engine, ProcedureEngine):
        return engine.game
    return engine if isinstance(engine, Engine) else None


def ladder_label(name: str, ladder: tuple[int, int, int] | None) -> str:
    """'Place 6 to Win: $6, $9, $12 ... up to $4,998'."""
    if ladder is None:
        return f"{name}: no amount is open"
    first, step, last = ladder
    shown = [a for a in (first, first + step, first + 2 * step) if a <= last]
    text = ", ".join(_dollars(a) for a in shown)
    if first + 3 * step <= last:
        text += " ..."
    return f"{name}: {text} up to {_dollars(last)}" if last not in shown else f"{name}: {text}"


def _dollars(cents: int) -> str:
    text = format_cents(cents)
    return text[:-3] if text.endswith(".00") else text


def _ladder(ladder: tuple[int, int, int] | None) -> dict[str, int] | None:
    return None if ladder is None else _rungs(*ladder)


_RUNGS: dict[tuple[int, int, int], dict[str, int]] = {}


def _rungs(first: int, step: int, last: int) -> dict[str, int]:
    """``{"first", "step", "last"}``, one object for equal ladders (``shared``): a push after
    a roll compares 1,000 players' controls with the ones they were sent."""
    return _shared(_RUNGS, (first, step, last),
                  lambda: {"first": first, "step": step, "last": last})


def wager_ladders(table: Table) -> dict[str, dict[str, Any]]:
    """Every wager's accepted amounts and its placard label (the table's, not a player's)."""
    return _wager_ladders(table.pack)


@functools.lru_cache(maxsize=64)  # packs are immutable and few
def _wager_ladders(pack: RulePack) -> dict[str, dict[str, Any]]:
    compiled = compile_pack(pack)
    out: dict[str, dict[str, Any]] = {}
    for code in pack.menu_in_order:
        if code == "odds" or code not in compiled:
            continue
        ladder = legal_amounts(pack, compiled[code], code)
        out[code] = {"ladder": _ladder(ladder),
                     "label": ladder_label(display_name(code), ladder)}
    return out


def odds_ladder(table: Table, base: Bet) -> tuple[int, int, int] | None:
    """The odds amounts behind ``base``: its point's multiple, in the odds' legal steps."""
    engine, state = _game(table), table.state
    if engine is None:
        return None
    code = odds_code_for(base.wager)
    wager = state.compiled.get(code)
    if wager is None or engine.bet_point(state, base) is None:
        return None
    maximum, _ = engine.odds_maximum(state, wager, base.id)
    return legal_amounts(table.pack, wager, "odds", maximum=maximum)


def _affordable(ladder: tuple[int, int, int], spare: int,
                fits: Callable[[int], bool]) -> tuple[int, int, int] | None:
    """The ladder cut to what the engine accepts: at most ``spare`` more than its start (the
    balance), then, where a commission comes on top, down to the highest rung ``fits``."""
    first, step, last = ladder
    top = min(last, first + max(0, spare - first) // step * step) if spare >= first else None
    if top is None or not fits(first):
        return None
    if fits(top):
        return first, step, top
    lo, hi = 0, (top - first) // step  # fits(first + lo*step) holds, fits(first + hi*step) not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(first + mid * step):
            lo = mid
        else:
            hi = mid
    return first, step, first + lo * step


T = TypeVar("T")
_SEEN: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_SEEN_MAX = 32_768
"""Situations remembered: a stadium table's 1,000 players each have their own, in each of
the seven the point makes (come-out, and a point on each number), and a dealer's console
finds theirs there; 4,096 were gone by the time the point came back, and every player was
asked of the engine again at each point made or missed."""
_SEEN_LOCK = threading.Lock()
_OPEN: OrderedDict[tuple[Any, ...], tuple[dict[str, dict[str, int]], int, int]] = OrderedDict()
"""The new wagers open to players alike (``_opening``), by what they are alike in, whatever
their balance (``_rich``)."""
_STAKES: OrderedDict[tuple[Any, ...], tuple[int, ...]] = OrderedDict()
"""``_stakes``, by the pack's rules (``RulePack.digest``) and the wager."""
_PERMITTED: OrderedDict[tuple[Any, ...], bool] = OrderedDict()
"""``_may_handle_wagers``, by what its answer depends on."""
_CUT: OrderedDict[tuple[Any, ...], dict[str, dict[str, int]]] = OrderedDict()
"""Those cut to a balance (``_open_to``), and each answer whatever the balance by what it is."""


def controls_for(table: Table, actor: str, role: Role, player: str) -> dict[str, Any]:
    """What ``actor`` (in ``role``) may do now for ``player``, asked of the engine.

    The answers for a player are worked out once per situation (``_situation``: what the
    engine's answers for that player depend on) and shared by every page that shows them: the
    player's own and the staff who book for them, once the permission matrix lets that member
    of staff handle wagers at all (the rest of each decision does not depend on who gives the
    command). Another player's bet leaves them as they were.
    """
    if role is not Role.PLAYER and not _may_handle_wagers(table, actor, role, player):
        return _controls(table, actor, role, player)
    held = _pinned(table)
    if held is not None:  # one push: each player's answers looked up once, not once per page
        found = held.answers.get(player)
        if found is None:
            found = _shared(held.answers, player, lambda: _pushed(table, held, player))
        return found
    return _remembered(_SEEN, _situation(table, player),
                       lambda: _controls(table, player, Role.PLAYER, player))


def _pushed(table: Table, held: _Push, player: str) -> dict[str, Any]:
    """``controls_for``'s answers for ``player`` within the push ``held``: the same keys and
    answers as outside one, with the player's bets, their opening and the table's situation
    each looked up once for the player (outside a push, each step looks them up again: a
    roll's push to 1,000 players asked for each player's bets four times)."""
    state = table.state
    info = state.players.get(player)
    mine = state.bets_of(player)
    key = (held.token, player, None if info is None else (info.seat, info.balance),
           tuple((b.id, b.wager, b.amount, b.state, b.base, b.working, b.commission)
                 for b in mine))
    if info is None or _game(table) is None:
        return _remembered(_SEEN, key, lambda: _controls(table, player, Role.PLAYER, player))
    return _remembered(_SEEN, key, lambda: _cut_for(table, held, player, info.balance, mine))


def _cut_for(table: Table, held: _Push, player: str, balance: int, mine: list[Bet]
             ) -> dict[str, Any]:
    """``_controls``' answers that players alike share, cut to ``balance`` (an engine's
    table, within the push ``held``)."""
    opening = held.openings.get(player)
    if opening is None:
        opening = _shared(held.openings, player, lambda: _opening_of(table, player, mine))
    # What a bet's answers depend on of its player (``_bet_situation``): in the opening.
    token, who = opening[0], opening[1:5]
    state = table.state
    answers: dict[str, Any] = {}
    for bet in mine:
        # ``odds_on``, without a walk over every bet at the table: odds are their player's own.
        situation = _bet_key(state, token, bet, any(b.base == bet.id for b in mine), who)
        rich = _recalled_in(held, _BETS, situation,
                            functools.partial(_rich_bet, table, player, bet))
        answers[bet.id] = _bet_cut(table, bet, rich, balance)
    return {"player": player, "open": _open_to(table, player, balance, opening),
            "bets": answers}


def _remembered(cache: OrderedDict[tuple[Any, ...], T], key: tuple[Any, ...],
                work_out: Callable[[], T]) -> T:
    """``cache[key]``, worked out (outside the lock) when it is not there yet; the least
    recently used answers go past ``_SEEN_MAX``."""
    with _SEEN_LOCK:
        found = cache.get(key)
        if found is not None:
            cache.move_to_end(key)
            return found
    found = work_out()
    with _SEEN_LOCK:
        cache[key] = found
        while len(cache) > _SEEN_MAX:
            cache.popitem(last=False)
    return found


def _recalled(table: Table, cache: OrderedDict[tuple[Any, ...], T], key: tuple[Any, ...],
              work_out: Callable[[], T]) -> T:
    """``_remembered``, and within one push (``pin``) looked up in front of ``cache``, without
    its lock: the few kinds of player and of bet a push meets, each looked up there once, not
    once per player."""
    return _recalled_in(_pinned(table), cache, key, work_out)


def _recalled_in(held: _Push | None, cache: OrderedDict[tuple[Any, ...], T],
                 key: tuple[Any, ...], work_out: Callable[[], T]) -> T:
    """``_recalled`` within the push ``held`` (None: outside one), for a caller that holds it."""
    if held is None:
        return _remembered(cache, key, work_out)
    front: dict[tuple[Any, ...], T] | None = held.fronts.get(id(cache))
    if front is None:
        front = _shared(held.fronts, id(cache), dict)
    found = front.get(key)
    return found if found is not None else _shared(
        front, key, lambda: _remembered(cache, key, work_out))


def _situation(table: Table, player: str) -> tuple[Any, ...]:
    """Everything the engine's answers about ``player``'s wagers depend on: the table's phase,
    puck, roll counters and settlement step; the procedure (shooter, offer, shaker, blocks);
    the player's seat, balance and bets. Not other players' wagers or balances."""
    s = table.state
    info = s.players.get(player)
    return (_table_situation(table), player,
            None if info is None else (info.seat, info.balance),
            tuple((b.id, b.wager, b.amount, b.state, b.base, b.working, b.commission)
                  for b in s.bets_of(player)))


_PINNED = threading.local()
"""The push this thread is making (``_Push``), or None (``pin``)."""
_TOKENS: dict[tuple[Any, ...], int] = {}
"""A number for each table situation seen (``_table_situation``): a player's key holds the
number, hashed at once, not the situation's twenty members hashed again for each player."""
_NEXT_TOKEN = itertools.count()
"""Never a number twice: once ``_TOKENS`` is cleared, a situation seen again gets a new one
(what was remembered under the old one is not found again, never wrongly found)."""


def pin(table: Table | None) -> None:
    """Hold ``table``'s situation while one push is made for its viewers (its lock held, its
    state unchanged): worked out once, not for each of 1,000 players and again for the
    dealer booking for each of them. ``None``: work it out each time again."""
    _PINNED.held = _Push(table, _token(table), _staff(table)) if table is not None else None


@dataclass(eq=False, slots=True)
class _Push:
    """The table whose push this thread is making, its situation's token, its staff, and the
    push's answers so far."""

    table: Table
    token: int
    staff: tuple[tuple[str, tuple[Role, ...]], ...]
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each player's ``controls_for``."""
    openings: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Each player's ``_opening``."""
    fronts: dict[int, dict[tuple[Any, ...], Any]] = field(default_factory=dict)
    """What ``_recalled`` found, by the cache's id."""
    permits: dict[tuple[str, Role, bool, bool], bool] = field(default_factory=dict)
    """``_may_handle_wagers``, by what its answer depends on besides the push's table."""
    bet_views: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``views``' view of each bet (``push_bet_views``)."""


def _pinned(table: Table) -> _Push | None:
    held: _Push | None = getattr(_PINNED, "held", None)
    return held if held is not None and held.table is table else None


def push_bet_views(table: Table) -> dict[str, dict[str, Any]] | None:
    """Where the push being made for ``table`` keeps each bet's view, by its id, or None
    outside one (``pin``): the staff part and each player's own part show the same bets, and
    the state does not change while the push is made."""
    held = _pinned(table)
    return None if held is None else held.bet_views


def _table_situation(table: Table) -> int:
    """The token of ``_table_situation_now``: equal situations, the same number."""
    held = _pinned(table)
    return held.token if held is not None else _token(table)


def _token(table: Table) -> int:
    return _shared(_TOKENS, _table_situation_now(table), lambda: next(_NEXT_TOKEN))


def _staff(table: Table) -> tuple[tuple[str, tuple[Role, ...]], ...]:
    return tuple(sorted((who, tuple(sorted(roles)))
                        for who, roles in table.procedure.staff.items()))


def _table_situation_now(table: Table) -> tuple[Any, ...]:
    """The part of ``_situation`` that is the table's, the same for every player at it. Of
    the roll counters, only what a game engine reads of them (``placement_counters``): a
    roll that leaves the point, the procedure and a player's part as they were leaves their
    answers as they were too (1,000 players, and a dealer's console booking for them, are
    not asked of the engine again after every roll)."""
    s = table.state
    p = table.procedure
    game = _game(table)
    counters = game.placement_counters(s) if game is not None else (
        s.hand, s.hand_rolls, s.rolls_since_seven, s.round, s.rolls)
    return (id(s), s.table_id, s.phase, s.point, counters,
            s.pending.step if s.pending else None, s.last_roll_valid, table.blocked(),
            tuple(sorted(p.blocked)), p.shooter, p.offer_to, p.shaker, p.shaker_holder,
            p.shakes, p.dealer_shook)


def _opening(table: Table, player: str) -> tuple[Any, ...]:
    """What the engine's answers about ``player``'s *new* wagers depend on, but for their
    balance: the table, whether the player is seated and has a part of their own in the
    procedure (shooter, offered the dice, holding the shaker), and the spots their wagers
    stand on (one wager per spot). Players alike in all of these get the same answers but for
    what each can afford, so a full table asks the engine once, not once per player."""
    held = _pinned(table)
    if held is not None:
        return _shared(held.openings, player, lambda: _opening_now(table, player))
    return _opening_now(table, player)


def _opening_now(table: Table, player: str) -> tuple[Any, ...]:
    return _opening_of(table, player, table.state.bets_of(player))


def _opening_of(table: Table, player: str, mine: list[Bet]) -> tuple[Any, ...]:
    """``_opening_now``, for ``mine``: ``player``'s bets."""
    return (_table_situation(table), *_part_of(table, player),
            tuple(sorted((b.wager, b.state, b.base is None) for b in mine)))


def _part_of(table: Table, player: str) -> tuple[bool, bool, bool, bool]:
    """What the engine's answers read of ``player`` besides their bets and balance: whether
    they are unseated, and their part in the procedure (shooter, offered the dice, holding
    the shaker). Items 1 to 4 of ``_opening``."""
    p = table.procedure
    return (table.state.players[player].seat is None, player == p.shooter,
            player == p.offer_to, player == p.shaker_holder)


RICH = 10**15
"""A balance (cents) no wager's stake comes near: the engine's answers with it are its answers
whatever the balance."""


def _open_to(table: Table, player: str, balance: int,
             opening: tuple[Any, ...] | None = None) -> dict[str, dict[str, int]]:
    """The new wagers open to ``player`` and the amounts their ``balance`` covers, at a table
    with a game engine.

    The engine refuses a wager for the balance last, and for nothing else (``stake``, the
    ``money.balance`` check): so what it accepts from a player is what it accepts whatever
    the balance (asked once for players alike, with ``RICH`` chips) cut to the rungs whose
    stake the balance covers - a lookup, not the engine asked again for each of 1,000
    players with 1,000 different balances."""
    rich, cap, content = _recalled(table, _OPEN, _opening(table, player) if opening is None
                                   else opening, lambda: _rich(table, player))
    if balance >= cap:
        return rich
    pack = table.pack

    def cut() -> dict[str, dict[str, int]]:
        plan = _plan(pack, content, rich)
        return _cut(plan, balance)

    # By what it is cut from, not by the situation: after a roll that leaves a player's
    # open wagers as they were, the cut is the one they were sent (no patch to work out).
    return _remembered(_CUT, (pack, content, balance), cut)


_Group = tuple[int, int, int, dict[str, int], tuple[int, ...] | None, dict[int, dict[str, int]]]
_Plan = tuple[tuple[_Group, ...], tuple[tuple[str, int], ...]]
"""How to cut one answer to a balance: its distinct ladders (first, step, last, the rungs
as posted, the stakes, the ladders cut from it by how many rungs they keep), and each
wager's, in the answer's order."""
_GROUP_CUTS = 256
"""How many cuts of one ladder a plan keeps before it forgets them all (``_rungs`` has them
still): a plan's dozen ladders, a few dozen plans at most per pack, a few megabytes."""
_PLANS: OrderedDict[tuple[Any, ...], _Plan] = OrderedDict()


def _plan(pack: RulePack, content: int, rich: dict[str, dict[str, int]]) -> _Plan:
    """``rich`` grouped by ladder: a pack's seventy wagers stand on a dozen ladders (the
    hop bets, the props, the place bets share theirs), each cut once per balance."""
    def work_out() -> _Plan:
        ladders: dict[tuple[int, int, int, int], int] = {}
        groups: list[_Group] = []
        order: list[tuple[str, int]] = []
        for code, lad in rich.items():
            rung_stakes = _stakes(pack, code)
            key = (lad["first"], lad["step"], lad["last"], id(rung_stakes))
            at = ladders.get(key)
            if at is None:
                at = ladders[key] = len(groups)
                groups.append((lad["first"], lad["step"], lad["last"], lad, rung_stakes, {}))
            order.append((code, at))
        return tuple(groups), tuple(order)
    return _remembered(_PLANS, (pack, content), work_out)


def _cut(plan: _Plan, balance: int) -> dict[str, dict[str, int]]:
    """Each ladder of ``plan`` cut to the rungs whose stake ``balance`` covers (the amount,
    or the amount and an up-front commission: ``_stakes``); the wagers none of whose rungs
    it covers are left out."""
    groups, order = plan
    cut: list[dict[str, int] | None] = []
    for first, step, last, posted, rung_stakes, made in groups:
        if balance < first:
            cut.append(None)
        elif rung_stakes is None and balance >= last:
            cut.append(posted)  # every rung covered: the answer whatever the balance
        else:
            rungs = (min(last, balance) - first) // step + 1  # those the amount alone allows
            if rung_stakes is not None:
                rungs = bisect.bisect_right(rung_stakes, balance, 0, rungs)
            if not rungs:
                cut.append(None)
                continue
            # By the rungs kept, looked up in the group's own cuts: a quarter of a stadium's
            # 1,000 players are cut after each roll, each over a dozen ladders.
            last_kept = first + (rungs - 1) * step
            cut.append(_shared(made, rungs, functools.partial(_rungs, first, step, last_kept),
                              _GROUP_CUTS))
    return Grouped.of(order, tuple(cut))


@functools.lru_cache(maxsize=256)  # packs are immutable and few
def _stakes(pack: RulePack, code: str) -> tuple[int, ...] | None:
    """The stake of each rung of ``code``'s posted ladder, where a commission comes on top of
    the amount (None: each rung's stake is its amount). A commission never falls as the
    amount rises, so the stakes are in order (searched by bisection). Worked out once per
    set of rules (``warm``), not per player: a pack loaded again with the same rules (each
    floor's demo pack, each test's) finds them made."""
    if not commission_up_front(pack, code):
        return None
    ladder = _wager_ladders(pack)[code]["ladder"]
    if ladder is None:
        return None
    wager = compile_pack(pack)[code]
    return _remembered(_STAKES, (pack.digest, code), lambda: _same_stakes(stakes(
        pack, wager, range(ladder["first"], ladder["last"] + 1, ladder["step"]))))


def _same_stakes(found: tuple[int, ...]) -> tuple[int, ...]:
    """One tuple for equal stakes: the wagers whose commission is alike (the six buy bets,
    the lay bets on 4 and 10) stand on one ladder of a plan (``_plan``), cut once for a
    balance, not once each."""
    return _shared(_SAME_STAKES, found, lambda: found)


_SAME_STAKES: dict[tuple[int, ...], tuple[int, ...]] = {}
"""``_stakes``' tuples, one for equal ones (``shared``)."""


def warm(pack: RulePack) -> None:
    """Work out what a pack's controls look up (its ladders, its stakes) before the first
    roll of a full table needs them (a table's opening, at start-up)."""
    for code in _wager_ladders(pack):
        _stakes(pack, code)


def _rich(table: Table, player: str) -> tuple[dict[str, dict[str, int]], int, int]:
    """The new wagers open to ``player`` as if they held ``RICH`` chips, the least balance
    that covers every rung of them (at or above it, a player's answers are these), and what
    they are as a key (``_CONTENTS``: equal answers in another situation are the same
    object)."""
    state = table.state
    can = _rich_probe(table, player)

    def placing(code: str) -> Callable[[int], bool]:
        return lambda amount: can(g.PlaceBet(actor=player, role=Role.PLAYER, player=player,
                                             wager=code, amount=amount))

    found = _open_ladders(table, player, RICH, placing)
    cap = max((stake(table.pack, state.compiled[code], lad["last"])
               for code, lad in found.items()), default=0)
    content = tuple((code, lad["first"], lad["step"], lad["last"]) for code, lad in found.items())
    token = _shared(_CONTENTS, content, lambda: next(_NEXT_TOKEN))

    def grouped() -> dict[str, dict[str, int]]:
        # Laid out as its cuts are (``_plan``): a patch from it to a cut is worked out
        # ladder by ladder, not wager by wager (``grouped_members``).
        groups, order = _plan(table.pack, token, found)
        return Grouped.of(order, tuple(posted for _, _, _, posted, _, _ in groups))
    same = _remembered(_CUT, (table.pack, token), grouped)
    return same, cap, token


_CONTENTS: dict[tuple[tuple[str, int, int, int], ...], int] = {}
"""A number for each answer ``_rich`` found, by what it holds (never a number twice, as
``_TOKENS``): the keys that depend on it hold the number, not seventy wagers' ladders hashed
again for each player cut to a balance."""


def _rich_probe(table: Table, player: str) -> Callable[[g.Command], bool]:
    """``table.can`` as if ``player`` held ``RICH`` chips (asked of a copy of the state)."""
    state = table.state
    probe = copy.copy(state)  # the engine reads the state; nothing of it is changed
    probe.players = dict(state.players)
    probe.players[player] = Player(balance=RICH, seat=state.players[player].seat)
    now = table.now()

    def can(command: g.Command) -> bool:
        return table.engine.can(probe, command, now)
    return can


def _open_ladders(table: Table, player: str, spare: int,
                  placing: Callable[[str], Callable[[int], bool]]) -> dict[str, dict[str, int]]:
    """Each wager ``player`` may make now, its posted ladder cut to the rungs ``spare``
    chips cover and the engine accepts (``placing(code)``: does it accept this amount?)."""
    ladders = wager_ladders(table)
    found: dict[str, dict[str, int]] = {}
    game = _game(table)
    for code in table.placeable_codes(player, list(ladders)):
        posted = ladders[code]["ladder"]
        if not posted or (game is not None and game.holds_spot(table.state, player, code)):
            continue  # a spot the player holds takes a change, never a second bet
        fit = _affordable((posted["first"], posted["step"], posted["last"]), spare,
                          placing(code))
        if fit is not None:
            found[code] = _rungs(*fit)
    return found


def _may_handle_wagers(table: Table, actor: str, role: Role, player: str) -> bool:
    """Does the permission matrix let ``actor`` place, change, remove and call wagers for
    ``player`` here? (Only a live or electronic table has the matrix; elsewhere: ask each.)"""
    state = table.state
    if not isinstance(table.engine, ProcedureEngine) or player not in state.players:
        return False
    bet = next(iter(state.bets_of(player)), None)
    # What ``authorize`` reads for these probes: the pack's matrix and the mode, who works
    # the table in which roles (the actor, and of the player only whether they work it too:
    # ``duties.staff_no_wager``), and whether the player has a bet to probe - not the phase,
    # the dice, the balances or the player's name: a dealer's console after a roll asks it
    # of none of its 1,000 players again, and within a push looks up two or three kinds of
    # player, not 1,000 keys that each hold the table's staff.
    works = bool(table.procedure.staff.get(player))
    held = _pinned(table)
    if held is None:
        return _permitted(table, actor, role, player, bet, works, _staff(table))
    staff = held.staff
    return _shared(held.permits, (actor, role, works, bet is not None),
                  lambda: _permitted(table, actor, role, player, bet, works, staff))


def _permitted(table: Table, actor: str, role: Role, player: str, bet: Bet | None,
               works: bool, staff: tuple[tuple[str, tuple[Role, ...]], ...]) -> bool:
    """``_may_handle_wagers``, remembered by what it depends on."""
    key = (table.pack, table.state.mode, staff, actor, role, works, bet is not None)
    return _remembered(_PERMITTED, key, lambda: _asks_permit(table, actor, role, player, bet))


def _asks_permit(table: Table, actor: str, role: Role, player: str, bet: Bet | None) -> bool:
    """``_may_handle_wagers`` asked of ``authorize`` itself."""
    probes: list[g.Command] = [g.PlaceBet(actor=actor, role=role, player=player, wager="",
                                          amount=0)]
    if bet is not None:
        probes += [g.ChangeBet(actor=actor, role=role, bet=bet.id, amount=bet.amount),
                   g.RemoveBet(actor=actor, role=role, bet=bet.id),
                   g.SetWorking(actor=actor, role=role, bet=bet.id, working=True)]
    try:
        for probe in probes:
            authorize(table.state, probe)
    except ValueError:
        return False
    return True


def _controls(table: Table, actor: str, role: Role, player: str, *,
              share: bool = True) -> dict[str, Any]:
    """What ``controls_for`` answers, worked out (``share``: the new wagers open to the player
    as players alike were already answered)."""
    state = table.state
    if player not in state.players:
        return {"player": player, "open": {}, "bets": {}}
    balance = state.balance(player)
    shared = share and actor == player and role is Role.PLAYER  # what any player alike gets
    if shared and _game(table) is not None:
        # Shared, as whole answers are (``controls_for``): never changed once made. What
        # players alike were answered, cut to this balance: no probe of the engine made.
        return {"player": player, "open": _open_to(table, player, balance),
                "bets": {bet.id: _bet_cut(table, bet, _shared_bet(table, player, bet), balance)
                         for bet in state.bets_of(player)}}

    def can(command: g.Command) -> bool:
        return table.can(command)

    def placing(wager: str, base: str | None = None) -> Callable[[int], bool]:
        def fits(amount: int) -> bool:
            return can(g.PlaceBet(actor=actor, role=role, player=player, wager=wager,
                                  amount=amount, base=base))
        return fits

    def changing(bet_id: str) -> Callable[[int], bool]:
        def fits(amount: int) -> bool:
            return can(g.ChangeBet(actor=actor, role=role, bet=bet_id, amount=amount))
        return fits

    def work_out() -> dict[str, dict[str, int]]:
        return _open_ladders(table, player, balance, placing)

    # No engine whose stake to look up (``_open_to``): each balance asked, and kept for
    # players alike.
    open_now = _remembered(_CUT, (*_opening(table, player), balance), work_out) if shared \
        else work_out()
    bets = {bet.id: _bet_answers(table, bet, actor, role, balance, can, placing, changing)
            for bet in state.bets_of(player)}
    return {"player": player, "open": open_now, "bets": bets}


def _shared_bet(table: Table, player: str, bet: Bet) -> _RichBet:
    """``_rich_bet``, worked out once for every bet alike (``_bet_situation``)."""
    return _recalled(table, _BETS, _bet_situation(table, player, bet),
                     lambda: _rich_bet(table, player, bet))


def _bet_answers(table: Table, bet: Bet, actor: str, role: Role, balance: int,
                 can: Callable[[g.Command], bool],
                 placing: Callable[..., Callable[[int], bool]],
                 changing: Callable[[str], Callable[[int], bool]]) -> dict[str, Any]:
    """What ``actor`` may do with one of the player's bets, each answer asked of ``can``:
    take it down, turn it on or off, press it (and the rungs it may be raised to), odds
    behind it."""
    state = table.state
    working = is_working(state, bet)
    info: dict[str, Any] = {
        "working_now": working,
        "remove": can(g.RemoveBet(actor=actor, role=role, bet=bet.id)),
        "toggle": _may_toggle(table, bet) and can(g.SetWorking(actor=actor, role=role,
                                                               bet=bet.id, working=not working)),
    }
    ladder = _bet_ladder(table, bet)
    press = None
    if ladder is not None:
        first, step, last = ladder
        up = _press_rung(bet, ladder)
        if up <= last and can(g.ChangeBet(actor=actor, role=role, bet=bet.id, amount=up)):
            press = up
            # Raising it: the rungs from here up to what the balance covers.
            raised = _affordable((up, step, last), balance + bet.amount, changing(bet.id))
            ladder = None if raised is None else (first, step, raised[2])
    info["ladder"] = _ladder(ladder)
    info["press_to"] = press
    info["odds"] = None
    if bet.base is None and not state.odds_on(bet):
        lad = odds_ladder(table, bet)
        if lad is not None:
            lad = _affordable(lad, balance, placing("odds", bet.id))
        info["odds"] = _ladder(lad)
    return info


def _may_toggle(table: Table, bet: Bet) -> bool:
    """The pack's on/off rule for ``bet``'s wager, asked before the whole ``SetWorking``."""
    game = _game(table)
    return game is None or game.may_toggle(table.state, bet.wager)


def _bet_ladder(table: Table, bet: Bet) -> tuple[int, int, int] | None:
    if bet.base is not None:
        base = table.state.bets.get(bet.base)
        return odds_ladder(table, base) if base is not None else None
    return legal_amounts(table.pack, table.state.compiled[bet.wager], bet.wager)


def _press_rung(bet: Bet, ladder: tuple[int, int, int]) -> int:
    first, step, _ = ladder
    return max(first, bet.amount + step - (bet.amount - first) % step
               if bet.amount >= first else first)


@dataclass(frozen=True, slots=True)
class _RichBet:
    """A bet's answers as if its player held ``RICH`` chips: those whatever the balance, and
    the rungs the engine takes but for the balance (``_bet_cut`` cuts them to one)."""

    working_now: bool
    remove: bool
    toggle: bool
    ladder: tuple[int, int, int] | None
    up: int | None
    """The rung a press goes to, when the engine takes it but for the balance."""
    raised: int | None
    """The highest rung it may be raised to but for the balance (with ``up``)."""
    odds_posted: tuple[int, int, int] | None
    """The odds behind it as posted (None: none may stand behind it now)."""
    odds: tuple[int, int, int] | None
    """Those the engine takes but for the balance."""
    cap: int = 0
    """The least balance that covers every rung above (the top raise, the top odds): at or
    above it, ``_bet_cut``'s answer is ``whole``, whatever the balance."""
    whole: dict[str, Any] | None = None
    """``_bet_cut``'s answer for any balance from ``cap`` up."""


_ODDS_BASES: OrderedDict[tuple[Any, ...], tuple[int, ...]] = OrderedDict()
"""``odds_bases``: which of a player's bets take odds, as positions in their bets, by what
the answer depends on."""


def odds_bases(table: Table, player: str, mine: list[Bet]) -> list[str]:
    """``table.odds_bases(player, mine)``: which of ``mine`` (all of ``player``'s bets)
    ``player`` may put odds behind now, whatever the amount. The engine's answer depends on
    what ``_opening`` holds of the table and the player, and on each bet's wager and state
    and whether odds stand behind it (``_odds_refusal``), not on the bet's id or amount or
    the balance: players alike in these are asked of the engine once per table situation, as
    positions in their bets, not once per player after every roll (a quarter of a roll's
    push to 1,000 players who each hold bets)."""
    ids = [b.id for b in mine]
    if not mine:
        return []
    if _game(table) is None:
        return table.odds_bases(player, ids)
    at = {b.id: i for i, b in enumerate(mine)}
    shape: list[tuple[str, int, int | None]] = []
    for bet in mine:
        behind = None if bet.base is None else at.get(bet.base)
        if bet.base is not None and behind is None:  # not one of ``mine``: asked as it is
            return table.odds_bases(player, ids)
        shape.append((bet.wager, bet.state, behind))
    held = _pinned(table)
    # Within a push, the player's opening (their controls made it) and the answer for
    # players alike are looked up in what the push holds, the push itself looked up once.
    opening = held.openings.get(player) if held is not None else None
    key = (*(opening if opening is not None else _opening(table, player)), tuple(shape))
    found = _recalled_in(held, _ODDS_BASES, key,
                         lambda: tuple(at[b] for b in table.odds_bases(player, ids)))
    return [ids[i] for i in found]


_BETS: OrderedDict[tuple[Any, ...], _RichBet] = OrderedDict()
"""``_rich_bet``, by what it depends on (``_bet_situation``)."""


def _bet_situation(table: Table, player: str, bet: Bet) -> tuple[Any, ...]:
    """What the engine's answers about ``bet`` depend on, but for its player's balance: the
    table (``_table_situation``), the bet (not its id: every player's Place 6 for $6 is
    answered alike), the bet it stands behind, whether odds stand behind it, and the
    player's seat and part in the procedure."""
    s = table.state
    return _bet_key(s, _table_situation(table), bet, bool(s.odds_on(bet)),
                    _part_of(table, player))


def _bet_key(state: TableState, token: int, bet: Bet, odds_behind: bool,
             part: tuple[bool, ...]) -> tuple[Any, ...]:
    """``_bet_situation`` from its parts: the table's token, whether odds stand behind the
    bet, and the player's ``_part_of``."""
    base = state.bets.get(bet.base) if bet.base is not None else None
    return (token, bet.wager, bet.amount, bet.state, bet.working, bet.commission,
            None if base is None else (
                base.wager, base.amount, base.state, base.working, base.commission),
            odds_behind, *part)


def _rich_bet(table: Table, player: str, bet: Bet) -> _RichBet:
    """``_bet_answers`` for ``bet`` as if its player held ``RICH`` chips, kept as what
    ``_bet_cut`` needs to cut them to a balance."""
    can = _rich_probe(table, player)

    def placing(wager: str, base: str | None = None) -> Callable[[int], bool]:
        return lambda amount: can(g.PlaceBet(actor=player, role=Role.PLAYER, player=player,
                                             wager=wager, amount=amount, base=base))

    def changing(bet_id: str) -> Callable[[int], bool]:
        return lambda amount: can(g.ChangeBet(actor=player, role=Role.PLAYER, bet=bet_id,
                                              amount=amount))

    info = _bet_answers(table, bet, player, Role.PLAYER, RICH, can, placing, changing)
    raised, odds = info["ladder"] if info["press_to"] is not None else None, info["odds"]
    posted = odds_ladder(table, bet) if bet.base is None and not table.state.odds_on(bet) \
        else None
    rich = _RichBet(
        working_now=info["working_now"], remove=info["remove"], toggle=info["toggle"],
        ladder=_bet_ladder(table, bet), up=info["press_to"],
        raised=None if raised is None else raised["last"], odds_posted=posted,
        odds=None if odds is None else (odds["first"], odds["step"], odds["last"]))
    # What ``_bet_cut`` asks of the balance, at most: a change's cost and an odds bet's stake
    # never fall as the amount rises (nor does a commission), so a balance that covers the
    # top rung of each covers every rung below it, and cuts nothing.
    pack, state = table.pack, table.state
    cap = 0
    if rich.up is not None and rich.raised is not None:
        wager = state.compiled[bet.wager]
        cap = max(cap, change_cost(pack, wager, bet, rich.raised), rich.raised - bet.amount)
    if rich.odds_posted is not None and rich.odds is not None:
        odds_wager = state.compiled[odds_code_for(bet.wager)]
        cap = max(cap, stake(pack, odds_wager, rich.odds[2]), rich.odds[2])
    return replace(rich, cap=cap, whole=_cut_bet(table, bet, rich, RICH))


def _bet_cut(table: Table, bet: Bet, rich: _RichBet, balance: int) -> dict[str, Any]:
    """``_bet_answers`` for ``balance``, from the answers whatever the balance: the engine
    refuses a change or an odds bet for the balance last (``change_cost``, ``stake``), so
    what it takes is what it takes but for the balance, cut to what the balance covers
    (nothing, from ``rich.cap`` up: three quarters of a stadium's players)."""
    if balance >= rich.cap and rich.whole is not None:
        return rich.whole
    return _cut_bet(table, bet, rich, balance)


def _cut_bet(table: Table, bet: Bet, rich: _RichBet, balance: int) -> dict[str, Any]:
    """``_bet_cut``, worked out."""
    pack, state = table.pack, table.state
    ladder, press = rich.ladder, None
    if rich.up is not None and rich.raised is not None and ladder is not None:
        wager, raised_top = state.compiled[bet.wager], rich.raised

        def fits(amount: int) -> bool:
            return amount <= raised_top and change_cost(pack, wager, bet, amount) <= balance

        if fits(rich.up):
            press = rich.up
            first, step, last = ladder
            raised = _affordable((rich.up, step, last), balance + bet.amount, fits)
            ladder = None if raised is None else (first, step, raised[2])
    odds = None
    if rich.odds_posted is not None and rich.odds is not None:
        odds_wager = state.compiled[odds_code_for(bet.wager)]
        odds_top = rich.odds[2]
        odds = _affordable(rich.odds_posted, balance, lambda amount: amount <= odds_top and (
            stake(pack, odds_wager, amount) <= balance))
    return _shared(_ANSWERS, (rich.working_now, rich.remove, rich.toggle, ladder, press, odds),
                  lambda: {"working_now": rich.working_now, "remove": rich.remove,
                           "toggle": rich.toggle, "ladder": _ladder(ladder), "press_to": press,
                           "odds": _ladder(odds)})


_ANSWERS: dict[tuple[Any, ...], dict[str, Any]] = {}
"""``_bet_cut``'s answers, one object for equal ones (``shared``): a roll that leaves a bet's
answers as they were leaves them the object its player was sent, so that its patch is found
empty by identity."""


def placard(table: Table) -> dict[str, Any]:
    """The table's placard: the line minimum and maximum, and the odds allowed."""
    pack = table.pack
    code = "pass" if "pass" in pack.menu_in_order else next(iter(pack.menu_in_order), "")
    lines: list[str] = []
    if code:
        limits, _ = pack.limits(code)
        lines.append(f"Table minimum {_dollars(limits.minimum)} · maximum "
                     f"{_dollars(limits.maximum)}")
    if "odds" in pack.menu_in_order and "odds.limit.mode" in pack.rules:
        if pack.value("odds.limit.mode") == "345x":
            lines.append("Odds 3-4-5x")
        else:
            lines.append(f"Odds {pack.value('odds.limit.multiple')}x")
    return {"name": str(pack.get("table.description", table.state.table_id)), "lines": lines}


PLAYER_RULE_PREFIXES = ("limits.", "paytable.", "odds.", "working.", "removal.",
                        "commission.", "payout.", "menu.", "fire.", "bonus.", "noroll.")


def rules_panel(table: Table) -> list[dict[str, Any]]:
    """The rules a player bets under, for the page's rules panel.

    A citation is shown only where the rule is the table's own jurisdiction's regulation; a
    stand-in from another regulator or a house default is shown as what it is, without the
    foreign citation (a PA player is not told a Québec rule governs the table).
    """
    return _rules_panel(table.pack)


@functools.lru_cache(maxsize=64)
def _rules_panel(pack: RulePack) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for rule_id, rule in sorted(pack.rules.items()):
        if not rule_id.startswith(PLAYER_RULE_PREFIXES):
            continue
        status = getattr(rule.status, "value", str(rule.status))
        regulation = status == "regulation"
        out.append({"rule": rule_id, "value": _value_text(rule_id, rule.value),
                    "status": "regulation" if regulation else (
                        "house rule" if status == "industry-default"
                        else "house rule (configurable)"),
                    "citation": rule.citation if regulation else ""})
    return out


def _value_text(rule_id: str, value: Any) -> str:
    """A rule's value as the rules panel says it.

    >>> _value_text("limits.field", {"maximum": 2500, "minimum": 100, "unit": 100})
    'minimum $1, maximum $25, unit $1'
    """
    if rule_id.startswith("limits.") and isinstance(value, dict):
        # In this order whatever the dict's (a pack read back from the log has its keys
        # sorted: a table opened here and the same table resumed said it differently).
        parts = [f"{k} {_dollars(int(value[k]))}" for k in ("minimum", "maximum", "unit")
                 if isinstance(value.get(k), int)]
        return ", ".join(parts) or str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


CONSOLE_STEPS: dict[str, type[g.Command]] = {
    "no-more-bets": g.CloseBetting, "overturn": tcmd.OverturnNoRoll,
    "collect": g.CollectLosers, "pay": g.PayWinners, "move-puck": g.MovePuck,
    "complete-round": g.CompleteRound, "shake": tcmd.ShakeShaker,
    "uncover": tcmd.UncoverShaker,
}
"""The console's buttons that take nothing but who presses them."""


def console_can(table: Table, actor: str, role_for: Callable[[type[g.Command]], Role]
                ) -> dict[str, bool]:
    """For each simple console button: would the engine take it from ``actor`` now?"""
    out: dict[str, bool] = {}
    for name, cls in CONSOLE_STEPS.items():
        try:
            role = role_for(cls)
        except ValueError:  # not assigned here: nothing is offered
            out[name] = False
            continue
        out[name] = table.can(cls(actor=actor, role=role))
    out.update(console_probes(table, actor, role_for))
    return out
