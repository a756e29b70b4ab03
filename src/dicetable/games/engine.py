"""The game engine: ``decide(state, command) -> events``; ``apply`` folds them (lessons 1-3).

``decide`` never changes the state. A refused command raises a typed error that names the
broken rule and its citation. Craps and Props & Hops share this engine and differ in their
round flow (``CrapsEngine``, ``PropsHopsEngine``).

Table policy read from the rule pack: working status, commissions and payout rounding.

Is an amount a wager may be made in: limits, betting unit, equal parts, an exact payout.

One check for the live engine and the simulator's strategy files alike.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, TypeVar

from dicetable.core.errors import IllegalWager, InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.events import Emitter as Stamps
from dicetable.core.events import carried
from dicetable.core.money import (
    CommissionRounding,
    Rounding,
    commission,
    commissions,
    format_cents,
    pays_whole,
    round_amount,
)
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.catalogue import (
    GAME_ENTRIES,
    Variant,
    decided_by,
    decides,
    handlers,
    needs_of,
    variant_of,
    variants,
)
from dicetable.games.state import Bet, Pending, Phase, TableState
from dicetable.rules.model import RulePack, expand_facts, family_of, is_code
from dicetable.wagers.compile import (
    ODDS_LAY,
    CompiledWager,
    compile_pack,
    odds_code_for,
    point_state_name,
)

K = TypeVar("K")


def check_amount(pack: RulePack, wager: CompiledWager, amount: int, limit_code: str, *,
                 maximum: tuple[int, str] | None = None, state: int | None = None) -> None:
    """Raise unless ``amount`` cents may be wagered on ``wager``.

    ``limit_code`` names whose limits apply (``odds`` for odds); ``maximum`` replaces the
    posted maximum with another one and the rule it comes from (the odds multiple);
    ``state``, when known, is the wager state the stake stands in: only the payouts still
    reachable from it must be exact.
    """
    limits, limit_rule = pack.limits(limit_code)
    cite = pack.cite(limit_rule)
    if amount <= 0:
        raise InvalidInput("a wager is a positive amount", rule="money.amount")
    if amount % limits.unit:
        raise IllegalWager(f"{format_cents(amount)} is not a multiple of the "
                           f"{format_cents(limits.unit)} betting unit",
                           rule=limit_rule, citation=cite)
    if amount < limits.minimum:
        raise IllegalWager(f"{wager.name} minimum is {format_cents(limits.minimum)}",
                           rule=limit_rule, citation=cite)
    most, most_rule = maximum or (limits.maximum, limit_rule)
    if amount > most:
        raise IllegalWager(f"{wager.name} maximum here is {format_cents(most)}",
                           rule=most_rule, citation=pack.cite(most_rule))
    if wager.parts > 1 and amount % (wager.parts * limits.unit):
        raise IllegalWager(f"{wager.name} is {wager.parts} equal parts: bet a multiple of "
                           f"{format_cents(wager.parts * limits.unit)}",
                           rule=limit_rule, citation=cite)
    if pack.payout_rounding is Rounding.REFUSE:
        unit = pack.payout_unit
        payouts = wager.payouts if state is None else wager.payouts_from(state)
        unpaid = [net for net in payouts if not pays_whole(amount, net, unit)]
        if unpaid:
            net = min(unpaid)  # the least payout the amount cannot pay names the refusal
            raise IllegalWager(
                f"{format_cents(amount)} on {wager.name} cannot be paid at "
                f"{net.numerator} to {net.denominator} in {format_cents(unit)} units",
                rule="payout.inexact", citation=pack.cite("payout.inexact"))


def amount_step(pack: RulePack, wager: CompiledWager, limit_code: str) -> int:
    """The step between the amounts ``check_amount`` accepts on ``wager`` (cents).

    Every accepted amount is a multiple of the betting unit, of the wager's equal parts and,
    where an unpayable win is refused, of what makes each net payout whole: the least common
    multiple of those, so the accepted amounts are that step's multiples within the limits.

    >>> from dicetable.games.packs import compile_pack, load_preset
    >>> pack = load_preset("pa-craps")
    >>> amount_step(pack, compile_pack(pack)["place6"], "place6")   # 7 to 6 in $0.25 units
    300
    """
    limits, _ = pack.limits(limit_code)
    step = math.lcm(limits.unit, max(1, wager.parts) * limits.unit)
    if pack.payout_rounding is Rounding.REFUSE:
        unit = pack.payout_unit
        for net in wager.payouts:
            # amount * p / q is a whole number of units exactly when amount is a multiple of
            # q * unit / gcd(p, q * unit).
            whole = Fraction(net.denominator * unit, math.gcd(net.numerator,
                                                              net.denominator * unit))
            step = math.lcm(step, int(whole))
    return step


def legal_amounts(pack: RulePack, wager: CompiledWager, limit_code: str, *,
                  maximum: int | None = None) -> tuple[int, int, int] | None:
    """The accepted amounts as (first, step, last), or None when none is.

    ``maximum`` replaces the posted maximum (the odds behind a given line bet).
    """
    limits, _ = pack.limits(limit_code)
    step = amount_step(pack, wager, limit_code)
    first = -(-max(limits.minimum, 1) // step) * step
    most = limits.maximum if maximum is None else maximum
    last = most // step * step
    return (first, step, last) if first <= last else None


TOGGLE_FAMILIES = frozenset({"place", "buy", "lay", "lose", "hard", "big", "odds"})
"""Multi-roll wagers a player may call on or off (working.player_may_toggle)."""

_COMEOUT_RULE = {f: f"working.comeout.{f}" for f in ("place", "buy", "lay", "lose", "hard",
                                                      "big")}


def working_rule(state: TableState, bet: Bet) -> str | None:
    """The rule deciding whether ``bet`` works on this roll, if any rule does."""
    if bet.working is not None:
        return "working.player_may_toggle"
    if state.point is not None:
        return None
    family = family_of(bet.layout_code)
    if family in _COMEOUT_RULE:
        return _COMEOUT_RULE[family]
    if family == "odds" and bet.base is not None:
        base = state.bets.get(bet.base)
        if base is not None and base.wager == "dontcome":
            return "working.comeout.dontcome_odds"
        if base is not None and (base.wager == "come" or base.wager.startswith("put")):
            return "working.comeout.come_odds"
    return None


def is_working(state: TableState, bet: Bet) -> bool:
    """Does ``bet`` act on the next roll? A player's own call wins over the table's policy."""
    if bet.working is not None:
        return bet.working
    rule = working_rule(state, bet)
    return True if rule is None else state.rules().flag(rule, True)


def commission_kind(wager: str) -> str | None:
    fam = family_of(wager) if not wager.startswith("odds:") else "odds"
    return fam if fam in ("buy", "lay") else None


def commission_for(pack: RulePack, wager: CompiledWager, amount: int) -> int:
    """The commission on a buy or lay bet of ``amount`` (buy: on the wager; lay: on the win)."""
    terms = _commission_basis(pack, wager)
    if terms is None:
        return 0
    per, rate, unit, minimum, rounding = terms
    return commission(amount * per, rate, unit, minimum, rounding)


def _commission_basis(pack: RulePack, wager: CompiledWager
                      ) -> tuple[Fraction | int, Fraction, int, int, CommissionRounding] | None:
    """What a commission on ``wager`` is charged on per unit of the amount (buy: the wager;
    lay: the win), then its rate, unit, minimum and rounding; None: no commission."""
    kind = commission_kind(wager.code)
    if kind is None:
        return None
    return (max(wager.payouts) if kind == "lay" else 1, *_commission_terms(pack, kind))


@functools.lru_cache(maxsize=256)  # packs are immutable: their terms are read once
def _commission_terms(pack: RulePack, kind: str
                      ) -> tuple[Fraction, int, int, CommissionRounding]:
    """The rate, unit, minimum and rounding of a buy or lay commission."""
    return (pack.rate(f"commission.{kind}.rate"), int(pack.value(f"commission.{kind}.unit")),
            int(pack.value(f"commission.{kind}.minimum")), pack.commission_rounding(kind))


def commission_up_front(pack: RulePack, wager: str) -> bool:
    kind = commission_kind(wager)
    return kind is not None and pack.value(f"commission.{kind}.when") == "up-front"


def stake(pack: RulePack, wager: CompiledWager, amount: int) -> int:
    """What placing ``amount`` on ``wager`` takes from the player's balance: the amount, and
    the commission where it is paid up front (the engine's ``money.balance`` check)."""
    return stakes(pack, wager, (amount,))[0]


def stakes(pack: RulePack, wager: CompiledWager, amounts: Iterable[int]) -> tuple[int, ...]:
    """``stake`` of each of ``amounts``, the rules looked up once (a ladder's every rung).

    >>> from dicetable.games.packs import compile_pack, load_preset
    >>> pack = load_preset("pa-craps")
    >>> stakes(pack, compile_pack(pack)["buy4"], (2000, 4000))  # 5% up front, in dollars
    (2100, 4200)
    >>> stakes(pack, compile_pack(pack)["place6"], (600, 1200))
    (600, 1200)
    """
    terms = _commission_basis(pack, wager) if commission_up_front(pack, wager.code) else None
    if terms is None:
        return tuple(amounts)
    per, rate, unit, minimum, rounding = terms
    amounts = list(amounts)
    return tuple(amount + fee for amount, fee in zip(
        amounts, commissions(amounts, per, rate, unit, minimum, rounding), strict=True))


def change_cost(pack: RulePack, wager: CompiledWager, bet: Bet, amount: int) -> int:
    """What changing ``bet`` to ``amount`` takes from the player's balance: the difference,
    and the difference in a commission paid up front (the engine's ``money.balance`` check
    on a change, its last; ``server.controls`` relies on that)."""
    fee = 0
    if commission_up_front(pack, bet.wager):
        fee = commission_for(pack, wager, amount) - bet.commission
    return amount - bet.amount + fee


def payout_amount(pack: RulePack, stake: int, net: Fraction) -> tuple[int, int]:
    """The win on ``stake`` at ``net`` to 1, rounded per the pack, and the rounding applied."""
    exact = stake * net
    rounding = pack.payout_rounding
    unit = pack.payout_unit
    if rounding is Rounding.REFUSE:
        # Placement refused every unpayable amount, so only a whole cent count remains here.
        paid = round_amount(exact, 1, Rounding.CENT)
    else:
        paid = round_amount(exact, unit, rounding)
    return paid, paid - int(exact // 1)


Refusal = Callable[[], IllegalWager]
"""A refusal found but not built: ``can`` and ``placeable_codes`` only ask whether there is
one (no message, no citation, no exception); ``decide`` builds and raises it."""


PLAYER_COMMANDS = (cmd.JoinTable, cmd.LeaveTable, cmd.BuyChips, cmd.CashOut, cmd.PlaceBet,
                   cmd.ChangeBet, cmd.RemoveBet, cmd.SetWorking)
STAFF_ON_BEHALF = frozenset({Role.DEALER, Role.STICKPERSON, Role.BOXPERSON, Role.FLOORPERSON,
                             Role.SYSTEM})
"""Staff who may act for a player at a live table (a dealer books the bet the player calls)."""

class Authorizer(Protocol):
    """Decides whether a command's role may give it. Raises ``RoleNotPermitted`` if not."""

    def __call__(self, state: TableState, command: cmd.Command) -> None: ...


def default_authorizer(state: TableState, command: cmd.Command) -> None:
    """Players act only for themselves; table operations need a member of staff.

    The procedure layer (``dicetable.table``) replaces this with the cited permission matrix.
    """
    if isinstance(command, PLAYER_COMMANDS):
        owner = owner_of(state, command)
        if command.role is Role.PLAYER and owner is not None and owner != command.actor:
            raise RoleNotPermitted(f"{command.actor} may not act for {owner}",
                                   rule="authority.player-own")
        if command.role is not Role.PLAYER and command.role not in STAFF_ON_BEHALF:
            raise RoleNotPermitted(f"a {command.role} does not handle players' wagers",
                                   rule="authority.player-own")
    elif isinstance(command, cmd.OpenTable):
        return
    elif command.role is Role.PLAYER:
        raise RoleNotPermitted(f"a player may not {type(command).__name__}",
                               rule="authority.staff")


def owner_of(state: TableState, command: cmd.Command) -> str | None:
    """The player a player's command is about (named, or the owner of its bet)."""
    if isinstance(command, cmd.PlayerCommand):
        return command.player
    if isinstance(command, cmd.BetCommand) and command.bet in state.bets:
        return state.bets[command.bet].player
    return None


@dataclass
class Emitter(Stamps[TableState, cmd.Command, ev.Event]):
    """Stamps a table's events: its table, the command's actor and role."""

    table: str = ""

    def stamp(self) -> dict[str, Any]:
        return {"table": self.table or self.state.table_id, "actor": self.command.actor,
                "role": self.command.role}


def at_step(step: int) -> Callable[[TableState], bool]:
    """A settlement chore's need (``decides(needs=...)``): a roll being settled, at step
    ``step`` (0 losers, 1 winners, 2 the roll's last chore); ``Engine._pending_step`` refuses
    every other state."""
    return lambda state: state.phase is Phase.SETTLING and state.pending is not None \
        and state.pending.step == step


class Engine:
    """Rules shared by every dice game: players, chips, wagers, settlement order."""

    game = ""

    def __init__(self, authorizer: Authorizer = default_authorizer) -> None:
        self.authorize = authorizer
        # The catalogue names each command's handler; a game's own (the puck, the round)
        # is found on its subclass.
        self._handlers: dict[type[cmd.Command], Callable[[TableState, Any, Emitter], None]] = \
            handlers(self, GAME_ENTRIES)
        self._needs = needs_of(type(self))

    # -- entry point ---------------------------------------------------------------------------
    def decide(self, state: TableState, command: cmd.Command, now: str) -> list[ev.Event]:
        handler = self._handlers.get(type(command))
        if handler is None:
            raise InvalidInput(f"{type(command).__name__} is not a {self.game} command",
                               rule="commands")
        if state.phase is Phase.NEW and not isinstance(command, cmd.OpenTable):
            raise ProcedureViolation("the table is not open", rule="table.open")
        self.authorize(state, command)
        out = Emitter(state, command, now)
        handler(state, command, out)
        return out.events

    # -- table and players -------------------------------------------------------------------
    @decides(cmd.OpenTable)
    def _open(self, state: TableState, c: cmd.OpenTable, out: Emitter) -> None:
        if state.phase is not Phase.NEW:
            raise ProcedureViolation("the table is already open", rule="table.open")
        if c.pack.game not in self.games:
            raise InvalidInput(f"pack {c.pack.id!r} is for {c.pack.game}, not {self.game}",
                               rule="game")
        # Fail here, not mid-game, if a paytable cannot compile.
        compile_pack(c.pack, variant_of(c.pack.game).points)
        out.table = c.table
        if c.mode not in ("bare", "live", "electronic"):
            raise InvalidInput(f"no table mode {c.mode!r} (live, electronic or bare)",
                               rule="table.mode")
        out.emit(ev.TableOpened, rule=c.pack.cite("game"), game=c.pack.game,
                 pack=c.pack.to_dict(), pack_digest=c.pack.digest, mode=c.mode,
                 automations=c.automations)

    @property
    def games(self) -> tuple[str, ...]:
        return (self.game,)

    def _player(self, state: TableState, player: str) -> None:
        if player not in state.players:
            raise InvalidInput(f"{player!r} has not joined this table", rule="table.players")

    @decides(cmd.JoinTable)
    def _join(self, state: TableState, c: cmd.JoinTable, out: Emitter) -> None:
        if not c.player or not c.player.strip():
            raise InvalidInput("a player needs a name", rule="table.players")
        if c.seat is not None:
            positions = int(state.rules().value("table.positions"))
            if not 1 <= c.seat <= positions:
                raise InvalidInput(f"seat {c.seat} does not exist: this table has "
                                   f"{positions} player positions", rule="table.positions",
                                   citation=state.rules().cite("table.positions"))
            taken = [p for p, info in state.players.items() if info.seat == c.seat
                     and p != c.player]
            if taken:
                raise ProcedureViolation(f"seat {c.seat} is taken by {taken[0]}",
                                         rule="table.seats")
        out.emit(ev.PlayerJoined, rule=state.rules().cite("authority.seat"), player=c.player,
                 seat=c.seat)

    @decides(cmd.LeaveTable)
    def _leave(self, state: TableState, c: cmd.LeaveTable, out: Emitter) -> None:
        """A player leaves; no wager of theirs is ever left on the layout without a word.

        Where only seated players wager (Props & Hops, 668a.2(c)) a player who has wagered
        stays seated until the round is complete. Elsewhere ``leaving.wagers`` says: refuse
        until the wagers are down or decided, or take down every wager that may be taken
        down now (and refuse while one may not).
        """
        self._player(state, c.player)
        pack = state.rules()
        bets = sorted(state.bets_of(c.player), key=lambda b: b.placed_seq)
        if bets and pack.flag("wagering.seated_only"):
            raise ProcedureViolation(
                f"{c.player} has wagered and stays seated until the round is finished",
                rule="wagering.seated_only", citation=pack.cite("wagering.seated_only"))
        if bets:
            listed = ", ".join(f"{b.id} {state.compiled[b.wager].name}" for b in bets)
            # Packs stored before the rule existed refuse, as every shipped preset does.
            if pack.get("leaving.wagers", "refuse") != "take-down":
                raise ProcedureViolation(
                    f"{c.player} has wagers on the layout ({listed}); take them down or let "
                    "them be decided before leaving", rule="leaving.wagers",
                    citation=pack.cite("leaving.wagers"))
            self.betting_open(state)
            for bet in bets:
                if bet.base is None:
                    self._may(state, bet, "taken down as the player leaves")
            for bet in bets:
                out.emit(ev.BetRemoved, rule=pack.cite("leaving.wagers"), bet=bet.id,
                         returned=bet.amount, commission_returned=0)
        out.emit(ev.PlayerLeft, rule=pack.cite("authority.seat"), player=c.player)

    @decides(cmd.BuyChips)
    def _buy(self, state: TableState, c: cmd.BuyChips, out: Emitter) -> None:
        self._player(state, c.player)
        if c.amount <= 0:
            raise InvalidInput(f"cannot buy {format_cents(c.amount)} in chips",
                               rule="money.amount")
        out.emit(ev.ChipsBought, rule=state.rules().cite("authority.chips"),
                 **carried(c, ev.Chips))

    @decides(cmd.CashOut)
    def _cash_out(self, state: TableState, c: cmd.CashOut, out: Emitter) -> None:
        self._player(state, c.player)
        if c.amount <= 0 or c.amount > state.balance(c.player):
            raise InvalidInput(f"cannot cash out {format_cents(c.amount)}; "
                               f"{c.player} has {format_cents(state.balance(c.player))}",
                               rule="money.balance")
        out.emit(ev.ChipsCashedOut, rule=state.rules().cite("authority.chips"),
                 **carried(c, ev.Chips))

    # -- placing wagers ----------------------------------------------------------------------------
    @staticmethod
    def returns_first(state: TableState) -> None:
        """Raise while a no roll's wagers are still to be returned: nothing moves before."""
        if state.returns_due:
            raise ProcedureViolation("a no roll returns the wagers first (return-wagers)",
                                     rule="noroll.effect",
                                     citation=state.rules().cite("noroll.effect"))

    def betting_open(self, state: TableState) -> None:
        """Raise unless wagers may be made now."""
        self.returns_first(state)
        if state.phase is not Phase.BETTING:
            rule = state.variant.closed_rule
            raise ProcedureViolation(f"wagers are closed ({state.phase.value})", rule=rule,
                                     citation=state.rules().cite(rule))

    @decides(cmd.PlaceBet)
    def _place(self, state: TableState, c: cmd.PlaceBet, out: Emitter) -> None:
        pack = state.rules()
        wager, start, base = self.placement(state, c)
        duplicate = state.bets_on_spot(c.player, wager.code, start, base)
        if duplicate:
            raise IllegalWager(f"{c.player} already has {wager.name} ({duplicate[0].id}); "
                               "change that bet instead", rule="wagers.one-per-spot")
        self.check_amount(state, wager, c.amount, base, start)
        # The last check, and the only one a balance enters (``controls`` relies on it).
        cost = stake(pack, wager, c.amount)
        if cost > state.balance(c.player):
            raise IllegalWager(f"{c.player} has {format_cents(state.balance(c.player))}, "
                               f"short of {format_cents(cost)}",
                               rule="money.balance")
        fee = cost - c.amount
        rule_id = f"menu.{family_of(c.wager)}"
        out.emit(ev.BetPlaced, rule=pack.cite(rule_id), bet=f"b{state.bet_counter + 1}",
                 player=c.player, wager=wager.code, amount=c.amount, state=start, base=base,
                 working=c.working, commission=fee, medium=c.medium)

    def placeable(self, state: TableState, player: str, code: str,
                  base: str | None = None) -> bool:
        """May ``player`` make wager ``code`` now, whatever the amount? (A layout spot's state.)"""
        return bool(self.placeable_codes(state, player, [code], base))

    def placeable_codes(self, state: TableState, player: str, codes: Iterable[str],
                        base: str | None = None) -> list[str]:
        """The wagers of ``codes`` that ``player`` may make now, whatever the amount."""
        return self._placeable(state, player, ((code, code, base) for code in codes))

    def odds_bases(self, state: TableState, player: str, bets: Iterable[str]) -> list[str]:
        """The bets of ``bets`` that ``player`` may put odds behind now, whatever the amount
        (``placeable_codes`` of the odds behind each)."""
        return self._placeable(state, player, ((bet, "odds", bet) for bet in bets))

    def _placeable(self, state: TableState, player: str,
                   wagers: Iterable[tuple[K, str, str | None]]) -> list[K]:
        """The keys of the ``(key, wager code, base)`` that ``player`` may place now, whatever
        the amount: the checks of the player asked once, then each wager's own."""
        probe = cmd.PlaceBet(actor=player, role=Role.PLAYER, player=player, wager="", amount=0)
        try:
            self._may_wager(state, probe)
        except ValueError:
            return []
        return [key for key, code, base in wagers if self._wager_refusal(state, cmd.PlaceBet(
            actor=player, role=Role.PLAYER, player=player, wager=code, amount=0,
            base=base)) is None]

    def placement(self, state: TableState,
                  c: cmd.PlaceBet) -> tuple[CompiledWager, int, str | None]:
        """Every check of a wager but its amount; its compiled table, start state and base."""
        self._may_wager(state, c)
        return self._wager_start(state, c)

    def _may_wager(self, state: TableState, c: cmd.PlaceBet) -> None:
        """The checks that do not depend on which wager: the player, the phase, the medium."""
        pack = state.rules()
        self._player(state, c.player)
        self.betting_open(state)
        if c.medium not in pack.get("wagering.medium", []):
            raise IllegalWager(f"a wager cannot be made with {c.medium}",
                               rule="wagering.medium", citation=pack.cite("wagering.medium"))
        if pack.flag("wagering.seated_only") and state.players[c.player].seat is None:
            raise IllegalWager(f"{c.player} is not seated; only seated players may wager",
                               rule="wagering.seated_only",
                               citation=pack.cite("wagering.seated_only"))

    def _wager_start(self, state: TableState,
                     c: cmd.PlaceBet) -> tuple[CompiledWager, int, str | None]:
        refusal = self._wager_refusal(state, c)
        if refusal is not None:
            raise refusal()
        if c.wager == "odds":
            return self._odds_start(state, c)
        wager = state.compiled[c.wager]
        return wager, wager.start[state.point], None

    def _wager_refusal(self, state: TableState, c: cmd.PlaceBet) -> Refusal | None:
        """What refuses ``c``'s wager now (the menu, its timing, odds' base, on/off), not yet
        built: asking whether a wager may be made costs no exception."""
        pack = state.rules()
        if not is_code(c.wager):
            return lambda: IllegalWager(f"no wager is called {c.wager!r}", rule="wagers.menu")
        if not pack.offers(c.wager):
            return lambda: pack.not_offered(c.wager)
        if c.wager == "odds":
            refusal = self._odds_refusal(state, c)
            if refusal is not None:
                return refusal
            wager = state.compiled[odds_code_for(state.bets[c.base or ""].wager)]
        else:
            if c.base is not None:
                return lambda: IllegalWager(f"{c.wager} does not stand behind another bet",
                                            rule="wagers.odds")
            wager = state.compiled[c.wager]
            refusal = self._start_refusal(state, wager)
            if refusal is not None:
                return refusal
        if c.working is not None:
            return self._toggle_refusal(pack, wager)
        return None

    @staticmethod
    def placement_counters(state: TableState) -> tuple[bool, bool]:
        """All that deciding a wager reads of the roll counters (``_start_refusal``: the Fire
        and bonus bets' "before the first roll" and "after a seven"), so that what is
        remembered of those decisions (``server.controls``) holds across rolls that leave
        these alike. A check that reads more of the counters adds it here."""
        return state.hand_rolls == 0, state.rolls_since_seven == 0

    def _start_refusal(self, state: TableState, wager: CompiledWager) -> Refusal | None:
        # What this reads of the roll counters is ``placement_counters``.
        pack = state.rules()
        if wager.family == "fire" and (state.hand_rolls or state.point is not None):
            return lambda: IllegalWager(
                "the Fire Bet is made before a new shooter's first come-out",
                rule="fire.placement", citation=pack.cite("fire.placement"))
        if wager.family == "bonus":
            fresh = state.hand_rolls == 0 if pack.value("bonus.placement") == "new-shooter" \
                else state.rolls_since_seven == 0 and state.point is None
            if not fresh:
                return lambda: IllegalWager(
                    f"{wager.name} is made only at the start of a shooter's roll or after a 7",
                    rule="bonus.placement", citation=pack.cite("bonus.placement"))
        if not wager.placeable(state.point):
            when = "on the come-out" if state.point is None else "while a point is on"
            hint = {"pass": "; a Put bet takes a number after the come-out",
                    "dontpass": "; Don't Pass is made on the come-out"}.get(wager.code, "")
            return lambda: IllegalWager(f"{wager.name} cannot be made {when}{hint}",
                                        rule=f"menu.{wager.family}",
                                        citation=pack.cite(f"menu.{wager.family}"))
        return None

    def _odds_start(self, state: TableState, c: cmd.PlaceBet) -> tuple[CompiledWager, int, str]:
        base = state.bets[c.base or ""]
        point = self.bet_point(state, base)
        assert point is not None  # ``_odds_refusal`` refuses odds behind no point
        wager = state.compiled[odds_code_for(base.wager)]
        return wager, wager.state_index(point_state_name(wager.code, point)), base.id

    def _odds_refusal(self, state: TableState, c: cmd.PlaceBet) -> Refusal | None:
        pack = state.rules()
        base = state.bets.get(c.base or "")
        if base is None or base.player != c.player:
            return lambda: IllegalWager(
                "odds stand behind one of the player's own line or put bets; "
                f"no such bet {c.base!r}", rule="wagers.odds", citation=pack.cite("menu.odds"))
        base_wager = state.compiled[base.wager]
        if base_wager.family not in ("line", "put"):
            return lambda: IllegalWager(f"odds cannot stand behind {base_wager.name}",
                                        rule="wagers.odds", citation=pack.cite("menu.odds"))
        if self.bet_point(state, base) is None:
            return lambda: IllegalWager(
                f"{base_wager.name} has no point yet; odds come after it",
                rule="wagers.odds", citation=pack.cite("menu.odds"))
        if state.odds_on(base):
            return lambda: IllegalWager(f"{base.id} already has odds; change them instead",
                                        rule="wagers.one-per-spot")
        return None

    @staticmethod
    def bet_point(state: TableState, bet: Bet) -> int | None:
        """The number a line or put bet stands on, if any."""
        name = state.compiled[bet.wager].states[bet.state]
        digits = name.split()[-1]
        return int(digits) if digits.isdigit() else None

    def check_amount(self, state: TableState, wager: CompiledWager, amount: int,
                     base: str | None, wager_state: int | None = None) -> None:
        """Limits, betting unit, equal parts and an exactly payable win from its state."""
        code = "odds" if wager.family == "odds" else wager.code
        maximum = self.odds_maximum(state, wager, base) if base is not None else None
        check_amount(state.rules(), wager, amount, code, maximum=maximum, state=wager_state)

    def odds_maximum(self, state: TableState, wager: CompiledWager,
                     base_id: str) -> tuple[int, str]:
        """The most odds behind ``base_id``: 3-4-5x, or a flat multiple, of the flat bet."""
        pack = state.rules()
        base = state.bets[base_id]
        point = self.bet_point(state, base) or 0
        if pack.value("odds.limit.mode") == "345x":
            multiple = {4: 3, 10: 3, 5: 4, 9: 4, 6: 5, 8: 5}[point]
            rule = "odds.limit.mode"
        else:
            multiple = int(pack.value("odds.limit.multiple"))
            rule = "odds.limit.multiple"
        if wager.code == ODDS_LAY:
            # Laid odds are capped by what they win: the same multiple of the flat bet
            # (3-4-5x lets a don't player lay 6x on every point).
            lay_net = pack.net(f"paytable.odds.lay.{point}")
            return int(base.amount * multiple / lay_net), rule
        return base.amount * multiple, rule

    def may_toggle(self, state: TableState, wager: str) -> bool:
        """May a bet of ``wager`` be called on or off at all here (the pack's rule)? Asked
        without a refusal built, before the rest of a ``SetWorking`` is asked of ``can``."""
        return self._toggle_refusal(state.rules(), state.compiled[wager]) is None

    def holds_spot(self, state: TableState, player: str, wager: str) -> bool:
        """Has ``player`` a bet of ``wager`` (not odds) standing where a new one would start?
        Then a new one is refused (``wagers.one-per-spot``): the bet is changed instead."""
        start = state.compiled[wager].start[state.point]
        return any(b.wager == wager and b.state == start and b.base is None
                   for b in state.bets_of(player))

    def _check_toggle(self, pack: RulePack, wager: CompiledWager) -> None:
        refusal = self._toggle_refusal(pack, wager)
        if refusal is not None:
            raise refusal()

    @staticmethod
    def _toggle_refusal(pack: RulePack, wager: CompiledWager) -> Refusal | None:
        if wager.family not in TOGGLE_FAMILIES or not pack.flag("working.player_may_toggle"):
            return lambda: IllegalWager(f"{wager.name} cannot be called on or off",
                                        rule="working.player_may_toggle",
                                        citation=pack.cite("working.player_may_toggle"))
        return None

    # -- changing and removing wagers ----------------------------------------------------------
    def _bet(self, state: TableState, bet_id: str) -> Bet:
        bet = state.bets.get(bet_id)
        if bet is None:
            raise InvalidInput(f"no bet {bet_id!r} on the layout", rule="wagers.bet")
        return bet

    def removal_rule(self, state: TableState, bet: Bet) -> str:
        """The rule governing taking down or reducing ``bet``."""
        fam = state.compiled[bet.wager].family
        if fam in ("line", "put") and self.bet_point(state, bet) is not None:
            return "removal.dont_after_point" if bet.wager.startswith("dont") \
                else "removal.line_after_point"
        if fam == "fire":
            return "removal.fire"
        if fam == "bonus":
            return "removal.bonus"
        return "removal.standing"

    def _may(self, state: TableState, bet: Bet, action: str) -> None:
        pack = state.rules()
        rule = self.removal_rule(state, bet)
        value = pack.get(rule, "between-rolls")
        if rule == "removal.standing" and state.compiled[bet.wager].family == "line":
            return  # a line bet not yet in action (before its come-out) is simply withdrawn
        if value == "locked":
            raise IllegalWager(f"{bet.id} ({state.compiled[bet.wager].name}) cannot be "
                               f"{action}", rule=rule, citation=pack.cite(rule))

    @decides(cmd.RemoveBet)
    def _remove(self, state: TableState, c: cmd.RemoveBet, out: Emitter) -> None:
        bet = self._bet(state, c.bet)
        self.betting_open(state)
        self._may(state, bet, "taken down")
        pack = state.rules()
        kind = commission_kind(bet.wager)
        refund = bet.commission if kind and commission_up_front(pack, bet.wager) and pack.flag(
            f"commission.{kind}.refund_on_removal") else 0
        for odds in state.odds_on(bet):
            out.emit(ev.BetRemoved, rule=pack.cite("removal.standing"), bet=odds.id,
                     returned=odds.amount)
        out.emit(ev.BetRemoved, rule=pack.cite(self.removal_rule(state, bet)), bet=bet.id,
                 returned=bet.amount, commission_returned=refund)

    @decides(cmd.ChangeBet)
    def _change(self, state: TableState, c: cmd.ChangeBet, out: Emitter) -> None:
        bet = self._bet(state, c.bet)
        self.betting_open(state)
        pack = state.rules()
        if c.amount == bet.amount:
            raise InvalidInput(f"{bet.id} is already {format_cents(bet.amount)}",
                               rule="wagers.change")
        wager = state.compiled[bet.wager]
        rule = self.removal_rule(state, bet)
        if c.amount < bet.amount:
            self._may(state, bet, "reduced")
        elif rule in ("removal.line_after_point", "removal.dont_after_point"):
            raise IllegalWager(f"{bet.id} ({wager.name}) cannot be increased once its point is "
                               "set", rule=rule, citation=pack.cite(rule))
        elif wager.family in ("fire", "bonus"):
            self._may(state, bet, "increased")
        self.check_amount(state, wager, c.amount, bet.base, bet.state)
        # The last check, and the only one a balance enters (``controls`` relies on it).
        cost = change_cost(pack, wager, bet, c.amount)
        if cost > state.balance(bet.player):
            raise IllegalWager(f"{bet.player} has {format_cents(state.balance(bet.player))}",
                               rule="money.balance")
        out.emit(ev.BetChanged, rule=pack.cite(rule), bet=bet.id, amount=c.amount,
                 commission=cost - (c.amount - bet.amount))

    @decides(cmd.SetWorking)
    def _set_working(self, state: TableState, c: cmd.SetWorking, out: Emitter) -> None:
        bet = self._bet(state, c.bet)
        self.betting_open(state)
        pack = state.rules()
        self._check_toggle(pack, state.compiled[bet.wager])
        out.emit(ev.BetWorkingSet, rule=pack.cite("working.player_may_toggle"), bet=bet.id,
                 working=c.working)

    # -- the roll ---------------------------------------------------------------------------------
    @decides(cmd.CloseBetting, needs=lambda state: state.phase is Phase.BETTING)
    def _close(self, state: TableState, c: cmd.CloseBetting, out: Emitter) -> None:
        self.returns_first(state)
        if state.phase is not Phase.BETTING:
            raise ProcedureViolation(f"betting is not open ({state.phase.value})",
                                     rule="round.order")
        out.emit(ev.BettingClosed, rule=state.rules().cite("authority.close_betting"),
                 round=state.round)

    def roll_allowed(self, state: TableState) -> None:
        raise NotImplementedError

    def automatic_grounds(self, state: TableState, facts: Iterable[str]) -> tuple[str, ...]:
        listed = state.rules().get("noroll.automatic", [])
        return tuple(f for f in expand_facts(tuple(facts)) if f in listed)

    @decides(cmd.RecordRoll)
    def _roll(self, state: TableState, c: cmd.RecordRoll, out: Emitter) -> None:
        self.returns_first(state)
        self.roll_allowed(state)
        pack = state.rules()
        grounds = self.automatic_grounds(state, c.facts)
        if c.roll is None and not grounds:
            raise InvalidInput("record both faces, or the fact that made them unreadable",
                               rule="dice.faces")
        if c.distance is not None and not 0 <= c.distance <= 1:
            raise InvalidInput("distance is a fraction of the table's length, 0 to 1",
                               rule="throw.distance")
        out.emit(ev.DiceRolled, rule=pack.cite("authority.record_roll"),
                 **carried(c, ev.Throw))
        if grounds:
            out.emit(ev.NoRollCalled, rule=pack.cite("noroll.automatic"), grounds=grounds,
                     automatic=True)
            self.after_no_roll(state, out)

    def after_no_roll(self, state: TableState, out: Emitter) -> None:
        """What a no roll does at once: nothing, at Craps (the roll does not count). What it
        does to the wagers is the pack's ``noroll.effect``: ``wagers-stand``, nothing moves;
        ``wagers-returned`` (Props & Hops 585.3(f)-(g); a house pack may choose it at Craps),
        every wager goes back, a chore of its own (``return-wagers``) that the dealer
        performs, or the table where it automates it (``dicetable.table.table``)."""

    def after_return(self, state: TableState, out: Emitter) -> None:
        """What follows the return of a no roll's wagers (Props & Hops: the round ends)."""

    @decides(cmd.ReturnWagers, needs=lambda state: state.returns_due)
    def _return_wagers(self, state: TableState, c: cmd.ReturnWagers, out: Emitter) -> None:
        pack = state.rules()
        if not state.returns_due:
            raise ProcedureViolation("there are no wagers to return: a no roll returns them "
                                     "where the pack says so", rule="noroll.effect",
                                     citation=pack.cite("noroll.effect"))
        items = tuple(ev.Return(b.id, b.player, b.layout_code, b.amount, b.commission)
                      for b in sorted(state.bets.values(), key=lambda b: b.placed_seq))
        out.emit(ev.WagersReturned, rule=pack.cite("noroll.effect"), items=items)
        self.after_return(state, out)

    @staticmethod
    def no_roll_window_open(state: TableState, raising: bool = False) -> bool:
        """Whether a no roll may still be called (``noroll.window``): on the roll just
        thrown, until the first settlement chore is recorded. Once anyone has acted on the
        result it stands; a no roll is never a second chance."""
        pack = state.rules()
        # A pack stored before the rule was written ran this same window.
        last_step = NO_ROLL_WINDOWS[str(pack.get("noroll.window", "before-settlement"))]
        pending = state.pending
        if state.phase is Phase.SETTLING and pending is not None and pending.step <= last_step:
            return True
        if not raising:
            return False
        why = ("settlement of this roll has begun (the losers are collected): the roll stands"
               if state.phase is Phase.SETTLING and pending is not None
               else "there is no roll just thrown to call it on")
        raise ProcedureViolation(
            f"a no roll is called on the roll just thrown, before anyone acts on its result; "
            f"{why}", rule="noroll.window", citation=pack.cite("noroll.window"))

    @decides(cmd.CallNoRoll)
    def _call_no_roll(self, state: TableState, c: cmd.CallNoRoll, out: Emitter) -> None:
        pack = state.rules()
        self.no_roll_window_open(state, raising=True)
        if c.role not in pack.roles("noroll.callers"):
            raise RoleNotPermitted(f"a {c.role} may not call a no roll here",
                                   rule="noroll.callers", citation=pack.cite("noroll.callers"))
        if not c.grounds:
            raise InvalidInput("a no roll names its grounds", rule="noroll.grounds")
        out.emit(ev.NoRollCalled, rule=pack.cite("noroll.callers"), grounds=tuple(c.grounds),
                 observed=tuple(c.observed))
        self.after_no_roll(state, out)

    # -- settlement chores ---------------------------------------------------------------------
    def _pending_step(self, state: TableState, step: int, what: str) -> Pending:
        """The settlement waiting for chore ``step``; refused when another chore is due."""
        pending = state.pending
        if state.phase is not Phase.SETTLING or pending is None:
            raise ProcedureViolation(f"there is no roll to {what}", rule="settlement.order")
        if pending.step != step:
            order = ("collect the losers", "pay the winners", "complete the roll")
            raise ProcedureViolation(
                f"{what}: settlement goes losers, winners, then the next roll; now: "
                f"{order[pending.step]}", rule="settlement.order",
                citation=state.rules().cite("settlement.order"))
        return pending

    @decides(cmd.CollectLosers, needs=at_step(0))
    def _collect(self, state: TableState, c: cmd.CollectLosers, out: Emitter) -> None:
        pending = self._pending_step(state, 0, "collect the losers")
        out.emit(ev.LosersCollected, rule=state.rules().cite("settlement.order"),
                 items=pending.losers)

    @decides(cmd.PayWinners, needs=at_step(1))
    def _pay(self, state: TableState, c: cmd.PayWinners, out: Emitter) -> None:
        pending = self._pending_step(state, 1, "pay the winners")
        out.emit(ev.WinnersPaid, rule=state.rules().cite("settlement.order"),
                 items=pending.payments)

    # -- queries ----------------------------------------------------------------------------------
    def may(self, state: TableState, command: cmd.Command) -> bool:
        """False when the game has no handler for the command, or the state is not what the
        handler needs at all (its ``decides(needs=...)``): ``decide`` would refuse it. Asked
        without raising; True says nothing more."""
        if type(command) not in self._handlers:
            return False  # not a command of this game
        need = self._needs.get(type(command))
        return need is None or need(state)

    def can(self, state: TableState, command: cmd.Command, now: str = "") -> bool:
        """True exactly when ``decide`` would accept ``command`` (for greying out controls)."""
        if not self.may(state, command):
            return False
        try:
            self.decide(state, command, now)
        except ValueError:
            return False
        return True


NO_ROLL_WINDOWS = {"before-settlement": 0}
"""``noroll.window``: the last settlement step (0: none done yet) at which a no roll may be
called."""

_ENGINES: dict[str, type[Engine]] = {}


def plays(variant: Variant, engine: type[Engine]) -> None:
    """Declare the engine a variant's tables run (the variant's module calls this once)."""
    _ENGINES[variant.name] = engine


def check_engines() -> None:
    """Refuse an engine that leaves a game command without a handler: each decides every
    catalogued game command but the other variants' last chores (the puck, the round)."""
    chores = {v.final_chore for v in variants()}
    for game, engine in _ENGINES.items():
        own = variant_of(game).final_chore
        missing = sorted(e.name for e in GAME_ENTRIES
                         if e.command not in decided_by(engine)
                         and (e.command not in chores or e.command is own))
        if missing:
            raise TypeError(f"{engine.__name__} ({game}) decides no {', '.join(missing)}")


def engine_of(game: str, authorizer: Authorizer = default_authorizer) -> Engine:
    """A new engine for a table of ``game``."""
    make = _ENGINES.get(game)
    if make is None:
        variant_of(game)  # an unknown game: its error names the known ones
        raise InvalidInput(f"game variant {game!r} declares no engine", rule="game")
    return make(authorizer)
