"""Views kept up to date from events, and each event serialised once per privacy class.

``LiveViews`` holds one table's views: the public part everyone sees alike (built and
serialised once per committed batch, not once per viewer), the staff part, and each seated
player's own part (balance, wagers, the wagers they may make now), which a batch invalidates
only for the players its events touch - unless an event changes the table itself (a roll, a
phase, a seat), which can change what any player may bet. What they return always equals
``views.table_view`` built from scratch (a property test holds them to it).

``Fanout`` is one batch of events as each privacy class may see it: staff see every event
whole; everyone else sees the public events, and a player also their own private ones
(``views.split`` is the rule; each variant is serialised once).

``Sent`` is what one connection was last sent, part by part, and ``Patches`` one push's merge
patches from it to the view now: each part's patch is worked out once per base it starts
from (the parts are never changed once made, so an unchanged part is the same object).

JSON Merge Patch (RFC 7386), and the nulls it cannot carry.

A merge patch turns one JSON document into another: an object in the patch is merged into the
target member by member (a null member removes that member), anything else replaces the target
whole. So a merge patch can never *set* an object's member to null - replacing the parent
object whole does not help, since an object in a patch is always merged. A view holds many
such members (no point, no shooter, an unseated player), so a ``Patch`` is the RFC 7386 patch
(``merge``) and the paths of the members left to set to null after it (``nulls``).

>>> old = {"point": 6, "seats": {"ann": 1, "bob": 2}, "history": [1, 2]}
>>> new = {"point": None, "seats": {"ann": 1, "cat": 3}, "history": [1, 2, 3]}
>>> p = merge_patch(old, new)
>>> p.merge
{'seats': {'bob': None, 'cat': 3}, 'history': [1, 2, 3]}
>>> p.nulls
(('point',),)
>>> apply_patch(old, p) == new
True
>>> merge_patch(new, new)
Patch(merge={}, nulls=())

``apply_patch`` does not change the document it is given (the parts a patch leaves alone are
shared with the result):

>>> apply_patch({"a": {"b": 1}, "c": [0]}, Patch({"a": {"b": None, "d": None}}, (("a", "d"),)))
{'a': {'d': None}, 'c': [0]}
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from dicetable.core.events import event_to_dict
from dicetable.core.roles import Role
from dicetable.games import events as gev
from dicetable.games.events import Event
from dicetable.games.state import Bet
from dicetable.server.controls import controls_for
from dicetable.server.controls import pin as pin_situation
from dicetable.server.grouped_members import Grouped, Layout
from dicetable.server.shared_values import shared
from dicetable.server.views import (
    PRIVATE_BET,
    PRIVATE_PLAYER,
    me_view,
    placeable_codes,
    public_view,
    split,
    staff_view,
)
from dicetable.table import Table


class Patch(NamedTuple):
    """A merge patch and its nulls (a named tuple: a push makes one per player)."""

    merge: Any
    """An RFC 7386 merge patch."""
    nulls: tuple[tuple[str, ...], ...] = ()
    """Paths (object keys from the top) of the members to set to null once ``merge`` is
    applied; each one's parent is an object after the merge."""

    @property
    def empty(self) -> bool:
        return self.merge == {} and not self.nulls


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``==`` without Python's ``True == 1`` (they are different JSON).

    >>> same({"a": [1, True]}, {"a": [1, True]}), same([1], [True]), same({"a": 0}, {"a": False})
    (True, False, False)
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        # ``==`` in C first: unequal is never the same; equal is the same when each member
        # is of its counterpart's type and none holds more (``True == 1`` is all ``==`` lets
        # through). A player's placeable codes are compared in one step, not code by code.
        if len(a) != len(b) or a != b:
            return False
        if all(map(operator.is_, a, b)):  # the same members (a player's bets' views)
            return True
        types = list(map(type, a))
        if types != list(map(type, b)):
            return False
        if not _NESTED.intersection(types):
            return True
        return all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_NESTED = frozenset((dict, list))


Memo = dict[tuple[int, int], tuple[Any, tuple[tuple[str, ...], ...]]]
"""Patches of objects already compared, by their ids, with their null paths relative to
them: for documents that share parts (one push's views of many players share what is alike
in them, wherever they stand: a player's own controls and a dealer's controls for that player
are one object), each pair of shared parts is compared once. Valid only while those objects
are alive and unchanged."""

def merge_patch(old: Any, new: Any, memo: Memo | None = None) -> Patch:
    """The patch that turns ``old`` into ``new``: ``apply_patch(old, merge_patch(old, new))``
    equals ``new`` for any JSON-like documents (dicts with string keys, lists, strings,
    numbers, booleans, None). ``memo``: the patches of shared parts worked out before."""
    nulls: list[tuple[str, ...]] = []
    return Patch(_diff(old, new, (), nulls, memo), tuple(nulls))


def _diff(old: Any, new: Any, path: tuple[str, ...], nulls: list[tuple[str, ...]],
          memo: Memo | None = None) -> Any:
    if not isinstance(new, dict):
        return new  # a value other than an object replaces the old one whole (even a null)
    if not isinstance(old, dict):
        return _whole(new, path, nulls)  # merged into an empty object
    # The members gone, in ``old``'s order (asked in one step first: most are none).
    out: dict[str, Any] = {} if old.keys() <= new.keys() else {
        key: None for key in old if key not in new}
    held = old.get
    for key, value in new.items():
        before = held(key, _ABSENT)
        if before is not _ABSENT:
            if before is value:
                continue
            if isinstance(value, dict) and isinstance(before, dict):
                # Objects are merged member by member (equal ones give an empty patch).
                inner, inner_nulls = _member_diff(before, value, memo)
                if inner_nulls:
                    where = (*path, key)
                    nulls.extend((*where, *rest) for rest in inner_nulls)
                if inner:
                    out[key] = inner
            elif type(before) is type(value) and type(value) not in _NESTED:
                if before != value:  # ``same`` for scalars, without the call (a balance)
                    out[key] = value
            elif same(before, value):
                continue
            elif value is None:  # kept from ``old`` by the merge, then set to null
                nulls.append((*path, key))
            else:
                out[key] = _whole(value, (*path, key), nulls)
        elif value is None:
            nulls.append((*path, key))
        else:
            out[key] = _whole(value, (*path, key), nulls)
    return out


_ABSENT: Any = object()


def _member_diff(old: dict[str, Any], new: dict[str, Any], memo: Memo | None
                 ) -> tuple[dict[str, Any], tuple[tuple[str, ...], ...]]:
    """``_diff`` of two objects from an empty path: the patch and its nulls, relative. A pair
    shared by many documents is compared once (``memo``)."""
    pair = (id(old), id(new))
    done = memo.get(pair) if memo is not None else None
    if done is None:
        grouped = _grouped_diff(old, new, memo) if type(new) is Grouped else None
        if grouped is not None:
            done = (grouped, ())
        else:
            nulls: list[tuple[str, ...]] = []
            # The nulls kept as a tuple (none: the empty tuple, shared): a roll's push keeps
            # thousands of these, and every list kept counts towards the next garbage
            # collection.
            done = (_diff(old, new, (), nulls, memo), tuple(nulls) if nulls else ())
        if memo is not None:
            memo[pair] = done
    return done


def _grouped_diff(old: dict[str, Any], new: Grouped, memo: Memo | None
                  ) -> dict[str, Any] | None:
    """``_diff`` of two ``Grouped`` objects, worked out once per pair of groups that its
    members go from and to, and given to each of them (None: not two such objects, or a
    patch that would hold a null or a value other than an object; ``_diff`` is asked
    instead). The same patch, member for member and in the same order: the members gone
    first, in ``old``'s order, then the others in ``new``'s."""
    if type(old) is not Grouped:
        return None
    before_of, after_of = old.groups, new.groups
    leaving, pairs, arriving = _pairing(old.layout, new.layout)
    patches: list[Any] = []
    for was, now_at in pairs:
        before = before_of[was] if was >= 0 else None
        now = after_of[now_at]
        if before is now or now is None:
            patches.append(None)  # unchanged, or gone (below)
        elif not isinstance(now, dict) or (before is not None and not isinstance(before, dict)):
            return None
        elif before is None:
            nulls: list[tuple[str, ...]] = []
            whole = _whole(now, (), nulls)
            if nulls:
                return None
            patches.append(whole)
        else:
            inner, inner_nulls = _member_diff(before, now, memo)
            if inner_nulls:
                return None
            patches.append(inner or None)
    out: dict[str, Any] = {name: None for name, was, now_at in leaving
                           if before_of[was] is not None
                           and (now_at < 0 or after_of[now_at] is None)}
    for name, k in arriving:
        patch = patches[k]
        if patch is not None:
            out[name] = patch
    return out


_Pairing = tuple[tuple[tuple[str, int, int], ...], tuple[tuple[int, int], ...],
                 tuple[tuple[str, int], ...]]
_PAIRINGS: dict[tuple[int, int], tuple[Layout, Layout, _Pairing]] = {}
"""``_pairing``'s answers by the two layouts' ids, the layouts held with them (so that their
ids stay theirs while the answer is kept): a push meets a few dozen pairs of layouts, a
pack's plans (``controls._plan``) a few dozen more."""


def _pairing(old: Layout, new: Layout) -> _Pairing:
    """How members go from ``old`` to ``new``: each member of ``old`` with its group there
    and in ``new`` (-1: not in it), the distinct pairs of groups (old, new; -1: not in
    ``old``), and each member of ``new`` with the index of its pair."""
    return shared(_PAIRINGS, (id(old), id(new)), lambda: (old, new, _pair(old, new)),
                  _PAIRINGS_MAX)[2]


_PAIRINGS_MAX = 4096


def _pair(old: Layout, new: Layout) -> _Pairing:
    was = dict(old)
    now = dict(new)
    leaving = tuple((name, at, now.get(name, -1)) for name, at in old)
    index: dict[tuple[int, int], int] = {}
    arriving = tuple((name, index.setdefault((was.get(name, -1), at), len(index)))
                     for name, at in new)
    return leaving, tuple(index), arriving


def _whole(value: Any, path: tuple[str, ...], nulls: list[tuple[str, ...]]) -> Any:
    """``value`` as a patch member for a target that is not an object: its null members
    (through objects; a list is taken as it stands) are left to ``nulls``."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, member in value.items():
        if member is None:
            nulls.append((*path, key))
        elif isinstance(member, dict):
            out[key] = _whole(member, (*path, key), nulls)
        else:  # a scalar or a list, as it stands (no call: a new bet's dozen members)
            out[key] = member
    return out


def apply_merge(target: Any, patch: Any) -> Any:
    """RFC 7386 section 2, without changing ``target``.

    >>> apply_merge({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}})
    {'a': 'z', 'c': {'d': 'e'}}
    >>> apply_merge({"a": [{"b": "c"}]}, {"a": [1]}), apply_merge(["a"], {"a": "c"})
    ({'a': [1]}, {'a': 'c'})
    """
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = apply_merge(out.get(key), value)
    return out


def apply_patch(doc: Any, patch: Patch) -> Any:
    """``doc`` with ``patch`` applied: the merge, then the nulls."""
    out = apply_merge(doc, patch.merge)
    copied: set[tuple[str, ...]] = set()  # the objects already copied for this patch
    for path in patch.nulls:
        node = out
        for depth in range(1, len(path)):
            key, prefix = path[depth - 1], path[:depth]
            if prefix not in copied:
                node[key] = dict(node[key])
                copied.add(prefix)
            node = node[key]
        node[path[-1]] = None
    return out


SEATING = (gev.PlayerJoined, gev.PlayerLeft)
PACK_CONSTANTS = ("limits", "rules", "ladders", "placard", "rules_panel", "paytable")
"""View members the rule pack fixes for a table's life: sent in a connection's hello, not in
every push (the page keeps them: ``static/js/api.js``)."""


def dumps(data: object) -> str:
    """Compact JSON text, as ``json.dumps(data, separators=(",", ":"), ensure_ascii=False)``
    writes it, by ``orjson`` (a push to 1,000 players serialises 1,000 patches; the standard
    library took a fifth of a roll's push). Keys other than ``str`` are written as the
    standard library writes them; ``orjson`` takes over half as long again when asked to
    allow them, so it is asked only for a document that holds one."""
    try:
        return orjson.dumps(data).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode()


def _merge(base: str, *parts: str) -> str:
    """``base`` (a JSON object's text) with more members, given as ``"key":value`` texts."""
    extra = [p for p in parts if p]
    if not extra:
        return base
    if base == "{}":
        return "{" + ",".join(extra) + "}"
    return base[:-1] + "," + ",".join(extra) + "}"


class LiveViews:
    """One table's views, maintained from its committed events."""

    def __init__(self) -> None:
        self.version = 0
        self.rebuilt = 0
        """How many per-player parts were built (tests count them)."""
        self._public: tuple[bool, dict[str, Any], str, dict[str, Any], str] | None = None
        self._staff: tuple[dict[str, Any], str | None] | None = None
        """The staff part and, once asked for (a hello), its text: a push sends a patch."""
        self._me: dict[str, tuple[bool, dict[str, Any]]] = {}
        self._index: dict[str, list[Bet]] | None = None
        self._pinned: bool | None = None
        self._last: dict[str, dict[str, Any]] = {}
        """Each player's last part, kept across batches: a part rebuilt equal to it is kept
        as that same object (no patch to work out, its text already made)."""
        self._texts: dict[int, tuple[dict[str, Any], str]] = {}
        """Each part's text, by the part's id, made when first asked for (a push sends
        patches, not the parts: after a roll, 1,000 players' parts need no text at all)."""
        self._placeable: dict[tuple[bool, bool], tuple[list[str], str]] = {}
        """The wagers a player may make, by (blocked, seated): apart from the odds (worked
        out per bet), what a player may make depends on the table, not on the player, once
        they are at it (``CrapsEngine.placeable_codes``: the player gate, then each wager's
        table-state checks). Worked out once per batch, not once per player."""
        self._lists: dict[tuple[str, ...], list[str]] = {}
        """The placeable lists made, by their codes, kept across batches: a player's part
        rebuilt after a roll holds the very list it held before when the codes are the same
        (recognised by identity, not compared code by code for each of 1,000 players)."""
        self._booking: dict[tuple[str, Role], _Booking] = {}
        """The engine's answers on each seated player's bets for each member of staff
        (``booking``), by (actor, role), kept across batches as the players' own parts are:
        a batch drops only the players its events touch (all of them, for a change to the
        table itself). A dealer's console at a 1,000-player table asked the engine 1,000 times
        per batch."""

    def reset(self) -> None:
        """Forget everything (the table was rebuilt from its log)."""
        self.version += 1
        self._public = self._staff = self._index = None
        self._me.clear()
        self._last.clear()
        self._texts.clear()
        self._placeable.clear()
        self._booking.clear()

    def update(self, events: Iterable[Event], owners: Mapping[str, str]) -> None:
        """A committed batch: drop what it may have changed."""
        self.version += 1
        self._public = self._staff = self._index = None
        self._placeable.clear()
        touched: set[str] = set()
        table_level = False
        for e in events:
            if isinstance(e, (*PRIVATE_PLAYER, *SEATING)):
                # Another player's chips, wagers or seat are not this player's part; the
                # placeable set (shared, per batch) is worked out again anyway.
                touched.add(e.player)
            elif isinstance(e, PRIVATE_BET) and e.bet in owners:
                touched.add(owners[e.bet])
            else:  # the table itself changed: what anyone may bet may have changed
                table_level = True
        if table_level:
            self._me.clear()
            self._booking.clear()
        else:
            for player in touched:
                self._me.pop(player, None)
            for booking in self._booking.values():
                booking.drop(touched)

    # -- the parts ----------------------------------------------------------------------------
    def public(self, table: Table, history: list[dict[str, Any]], *, lean: bool = False
               ) -> tuple[dict[str, Any], str]:
        """The public part and its text; ``lean`` leaves out what the rule pack fixes for the
        table's life (``limits``, ``rules``: 13 of its 14 kB), which a connection's hello
        has already carried."""
        blocked = self.blocked(table)  # time can block the dice without an event
        if self._public is None or self._public[0] != blocked:
            data = public_view(table, history)
            fixed = {k: v for k, v in data.items() if k not in PACK_CONSTANTS}
            self._public = (blocked, data, dumps(data), fixed, dumps(fixed))
        _, data, full, fixed, fixed_text = self._public
        return (fixed, fixed_text) if lean else (data, full)

    def staff(self, table: Table) -> tuple[dict[str, Any], str]:
        data = self.staff_part(table)
        text = self._staff[1] if self._staff is not None else None
        if text is None:
            text = dumps(data)
            self._staff = (data, text)
        return data, text

    def staff_part(self, table: Table) -> dict[str, Any]:
        """The staff part (``staff``, without its text)."""
        if self._staff is None:
            self._staff = (staff_view(table), None)
        return self._staff[0]

    def me(self, table: Table, viewer: str) -> tuple[dict[str, Any], str] | None:
        """A seated player's own part and its text (``me_part``, serialised once)."""
        data = self.me_part(table, viewer)
        if data is None:
            return None
        held = self._texts.get(id(data))
        if held is None or held[0] is not data:
            # The placeable set is the same text for every player alike: serialised once.
            own = dumps({k: v for k, v in data.items() if k != "placeable"})
            placeable = self._placeable_text(data["placeable"])
            held = self._texts[id(data)] = (data, _merge(own, '"placeable":' + placeable))
        return data, held[1]

    def me_part(self, table: Table, viewer: str) -> dict[str, Any] | None:
        """A seated player's own part (None: not at the table); the same object while it
        is unchanged."""
        if viewer not in table.state.players:
            return None
        blocked = self.blocked(table)
        held = self._me.get(viewer)
        if held is None or held[0] != blocked:
            if self._index is None:  # one pass over the layout per batch, not per player
                index: dict[str, list[Bet]] = {}
                for bet in table.state.bets.values():
                    index.setdefault(bet.player, []).append(bet)
                self._index = index
            key = (blocked, table.state.players[viewer].seat is not None)
            shared = self._placeable.get(key)
            if shared is None:
                codes = placeable_codes(table, viewer)
                codes = self._lists.setdefault(tuple(codes), codes)
                if len(self._lists) > 64:  # a pack has few: never grows past them
                    self._lists = {tuple(codes): codes}
                shared = self._placeable[key] = (codes, dumps(codes))
            # The shared list itself: parts are never changed once made.
            data = me_view(table, viewer, self._index.get(viewer, []), shared[0])
            before = self._last.get(viewer)
            if before is not None and before == data:
                data = before  # unchanged: the same part, text and all (no patch to send)
            elif before is not None:
                self._texts.pop(id(before), None)
            self._last[viewer] = data
            self._me[viewer] = held = (blocked, data)
            self.rebuilt += 1
        return held[1]

    def booking(self, table: Table, actor: str, role: Role) -> dict[str, dict[str, Any]]:
        """``{player: controls_for(table, actor, role, player)["bets"]}`` for every seated
        player, in name order; the same object while none of its entries changed.

        Only the answers on each player's bets travel with every push (the buttons on every
        bet of the console's list), each the very object ``controls_for`` remembers; the
        wagers still open to a player (``open``: ~70 ladders each) are asked for the one
        player being booked (``GET .../controls?player=``): at a 1,000-player table they
        made the dealer's push 0.6-0.8 MB a roll."""
        blocked = self.blocked(table)
        held = self._booking.get((actor, role))
        if held is None or held.blocked != blocked:
            held = self._booking[(actor, role)] = _Booking(blocked)
        if held.whole is None:
            entries = held.entries
            whole: dict[str, dict[str, Any]] = {}
            for player in sorted(table.state.players):
                found = entries.get(player)
                if found is None:
                    found = entries[player] = controls_for(table, actor, role, player)["bets"]
                whole[player] = found
            if len(entries) != len(whole):  # players gone
                held.entries = {p: entries[p] for p in whole}
            held.whole = whole
        return held.whole

    def _placeable_text(self, codes: list[str]) -> str:
        for shared_codes, text in self._placeable.values():
            if shared_codes == codes:
                return text
        return dumps(codes)

    def blocked(self, table: Table) -> bool:
        """``table.blocked()``, asked once per push rather than once per viewer (``pin``)."""
        return self._pinned if self._pinned is not None else table.blocked()

    def pin(self, table: Table | None) -> None:
        """Hold ``blocked`` for the viewers of one push (``None``: ask again each time)."""
        self._pinned = table.blocked() if table is not None else None
        pin_situation(table)

    # -- whole views --------------------------------------------------------------------------
    def view(self, table: Table, history: list[dict[str, Any]], viewer: str | None,
             staff: bool, extra: Mapping[str, Any]) -> dict[str, Any]:
        data = dict(self.public(table, history)[0])
        if staff:
            data.update(self.staff_part(table))
        mine = self.me_part(table, viewer) if viewer is not None else None
        if mine is not None:
            data["me"] = mine
        data.update(extra)
        return data

    def sent(self, table: Table, history: list[dict[str, Any]], viewer: str | None,
             staff: bool, extra: dict[str, Any], seq: int) -> Sent:
        """The parts of the view a connection is sent now (the lean public part): the base
        of its next push's patch."""
        return Sent(seq, self.public(table, history, lean=True)[0],
                    self.staff_part(table) if staff else None,
                    self.me_part(table, viewer) if viewer is not None else None, extra)

    def view_text(self, table: Table, history: list[dict[str, Any]], viewer: str | None,
                  staff: bool, extra: Mapping[str, Any], *, lean: bool = False) -> str:
        """The same view as JSON text, assembled from the parts' texts (``lean``: without
        ``PACK_CONSTANTS``)."""
        text = self.public(table, history, lean=lean)[1]
        parts: list[str] = []
        if staff:
            inner = self.staff(table)[1][1:-1]
            if inner:
                parts.append(inner)
        mine = self.me(table, viewer) if viewer is not None else None
        if mine is not None:
            parts.append('"me":' + mine[1])
        more = dumps(dict(extra))[1:-1]
        if more:
            parts.append(more)
        return _merge(text, *parts)


@dataclass
class _Booking:
    """One member of staff's ``LiveViews.booking``."""

    blocked: bool
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    whole: dict[str, dict[str, Any]] | None = None

    def drop(self, players: set[str]) -> None:
        """Their entries are asked again; the whole is new (a joining player is in it)."""
        for player in players:
            self.entries.pop(player, None)
        if players:
            self.whole = None


@dataclass
class Fanout:
    """One batch of events, each serialised once per privacy class."""

    seq: int
    staff: list[str] = field(default_factory=list)
    public: list[str | None] = field(default_factory=list)
    private: dict[str, dict[int, str]] = field(default_factory=dict)
    made: int = 0
    """Event texts serialised (once per event and privacy class that sees it differently)."""
    _public_text: str | None = None
    _index: tuple[str, list[int], list[int]] | None = None

    @classmethod
    def of(cls, events: list[Event], owners: Mapping[str, str]) -> Fanout:
        out = cls(seq=events[-1].seq if events else 0)
        owner_of = owners.get
        for i, event in enumerate(events):
            data = event_to_dict(event)
            whole = dumps(data)
            out.made += 1
            out.staff.append(whole)
            parts = split(data, owner_of)
            if parts.public is data:
                out.public.append(whole)
            elif parts.public is None:
                out.public.append(None)
            else:
                out.public.append(dumps(parts.public))
                out.made += 1
            for who, theirs in parts.own.items():
                if theirs is data:
                    out._own(who, i, whole)
                else:
                    out._own(who, i, dumps(theirs))
                    out.made += 1
        return out

    def _own(self, player: str, index: int, text: str) -> None:
        self.private.setdefault(player, {})[index] = text

    def events_text(self, viewer: str | None, staff: bool) -> str:
        if staff:
            return "[" + ",".join(self.staff) + "]"
        own = self.private.get(viewer) if viewer is not None else None
        joined, before, starts = self._public_index()
        if not own:
            if self._public_text is None:
                self._public_text = "[" + joined + "]"
            return self._public_text
        # The public text between the viewer's own events, sliced out of the text made
        # once: a roll that settles 1,000 players' bets is some 2,000 events, and walking
        # them all for each of 1,000 viewers was a tenth of the push.
        parts: list[str] = []
        at = 0
        for i in sorted(own):
            if before[i] > before[at]:
                parts.append(joined[starts[before[at]]:starts[before[i]] - 1])
            parts.append(own[i])
            at = i + 1
        end = len(self.public)
        if before[end] > before[at]:
            parts.append(joined[starts[before[at]]:starts[before[end]] - 1])
        return "[" + ",".join(parts) + "]"

    def _public_index(self) -> tuple[str, list[int], list[int]]:
        """The public events' texts joined with commas; for each index, how many public
        texts come before it; and where each text starts in the joined text (one more, past
        the end and its comma)."""
        if self._index is None:
            before = [0]
            starts = [0]
            texts: list[str] = []
            for text in self.public:
                if text is not None:
                    texts.append(text)
                    starts.append(starts[-1] + len(text) + 1)
                before.append(len(texts))
            self._index = (",".join(texts), before, starts)
        return self._index


class Sent(NamedTuple):
    """What one connection was last sent, part by part: the base of its next patch. The
    parts are the very objects ``LiveViews`` keeps (never changed once made), so that a part
    not rebuilt since is recognised by identity. A named tuple: a push makes one per
    connection (a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``)."""

    seq: int
    public: dict[str, Any]
    """Without ``PACK_CONSTANTS``."""
    staff: dict[str, Any] | None
    me: dict[str, Any] | None
    extra: dict[str, Any]


_NO_PATCH = ("", "")


def _me_patch(base: dict[str, Any] | None, now: dict[str, Any] | None, memo: Memo) -> Patch:
    """``merge_patch({"me": base}, {"me": now}, memo)`` (an absent part: ``{}``), without
    wrapping the two parts in documents of their own for each of 1,000 players."""
    if base is None or now is None:
        return merge_patch({} if base is None else {"me": base},
                           {} if now is None else {"me": now}, memo)
    # Not kept in ``memo``: a player's own part is in no other view (``Patches`` keeps each
    # pair's text), only the parts inside it are.
    nulls: list[tuple[str, ...]] = []
    inner = _diff(base, now, (), nulls, memo)
    return Patch({"me": inner} if inner else {}, tuple(("me", *rest) for rest in nulls))


class Patches:
    """One push's merge patches (``merge_patch``), each part's worked out once per base it
    starts from, not once per connection: the public part once for every connection that
    was sent the previous push, the staff part once, a player's own part only when it was
    rebuilt, and the rest (``Floor._extra``) only when it differs."""

    def __init__(self) -> None:
        self.made = 0
        """Patches worked out (tests count them)."""
        self._cache: dict[tuple[str, int, int], tuple[object, object, tuple[str, str]]] = {}
        self._texts: dict[tuple[str, ...], str] = {}
        self._memo: Memo = {}
        """Shared parts compared this push (every player's ``controls.open`` after a roll)."""
        self._alike: dict[tuple[int, ...], tuple[Sent, Sent, tuple[tuple[str, str], ...]]] = {}
        """The public, staff and extra parts' pieces, by the ids of both views' parts."""

    def text(self, base: Sent, now: Sent) -> str:
        """``"patch":{...}`` (and ``"nulls":[...]`` when some member becomes null): what turns
        the view ``base`` describes into the one ``now`` does."""
        # The parts other than ``me`` are the same pairs for most connections: their pieces
        # are looked up together, by the six parts' ids (the parts held with them). A part
        # sent unchanged (a connection's own extra, kept from its hello) has no piece,
        # whichever object it is.
        extras = (0, 0) if base.extra is now.extra else (id(base.extra), id(now.extra))
        pair = (id(base.public), id(now.public), id(base.staff), id(now.staff), *extras)
        held = self._alike.get(pair)
        if held is None:
            held = self._alike[pair] = (base, now, (
                self._part("public", base.public, now.public),
                self._part("staff", base.staff, now.staff),
                self._part("extra", base.extra, now.extra)))
        public, staff, extra = held[2]
        pieces = (public, staff, self._part("me", base.me, now.me), extra)
        # A player's own patch makes the text theirs alone: not kept (1,000 keys a push).
        key = (*pieces[0], *pieces[1], *pieces[3]) if pieces[2] is _NO_PATCH else None
        text = self._texts.get(key) if key is not None else None
        if text is None:
            members = ",".join(m for m, _ in pieces if m)
            nulls = ",".join(n for _, n in pieces if n)
            text = '"patch":{' + members + "}" + (',"nulls":[' + nulls + "]" if nulls else "")
            if key is not None:
                self._texts[key] = text
        return text

    def _part(self, name: str, base: dict[str, Any] | None, now: dict[str, Any] | None
              ) -> tuple[str, str]:
        if base is now:
            return _NO_PATCH
        key = (name, id(base), id(now))
        held = self._cache.get(key)
        if held is None:
            # ``me`` is one member of the view; the other parts are members of the view itself.
            if name == "me":
                patch = _me_patch(base, now, self._memo)
            else:
                patch = merge_patch(base or {}, now or {}, self._memo)
            members = dumps(patch.merge)[1:-1]
            nulls = ",".join(dumps(list(path)) for path in patch.nulls)
            self.made += 1
            # The bases are held with the patch so that their ids stay theirs for the push.
            held = self._cache[key] = (base, now, (members, nulls))
        return held[2]
