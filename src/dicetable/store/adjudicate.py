"""``audit verify --adjudicate``: settle every recorded roll again and compare.

A table's settlement is worked out from the roll, the wagers standing when it was thrown and
the rule pack (``settlement.pending_for``). This walk folds the log and, at every settlement
event, compares what was recorded with what the rules call for: the losers collected, the
winners paid (win, commission, stake returned), the wagers returned, the puck's move. The
first difference is named. A payout forged and rehashed - even with the key - is caught here,
because no hash can make the rules pay it.

>>> import dataclasses
>>> from dicetable.store.memory import MemoryStore
>>> from dicetable.store.durable import DurableTable
>>> store = MemoryStore()
>>> t = DurableTable.open(store, "pa-craps", "t1").table
>>> _ = t.join("alice"), t.buy_in("alice", 100_00), t.bet("alice", "pass", 10_00)
>>> _ = t.roll("3-4"); _ = t.settle()
>>> adjudicate_table(store, "t1") is None
True
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from dicetable.games import events as ev
from dicetable.games.state import TableState
from dicetable.store.base import EventStore
from dicetable.store.chain import decode
from dicetable.store.state_codec import fold


@dataclass(frozen=True)
class Difference:
    table: str
    seq: int
    what: str
    """``payment``, ``collection``, ``return`` or ``move``."""
    recorded: Any
    derived: Any

    def __str__(self) -> str:
        return (f"{self.table} seq {self.seq}: {self.what} recorded {self.recorded} but the "
                f"rules call for {self.derived}")

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "seq": self.seq, "what": self.what,
                "recorded": self.recorded, "derived": self.derived}


def _items(items: tuple[Any, ...]) -> list[dict[str, Any]]:
    return [asdict(i) for i in items]


def _first_diff(table: str, seq: int, what: str, recorded: list[dict[str, Any]],
                derived: list[dict[str, Any]]) -> Difference | None:
    by_bet = {d["bet"]: d for d in derived}
    for item in recorded:
        want = by_bet.pop(item["bet"], None)
        if want != item:
            return Difference(table, seq, what, item, want)
    if by_bet:
        return Difference(table, seq, what, None, next(iter(by_bet.values())))
    return None


def _returns_due(state: TableState, e: ev.WagersReturned) -> list[dict[str, Any]]:
    """What a return may give back: each named wager's own stake and commission."""
    out = []
    for item in e.items:
        bet = state.bets.get(item.bet)
        if bet is None:
            continue
        out.append(asdict(ev.Return(bet.id, bet.player, item.wager, bet.amount,
                                    bet.commission)))
    return out


def check_event(state: TableState, event: ev.Event) -> Difference | None:
    """Compare one settlement event with the settlement ``state`` calls for (before it)."""
    table, pending = state.table_id, state.pending
    if isinstance(event, ev.LosersCollected):
        derived = _items(pending.losers) if pending is not None else []
        return _first_diff(table, event.seq, "collection", _items(event.items), derived)
    if isinstance(event, ev.WinnersPaid):
        derived = _items(pending.payments) if pending is not None else []
        return _first_diff(table, event.seq, "payment", _items(event.items), derived)
    if isinstance(event, ev.WagersReturned):
        return _first_diff(table, event.seq, "return", _items(event.items),
                           _returns_due(state, event))
    if isinstance(event, ev.PuckMoved) and pending is not None:
        moved: dict[str, Any] = {"point": event.point, "seven_out": event.seven_out,
                    "moves": _items(event.moves)}
        due: dict[str, Any] = {"point": pending.point_after, "seven_out": pending.seven_out,
                               "moves": _items(pending.moves)}
        if moved != due:
            return Difference(table, event.seq, "move", moved, due)
    return None


def adjudicate_table(store: EventStore, table: str) -> Difference | None:
    """The first settlement in ``table``'s log that the rules do not call for (or None)."""
    state = TableState()
    for row in store.records(table):
        event = decode(json.loads(row.body))
        if not isinstance(event, ev.Event):
            continue  # not a table's event: the chain audit names it, not the adjudication
        found = check_event(state, event)
        if found is not None:
            return found
        fold([event], state)
    return None


def adjudicate_store(store: EventStore, tables: list[str] | None = None
                     ) -> list[Difference]:
    out = []
    for name in tables or store.tables():
        found = adjudicate_table(store, name)
        if found is not None:
            out.append(found)
    return out
