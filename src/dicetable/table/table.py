"""``Table``: a live table as the fold of its events, with verify / can / do for every command.

>>> t = Table.open("pa-craps", "demo")
>>> t.join("alice"); t.buy_in("alice", 200_00)
>>> b = t.bet("alice", "pass", 10_00)
>>> _ = t.roll("2-2"); _ = t.settle()
>>> t.point, t.balance("alice")
(4, 19000)
>>> t.can(PlaceBet(actor="alice", role=Role.PLAYER, player="alice", wager="pass", amount=500))
False
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from dicetable.core.clock import Clock, SystemClock
from dicetable.core.dice import Roll
from dicetable.core.dice_sources import DiceSource
from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games import events as ev
from dicetable.games.commands import PlaceBet
from dicetable.games.craps import CrapsEngine
from dicetable.games.engine import Authorizer, Engine, default_authorizer
from dicetable.games.props_hops import PropsHopsEngine
from dicetable.games.state import Phase, TableState, apply
from dicetable.rules.loader import load_pack
from dicetable.rules.model import RulePack

Sink = Callable[[Sequence[ev.Event]], None]
"""Receives each batch of events before the table applies them (the durable store)."""


def engine_for(game: str, authorizer: Authorizer = default_authorizer) -> Engine:
    if game in ("craps", "mini-craps"):
        return CrapsEngine(authorizer)
    if game == "props-and-hops":
        return PropsHopsEngine(authorizer)
    raise InvalidInput(f"no engine for game {game!r}", rule="game")


class Table:
    """One table: its engine, its state and its log."""

    def __init__(self, engine: Engine, *, clock: Clock | None = None,
                 sink: Sink | None = None) -> None:
        self.engine = engine
        self.state = TableState()
        self.clock: Clock = clock or SystemClock()
        self.sink = sink
        self.log: list[ev.Event] = []

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def open(cls, pack: RulePack | str, table_id: str = "t1", *, clock: Clock | None = None,
             actor: str = "floor", role: Role = Role.FLOORPERSON,
             authorizer: Authorizer = default_authorizer, sink: Sink | None = None) -> Table:
        rules = pack if isinstance(pack, RulePack) else load_pack(pack)
        table = cls(engine_for(rules.game, authorizer), clock=clock, sink=sink)
        table.execute(cmd.OpenTable(actor=actor, role=role, table=table_id, pack=rules))
        return table

    @classmethod
    def replay(cls, events: Iterable[ev.Event], *, clock: Clock | None = None,
               authorizer: Authorizer = default_authorizer, sink: Sink | None = None) -> Table:
        """Rebuild a table from its log."""
        it = iter(events)
        first = next(it, None)
        if not isinstance(first, ev.TableOpened):
            raise InvalidInput("a table's log starts with TableOpened", rule="events.log")
        table = cls(engine_for(first.game, authorizer), clock=clock, sink=sink)
        table._apply([first])
        for event in it:
            table._apply([event])
        return table

    # -- verify / can / do --------------------------------------------------------------------
    def _now(self) -> str:
        return self.clock.now().isoformat()

    def decide(self, command: cmd.Command) -> list[ev.Event]:
        """The events ``command`` would produce; raises if refused. Changes nothing."""
        return self.engine.decide(self.state, command, self._now())

    def verify(self, command: cmd.Command) -> None:
        self.decide(command)

    def can(self, command: cmd.Command) -> bool:
        return self.engine.can(self.state, command)

    def execute(self, command: cmd.Command) -> list[ev.Event]:
        events = self.decide(command)
        if self.sink is not None:
            self.sink(events)  # durable before applied: an acknowledged command is never lost
        self._apply(events)
        return events

    def _apply(self, events: Iterable[ev.Event]) -> None:
        for event in events:
            apply(self.state, event)
            self.log.append(event)

    # -- conveniences for people and scripts -------------------------------------------------
    @property
    def id(self) -> str:
        return self.state.table_id

    @property
    def pack(self) -> RulePack:
        return self.state.rules()

    @property
    def phase(self) -> Phase:
        return self.state.phase

    @property
    def point(self) -> int | None:
        return self.state.point

    def balance(self, player: str) -> int:
        return self.state.balance(player)

    @property
    def balances(self) -> dict[str, int]:
        return {p: info.balance for p, info in sorted(self.state.players.items())}

    def join(self, player: str, seat: int | None = None, *, actor: str | None = None,
             role: Role = Role.PLAYER) -> None:
        self.execute(cmd.JoinTable(actor=actor or player, role=role, player=player, seat=seat))

    def buy_in(self, player: str, amount: int, *, actor: str = "dealer",
               role: Role = Role.DEALER) -> None:
        self.execute(cmd.BuyChips(actor=actor, role=role, player=player, amount=amount))

    def bet(self, player: str, wager: str, amount: int, *, base: str | None = None,
            working: bool | None = None, actor: str | None = None,
            role: Role = Role.PLAYER) -> str:
        """Place a wager; returns its bet id."""
        events = self.execute(PlaceBet(actor=actor or player, role=role, player=player,
                                           wager=wager, amount=amount, base=base,
                                           working=working))
        placed = events[-1]
        assert isinstance(placed, ev.BetPlaced)
        return placed.bet

    def odds(self, player: str, base: str, amount: int) -> str:
        return self.bet(player, "odds", amount, base=base)

    def remove(self, bet: str, *, actor: str | None = None, role: Role = Role.PLAYER) -> None:
        owner = self.state.bets[bet].player if bet in self.state.bets else ""
        self.execute(cmd.RemoveBet(actor=actor or owner, role=role, bet=bet))

    def no_more_bets(self, *, actor: str = "dealer", role: Role = Role.DEALER) -> None:
        self.execute(cmd.CloseBetting(actor=actor, role=role))

    def _roller(self) -> tuple[str, Role]:
        if self.state.game == "craps":
            return "stick", Role.STICKPERSON
        return "dealer", Role.DEALER

    def roll(self, roll: str | Roll | DiceSource | None = None, *,
             facts: Sequence[str] = (), actor: str | None = None, role: Role | None = None,
             source: str | None = None) -> list[ev.Event]:
        """Record a throw: faces given as ``3-4``, or drawn from a dice source.

        On a table whose pack settles automatically, the settlement follows at once.
        """
        default_actor, default_role = self._roller()
        kind = source or "manual"
        if isinstance(roll, str):
            faces: Roll | None = Roll.parse(roll)
        elif isinstance(roll, Roll) or roll is None:
            faces = roll
        else:
            faces = roll.next_roll()
            kind = source or roll.kind.value
        events = self.execute(cmd.RecordRoll(actor=actor or default_actor,
                                             role=role or default_role, roll=faces,
                                             source=kind, facts=tuple(facts)))
        if self.pack.flag("settlement.automatic") and self.state.phase is Phase.SETTLING:
            events += self.settle(actor="table", role=Role.SYSTEM)
        return events

    def settle(self, *, actor: str = "dealer", role: Role = Role.DEALER) -> list[ev.Event]:
        """The dealer's chores in order: collect losers, pay winners, complete the roll."""
        events = self.execute(cmd.CollectLosers(actor=actor, role=role))
        events += self.execute(cmd.PayWinners(actor=actor, role=role))
        final: cmd.Command = cmd.MovePuck(actor=actor, role=role) \
            if self.state.game != "props-and-hops" else cmd.CompleteRound(actor=actor, role=role)
        events += self.execute(final)
        return events

