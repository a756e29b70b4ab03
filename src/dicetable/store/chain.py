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
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, NamedTuple

GENESIS = "0" * 64
"""The 'previous hash' of a table's first event."""


def canonical(data: Any) -> str:
    """The one JSON text of ``data`` that is hashed and stored: sorted keys, no spaces."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
                  key: bytes | None = None) -> Snapshot:
    """A snapshot of ``data`` bound to event ``seq`` (signed with ``key`` when given)."""
    body = canonical(data)
    return Snapshot(table, seq, event_hash, body,
                    snapshot_digest(table, seq, event_hash, body, key))
