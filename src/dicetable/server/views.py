"""What each viewer may see of a table: the public state, a player's own wagers, or all of it.

A player sees only their own wagers and balance plus the public table state; staff see every
player's. What they may see of each event is ``event_for``'s to say.

What a caller may see of a table's events: decided here once, for every surface.

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

import dataclasses
import functools
from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dicetable.core.events import event_to_dict
from dicetable.core.money import format_cents
from dicetable.core.roles import Role
from dicetable.games import events as gev
from dicetable.games.engine import Engine, is_working
from dicetable.games.events import Event
from dicetable.games.paytable import paytable_of
from dicetable.games.state import Bet, TableState
from dicetable.rules.model import NO_ROLL_GROUNDS, THROW_FACTS, RulePack, display_name, family_of
from dicetable.server.controls import (
    controls_for,
    odds_bases,
    placard,
    push_bet_views,
    rules_panel,
    wager_ladders,
)
from dicetable.server.shared_values import shared
from dicetable.table import Table
from dicetable.table import events as tev
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.procedure import ACTION_RULE, next_shaker_holder, offer_order
from dicetable.table.table import chores_left

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
    sole, owner = _sole_owner(data, owner_of)
    if sole:
        return Split(None, {owner: data} if owner else {})
    if kind == _OPENED:
        return Split({k: v for k, v in data.items() if k != "pack"}, {})
    return Split(data, {})


def _sole_owner(data: dict[str, Any], owner_of: OwnerOf) -> tuple[bool, str | None]:
    """For an event only one player may see (their own: a bet placed, chips bought; or one
    bet's): True, and who that is (None: nobody known); else False."""
    kind = data.get("type")
    if kind in _PLAYER:
        return True, data["player"]
    if kind in _BET:
        return True, owner_of(data.get("bet"))
    return False, None


def seen_by(caller: Caller, data: dict[str, Any], owner_of: OwnerOf
            ) -> dict[str, Any] | None:
    """One event's plain data as ``caller`` may see it, or None."""
    if caller.staff:
        return data
    sole, owner = _sole_owner(data, owner_of)
    if sole:  # as ``split`` has it, without making its parts
        return data if owner and owner == caller.name else None
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


def event_for_viewer(viewer: str | None, staff: bool, event: Event,
                     bets_of_viewer: Container[str]) -> dict[str, Any] | None:
    """The event as ``viewer`` may see it, or None (``event_for``, for a viewer who
    knows which bets are theirs)."""
    def owner_of(bet: object) -> str | None:
        return viewer if isinstance(bet, str) and bet in bets_of_viewer else None

    return event_for(Caller(viewer, staff), event, owner_of)


_BET_VIEWS: dict[tuple[Any, ...], dict[str, Any]] = {}
"""``_bet_view``'s answers, by all that they are made of: one object for a bet while it is
as it was (``controls.shared``), so that a push after a roll neither makes every bet's view
again, for its player's part and for the staff part, nor compares it with the one sent
member by member (an unchanged bet's view is the one sent)."""


def _bet_view(table: Table, bet_id: str) -> dict[str, Any]:
    pushed = push_bet_views(table)
    if pushed is not None:  # one push: the staff part's and the player's own, made once
        return shared(pushed, bet_id, lambda: _bet_view_of(table, bet_id))
    return _bet_view_of(table, bet_id)


def _bet_view_of(table: Table, bet_id: str) -> dict[str, Any]:
    state = table.state
    bet = state.bets[bet_id]
    base = state.bets.get(bet.base) if bet.base is not None else None
    working_now = is_working(state, bet)
    key = (state.pack, state.game, bet.id, bet.player, bet.wager, bet.amount, bet.state,
           bet.base, bet.working, bet.commission,
           None if base is None else (base.wager, base.state), working_now)
    return shared(_BET_VIEWS, key, lambda: _bet_view_now(state, bet, base, working_now))


def _bet_view_now(state: TableState, bet: Bet, base: Bet | None, working_now: bool
                  ) -> dict[str, Any]:
    wager = state.compiled[bet.wager]
    where = wager.states[bet.state]
    point = _number_of(where)
    if base is not None:
        base_wager = state.compiled[base.wager]
        base_point = _number_of(base_wager.states[base.state])
        lay = base.wager.startswith("dont")
        name = f"{'Lay odds' if lay else 'Odds'} on {display_name(base.wager)}" + (
            f" ({base_point})" if base_point else "")
    else:
        name = wager.name
    return {"id": bet.id, "player": bet.player, "wager": bet.layout_code,
            "name": name, "label": bet_label(name, where, base is not None),
            "amount": bet.amount, "state": where, "point": point, "base": bet.base,
            "working": bet.working, "working_now": working_now,
            "commission": bet.commission}


def _number_of(state_name: str) -> int | None:
    """The number a bet stands on, from its state ('on 6', 'point 6'), if any."""
    last = state_name.split()[-1] if state_name else ""
    return int(last) if last.isdigit() and state_name.split()[0] in ("on", "point") else None


def bet_label(name: str, where: str, odds: bool) -> str:
    """A bet as a player reads it: 'Come on 6', 'Pass Line (point 4)', 'Place 6 to Win'."""
    number = _number_of(where)
    if odds or number is None:
        return name
    if where.startswith("on "):
        return f"{name} on {number}"
    return f"{name} (point {number})"


def limits_of(table: Table) -> dict[str, dict[str, Any]]:
    """Every wager's minimum, maximum and unit (a pack's, computed once)."""
    return _limits(table.pack)


@functools.cache
def _limits(pack: RulePack) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for code in pack.menu_in_order:
        limits, _ = pack.limits(code)
        out[code] = {"name": display_name(code), "family": family_of(code),
                     "minimum": limits.minimum, "maximum": limits.maximum,
                     "unit": limits.unit,
                     "label": f"{format_cents(limits.minimum)} - {format_cents(limits.maximum)}"}
    return out


def console_rules(table: Table) -> dict[str, Any]:
    """The pack's procedure choices a page offers (the no-roll grounds, the throw facts, the
    grounds for removing a shooter, who may do what): public, it is the table's rule card."""
    return _console_rules(table.pack)


@functools.lru_cache(maxsize=64)  # packs are immutable and few; views are many
def _console_rules(pack: RulePack) -> dict[str, Any]:

    def listed(rule_id: str) -> list[str]:
        return list(pack.get(rule_id, None) or [])

    authority = sorted({rule for rule in ACTION_RULE.values() if rule in pack.rules})
    return {
        "noroll_grounds": [{"ground": g, "text": NO_ROLL_GROUNDS.get(g, g)}
                           for g in listed("noroll.grounds")],
        "noroll_automatic": listed("noroll.automatic"),
        "noroll_excluded": listed("noroll.excluded_grounds"),
        "noroll_citation": pack.cite("noroll.grounds"),
        "noroll_effect": pack.get("noroll.effect", None),
        "noroll_effect_citation": pack.cite("noroll.effect") if "noroll.effect" in pack.rules
        else "",
        "noroll_automatic_citation": pack.cite("noroll.automatic")
        if "noroll.automatic" in pack.rules else "",
        "throw_facts": [{"fact": f, "text": text} for f, text in THROW_FACTS.items()],
        "removal_grounds": listed("shooter.removal_grounds"),
        "dice_offered": pack.get("shooter.dice_offered"),
        "may_relinquish": pack.flag("shooter.may_relinquish"),
        "min_shakes": pack.get("shaker.min_shakes"),
        "dice_max_hours": pack.get("dice.max_hours"),
        "authority": {rule: sorted(r.value for r in pack.roles(rule)) for rule in authority},
    }


def roll_history(events: Iterable[Event], keep: int = 60,
                 history: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The last rolls: both faces, validity, and where a shooter's hand ended.

    With ``history``, the new events are folded onto it (a no roll or a seven-out marks the
    roll already there), which is left as it was: only its last roll is copied, once per
    batch, not all of them (a table's every commit folds its events here).
    """
    out: list[dict[str, Any]] = list(history or ())
    if out:  # the one roll an event may still mark; the others are shared, never changed
        out[-1] = dict(out[-1])
    for e in events:
        if isinstance(e, gev.DiceRolled):
            out.append({"seq": e.seq, "roll": str(e.roll) if e.roll else None,
                        "total": e.roll.total if e.roll else None, "valid": True,
                        "serials": list(e.serials), "at": e.at, "end_of_hand": False})
        elif isinstance(e, gev.NoRollCalled) and out:
            # the call's grounds and who made it under which rule: the dispute card shows them
            out[-1]["valid"] = False
            out[-1]["no_roll"] = {"grounds": list(e.grounds), "observed": list(e.observed),
                                  "automatic": e.automatic, "by": e.actor,
                                  "role": e.role.value, "citation": e.rule}
        elif isinstance(e, gev.WagersReturned) and out and "no_roll" in out[-1]:
            out[-1]["no_roll"] = {**out[-1]["no_roll"], "returned": len(e.items)}
        elif isinstance(e, tev.NoRollOverturned) and out:
            out[-1]["valid"] = True
            if "no_roll" in out[-1]:  # a new dict: the history before this event is shared
                out[-1]["no_roll"] = {**out[-1]["no_roll"], "overturned": {
                    "by": e.actor, "role": e.role.value, "reason": e.reason,
                    "citation": e.rule}}
        elif out and ((isinstance(e, gev.PuckMoved) and e.seven_out)
                      or isinstance(e, tev.ShooterEnded)):
            out[-1]["end_of_hand"] = True
    return out[-keep:]


def frequencies(history: list[dict[str, Any]]) -> dict[str, Any]:
    totals = Counter(h["total"] for h in history if h["valid"] and h["total"])
    counts = {str(t): totals.get(t, 0) for t in range(2, 13)}
    ranked = sorted(range(2, 13), key=lambda t: (-totals.get(t, 0), t))
    return {"counts": counts, "hot": ranked[:3], "cold": ranked[-3:],
            "rolls": sum(totals.values())}


def table_view(table: Table, viewer: str | None, staff: bool,
               history: list[dict[str, Any]], extra: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """The table as ``viewer`` may see it, built from scratch (``LiveViews`` keeps the same
    views up to date from events; this is what they must always equal)."""
    view = public_view(table, history)
    if staff:
        view.update(staff_view(table))
    if viewer is not None and viewer in table.state.players:
        view["me"] = me_view(table, viewer)
    if extra:
        view.update(extra)
    return view


def public_view(table: Table, history: list[dict[str, Any]]) -> dict[str, Any]:
    """What everyone watching the table sees alike."""
    state: TableState = table.state
    p = table.procedure
    pack = table.pack
    return {
        "table": state.table_id, "name": pack.get("table.description", state.table_id),
        "game": state.game, "variant": state.variant.facts(), "pack": pack.id,
        "jurisdiction": pack.jurisdiction, "mode": state.mode, "phase": state.phase.value,
        "point": state.point,
        "round": state.round, "hand": state.hand, "seq": state.seq,
        "shooter": p.shooter, "offer_to": p.offer_to, "offered": list(p.offered),
        "next_shooter": _next_shooter(state, p.shooter),
        "shaker": {"holder": p.shaker_holder, "state": p.shaker, "shakes": p.shakes,
                   "lid_off": p.lid_off,
                   "dealer_shook": p.dealer_shook,
                   "next": p.shaker_holder or next_shaker_holder(state, None, first=True)},
        "blocked": table.blocked(), "alerts": [{"name": a, "message": m} for a, m in p.alerts],
        "last_roll": str(state.last_roll) if state.last_roll else None,
        "last_roll_valid": state.last_roll_valid,
        "history": history, "frequencies": frequencies(history),
        "limits": limits_of(table),
        "staff": {person: sorted(r.value for r in roles) for person, roles in p.staff.items()},
        "seats": {name: info.seat for name, info in state.players.items()},
        "rules": console_rules(table),
        "ladders": wager_ladders(table), "placard": placard(table),
        "rules_panel": rules_panel(table), "paytable": paytable_of(pack),
    }


def staff_view(table: Table) -> dict[str, Any]:
    """What staff see besides: every player's balance and wagers, the dice, the house."""
    state: TableState = table.state
    p = table.procedure
    view: dict[str, Any] = {}
    view["players"] = {name: _holding(info.balance, info.seat)
                       for name, info in sorted(state.players.items())}
    # By id, not a list: a push patches the bets placed, changed and gone (a merge patch
    # replaces a list whole: every bet at a 1,000-player table, 0.2-0.4 MB, on every push).
    view["bets"] = {b: _bet_view(table, b) for b in sorted(state.bets)}
    view["dice"] = {"at_table": dict(sorted(p.dice.items())), "bowl": list(p.bowl),
                    "shooter_dice": list(p.shooter_dice), "offered": list(p.offered)}
    view["house"] = state.house
    pending = state.pending
    # While a no roll may still be called (noroll.window) the roll's consequences are not
    # shown: a call is made on the throw, not on what it would settle.
    held = Engine.no_roll_window_open(state)
    view["pending"] = None if pending is None else {
        "roll": str(pending.roll), "step": pending.step,
        "noroll_window": {"open": held, "rule": "noroll.window",
                          "citation": state.rules().cite("noroll.window")},
        "losers": [] if held else [event_to_dict_item(i) for i in pending.losers],
        "payments": [] if held else [event_to_dict_item(i) for i in pending.payments],
        "point_after": None if held else pending.point_after,
        "seven_out": None if held else pending.seven_out}
    # The dealer's chores now due, by command name (a no roll's return, the shaker's pass).
    view["chores"] = [CATALOGUE.of(kind).name for _, kind in chores_left(state)]
    return view


_HOLDINGS: dict[tuple[int, int | None], dict[str, Any]] = {}
"""``_holding``'s answers (``controls.shared``): a player whose balance and seat a roll left
as they were keeps the very entry the staff were sent, found unchanged by identity."""


def _holding(balance: int, seat: int | None) -> dict[str, Any]:
    """A player's entry in the staff part: ``{"balance", "seat"}``, one object for equal ones."""
    return shared(_HOLDINGS, (balance, seat), lambda: {"balance": balance, "seat": seat})


def me_view(table: Table, viewer: str, mine: list[Bet] | None = None,
            placeable: list[str] | None = None) -> dict[str, Any]:
    """A seated player's own part: balance, wagers, and the wagers they may make now
    (``mine``, ``placeable``: when the caller has them already)."""
    state: TableState = table.state
    if mine is None:
        mine = state.bets_of(viewer)
    pushed = push_bet_views(table) or {}  # within a push, the staff part made them already
    return {
        "player": viewer, "balance": state.balance(viewer),
        "seat": state.players[viewer].seat,
        "bets": [pushed.get(b.id) or _bet_view(table, b.id) for b in mine],
        "placeable": placeable if placeable is not None else placeable_codes(table, viewer),
        "odds_bases": odds_bases(table, viewer, mine),
        "controls": controls_for(table, viewer, Role.PLAYER, viewer),
    }


def placeable_codes(table: Table, viewer: str) -> list[str]:
    """The wagers (odds aside) ``viewer`` may make now, whatever the amount."""
    return table.placeable_codes(viewer, [c for c in table.pack.menu_in_order if c != "odds"])


def _next_shooter(state: TableState, shooter: str | None) -> str | None:
    """Whom the dice are offered to next (live Craps, no shooter yet)."""
    if shooter is not None or not state.variant.has_shooter or state.mode != "live":
        return None
    order = offer_order(state)
    return order[0] if order else None


def event_to_dict_item(item: object) -> dict[str, Any]:
    """A settlement item (a frozen dataclass) as plain data."""
    if not dataclasses.is_dataclass(item) or isinstance(item, type):
        raise TypeError(f"not a settlement item: {item!r}")
    return dataclasses.asdict(item)


def summary(table: Table, history: list[dict[str, Any]]) -> dict[str, Any]:
    """One line of the pit's floor view."""
    state, p = table.state, table.procedure
    return {
        "table": state.table_id, "name": table.pack.get("table.description", state.table_id),
        "game": state.game, "variant": state.variant.facts(), "pack": table.pack.id,
        "mode": state.mode, "phase": state.phase.value, "point": state.point, "shooter": p.shooter,
        "shaker_holder": p.shaker_holder, "players": len(state.players),
        "on_layout": state.on_layout(), "house": state.house, "blocked": table.blocked(),
        "alerts": [{"name": a, "message": m} for a, m in p.alerts],
        "dice": dict(sorted(p.dice.items())), "last_roll": history[-1] if history else None,
        "dice_max_hours": table.pack.get("dice.max_hours"),
        "seq": state.seq, "conserved": state.conserved(),
    }
