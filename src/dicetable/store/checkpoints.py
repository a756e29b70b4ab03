"""Signed checkpoints: every stream's head, appended to a file outside the database.

Each line is one checkpoint: the time, the head (seq, hash) of every stream - tables and the
other streams alike - the previous line's MAC, and an HMAC-SHA256 under the chain key of all
that. The file is only ever appended to. ``verify_checkpoints`` checks the lines (MACs and
their own chain) and then the database against each: a stream cut back behind a checkpoint,
or rewritten before it (even rehashed with the key), no longer has the checkpointed hash at
the checkpointed seq.

>>> import tempfile, pathlib
>>> from dicetable.store.memory import MemoryStore
>>> from dicetable.store.durable import DurableTable
>>> key = b"k" * 32
>>> store = MemoryStore(key=key)
>>> t = DurableTable.open(store, "pa-craps", "t1").table
>>> path = pathlib.Path(tempfile.mkdtemp()) / "cp.jsonl"
>>> write_checkpoint(path, key, heads_of([store]), at="2026-01-01T00:00:00+00:00")
1
>>> verify_checkpoints(path, key, [store])
[]
>>> del store.rows["t1"][-1]; store.heads["t1"] = store.heads["t1"]._replace(seq=1)
>>> [p.what for p in verify_checkpoints(path, key, [store])]
['truncated']
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dicetable.core.errors import InvalidInput
from dicetable.store.chain import GENESIS, Head, StoredEvent, canonical


class Streams(Protocol):
    """What the checkpoints read of a store: its streams, their heads and records."""

    def tables(self) -> list[str]: ...

    def head(self, table: str) -> Head: ...

    def records(self, table: str, after: int = 0,
                until: int | None = None) -> Iterator[StoredEvent]: ...


@dataclass(frozen=True)
class CheckpointProblem:
    line: int
    stream: str
    seq: int
    what: str
    detail: str

    def __str__(self) -> str:
        where = f"{self.stream} seq {self.seq}" if self.stream else "the checkpoint file"
        return f"checkpoint {self.line}: {where}: {self.what} - {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "table": self.stream, "seq": self.seq, "what": self.what,
                "detail": self.detail}


def _mac(key: bytes, data: dict[str, Any]) -> str:
    return hmac.new(key, canonical(data).encode("utf-8"), hashlib.sha256).hexdigest()


def heads_of(sources: Iterable[Streams]) -> dict[str, Head]:
    out: dict[str, Head] = {}
    for source in sources:
        names = getattr(source, "stream_ids", source.tables)  # a table store: every stream
        for name in names():
            out[name] = source.head(name)
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            value = json.loads(line)
        except ValueError:
            value = {"unreadable": n}
        out.append(value if isinstance(value, dict) else {"unreadable": n})
    return out


def write_checkpoint(path: str | Path, key: bytes | None, heads: dict[str, Head], *,
                     at: str) -> int:
    """Append one checkpoint of ``heads``; returns its number. Needs the key (it signs)."""
    if not key:
        raise InvalidInput("checkpoints are signed with the chain key (dicetable keys init)",
                           rule="store.key")
    target = Path(path)
    previous = _lines(target)
    prev_mac = str(previous[-1].get("mac", GENESIS)) if previous else GENESIS
    number = len(previous) + 1
    data = {"n": number, "at": at, "prev": prev_mac,
            "heads": {name: [h.seq, h.hash] for name, h in sorted(heads.items())}}
    line = canonical({**data, "mac": _mac(key, data)})
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return number


def _hash_at(sources: list[Streams], stream: str, seq: int) -> tuple[str | None, int]:
    """The stored hash at ``seq`` of ``stream`` (None if absent), and the stream's head seq."""
    for source in sources:
        head = source.head(stream)
        rows = list(source.records(stream, after=seq - 1, until=seq))
        if rows or head.seq:
            return (rows[0].hash if rows else None), head.seq
    return None, 0


def verify_checkpoints(path: str | Path, key: bytes | None, sources: Iterable[Streams]
                       ) -> list[CheckpointProblem]:
    """Every problem found: forged or missing lines, and streams that moved behind one."""
    if not key:
        raise InvalidInput("checkpoints are verified with the chain key (--key)",
                           rule="store.key")
    target = Path(path)
    if not target.exists():
        raise InvalidInput(f"no checkpoint file at {target}", rule="store.checkpoints")
    found: list[CheckpointProblem] = []
    srcs = list(sources)
    prev_mac = GENESIS
    broken: set[str] = set()
    for n, line in enumerate(_lines(target), 1):
        mac = line.pop("mac", None)
        if "unreadable" in line or mac != _mac(key, line) or line.get("n") != n:
            found.append(CheckpointProblem(n, "", 0, "forged", "the line's signature does not "
                                           "verify under the key (or it is out of place)"))
            return found
        if line.get("prev") != prev_mac:
            found.append(CheckpointProblem(n, "", 0, "deleted", "the line does not follow "
                                           "the one before it (checkpoints were removed)"))
            return found
        prev_mac = str(mac)
        for stream, (seq, digest) in sorted(line["heads"].items()):
            if stream in broken or not seq:
                continue
            stored, head = _hash_at(srcs, stream, int(seq))
            if stored is None:
                broken.add(stream)
                found.append(CheckpointProblem(
                    n, stream, int(seq), "truncated",
                    f"the log ends at seq {head}, behind the checkpointed head {seq}"))
            elif stored != digest:
                broken.add(stream)
                found.append(CheckpointProblem(
                    n, stream, int(seq), "rewritten",
                    "the stored event there is not the one checkpointed (history was "
                    "rewritten)"))
    return found
