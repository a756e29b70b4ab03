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
from dicetable.store.archive_file import ArchiveError
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
    last = _last_line(target)
    if last is not None and isinstance(last[1].get("n"), int):
        prev_mac, number = str(last[1].get("mac", GENESIS)), int(last[1]["n"]) + 1
    else:  # an empty file, or a last line that is no checkpoint: count them all
        previous = _lines(target)
        prev_mac = str(previous[-1].get("mac", GENESIS)) if previous else GENESIS
        number = len(previous) + 1
    data = {"n": number, "at": at, "prev": prev_mac,
            "heads": {name: [h.seq, h.hash] for name, h in sorted(heads.items())}}
    _append_signed(target, key, data)
    return number


def _append_signed(target: Path, key: bytes, data: dict[str, Any]) -> None:
    """Append ``data`` with its MAC as one line, durable before it returns."""
    line = canonical({**data, "mac": _mac(key, data)})
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def write_restore(path: str | Path, key: bytes | None, restore: dict[str, Any], *,
                  at: str) -> int:
    """Append a signed restore line: the store was replaced by a backup (``restore`` names
    its recorded event: stream, seq, hash). The lines before it checkpoint the replaced
    store: from here on streams are checked against the lines after it only, and the line
    itself claims no heads, so the next start-up verifies every stream whole."""
    if not key:
        raise InvalidInput("checkpoints are signed with the chain key (dicetable keys init)",
                           rule="store.key")
    target = Path(path)
    previous = _lines(target)
    last = previous[-1] if previous else None
    prev_mac = str(last.get("mac", GENESIS)) if last else GENESIS
    number = int(last["n"]) + 1 if last and isinstance(last.get("n"), int) else len(previous) + 1
    data = {"n": number, "at": at, "prev": prev_mac, "heads": {}, "restore": restore}
    _append_signed(target, key, data)
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
    return verify_lines(path, key, sources)[0]


@dataclass(frozen=True)
class Cursor:
    """How much of a checkpoint file has been verified: its lines, their bytes and the last
    line's MAC (where the next line's chain continues)."""

    lines: int = 0
    offset: int = 0
    mac: str = GENESIS


def _check_file(path: str | Path, key: bytes | None) -> Path:
    if not key:
        raise InvalidInput("checkpoints are verified with the chain key (--key)",
                           rule="store.key")
    target = Path(path)
    if not target.exists():
        raise InvalidInput(f"no checkpoint file at {target}", rule="store.checkpoints")
    return target


def verify_lines(path: str | Path, key: bytes | None, sources: Iterable[Streams],
                 since: Cursor = Cursor(), *, newest_only: bool = False
                 ) -> tuple[list[CheckpointProblem], Cursor]:
    """Verify the lines after ``since`` (default: every line) and the database against each
    (``newest_only``: each stream against the last line that names it - a history rewritten
    or cut back behind an earlier line is behind that one too); returns the problems and how
    far the file is now verified (it stops at a forged line)."""
    target = _check_file(path, key)
    assert key is not None
    with target.open("rb") as f:
        f.seek(since.offset)
        data = f.read()
    found: list[CheckpointProblem] = []
    srcs = list(sources)
    cursor = since
    broken: set[str] = set()
    latest: dict[str, tuple[int, int, str]] = {}
    offset = since.offset
    for raw in data.splitlines(keepends=True):
        n = cursor.lines + 1
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        line: dict[str, Any] = value if isinstance(value, dict) else {"unreadable": n}
        mac = line.pop("mac", None)
        if "unreadable" in line or mac != _mac(key, line) or line.get("n") != n:
            found.append(CheckpointProblem(n, "", 0, "forged", "the line's signature does not "
                                           "verify under the key (or it is out of place)"))
            return found, cursor
        if line.get("prev") != cursor.mac:
            found.append(CheckpointProblem(n, "", 0, "deleted", "the line does not follow "
                                           "the one before it (checkpoints were removed)"))
            return found, cursor
        offset += len(raw)
        cursor = Cursor(n, offset, str(mac))
        restore = line.get("restore")
        if isinstance(restore, dict):  # the lines before it checkpoint the replaced store
            found = [p for p in found if not p.stream]
            broken.clear()
            latest.clear()
            found += _restore_recorded(srcs, n, restore)
            continue
        if newest_only:
            for stream, (seq, digest) in line["heads"].items():
                latest[stream] = (n, int(seq), str(digest))
            continue
        for stream, (seq, digest) in sorted(line["heads"].items()):
            found += _against_store(srcs, broken, n, stream, int(seq), str(digest))
    for stream, (n, seq, digest) in sorted(latest.items()):
        found += _against_store(srcs, broken, n, stream, seq, digest)
    return found, cursor


def _restore_recorded(srcs: list[Streams], n: int, restore: dict[str, Any]
                      ) -> list[CheckpointProblem]:
    """A restore line is honoured only while the store holds the restore event it names."""
    stream, seq, digest = restore.get("stream"), restore.get("seq"), restore.get("hash")
    if not isinstance(stream, str) or not isinstance(seq, int) or not isinstance(digest, str):
        return [CheckpointProblem(n, "", 0, "forged", "a restore line that names no event")]
    stored, _ = _hash_at(srcs, stream, seq)
    if stored != digest:
        return [CheckpointProblem(n, "", 0, "restore", f"the store does not hold the restore "
                                  f"event this line names ({stream} seq {seq})")]
    return []


def _against_store(srcs: list[Streams], broken: set[str], n: int, stream: str, seq: int,
                   digest: str) -> list[CheckpointProblem]:
    if stream in broken or not seq:
        return []
    try:
        stored, head = _hash_at(srcs, stream, seq)
    except ArchiveError as e:  # the checkpointed event is archived, and its file is bad
        broken.add(stream)
        return [CheckpointProblem(n, stream, seq, "archive", e.message)]
    if stored is None:
        broken.add(stream)
        return [CheckpointProblem(n, stream, seq, "truncated",
                                  f"the log ends at seq {head}, behind the checkpointed head "
                                  f"{seq}")]
    if stored != digest:
        broken.add(stream)
        return [CheckpointProblem(n, stream, seq, "rewritten",
                                  "the stored event there is not the one checkpointed "
                                  "(history was rewritten)")]
    return []


def _last_line(target: Path) -> tuple[int, dict[str, Any]] | None:
    """Where the file's last line starts, and the line, read from the end (None: empty, or
    not a line a checkpoint writes)."""
    size = target.stat().st_size if target.exists() else 0
    if not size:
        return None
    with target.open("rb") as f:
        chunk = 4096
        while True:
            start = max(0, size - chunk)
            f.seek(start)
            tail = f.read(size - start)
            lines = tail.rstrip(b"\n").split(b"\n")
            if len(lines) > 1 or start == 0:
                break
            chunk *= 2
    try:
        line = json.loads(lines[-1])
    except ValueError:
        return None
    if not tail.endswith(b"\n") or not isinstance(line, dict):
        return None
    return size - len(lines[-1]) - 1, line


def newest(path: str | Path, key: bytes | None) -> tuple[Cursor, dict[str, Head]] | None:
    """Where the file's last line starts (the cursor just before it, for ``verify_lines``)
    and the heads it claims - read from the end of the file, whatever its length, and not
    yet verified. None: no line, or a last line that is no checkpoint."""
    target = _check_file(path, key)
    last = _last_line(target)
    if last is None:
        return None
    start, line = last
    n, prev, heads = line.get("n"), line.get("prev"), line.get("heads")
    if not isinstance(n, int) or not isinstance(prev, str) or not isinstance(heads, dict):
        return None
    try:
        claimed = {stream: Head(int(seq), str(digest)) for stream, (seq, digest) in heads.items()}
    except (TypeError, ValueError):
        return None
    return Cursor(n - 1, start, prev), claimed


def signed_heads(path: str | Path, key: bytes | None, *, after: int = 0
                 ) -> tuple[dict[str, tuple[int, Head]], list[CheckpointProblem]]:
    """Each stream's newest head signed by the lines after line ``after`` (and after the last
    restore line), with the line that signed it - read with the signatures checked, not
    against any store (the store may be the one lost). Stops at a forged or removed line."""
    target = _check_file(path, key)
    assert key is not None
    out: dict[str, tuple[int, Head]] = {}
    problems: list[CheckpointProblem] = []
    prev = GENESIS
    for n, line in enumerate(_lines(target), 1):
        mac = line.pop("mac", None)
        if "unreadable" in line or mac != _mac(key, line) or line.get("n") != n:
            problems.append(CheckpointProblem(n, "", 0, "forged", "the line's signature "
                                              "does not verify under the key"))
            break
        if line.get("prev") != prev:
            problems.append(CheckpointProblem(n, "", 0, "deleted", "the line does not follow "
                                              "the one before it"))
            break
        prev = str(mac)
        if isinstance(line.get("restore"), dict):
            out.clear()
            continue
        if n <= after:
            continue
        for stream, (seq, digest) in line["heads"].items():
            held = out.get(stream)
            if held is None or int(seq) >= held[1].seq:
                out[stream] = (n, Head(int(seq), str(digest)))
    return out, problems
