"""Game recall: the last rounds of a table rebuilt from its log (spec/standards.md REC-1, REC-2).

At Craps a round is one throw of the dice (REC-2: bets span rolls, so the roll is the recall
unit); at Props & Hops it is the game's own round. Each round shows what happened at the table
since the previous one (wagers made, changed or taken down, chips bought), every wager in action
when the dice were thrown, the throw, the outcome (collections, payments, returns, moves, the
puck) and each player's balance before and after. The round in progress, if any, comes last,
marked incomplete.

>>> from dicetable.store.memory import MemoryStore
>>> from dicetable.store.durable import DurableTable
>>> store = MemoryStore()
>>> t = DurableTable.open(store, "pa-craps", "t1").table
>>> _ = t.join("alice"), t.buy_in("alice", 100_00), t.bet("alice", "pass", 10_00)
>>> _ = t.roll("2-2"); _ = t.settle(); _ = t.roll("1-3"); _ = t.settle()
>>> [(r.label, r.rolls[0]["roll"], r.balances_before, r.balances_after) for r in
...  recall_rounds(store, "t1")]
[('hand 1, roll 1', '2-2', {}, {'alice': 9000}),
 ('hand 1, roll 2', '1-3', {'alice': 9000}, {'alice': 11000})]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.games import events as ev
from dicetable.games.catalogue import variant_of
from dicetable.games.engine import is_working
from dicetable.games.fold import apply
from dicetable.games.state import TableState
from dicetable.store.base import EventStore, collector_paused
from dicetable.store.chain import decode_body
from dicetable.store.replay import load_state, opening
from dicetable.store.state_codec import fold
from dicetable.table.procedure import procedure

_OUTCOME_TYPES = frozenset({ev.DiceRolled, ev.NoRollCalled, ev.LosersCollected, ev.WinnersPaid,
                            ev.WagersReturned, ev.PuckMoved, ev.RoundCompleted})


@dataclass
class RoundRecall:
    """One round as a regulator or surveillance would review it."""

    table: str
    label: str
    first_seq: int
    last_seq: int = 0
    complete: bool = False
    started: str = ""
    ended: str = ""
    point_before: int | None = None
    point_after: int | None = None
    activity: list[dict[str, Any]] = field(default_factory=list)
    """Everything done at the table during the round besides the throw and its settlement."""
    wagers: list[dict[str, Any]] = field(default_factory=list)
    """Every wager on the layout when the dice were thrown, and whether it was working."""
    rolls: list[dict[str, Any]] = field(default_factory=list)
    no_roll: list[str] | None = None
    collections: list[dict[str, Any]] = field(default_factory=list)
    payments: list[dict[str, Any]] = field(default_factory=list)
    returns: list[dict[str, Any]] = field(default_factory=list)
    moves: list[dict[str, Any]] = field(default_factory=list)
    seven_out: bool = False
    balances_before: dict[str, int] = field(default_factory=dict)
    balances_after: dict[str, int] = field(default_factory=dict)
    house_before: int = 0
    house_after: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _label(state: TableState) -> str:
    return state.variant.round_label(state.hand, state.hand_rolls, state.round)


def _thrower(state: TableState, event: ev.DiceRolled) -> str | None:
    """Who threw the dice (the shooter, or the shaker's holder), not who recorded them."""
    if event.thrower:
        return event.thrower
    p = procedure(state)
    return p.shooter or p.shaker_holder


def _balances(state: TableState) -> dict[str, int]:
    return {p: info.balance for p, info in sorted(state.players.items())}


def _wagers(state: TableState) -> list[dict[str, Any]]:
    compiled = state.compiled
    out = []
    for bet in sorted(state.bets.values(), key=lambda b: (b.placed_seq, b.id)):
        wager = compiled.get(bet.wager)
        out.append({"bet": bet.id, "player": bet.player, "wager": bet.layout_code,
                    "amount": bet.amount, "commission": bet.commission,
                    "state": wager.states[bet.state] if wager is not None else str(bet.state),
                    "base": bet.base, "working": is_working(state, bet),
                    "placed_seq": bet.placed_seq})
    return out


def _items(items: tuple[Any, ...]) -> list[dict[str, Any]]:
    return [asdict(i) for i in items]


_SETTLING = frozenset({ev.LosersCollected, ev.WinnersPaid, ev.WagersReturned, ev.PuckMoved,
                       ev.RoundCompleted, ev.NoRollCalled})
"""A roll's settlement: what a round records of them reads nothing of the state."""
_ROLL_ENDS = frozenset({ev.PuckMoved, ev.RoundCompleted, ev.NoRollCalled})
"""Where a held roll is folded with its settlement (``games.fold.apply_log`` folds whatever
it is given exactly as ``apply`` would; these are where no settlement is pending)."""


class _Builder:
    def __init__(self, state: TableState) -> None:
        self.state = state
        self.current: RoundRecall | None = None
        self.done: list[RoundRecall] = []
        self.held: list[ev.Event] = []
        """A valid roll and its settlement so far, not yet folded: folded together once the
        settlement ends (``apply_log``: the log's settlement carried out, not worked out
        again), or as each comes before anything reads the state."""

    def _start(self, event: ev.Event) -> RoundRecall:
        s = self.state
        return RoundRecall(s.table_id, _label(s), event.seq, started=event.at,
                           point_before=s.point, balances_before=_balances(s),
                           house_before=s.house)

    def settle(self) -> None:
        if self.held:
            held, self.held = self.held, []
            fold(held, self.state)

    def feed(self, event: ev.Event, ends: tuple[str, ...]) -> None:
        kind = type(event)
        if self.held and kind not in _SETTLING:
            self.settle()  # the state is read below
        rec = self.current = self.current or self._start(event)
        if isinstance(event, ev.DiceRolled):
            rec.label = _label(self.state)
            rec.wagers = _wagers(self.state)  # as they stood when the dice were thrown
            rec.rolls.append({"seq": event.seq, "roll": None if event.roll is None
                              else str(event.roll),
                              "total": None if event.roll is None else event.roll.total,
                              "source": event.source, "facts": list(event.facts),
                              "serials": list(event.serials), "actor": event.actor,
                              "role": event.role.value, "at": event.at,
                              "shooter": _thrower(self.state, event)})
        elif isinstance(event, ev.NoRollCalled):
            rec.no_roll = list(event.grounds)
            if not rec.label.endswith("(no roll)"):
                # The roll number is not used up: the next throw takes it again.
                rec.label += " (no roll)"
        elif isinstance(event, ev.LosersCollected):
            rec.collections += _items(event.items)
        elif isinstance(event, ev.WinnersPaid):
            rec.payments += _items(event.items)
        elif isinstance(event, ev.WagersReturned):
            rec.returns += _items(event.items)
        elif isinstance(event, ev.PuckMoved):
            rec.moves += _items(event.moves)
            rec.seven_out = event.seven_out
        elif kind not in _OUTCOME_TYPES:
            entry = ev.event_to_dict(event)
            entry.pop("table", None)
            entry.pop("pack", None)
            bet = entry.get("bet")
            if "player" not in entry and isinstance(bet, str) and bet in self.state.bets:
                entry["player"] = self.state.bets[bet].player  # whose bet, from the log
            rec.activity.append(entry)
        if self.held:
            self.held.append(event)
            if kind in _ROLL_ENDS:
                self.settle()
        elif kind is ev.DiceRolled and event.roll is not None:  # type: ignore[attr-defined]
            self.held.append(event)
        elif kind is ev.TableOpened:
            fold([event], self.state)  # its pack shared, as a replay does
        else:
            apply(self.state, event)
        rec.last_seq, rec.ended = event.seq, event.at
        if event.kind in ends:
            self.close(complete=True)

    def close(self, complete: bool) -> None:
        self.settle()
        rec = self.current
        if rec is None:
            return
        s = self.state
        rec.complete = complete
        rec.point_after = s.point
        rec.balances_after = _balances(s)
        rec.house_after = s.house
        self.done.append(rec)
        self.current = None


def recall_rounds(store: EventStore, table: str, rounds: int = 10) -> list[RoundRecall]:
    """The last ``rounds`` rounds of ``table``, oldest first, the one in progress included."""
    if rounds < 1:
        raise InvalidInput("recall at least one round", rule="recall.rounds")
    game = opening(store, table).game
    ends = variant_of(game).round_ends
    end_seqs = store.seqs_of(table, ends)
    head = store.head(table).seq
    in_progress = head > (end_seqs[-1] if end_seqs else 0)
    wanted = rounds - 1 if in_progress else rounds
    start_after = end_seqs[-(wanted + 1)] if len(end_seqs) > wanted else 0
    state = load_state(store, table, until=start_after) if start_after else TableState()
    builder = _Builder(state)
    for event in store.table_events(table, after=start_after):
        if isinstance(event, ev.TableOpened):
            fold([event], state)  # the opening is not a round
            continue
        builder.feed(event, ends)
    if builder.current is not None:
        builder.close(complete=False)
    return builder.done[-rounds:]


def recall_day(store: EventStore, table: str, day: str) -> list[RoundRecall]:
    """Every round of ``table`` on gaming ``day`` (YYYY-MM-DD), from the archive when the day
    was archived: the state before the day from the latest snapshot, then the day's events."""
    from dicetable.store.archive import day_span

    span = day_span(store, table, day)
    if span is None:
        return []
    first, last = span
    game = opening(store, table).game
    ends = variant_of(game).round_ends
    with collector_paused():
        state = load_state(store, table, until=first - 1) if first > 1 else TableState()
        builder = _Builder(state)
        for body in store.bodies(table, after=first - 1, until=last):
            event = decode_body(body)
            if not isinstance(event, ev.Event):
                raise InvalidInput(f"{table!r} holds a {event.kind}, not a table event",
                                   rule="store.stream")
            if isinstance(event, ev.TableOpened):
                fold([event], state)
                continue
            builder.feed(event, ends)
        if builder.current is not None:
            builder.close(complete=False)
    return builder.done


def recall_custody(store: EventStore, stream: str, steps: int = 10,
                   die: str | None = None) -> list[dict[str, Any]]:
    """The last ``steps`` custody steps of a site's ledger (or of one die), each with who,
    when, the rule, and what it did - the custody counterpart of game recall."""
    from dicetable.custody.events import CustodyEvent
    from dicetable.custody.reports import describe

    out: list[dict[str, Any]] = []
    for event in store.events(stream):
        if not isinstance(event, CustodyEvent):
            raise InvalidInput(f"{stream!r} is not a custody stream", rule="store.stream")
        if die is not None and die not in event.serials:
            continue
        out.append({"seq": event.seq, "type": event.kind, "at": event.at, "actor": event.actor,
                    "role": event.role.value, "rule": event.rule, "alert": event.alert,
                    "dice": list(event.serials), "what": describe(event)})
    return out[-steps:]
