"""The procedure of a regulated table, wrapped around a game engine.

Every command is authorised against the pack's permission matrix (``authority``), checked
against the table's procedure (the shooter, the shaker, the dice, the clock), and then either
handled here or passed to the game engine. Follow-up events the procedure requires (a new
shooter after a seven-out, the shaker passing after a 7) are appended in the same batch.

Who may do what: the permission matrix is rule-pack data with citations (spec §6).

Each command maps to an action; the pack's ``authority.<action>`` rule (or, for the no roll,
``noroll.callers``) lists the roles that may give it. The actor must also hold that role at
this table: staff are assigned, players have joined, and ``system`` acts only at an electronic
table. A refusal raises ``RoleNotPermitted`` naming the rule, and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.games.catalogue import decides, handlers, require_handlers
from dicetable.games.engine import Emitter, Engine, owner_of
from dicetable.games.state import Phase, TableState
from dicetable.rules.model import NO_ROLL_GROUNDS, THROW_FACTS, RulePack
from dicetable.table import commands as tcmd
from dicetable.table import events as tev
from dicetable.table import procedure_state
from dicetable.table.catalogue import CATALOGUE, PROCEDURE_ENTRIES
from dicetable.table.grounds import held_against_throw
from dicetable.table.procedure_state import (
    Procedure,
    dice_expired,
    dice_limit,
    next_shaker_holder,
    offer_order,
    procedure,
)

STAFF_ROLES = frozenset(Role) - {Role.PLAYER, Role.SYSTEM}

BEFORE_GAME = (gcmd.RecordRoll, gcmd.CloseBetting, gcmd.CallNoRoll, gcmd.PlaceBet)
"""The game commands the procedure checks before the game decides them (``_before_game``)."""
AFTER_GAME = (gcmd.MovePuck,)
"""The game commands the procedure adds events to once decided (``_after_game``)."""
PLAY = (gcmd.PlaceBet, gcmd.CloseBetting, gcmd.RecordRoll, tcmd.OfferDice, tcmd.SelectDice,
        tcmd.ShakeShaker, tcmd.OfferShaker, tcmd.PlayerShake, tcmd.ReturnShaker,
        tcmd.UncoverShaker)
"""Commands that put the dice in play; refused while play is blocked."""

def by_matrix(state: TableState, command: gcmd.Command) -> None:
    """The authorizer of a game engine under the procedure: none of its own, the procedure
    checks every command against the permission matrix first (``authority.authorize``)."""


class DiceRegistry(Protocol):
    """Where the table asks whether dice were issued to it (the custody ledger), and in time
    by the table's ``dice.max_hours`` (hours, citation): one rule for the table and custody."""

    def check_dice_in_play(self, table: str, serials: Iterable[str],
                           limit: tuple[int, str] | None = None) -> None: ...


class ProcedureEngine:
    """A live or electronic table: the game engine plus the regulated procedure.

    With a ``dice_registry`` (a ``dicetable.custody.CustodyLedger``), dice brought to the table
    and dice thrown must have been issued to this table, within their time limit.
    """

    def __init__(self, game: Engine, dice_registry: DiceRegistry | None = None) -> None:
        self.game = game
        self.dice_registry = dice_registry
        if game.authorize is not by_matrix:
            raise TypeError("a game engine under the procedure is made with "
                            "authorizer=by_matrix (the permission matrix decides roles)")
        self._handlers: dict[type[gcmd.Command], Callable[[TableState, Any, Emitter], None]] = \
            handlers(self, PROCEDURE_ENTRIES)

    # -- entry point ---------------------------------------------------------------------------
    def decide(self, state: TableState, command: gcmd.Command, now: str) -> list[gev.Event]:
        if isinstance(command, gcmd.OpenTable):
            if command.mode == "bare":
                raise InvalidInput("a table with procedure runs 'live' or 'electronic'",
                                   rule="table.mode")
            authorize(state, command)
            events = self.game.decide(state, command, now)
            out = Emitter(state, command, now, table=command.table, events=events)
            out.emit(tev.StaffAssigned, rule=command.pack.cite("authority.open_table"),
                     person=command.actor, staff_role=command.role)
            return out.events
        if state.phase is Phase.NEW:
            raise ProcedureViolation("the table is not open", rule="table.open")
        authorize(state, command)
        if isinstance(command, PLAY):
            self._play_allowed(state, now)
        handler = self._handlers.get(type(command))
        out = Emitter(state, command, now)
        if handler is not None:
            handler(state, command, out)
            return out.events
        if isinstance(command, BEFORE_GAME):
            self._before_game(state, command)
        if isinstance(command, gcmd.RecordRoll):
            command = self._thrown(state, command)
        out.events.extend(self.game.decide(state, command, now))
        if isinstance(command, AFTER_GAME):
            self._after_game(state, command, out)
        return out.events

    def _thrown(self, state: TableState, command: gcmd.RecordRoll) -> gcmd.RecordRoll:
        """A throw as the procedure completes it (the dice thrown, who threw them), its dice
        checked against custody."""
        command = self._complete_command(state, command)
        if command.serials and self.dice_registry is not None:
            self.dice_registry.check_dice_in_play(state.table_id, command.serials,
                                                  dice_limit(state))
        return command

    def can(self, state: TableState, command: gcmd.Command, now: str = "") -> bool:
        """True exactly when ``decide`` would accept ``command`` at ``now``: every check it
        makes, none of the events only a decided command gets from the procedure afterwards."""
        try:
            if isinstance(command, gcmd.OpenTable) or state.phase is Phase.NEW \
                    or type(command) in self._handlers:
                self.decide(state, command, now)
                return True
            authorize(state, command)
            if isinstance(command, PLAY):
                self._play_allowed(state, now)
            if isinstance(command, BEFORE_GAME):
                self._before_game(state, command)
            if isinstance(command, gcmd.RecordRoll):
                command = self._thrown(state, command)
            self.game.decide(state, command, now)
        except ValueError:
            return False
        return True

    def placeable_codes(self, state: TableState, player: str, codes: Iterable[str], now: str,
                        base: str | None = None) -> list[str]:
        """The wagers of ``codes`` that ``player`` may make now, whatever the amount."""
        if not self._may_play(state, player, now):
            return []
        return self.game.placeable_codes(state, player, codes, base)

    def odds_bases(self, state: TableState, player: str, bets: Iterable[str], now: str
                   ) -> list[str]:
        """The bets of ``bets`` that ``player`` may put odds behind now, whatever the amount."""
        if not self._may_play(state, player, now):
            return []
        return self.game.odds_bases(state, player, bets)

    def _may_play(self, state: TableState, player: str, now: str) -> bool:
        """The procedure's gates of a player's wager, whichever it is: the matrix, the dice,
        the dealer's opening shake."""
        probe = gcmd.PlaceBet(actor=player, role=Role.PLAYER, player=player, wager="",
                              amount=0)
        try:
            authorize(state, probe)
            self._play_allowed(state, now)
            self._wagers_open(state)
        except ValueError:
            return False
        return True

    @property
    def live(self) -> bool:
        return True

    # -- gates ------------------------------------------------------------------------------------
    def _play_allowed(self, state: TableState, now: str) -> None:
        p = procedure(state)
        pack = state.rules()
        if p.blocked:
            alert, citation = next(iter(p.blocked.items()))
            raise ProcedureViolation(f"play is blocked: {alert}", rule="dice.max_hours",
                                     citation=citation)
        if now and dice_expired(state, now):
            raise ProcedureViolation(
                f"the dice have been at the table more than {pack.value('dice.max_hours')} "
                "hours; replace them", rule="dice.max_hours", citation=pack.cite("dice.max_hours"))

    def _before_game(self, state: TableState, c: gcmd.Command) -> None:
        if state.mode != "live":
            return
        p = procedure(state)
        pack = state.rules()
        if isinstance(c, gcmd.RecordRoll):
            bad = [f for f in c.facts if f not in THROW_FACTS]
            if bad:
                raise InvalidInput(f"unknown throw facts: {', '.join(bad)}", rule="throw.facts")
            state.variant.before_throw(p, pack)
            when = self._line_bet_when(pack)
            if p.shooter is not None and when is not None \
                    and not self._has_line_bet(state, p.shooter):
                # Every throw: PA 623a.8(a) before throwing; IN 10-4-3(c) for as long as the
                # patron serves as shooter (a bet paid and returned leaves none on the table).
                raise ProcedureViolation(
                    f"the shooter {p.shooter} makes a Pass or Don't Pass bet before throwing"
                    if when == "before-throw" else f"the shooter {p.shooter} serves only with "
                    "a pass or don't pass bet on the table, at every throw",
                    rule="shooter.line_bet", citation=pack.cite("shooter.line_bet"))
        elif isinstance(c, gcmd.CloseBetting):
            state.variant.before_close(p, pack)
        elif isinstance(c, gcmd.CallNoRoll):
            Engine.no_roll_window_open(state, raising=True)  # the time before the grounds
            self._check_grounds(state, c)
        elif isinstance(c, gcmd.PlaceBet):
            self._wagers_open(state)

    @staticmethod
    def _wagers_open(state: TableState) -> None:
        """585.3(d): the dealer shakes the covered shaker before play and after each round;
        where wagering is part of that play (``wagering.after_dealer_shake``), no wager is
        taken before the dealer's shake. After 'no more bets' 668a.2(a) answers instead."""
        pack = state.rules()
        if state.mode == "live" and state.variant.has_shaker and state.phase is Phase.BETTING \
                and pack.flag("wagering.after_dealer_shake") and not procedure(state).dealer_shook:
            raise ProcedureViolation(
                "the dealer shakes the covered shaker before play and after each round; "
                "wagers are taken after that shake", rule="wagering.after_dealer_shake",
                citation=pack.cite("wagering.after_dealer_shake"))

    def _complete_command(self, state: TableState, c: gcmd.RecordRoll) -> gcmd.RecordRoll:
        """Fill in what the procedure knows: the dice thrown, and who threw them."""
        if state.mode != "live":
            return c
        serials, facts = state.variant.thrown(procedure(state), c.serials, c.thrower,
                                              tuple(c.facts))
        return gcmd.RecordRoll(actor=c.actor, role=c.role, roll=c.roll, source=c.source,
                               facts=facts, serials=serials, distance=c.distance,
                               thrower=c.thrower)

    @staticmethod
    def _line_bet_when(pack: RulePack) -> str | None:
        """When the shooter must have a line bet (None: the pack requires none at all)."""
        if not pack.flag("throw.line_bet_required"):
            return None
        return str(pack.value("shooter.line_bet"))

    @staticmethod
    def _has_line_bet(state: TableState, player: str) -> bool:
        return any(b.wager in ("pass", "dontpass") for b in state.bets_of(player))

    def _check_grounds(self, state: TableState, c: gcmd.CallNoRoll) -> None:
        pack = state.rules()
        listed = set(pack.get("noroll.grounds", [])) | set(pack.get("noroll.automatic", []))
        excluded = set(pack.get("noroll.excluded_grounds", []))
        for ground in c.grounds:
            if ground not in NO_ROLL_GROUNDS:
                raise InvalidInput(f"{ground!r} is not a ground for a no roll",
                                   rule="noroll.grounds")
            if ground in excluded:
                raise ProcedureViolation(f"{ground} is not a cause for a call of 'no roll'",
                                         rule="noroll.excluded_grounds",
                                         citation=pack.cite("noroll.excluded_grounds"))
            if ground not in listed:
                raise ProcedureViolation(f"{ground} is not a listed ground for a no roll here",
                                         rule="noroll.grounds",
                                         citation=pack.cite("noroll.grounds"))
            if ground == "improper-throw" and c.role not in pack.roles(
                    "noroll.improper_callers"):
                raise ProcedureViolation(f"a {c.role} may not void a throw as improper",
                                         rule="noroll.improper_callers",
                                         citation=pack.cite("noroll.improper_callers"))
            if ground == "no-good-faith-and-short":
                self._check_short_throw(state, c)
        held_against_throw(state, c, _last_throw(state))

    @staticmethod
    def _check_short_throw(state: TableState, c: gcmd.CallNoRoll) -> None:
        """IN 10-4-4(c)(10): both no good-faith attempt and less than half the table."""
        pack = state.rules()
        thrown = _last_throw(state)
        if thrown is None:
            return
        if "no-good-faith-attempt" not in thrown.facts or thrown.distance is None \
                or thrown.distance >= 1 / 2:
            raise ProcedureViolation(
                "(c)(10) needs both: no good-faith attempt recorded, and the dice short of half "
                "the table's length", rule="noroll.grounds", citation=pack.cite("noroll.grounds"))

    def _after_game(self, state: TableState, c: gcmd.Command, out: Emitter) -> None:
        if state.mode != "live":
            return
        p = procedure(state)
        pack = state.rules()
        if isinstance(c, gcmd.MovePuck) and state.pending is not None \
                and state.pending.seven_out and p.shooter is not None:
            out.emit(tev.ShooterEnded, rule=pack.cite("shooter.keeps_dice"),
                     shooter=p.shooter, reason="seven-out")

    # -- staff -------------------------------------------------------------------------------------
    @decides(tcmd.AssignStaff)
    def _assign(self, state: TableState, c: tcmd.AssignStaff, out: Emitter) -> None:
        if c.staff_role not in STAFF_ROLES:
            raise InvalidInput(f"{c.staff_role} is not a staff role", rule="authority.staff")
        if procedure(state).holds(c.person, c.staff_role):
            raise InvalidInput(f"{c.person} is already {c.staff_role} here",
                               rule="authority.staff")
        out.emit(tev.StaffAssigned, rule=state.rules().cite("authority.staff"),
                 person=c.person, staff_role=c.staff_role)

    @decides(tcmd.RelieveStaff)
    def _relieve(self, state: TableState, c: tcmd.RelieveStaff, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        if not p.holds(c.person, c.staff_role):
            raise InvalidInput(f"{c.person} is not {c.staff_role} here", rule="authority.staff")
        if p.dice and pack.flag("dice.never_unattended"):
            # Someone who answers for the dice stays (the variant says who).
            keepers, who = state.variant.dice_keepers(pack)
            kept = [person for person, roles in p.staff.items()
                    if (roles - ({c.staff_role} if person == c.person else set())) & keepers]
            if not kept:
                raise ProcedureViolation(
                    f"the dice may not be left unattended at the table: {who}",
                    rule="dice.never_unattended", citation=pack.cite("dice.never_unattended"))
        out.emit(tev.StaffRelieved, rule=pack.cite("authority.staff"), person=c.person,
                 staff_role=c.staff_role)

    # -- dice at the table ----------------------------------------------------------------------
    @decides(tcmd.BringDice)
    def _bring(self, state: TableState, c: tcmd.BringDice, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        serials = tuple(c.serials)
        if not serials or len(set(serials)) != len(serials) or any(not s for s in serials):
            raise InvalidInput("each die is named by its own serial", rule="dice.serials")
        already = [s for s in serials if s in p.dice]
        if already:
            raise InvalidInput(f"already at the table: {', '.join(already)}",
                               rule="dice.serials")
        state.variant.check_brought(p, pack, serials, c.witness, c.actor)
        if self.dice_registry is not None:
            self.dice_registry.check_dice_in_play(state.table_id, serials, dice_limit(state))
        out.emit(tev.DiceBrought, rule=pack.cite("authority.dice"), serials=serials,
                 witness=c.witness)
        held = {**p.dice, **dict.fromkeys(serials, out.now)}
        if "dice-expired" in p.blocked and not dice_expired(state, out.now, held):
            # the expired dice were replaced: play resumes with the new ones
            out.emit(tev.PlayUnblocked, rule=pack.cite("dice.max_hours"), name="dice-expired")

    @decides(tcmd.RemoveDice)
    def _remove_dice(self, state: TableState, c: tcmd.RemoveDice, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        missing = [s for s in c.serials if s not in p.dice]
        if not c.serials or missing:
            raise InvalidInput(f"not at this table: {', '.join(missing) or '(none named)'}",
                               rule="dice.serials")
        if state.variant.dice_change_closed(state.phase):
            raise ProcedureViolation("dice are changed between rounds", rule="authority.dice",
                                     citation=pack.cite("authority.dice"))
        out.emit(tev.DiceTakenFromTable, rule=pack.cite("authority.dice"), serials=tuple(c.serials),
                 reason=c.reason)
        remaining = {s: t for s, t in p.dice.items() if s not in c.serials}
        if "dice-expired" in p.blocked and remaining \
                and not dice_expired(state, out.now, remaining):
            out.emit(tev.PlayUnblocked, rule=pack.cite("dice.max_hours"), name="dice-expired")

    @decides(tcmd.Tick)
    def _tick(self, state: TableState, c: tcmd.Tick, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        if "dice-expired" not in p.blocked and dice_expired(state, out.now):
            out.emit(tev.AlertRaised, rule=pack.cite("dice.max_hours"), name="dice-expired",
                     message=f"dice at table {state.table_id} have been in use more than "
                             f"{pack.value('dice.max_hours')} hours; play is blocked until "
                             "they are replaced", blocks_play=True)

    # -- the shooter (Craps) --------------------------------------------------------------------
    def _craps_live(self, state: TableState) -> None:
        if not state.variant.has_shooter or state.mode != "live":
            raise ProcedureViolation("there is no shooter at this table", rule="table.mode")

    @decides(tcmd.OfferDice)
    def _offer(self, state: TableState, c: tcmd.OfferDice, out: Emitter) -> None:
        self._craps_live(state)
        p = procedure(state)
        pack = state.rules()
        if p.shooter is not None:
            raise ProcedureViolation(f"{p.shooter} is the shooter", rule="shooter.keeps_dice",
                                     citation=pack.cite("shooter.keeps_dice"))
        if state.phase is not Phase.BETTING:
            raise ProcedureViolation("settle the roll first", rule="settlement.order")
        order = offer_order(state)
        if not order:
            raise ProcedureViolation("no patron at a position to offer the dice to",
                                     rule="shooter.first_offer",
                                     citation=pack.cite("shooter.first_offer"))
        if c.patron != order[0]:
            # Clockwise from the last shooter, the next-offer rule decides; restarting, the
            # first offer's order applies again (IN 10-4-3(e): 'per subsection (b)').
            after = bool(p.last_shooter)
            rule = "shooter.next_offer" if after and pack.get("shooter.next_offer") \
                == "clockwise-from-last" else "shooter.first_offer"
            raise ProcedureViolation(f"the dice go to {order[0]} next, not {c.patron}",
                                     rule=rule, citation=pack.cite(
                                         "shooter.next_offer" if after
                                         else "shooter.first_offer"))
        serials = tuple(c.serials) or tuple(p.bowl)  # none named: the whole bowl
        need = int(pack.value("shooter.dice_offered"))
        if len(set(serials)) < need:
            raise ProcedureViolation(f"at least {need} dice are offered to the shooter",
                                     rule="shooter.dice_offered",
                                     citation=pack.cite("shooter.dice_offered"))
        stray = [s for s in serials if s not in p.bowl]
        if stray:
            raise InvalidInput(f"not in the bowl at this table: {', '.join(stray)}",
                               rule="dice.serials")
        out.emit(tev.DiceOffered, rule=pack.cite("authority.offer_dice"), patron=c.patron,
                 serials=serials)

    def _offered_to_actor(self, state: TableState, c: gcmd.Command) -> Procedure:
        self._craps_live(state)
        p = procedure(state)
        if p.offer_to != c.actor:
            raise ProcedureViolation(f"the dice are not offered to {c.actor}",
                                     rule="authority.offer_dice",
                                     citation=state.rules().cite("authority.offer_dice"))
        return p

    @decides(tcmd.DeclineDice)
    def _decline(self, state: TableState, c: tcmd.DeclineDice, out: Emitter) -> None:
        self._offered_to_actor(state, c)
        out.emit(tev.DiceDeclined, rule=state.rules().cite("shooter.first_offer"),
                 patron=c.actor)

    @decides(tcmd.SelectDice)
    def _select(self, state: TableState, c: tcmd.SelectDice, out: Emitter) -> None:
        p = self._offered_to_actor(state, c)
        pack = state.rules()
        chosen = tuple(c.serials)
        if len(chosen) != 2 or len(set(chosen)) != 2 or not set(chosen) <= set(p.offered):
            raise ProcedureViolation("the shooter selects two of the dice offered",
                                     rule="authority.select_dice",
                                     citation=pack.cite("authority.select_dice"))
        if self._line_bet_when(pack) == "to-serve" and not self._has_line_bet(state, c.actor):
            raise ProcedureViolation(
                f"{c.actor} needs a pass or don't pass bet to serve as shooter",
                rule="shooter.line_bet", citation=pack.cite("shooter.line_bet"))
        rest = tuple(s for s in p.offered if s not in chosen)
        out.emit(tev.ShooterSelected, rule=pack.cite("authority.select_dice"), shooter=c.actor,
                 dice=chosen, returned_to_bowl=rest)

    def _shooter_between_rolls(self, state: TableState) -> Procedure:
        self._craps_live(state)
        p = procedure(state)
        if p.shooter is None:
            raise ProcedureViolation("there is no shooter", rule="shooter.keeps_dice",
                                     citation=state.rules().cite("shooter.keeps_dice"))
        if state.phase is Phase.SETTLING:
            raise ProcedureViolation("settle the roll first", rule="settlement.order")
        return p

    @decides(tcmd.RelinquishDice)
    def _relinquish(self, state: TableState, c: tcmd.RelinquishDice, out: Emitter) -> None:
        p = self._shooter_between_rolls(state)
        pack = state.rules()
        if c.actor != p.shooter:
            raise ProcedureViolation(f"{c.actor} is not the shooter", rule="shooter.may_relinquish")
        if not pack.flag("shooter.may_relinquish"):
            raise ProcedureViolation("the shooter may not give up the dice here",
                                     rule="shooter.may_relinquish",
                                     citation=pack.cite("shooter.may_relinquish"))
        out.emit(tev.ShooterEnded, rule=pack.cite("shooter.may_relinquish"), shooter=p.shooter,
                 reason="relinquished")

    @decides(tcmd.RemoveShooter)
    def _remove_shooter(self, state: TableState, c: tcmd.RemoveShooter, out: Emitter) -> None:
        p = self._shooter_between_rolls(state)
        pack = state.rules()
        if c.ground not in pack.get("shooter.removal_grounds", []):
            raise InvalidInput(f"{c.ground!r} is not a ground for removing a shooter "
                               f"({', '.join(pack.value('shooter.removal_grounds'))})",
                               rule="shooter.removal_grounds")
        assert p.shooter is not None
        out.emit(tev.ShooterEnded, rule=pack.cite("shooter.removal_grounds"),
                 shooter=p.shooter, reason=c.ground)

    @decides(tcmd.OverturnNoRoll)
    def _overturn(self, state: TableState, c: tcmd.OverturnNoRoll, out: Emitter) -> None:
        p = procedure(state)
        pack = state.rules()
        if p.overturnable_seq is None or state.last_roll is None:
            raise ProcedureViolation(
                "only the last roll's declaration may be overturned, before anything else "
                "happens at the table", rule="authority.overturn_no_roll",
                citation=pack.cite("authority.overturn_no_roll"))
        out.emit(tev.NoRollOverturned, rule=pack.cite("authority.overturn_no_roll"),
                 overturned_seq=p.overturnable_seq, reason=c.reason)

    # -- the shaker (Props & Hops) ---------------------------------------------------------------
    def _shaker_live(self, state: TableState) -> Procedure:
        if not state.variant.has_shaker or state.mode != "live":
            raise ProcedureViolation("there is no shaker at this table", rule="table.mode")
        return procedure(state)

    @decides(tcmd.ShakeShaker)
    def _dealer_shake(self, state: TableState, c: tcmd.ShakeShaker, out: Emitter) -> None:
        p = self._shaker_live(state)
        self.game.returns_first(state)  # a no roll's wagers go back before the next round
        pack = state.rules()
        if p.shaker == "empty":
            raise ProcedureViolation("the shaker has no dice", rule="authority.dice",
                                     citation=pack.cite("authority.dice"))
        if state.phase is not Phase.BETTING or p.shaker not in ("covered", "uncovered"):
            raise ProcedureViolation("the dealer shakes before play and after each round",
                                     rule="authority.shaker",
                                     citation=pack.cite("authority.shaker"))
        out.emit(tev.ShakerShaken, rule=pack.cite("authority.shaker"))

    @decides(tcmd.OfferShaker)
    def _offer_shaker(self, state: TableState, c: tcmd.OfferShaker, out: Emitter) -> None:
        p = self._shaker_live(state)
        pack = state.rules()
        if state.phase is not Phase.CLOSED or p.shaker != "covered":
            raise ProcedureViolation("the covered shaker is offered after 'no more bets'",
                                     rule="authority.shaker",
                                     citation=pack.cite("authority.shaker"))
        if p.pass_due:
            raise ProcedureViolation("the shaker passes to the next player first "
                                     "(pass-shaker)", rule="shaker.passes_on",
                                     citation=pack.cite("shaker.passes_on"))
        due = p.shaker_holder if p.shaker_holder in _seated(state) else next_shaker_holder(
            state, after=p.shaker_holder if p.shaker_holder else None, first=True)
        if c.player != due:
            rule = "shaker.first_to" if p.shaker_holder is None else "shaker.passes_on"
            raise ProcedureViolation(f"the shaker goes to {due}, not {c.player}", rule=rule,
                                     citation=pack.cite(rule))
        out.emit(tev.ShakerOffered, rule=pack.cite("shaker.first_to"), player=c.player)

    @decides(tcmd.PassShaker)
    def _pass_shaker(self, state: TableState, c: tcmd.PassShaker, out: Emitter) -> None:
        """585.3(j): after a round ending on the passing total, the next player to the left."""
        p = self._shaker_live(state)
        pack = state.rules()
        if not p.pass_due:
            raise ProcedureViolation(f"the shaker passes after a round totalling "
                                     f"{pack.get('shaker.passes_on')}", rule="shaker.passes_on",
                                     citation=pack.cite("shaker.passes_on"))
        out.emit(tev.ShakerPassed, rule=pack.cite("shaker.passes_on"),
                 from_player=p.shaker_holder,
                 to_player=next_shaker_holder(state, after=p.shaker_holder))

    def _holder(self, state: TableState, c: gcmd.Command, stage: str) -> Procedure:
        p = self._shaker_live(state)
        if p.shaker != stage or c.actor != p.shaker_holder:
            raise ProcedureViolation(f"{c.actor} does not hold the covered shaker",
                                     rule="authority.shake",
                                     citation=state.rules().cite("authority.shake"))
        return p

    @staticmethod
    def _lid_on(state: TableState, p: Procedure) -> None:
        if p.lid_off:
            raise ProcedureViolation("the lid is off: re-cover the shaker, then shake it again",
                                     rule="shaker.min_shakes",
                                     citation=state.rules().cite("shaker.min_shakes"))

    @decides(tcmd.PlayerShake)
    def _player_shake(self, state: TableState, c: tcmd.PlayerShake, out: Emitter) -> None:
        self._lid_on(state, self._holder(state, c, "offered"))
        if not 1 <= c.times <= 100:
            raise InvalidInput("shakes are counted one to a hundred at a time",
                               rule="shaker.min_shakes")
        out.emit(tev.ShakerShakenByPlayer, rule=state.rules().cite("shaker.min_shakes"),
                 player=c.actor, times=c.times)

    @decides(tcmd.RemoveLid)
    def _remove_lid(self, state: TableState, c: tcmd.RemoveLid, out: Emitter) -> None:
        self._lid_on(state, self._holder(state, c, "offered"))
        out.emit(tev.ShakerLidRemoved, rule=state.rules().cite("shaker.min_shakes"),
                 player=c.actor)

    @decides(tcmd.RecoverShaker)
    def _recover_shaker(self, state: TableState, c: tcmd.RecoverShaker, out: Emitter) -> None:
        p = self._holder(state, c, "offered")
        if not p.lid_off:
            raise ProcedureViolation("the shaker is covered", rule="shaker.min_shakes",
                                     citation=state.rules().cite("shaker.min_shakes"))
        out.emit(tev.ShakerRecovered, rule=state.rules().cite("shaker.min_shakes"),
                 player=c.actor)

    @decides(tcmd.ReturnShaker)
    def _return_shaker(self, state: TableState, c: tcmd.ReturnShaker, out: Emitter) -> None:
        p = self._holder(state, c, "offered")
        self._lid_on(state, p)
        pack = state.rules()
        need = int(pack.value("shaker.min_shakes"))
        if p.shakes < need:
            raise ProcedureViolation(
                f"the covered shaker is shaken at least {need} times ({p.shakes} so far)",
                rule="shaker.min_shakes", citation=pack.cite("shaker.min_shakes"))
        out.emit(tev.ShakerReturned, rule=pack.cite("shaker.min_shakes"), player=c.actor)

    @decides(tcmd.UncoverShaker)
    def _uncover(self, state: TableState, c: tcmd.UncoverShaker, out: Emitter) -> None:
        p = self._shaker_live(state)
        pack = state.rules()
        if p.shaker != "returned":
            raise ProcedureViolation("the player returns the covered shaker first",
                                     rule="authority.shaker",
                                     citation=pack.cite("authority.shaker"))
        out.emit(tev.ShakerUncovered, rule=pack.cite("authority.shaker"))


def _seated(state: TableState) -> set[str]:
    return {p for p, info in state.players.items() if info.seat is not None}


def _last_throw(state: TableState) -> gev.DiceRolled | None:
    return procedure(state).last_throw


require_handlers(ProcedureEngine, PROCEDURE_ENTRIES)


ACTION_RULE: dict[type[gcmd.Command], str] = {
    e.command: e.authority for e in CATALOGUE if e.authority is not None}
"""Every command of the live table and the rule that says who may give it (the catalogue's)."""

AUTOMATABLE = frozenset(e.authority for e in CATALOGUE if e.automatable and e.authority)
"""What an electronic table's own automation (role ``system``) does in place of staff."""

_PLAYER_SUBJECT = (gcmd.JoinTable, gcmd.LeaveTable, gcmd.PlaceBet, gcmd.ChangeBet,
                   gcmd.RemoveBet, gcmd.SetWorking)


def rule_for(command: gcmd.Command) -> str | None:
    """The rule id that lists who may give ``command`` (None: the system's own tick)."""
    return CATALOGUE.of(command).authority


def allowed_roles(state: TableState, command: gcmd.Command) -> frozenset[Role]:
    rule = rule_for(command)
    if rule is None:
        return frozenset({Role.SYSTEM})
    roles = set(state.rules().roles(rule))
    if state.mode == "electronic" and rule in AUTOMATABLE:
        roles.add(Role.SYSTEM)
    return frozenset(roles)


def authorize(state: TableState, command: gcmd.Command) -> None:
    """Raise ``RoleNotPermitted`` unless ``command.role`` may give ``command`` here."""
    rule = rule_for(command)
    role = command.role
    pack = state.pack
    citation = pack.cite(rule) if pack is not None and rule else ""
    if isinstance(command, gcmd.OpenTable):
        if role not in command.pack.roles("authority.open_table"):
            raise RoleNotPermitted(f"a {role} may not open the table",
                                   rule="authority.open_table",
                                   citation=command.pack.cite("authority.open_table"))
        return
    if role not in allowed_roles(state, command):
        what = type(command).__name__
        where = f"{state.game} ({pack.id})" if pack is not None else state.game
        raise RoleNotPermitted(f"a {role} may not {what} at {where}",
                               rule=rule or "authority.system", citation=citation)
    _holds_role(state, command, rule or "authority.system", citation)
    procedure_state.check(state, command)


def _holds_role(state: TableState, command: gcmd.Command, rule: str, citation: str) -> None:
    role, actor = command.role, command.actor
    if role is Role.SYSTEM:
        if state.mode != "electronic" and not isinstance(command, tcmd.Tick):
            raise RoleNotPermitted("only an electronic table acts on its own",
                                   rule=rule, citation=citation)
        return
    if role is Role.PLAYER:
        subject = owner_of(state, command)
        if isinstance(command, gcmd.JoinTable):
            if actor != command.player:
                raise RoleNotPermitted(f"{actor} may not seat {command.player}",
                                       rule=rule, citation=citation)
            return
        if actor not in state.players:
            raise RoleNotPermitted(f"{actor} is not a player at this table", rule=rule,
                                   citation=citation)
        if isinstance(command, _PLAYER_SUBJECT) and subject is not None and subject != actor:
            raise RoleNotPermitted(f"{actor} may not act for {subject}", rule=rule,
                                   citation=citation)
        return
    if not procedure(state).holds(actor, role):
        raise RoleNotPermitted(f"{actor} is not assigned as {role} at this table",
                               rule="authority.staff", citation=state.rules().cite(
                                   "authority.staff"))
