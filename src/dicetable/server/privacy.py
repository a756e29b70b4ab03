"""What a caller may see of a table's events: decided here once, for every surface.

A command's reply, the event list (``/events``), game recall and the WebSocket pushes all
show a caller the same projection of the same event:

- staff see every event whole;
- a player sees the public events, and besides their own buy-ins, cash-outs and wagers
  (``PRIVATE_PLAYER``, ``PRIVATE_BET``) and, of a settlement or a puck's move, only the items
  for their own bets (``PRIVATE_ITEMS``, ``PuckMoved``);
- anyone not at the table (``Caller(None)``) sees the public events only;
- a table's opening shows its rule pack to staff only (the public view has the rule card).

``split`` is the rule, applied to one event's plain data: the public variant and each player's
own. ``event_for`` applies it for one caller, ``live_views.Fanout`` for every caller of a push
at once (each variant serialised once) and ``round_for`` to a recalled round. Who owns a bet is
noted by ``note_owners`` before the event that touches it is applied (a removed bet is gone
from the state afterwards, but its owner still sees its removal).

>>> from dicetable.core.roles import Role
>>> from dicetable.games.events import ChipsBought
>>> bought = ChipsBought(table="t", seq=3, at="", actor="alice", role=Role.PLAYER,
...                      player="alice", amount=500)
>>> event_for(Caller("alice"), bought, {}.get)["amount"], event_for(Caller("bob"), bought, {}.get)
(500, None)
>>> event_for(Caller("pat", staff=True), bought, {}.get)["player"]
'alice'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dicetable.core.events import event_to_dict
from dicetable.games import events as gev
from dicetable.games.events import Event
from dicetable.games.state import Bet

PRIVATE_ITEMS = (gev.LosersCollected, gev.WinnersPaid, gev.WagersReturned)
PRIVATE_PLAYER = (gev.BetPlaced, gev.ChipsBought, gev.ChipsCashedOut)
PRIVATE_BET = (gev.BetChanged, gev.BetRemoved, gev.BetWorkingSet)

_ITEMS = {c.__name__: "items" for c in PRIVATE_ITEMS} | {gev.PuckMoved.__name__: "moves"}
_PLAYER = frozenset(c.__name__ for c in PRIVATE_PLAYER)
_BET = frozenset(c.__name__ for c in PRIVATE_BET)
_OPENED = gev.TableOpened.__name__

OwnerOf = Callable[[Any], str | None]
"""Who owns a bet id (None: not known, seen by staff only)."""


@dataclass(frozen=True)
class Caller:
    """Who is looking: a player or a watcher by name, a member of staff, or nobody (None)."""

    name: str | None
    staff: bool = False


@dataclass(frozen=True)
class Split:
    """One event as each caller who is not staff may see it."""

    public: dict[str, Any] | None
    """What everyone sees (None: nothing)."""
    own: dict[str, dict[str, Any]]
    """What a player sees instead, for the players the event concerns."""


def split(data: dict[str, Any], owner_of: OwnerOf) -> Split:
    """The rule, for one event's plain data (``event_to_dict``'s, its ``type`` included).

    ``public`` is ``data`` itself when the event is public alike; the data is never changed.
    """
    kind = data.get("type")
    key = _ITEMS.get(kind) if isinstance(kind, str) else None
    if key is not None:
        by_player: dict[str, list[Any]] = {}
        for item in data.get(key, ()):
            who = item.get("player") if key == "items" else owner_of(item.get("bet"))
            if who:
                by_player.setdefault(who, []).append(item)
        return Split({**data, key: []},
                     {who: {**data, key: theirs} for who, theirs in by_player.items()})
    if kind in _PLAYER:
        return Split(None, {data["player"]: data})
    if kind in _BET:
        owner = owner_of(data.get("bet"))
        return Split(None, {owner: data} if owner else {})
    if kind == _OPENED:
        return Split({k: v for k, v in data.items() if k != "pack"}, {})
    return Split(data, {})


def seen_by(caller: Caller, data: dict[str, Any], owner_of: OwnerOf
            ) -> dict[str, Any] | None:
    """One event's plain data as ``caller`` may see it, or None."""
    if caller.staff:
        return data
    parts = split(data, owner_of)
    if caller.name is not None:
        own = parts.own.get(caller.name)
        if own is not None:
            return own
    return parts.public


def event_for(caller: Caller, event: Event, owner_of: OwnerOf) -> dict[str, Any] | None:
    """``event`` as ``caller`` may see it, or None."""
    return seen_by(caller, event_to_dict(event), owner_of)


def events_for(caller: Caller, events: Iterable[Event], owner_of: OwnerOf
               ) -> list[dict[str, Any]]:
    """The events ``caller`` may see, each as they may see it, in order."""
    out = []
    for event in events:
        data = event_for(caller, event, owner_of)
        if data is not None:
            out.append(data)
    return out


def note_owners(owners: dict[str, str], bets: Mapping[str, Bet], event: Event) -> None:
    """Who owns each bet ``event`` touches, noted into ``owners`` before it is applied to a
    state holding ``bets``."""
    bet = getattr(event, "bet", None)
    if isinstance(bet, str):
        held = bets.get(bet)
        if held is not None:
            owners[bet] = held.player
        elif isinstance(event, gev.BetPlaced):
            owners[bet] = event.player
    for move in getattr(event, "moves", ()):
        held = bets.get(move.bet)
        if held is not None:
            owners[move.bet] = held.player


def owner_in(bets: Mapping[str, Bet], owners: Mapping[str, str]) -> OwnerOf:
    """Who owns a bet: the state's, else the owners noted (a removed bet)."""

    def owner_of(bet: Any) -> str | None:
        if not isinstance(bet, str):
            return None
        held = bets.get(bet)
        return held.player if held is not None else owners.get(bet)

    return owner_of


_ROUND_ITEMS = ("wagers", "collections", "payments", "returns")


def round_for(caller: Caller, data: dict[str, Any]) -> dict[str, Any]:
    """A recalled round (``RoundRecall.to_dict``) as ``caller`` may see it: staff all of it; a
    player the public part and their own wagers, settlements, balance and activity; each event
    of its activity as ``seen_by`` shows it (whose bet, from the round's own record)."""
    if caller.staff:
        return data
    name = caller.name
    out = dict(data)
    owners: dict[str, str] = {}
    for key in _ROUND_ITEMS:
        for item in out.get(key, ()):
            if isinstance(item.get("bet"), str) and isinstance(item.get("player"), str):
                owners[item["bet"]] = item["player"]
    for entry in out.get("activity", ()):
        if isinstance(entry.get("bet"), str) and isinstance(entry.get("player"), str):
            owners[entry["bet"]] = entry["player"]
    for key in _ROUND_ITEMS:
        out[key] = [i for i in out.get(key, []) if i.get("player") == name]
    out["moves"] = [m for m in out.get("moves", []) if owners.get(m.get("bet")) == name]
    activity = []
    for entry in out.get("activity", []):
        seen = seen_by(caller, entry, owners.get)
        if seen is not None:
            activity.append(seen)
    out["activity"] = activity
    for key in ("balances_before", "balances_after"):
        out[key] = {k: v for k, v in out.get(key, {}).items() if k == name}
    out.pop("house_before", None)
    out.pop("house_after", None)
    return out
