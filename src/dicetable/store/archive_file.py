"""Archive files: a closed gaming day's events of every table, compressed and signed.

A file is gzip-compressed JSON Lines: first a manifest - the gaming day, each stream's span
(first seq and the hash it links to, last seq and its hash), the SHA-256 of the rows that
follow, the retention rule that keeps it, and an HMAC-SHA256 of all that under the chain key
- then one stored row a line, exactly as the log held it (so every link is checked again as
it is read). The store keeps each span in its index (``Span``): the first link is anchored to
the event before it (the previous archive's last, or the start of the stream) and the last to
the live event after it, whose ``prev_hash`` names it - so a file swapped, edited, cut short
or lost, or an index row removed, breaks the chain where it is read.

>>> import tempfile, pathlib
>>> from dicetable.store.chain import GENESIS, chain
>>> key = b"k" * 32
>>> rows = chain("t1", Head(0, GENESIS), ["A", "B"], ['{"seq":1}', '{"seq":2}'], key)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "day.jsonl.gz"
>>> spans = write_archive(path, key, "2026-01-01", {"t1": rows}, {"years": 10})
>>> [(s.stream, s.first, s.last) for s in spans]
[('t1', 1, 2)]
>>> [r.seq for r in read_archive(path, key)["t1"]]
[1, 2]
>>> _ = path.write_bytes(path.read_bytes()[:-3] + b"xyz")
>>> try:
...     read_archive(path, key)
... except ArchiveError as e:
...     e.rule
'archive.file'
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput
from dicetable.store.chain import Head, StoredEvent, canonical, key_id

FORMAT = "dicetable-archive/1"


class ArchiveError(InvalidInput):
    """An archive file is missing, unreadable, or does not verify under the key."""


@dataclass(frozen=True, slots=True)
class Span:
    """One stream's events in one archive file, as the store's index records them."""

    stream: str
    first: int
    first_prev: str
    """The hash the first archived event links to (the event before it)."""
    last: int
    last_hash: str
    """The last archived event's hash: the next event, live or archived, links to it."""
    day: str
    file: str
    mac: str
    """The file's signature: the index names exactly one file."""

    @property
    def end(self) -> Head:
        return Head(self.last, self.last_hash)


def _mac(key: bytes, manifest: dict[str, Any]) -> str:
    return hmac.new(key, canonical(manifest).encode("utf-8"), hashlib.sha256).hexdigest()


def _row_line(row: StoredEvent) -> bytes:
    return (canonical([row.table, row.seq, row.kind, row.body, row.prev_hash, row.hash])
            + "\n").encode("utf-8")


def write_archive(path: Path, key: bytes | None, day: str,
                  rows: dict[str, list[StoredEvent]], retention: dict[str, Any]) -> list[Span]:
    """Write ``rows`` (each stream's events of ``day``, in order) to a new signed file at
    ``path``; returns the spans for the store's index. Written whole, synced, then renamed
    into place: a file that exists is complete."""
    if not key:
        raise InvalidInput("archives are signed with the chain key (dicetable keys init)",
                           rule="store.key")
    body = b"".join(_row_line(r) for stream in sorted(rows) for r in rows[stream])
    ends = {s: (rs[0], rs[-1]) for s, rs in sorted(rows.items()) if rs}
    streams = {s: [a.seq, a.prev_hash, b.seq, b.hash] for s, (a, b) in ends.items()}
    manifest: dict[str, Any] = {"format": FORMAT, "day": day, "key_id": key_id(key),
                                "streams": streams, "events": sum(len(r) for r in rows.values()),
                                "rows_sha256": hashlib.sha256(body).hexdigest(),
                                "retention": retention}
    mac = _mac(key, manifest)
    if path.exists():
        raise InvalidInput(f"{path} exists; an archive is never overwritten",
                           rule="archive.file")
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write((canonical({**manifest, "mac": mac}) + "\n").encode("utf-8"))
        gz.write(body)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return [Span(s, a.seq, a.prev_hash, b.seq, b.hash, day, str(path.resolve()), mac)
            for s, (a, b) in ends.items()]


def read_manifest_and_rows(path: Path, key: bytes | None) -> tuple[dict[str, Any],
                                                                   dict[str, list[StoredEvent]]]:
    """The verified manifest and rows of an archive file; ``ArchiveError`` if it is missing,
    unreadable, or its signature or its rows' digest does not hold."""
    if not key:
        raise ArchiveError(f"archive {path} is verified with the chain key (--key)",
                           rule="store.key")
    try:
        with gzip.open(path, "rb") as gz:
            data = gz.read()
    except FileNotFoundError:
        raise ArchiveError(f"archive {path} is missing", rule="archive.file") from None
    except (OSError, EOFError, zlib.error) as e:
        raise ArchiveError(f"archive {path} cannot be read ({e})", rule="archive.file") from None
    head, _, body = data.partition(b"\n")
    try:
        manifest = json.loads(head)
    except ValueError:
        manifest = None
    if not isinstance(manifest, dict):
        raise ArchiveError(f"archive {path} has no manifest", rule="archive.file")
    mac = manifest.pop("mac", None)
    if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(key, manifest)):
        raise ArchiveError(f"archive {path}: its manifest's signature does not verify under "
                           "the key", rule="archive.signature")
    if hashlib.sha256(body).hexdigest() != manifest.get("rows_sha256"):
        raise ArchiveError(f"archive {path}: its events are not the ones signed (the file "
                           "was altered)", rule="archive.signature")
    out: dict[str, list[StoredEvent]] = {}
    for line in body.splitlines():
        table, seq, kind, text, prev, digest = json.loads(line)
        out.setdefault(str(table), []).append(
            StoredEvent(str(table), int(seq), str(kind), str(text), str(prev), str(digest)))
    manifest["mac"] = mac
    return manifest, out


def read_archive(path: Path, key: bytes | None) -> dict[str, list[StoredEvent]]:
    """The verified rows of an archive file, by stream."""
    return read_manifest_and_rows(path, key)[1]
