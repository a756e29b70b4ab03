"""The hash chain that makes a table's log tamper-evident (spec/standards.md MEM-2, anchor 6).

Every stored event carries the hash of its predecessor in the same stream (a table's log, or
any other stream); its own hash is SHA-256 over that previous hash and the event's canonical
JSON. Changing, removing, adding or moving any stored event breaks a link that ``dicetable
audit verify`` finds.

With a key (``dicetable keys init``; kept outside the database) each link is an HMAC-SHA256
under that key instead: whoever can write the database but does not hold the key cannot
rehash a rewritten history (spec/standards.md MEM-2). A store records the key's id, never the
key.

>>> body = canonical({"type": "PlayerJoined", "seq": 1, "player": "alice"})
>>> body
'{"player":"alice","seq":1,"type":"PlayerJoined"}'
>>> h = link_hash(GENESIS, body)
>>> len(h), h == link_hash(GENESIS, body), h == link_hash(h, body)
(64, True, False)

Events to and from the canonical JSON the store keeps and hashes, for every aggregate.

The conversion itself is the one codec (``dicetable.core.events``, through
``dicetable.core.events``); this module adds what storage needs: the canonical text that is
hashed, a fast path for parsing it, and the one place where a stored event of an older shape
is brought up to date before it is rebuilt (``upgrade``: a per-event schema version and its
upcasters belong there).

>>> from dicetable.core.dice import Roll
>>> from dicetable.core.roles import Role
>>> from dicetable.games.events import DiceRolled, event_to_dict
>>> e = DiceRolled(table="t1", seq=3, actor="stick", role=Role.STICKPERSON,
...                at="2026-01-01T00:00:00+00:00", roll=Roll(3, 4), source="manual")
>>> decode(event_to_dict(e)) == e
True
>>> kind, body = encode(e)
>>> kind, decode_body(body) == e
('DiceRolled', True)
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from dicetable.core.errors import InvalidInput
from dicetable.core.events import (
    Event,
    event_from_dict,
    event_from_owned_dict,
    event_to_dict,
    type_hints,
)

GENESIS = "0" * 64
"""The 'previous hash' of a table's first event."""

def canonical(data: Any) -> str:
    """The one JSON text of ``data`` that is hashed and stored: sorted keys, no spaces."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_ORJSON_CANONICAL = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS \
    | orjson.OPT_PASSTHROUGH_DATETIME


def canonical_plain(data: Any) -> str:
    """``canonical(data)`` for data without floats, written by orjson: the same text byte for
    byte (its escapes, key order and integers are json's), at a tenth of the cost. What orjson
    does not write as json does (an integer beyond 64 bits, a lone surrogate, a key that is not
    text, a type json refuses) falls back to json.

    >>> data = {"z": [1, None, True], "a": "Arr\u00eat\u00e9 \\\\ \\u0001", "k": {"b": 2**64 - 1}}
    >>> canonical_plain(data) == canonical(data)
    True
    >>> canonical_plain({1: "a"}) == canonical({1: "a"})   # json's text for a number key
    True
    """
    try:
        return orjson.dumps(data, option=_ORJSON_CANONICAL).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError included
        return canonical(data)


def canonical_of(data: dict[str, Any], of: type[Any]) -> str:
    """``canonical(data)``, where ``data`` holds the fields of the dataclass ``of`` (and
    perhaps more): written by orjson (``canonical_plain``) unless a float is found, looking
    only through the values of fields whose type may hold one and of keys ``of`` lacks. A
    large state's snapshot is written in a seventh of the time, the same text.

    >>> @dataclasses.dataclass
    ... class Rec:
    ...     n: int
    ...     extra: dict[str, Any]
    >>> canonical_of({"n": 1, "extra": {"x": [2.5e16]}}, Rec)
    '{"extra":{"x":[2.5e+16]},"n":1}'
    >>> canonical_of({"n": 1, "extra": {"x": [2]}}, Rec) == canonical({"n": 1, "extra": {"x": [2]}})
    True
    """
    floating, named = _float_fields(of)
    if any(_holds_float(value) for name, value in data.items()
           if name in floating or name not in named):
        return canonical(data)
    return canonical_plain(data)


def _float_fields(of: type[Any]) -> tuple[frozenset[str], frozenset[str]]:
    """The fields of the record type ``of`` whose type may hold a float (json and orjson
    write floats differently: ``1e+16`` and ``1e16``), and all its fields' names; worked out
    once a type (``encode``, ``canonical_of``)."""
    found = _FLOAT_FIELDS.get(of)
    if found is None:
        found = _FLOAT_FIELDS[of] = (
            frozenset(name for name, tp in type_hints(of).items() if _may_hold_float(tp)),
            frozenset(f.name for f in dataclasses.fields(of)))
    return found


_FLOAT_FIELDS: dict[type[Any], tuple[frozenset[str], frozenset[str]]] = {}


def _holds_float(value: Any) -> bool:
    """Is ``value``, or anything in it (JSON data: dicts, lists, tuples), a float?"""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_holds_float(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_float(v) for v in value)
    return False


def link_hash(prev_hash: str, body: str, key: bytes | None = None) -> str:
    """SHA-256 (HMAC-SHA256 under ``key``) over the previous hash and this canonical JSON.

    >>> link_hash(GENESIS, "{}", b"k" * 32) == link_hash(GENESIS, "{}")
    False
    """
    data = prev_hash.encode("ascii") + b"\n" + body.encode("utf-8")
    if key:
        return hmac.new(key, data, hashlib.sha256).hexdigest()
    return hashlib.sha256(data).hexdigest()


def key_id(key: bytes | None) -> str:
    """A public name for a chain key ('' for the unkeyed chain): what a store records.

    >>> key_id(None), len(key_id(b"k" * 32))
    ('', 18)
    """
    if not key:
        return ""
    return "k-" + hmac.new(key, b"dicetable chain key id", hashlib.sha256).hexdigest()[:16]


class Head(NamedTuple):
    """The last stored event of a table: its sequence number and hash (0 and GENESIS if none)."""

    seq: int
    hash: str


EMPTY = Head(0, GENESIS)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One row of the log: the event's canonical JSON with its place in the chain."""

    table: str
    seq: int
    kind: str
    body: str
    prev_hash: str
    hash: str

    def data(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.body)
        return value

    def to_line(self) -> dict[str, Any]:
        """The export form (one JSON Lines record)."""
        return {"table": self.table, "seq": self.seq, "kind": self.kind,
                "prev_hash": self.prev_hash, "hash": self.hash, "event": self.data()}


def chain(table: str, head: Head, kinds: list[str], bodies: list[str],
          key: bytes | None = None) -> list[StoredEvent]:
    """The rows for ``bodies`` appended after ``head`` (links keyed with ``key``)."""
    out: list[StoredEvent] = []
    prev = head.hash
    seq = head.seq
    for kind, body in zip(kinds, bodies, strict=True):
        seq += 1
        h = link_hash(prev, body, key)
        out.append(StoredEvent(table, seq, kind, body, prev, h))
        prev = h
    return out


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A table's state at ``seq``, bound to the chain by the hash of event ``seq``."""

    table: str
    seq: int
    event_hash: str
    body: str
    digest: str
    """SHA-256 of ``body``, or - on a keyed store - ``k:`` and an HMAC-SHA256 under the chain
    key of the stream, the seq, the bound event's hash and ``body``: a snapshot altered on
    disk is never loaded, and on a keyed store nobody without the key can write one."""

    def data(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.body)
        return value

    @property
    def intact(self) -> bool:
        """The unkeyed digest matches (a signed snapshot needs the key: ``sound``)."""
        return hashlib.sha256(self.body.encode("utf-8")).hexdigest() == self.digest

    @property
    def signed(self) -> bool:
        return self.digest.startswith(SIGNED)

    def sound(self, key: bytes | None) -> bool:
        """The digest matches: a signed one under ``key``, an unkeyed one by itself."""
        if not self.signed:
            return self.intact
        return bool(key) and hmac.compare_digest(
            self.digest, snapshot_digest(self.table, self.seq, self.event_hash, self.body, key))

    def trusted(self, key: bytes | None) -> bool:
        """Whether a resume may start from it: sound, and signed when the store is keyed
        (an unkeyed digest anyone can compute).

        >>> snap = make_snapshot("t1", 2, GENESIS, {"seq": 2}, b"k" * 32)
        >>> snap.trusted(b"k" * 32), snap.trusted(b"x" * 32), snap.trusted(None)
        (True, False, False)
        >>> make_snapshot("t1", 2, GENESIS, {"seq": 2}).trusted(b"k" * 32)
        False
        """
        return self.sound(key) and (self.signed or not key)


SIGNED = "k:"
"""How a snapshot digest made with the chain key begins."""


def snapshot_digest(table: str, seq: int, event_hash: str, body: str,
                    key: bytes | None) -> str:
    if not key:
        return hashlib.sha256(body.encode("utf-8")).hexdigest()
    data = f"{table}\n{seq}\n{event_hash}\n{body}".encode()
    return SIGNED + hmac.new(key, data, hashlib.sha256).hexdigest()


def make_snapshot(table: str, seq: int, event_hash: str, data: dict[str, Any],
                  key: bytes | None = None, *, of: type[Any] | None = None) -> Snapshot:
    """A snapshot of ``data`` bound to event ``seq`` (signed with ``key`` when given);
    ``of``: the record type whose fields ``data`` holds (``canonical_of``)."""
    body = canonical(data) if of is None else canonical_of(data, of)
    return Snapshot(table, seq, event_hash, body,
                    snapshot_digest(table, seq, event_hash, body, key))


# -- schema versions -----------------------------------------------------------------------------
# Every stored event carries its schema version ("v"; a body without one is version 1). On
# read, an upcaster turns each older version into the next, up to the current one, so code
# only ever sees current events; the committed fixture log (tests/fixtures) keeps it so.
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

VERSIONS: dict[str, int] = {"TableOpened": 3}
"""The current schema version of each event kind that has changed (all others: 1)."""


def _table_opened_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 writes the table's automations in its opening. Before, a table settled by itself
    only under a pack with ``settlement.automatic``, and an electronic table's server ran its
    betting timer and CSPRNG roll: that is what a v1 table keeps doing."""
    from dicetable.table.table import CHORES, Automation

    if data.get("automations") is None:
        rules = data.get("pack", {}).get("rules", {})
        own: set[Automation] = set()
        if rules.get("settlement.automatic", {}).get("value") is True:
            own |= set(CHORES)
        if data.get("mode") == "electronic":
            own |= {Automation.BETTING_TIMER, Automation.CSPRNG_ROLL}
        data = {**data, "automations": sorted(a.value for a in own)}
    return data


def _table_opened_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """v3 makes two more chores automations: returning a no roll's wagers and passing the
    shaker. Before, every table did both at once, whatever its mode: so does a v2 table."""
    from dicetable.table.table import AROUND_THE_ROLL, CHORES, Automation

    listed = data.get("automations")
    if listed is None:  # v2's "its mode's own"
        mode = data.get("mode")
        rules = data.get("pack", {}).get("rules", {})
        own = set(Automation) if mode == "electronic" else set(CHORES) if mode == "bare" \
            else set()
        if rules.get("settlement.automatic", {}).get("value") is True:
            own |= set(CHORES)
        listed = [a.value for a in own]
    return {**data, "automations": sorted(set(listed) | {a.value for a in AROUND_THE_ROLL})}


UPCASTERS: dict[tuple[str, int], Upcaster] = {("TableOpened", 1): _table_opened_v1_to_v2,
                                              ("TableOpened", 2): _table_opened_v2_to_v3}
"""(kind, version) -> the function that turns that version into the next."""


def upcast(data: dict[str, Any]) -> dict[str, Any]:
    """A stored event's dict at its kind's current schema version, without the "v" key."""
    version = data.get("v", 1)
    if "v" in data:
        data = {k: v for k, v in data.items() if k != "v"}
    kind = str(data.get("type"))
    current = VERSIONS.get(kind, 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= current:
        raise InvalidInput(f"{kind} schema version {version!r} is not one this code reads "
                           f"(1 to {current})", rule="events.codec")
    while version < current:
        try:
            data = UPCASTERS[(kind, version)](data)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidInput(f"cannot upcast {kind} v{version}: {e}",
                               rule="events.codec") from None
        version += 1
    return data


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A stored event's data in the shape its class has today (``upcast``)."""
    if "v" in data or data.get("type") in VERSIONS:
        return upcast(data)
    return data


def decode(data: dict[str, Any]) -> Event:
    """The event (of any aggregate) a stored dict describes."""
    if not isinstance(data, dict):
        raise InvalidInput("an event is a JSON object", rule="events.codec")
    return event_from_dict(upgrade(data))


_JSON = json.JSONDecoder()


def decode_body(body: str) -> Event:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:  # what orjson refuses, the standard parser decides
        data = None
    if not isinstance(data, dict):
        data, end = _JSON.raw_decode(body)  # stored bodies are canonical: no outer whitespace
        if end != len(body) or not isinstance(data, dict):
            data = json.loads(body)  # raises on trailing garbage, as a tampered body may have
            if not isinstance(data, dict):
                raise InvalidInput("an event is a JSON object", rule="events.codec")
    # The parsed dict is ours: an event of its kind's current version is built from it as it
    # is (no copy); only an older one goes through the upcasters.
    version = data.pop("v", 1)
    if type(version) is not int or version != VERSIONS.get(data.get("type"), 1):  # type: ignore[arg-type]
        data["v"] = version
        return event_from_dict(upcast(data))
    return event_from_owned_dict(data)


def to_dict(event: Event) -> dict[str, Any]:
    """The event as JSON data (``event_to_dict``)."""
    return event_to_dict(event)


def encode(event: Event) -> tuple[str, str]:
    """The event's kind and the canonical JSON that is stored and hashed, with its schema
    version."""
    data = event_to_dict(event)
    data["v"] = VERSIONS.get(event.kind, 1)
    floating, _ = _float_fields(type(event))  # none: ``canonical_plain`` writes its text
    return event.kind, canonical(data) if floating else canonical_plain(data)


def _may_hold_float(tp: Any) -> bool:
    """Whether a value of type ``tp`` may be or contain a float (``Any`` and ``object`` may).

    >>> _may_hold_float(dict[str, tuple[int, str | None]]), _may_hold_float(list[Any])
    (False, True)
    """
    if tp is float or tp is Any or tp is object:
        return True
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return any(_may_hold_float(t) for t in type_hints(tp).values())
    return any(_may_hold_float(arg) for arg in typing.get_args(tp) if arg is not Ellipsis)
