"""Archive files: a closed gaming day's events of every table, compressed and signed.

A file is gzip-compressed JSON Lines: first a manifest - the gaming day, each stream's span
(first seq and the hash it links to, last seq and its hash), the SHA-256 of the rows that
follow, the retention rule that keeps it, and an HMAC-SHA256 of all that under the chain key
- then one stored row a line, exactly as the log held it (so every link is checked again as
it is read). The store keeps each span in its index (``Span``): the first link is anchored to
the event before it (the previous archive's last, or the start of the stream) and the last to
the live event after it, whose ``prev_hash`` names it - so a file swapped, edited, cut short
or lost, or an index row removed, breaks the chain where it is read.

The rows are written in blocks (``BLOCK_ROWS`` of one stream at most), each compressed after a
full flush so that it inflates on its own, its SHA-256 in the signed manifest and where it
starts in the gzip header's extra field: a reader of some seqs of one table (``ArchiveBlocks``)
inflates and checks only their blocks. The file stays one ordinary gzip member.

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
import itertools
import json
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

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


BLOCK_ROWS = 4096
"""Rows a block holds at most. Each block is compressed after a full flush and signed by its
own digest, so that a reader of some seqs of one stream inflates and hashes only the blocks
that hold them, not the whole day's file (every table's events)."""
LEVEL = 6
"""zlib's default: within 1% of level 9's size on a day's rows, in three quarters the time."""
_EXTRA_ID = b"DT"
"""The gzip header's extra subfield holding where each block starts (RFC 1952, FEXTRA)."""
_MOST_OFFSETS = (0xFFFF - 4) // 8


def _block_size(counts: list[int]) -> int | None:
    """Rows a block, so that every offset fits in the gzip header (None: they cannot)."""
    size = BLOCK_ROWS
    while sum(-(-c // size) for c in counts) + 2 > _MOST_OFFSETS:
        if size >= max(counts):
            return None
        size *= 2
    return size


def write_archive(path: Path, key: bytes | None, day: str,
                  rows: dict[str, list[StoredEvent]], retention: dict[str, Any]) -> list[Span]:
    """Write ``rows`` (each stream's events of ``day``, in order) to a new signed file at
    ``path``; returns the spans for the store's index. Written whole, synced, then renamed
    into place: a file that exists is complete."""
    if not key:
        raise InvalidInput("archives are signed with the chain key (dicetable keys init)",
                           rule="store.key")
    ends = {s: (rs[0], rs[-1]) for s, rs in sorted(rows.items()) if rs}
    size = _block_size([len(rows[s]) for s in ends]) if ends else None
    pieces: list[bytes] = []
    blocks: list[list[Any]] = []
    for stream in ends:
        chunk = size or len(rows[stream])
        for n in range(0, len(rows[stream]), chunk):
            part = rows[stream][n:n + chunk]
            pieces.append(b"".join(_row_line(r) for r in part))
            blocks.append([stream, part[0].seq, part[-1].seq,
                           hashlib.sha256(pieces[-1]).hexdigest()])
    whole = hashlib.sha256()
    for piece in pieces:
        whole.update(piece)
    streams = {s: [a.seq, a.prev_hash, b.seq, b.hash] for s, (a, b) in ends.items()}
    manifest: dict[str, Any] = {"format": FORMAT, "day": day, "key_id": key_id(key),
                                "streams": streams, "events": sum(len(r) for r in rows.values()),
                                "rows_sha256": whole.hexdigest(), "retention": retention}
    if size is not None:
        manifest["blocks"] = blocks
    mac = _mac(key, manifest)
    if path.exists():
        raise InvalidInput(f"{path} exists; an archive is never overwritten",
                           rule="archive.file")
    tmp = path.with_name(path.name + ".part")
    head = (canonical({**manifest, "mac": mac}) + "\n").encode("utf-8")
    _write_gzip(tmp, [head, *pieces], indexed=size is not None)
    os.replace(tmp, path)
    return [Span(s, a.seq, a.prev_hash, b.seq, b.hash, day, str(path.resolve()), mac)
            for s, (a, b) in ends.items()]


def _write_gzip(path: Path, pieces: list[bytes], *, indexed: bool) -> None:
    """One gzip member of ``pieces``, each after a full flush (it inflates on its own), and -
    when ``indexed`` - where each piece starts in the header's extra field, written last."""
    count = len(pieces) + 1
    header = b"\x1f\x8b\x08" + bytes([4 if indexed else 0]) + b"\0\0\0\0\0\xff"
    if indexed:
        extra = _EXTRA_ID + struct.pack("<H", 8 * count) + bytes(8 * count)
        header += struct.pack("<H", len(extra)) + extra
    deflate = zlib.compressobj(LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    crc = size = 0
    offsets: list[int] = []
    with open(path, "wb") as f:
        f.write(header)
        for piece in pieces:
            offsets.append(f.tell())
            f.write(deflate.compress(piece) + deflate.flush(zlib.Z_FULL_FLUSH))
            crc, size = zlib.crc32(piece, crc), size + len(piece)
        offsets.append(f.tell())
        f.write(deflate.flush() + struct.pack("<II", crc, size & 0xFFFFFFFF))
        if indexed:
            f.seek(16)
            f.write(struct.pack(f"<{count}Q", *offsets))
        f.flush()
        os.fsync(f.fileno())


def read_verified(path: Path, key: bytes | None) -> tuple[dict[str, Any], bytes]:
    """The verified manifest of an archive file and its rows' text (one row a line, not yet
    parsed); ``ArchiveError`` if it is missing, unreadable, or its signature or its rows'
    digest does not hold."""
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
    manifest = _signed_manifest(path, key, head)
    if hashlib.sha256(body).hexdigest() != manifest.get("rows_sha256"):
        raise ArchiveError(f"archive {path}: its events are not the ones signed (the file "
                           "was altered)", rule="archive.signature")
    return manifest, body


def _signed_manifest(path: Path, key: bytes, head: bytes) -> dict[str, Any]:
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
    manifest["mac"] = mac
    return manifest


def _row(line: bytes) -> StoredEvent:
    table, seq, kind, text, prev, digest = json.loads(line)
    return StoredEvent(str(table), int(seq), str(kind), str(text), str(prev), str(digest))


def stream_rows(body: bytes, stream: str) -> list[StoredEvent]:
    """The rows of one stream in a verified body: only its lines are parsed (a day's file
    holds every table's events, each stream's lines together and in order)."""
    prefix = canonical([stream])[:-1].encode("utf-8") + b","
    return [_row(line) for line in body.splitlines() if line.startswith(prefix)]


Raw = list[Any]
"""A row as its line holds it: table, seq, kind, body, prev_hash, hash (``StoredEvent(*raw)``)."""


def _parse_rows(data: bytes) -> list[Raw]:
    """The rows of a verified block, parsed in one call (lines never hold a raw newline)."""
    try:
        rows = orjson.loads(b"[" + data.rstrip(b"\n").replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:  # what orjson refuses, the standard parser decides
        rows = [json.loads(line) for line in data.splitlines()]
    if not isinstance(rows, list):
        raise ValueError("a block is rows")
    return rows


def _offsets(f: BinaryIO) -> list[int] | None:
    """Where each piece starts, from the gzip header's extra field (None: not recorded)."""
    head = f.read(12)
    if len(head) < 12 or head[:3] != b"\x1f\x8b\x08" or not head[3] & 4:
        return None
    extra = f.read(struct.unpack("<H", head[10:12])[0])
    at = 0
    while at + 4 <= len(extra):
        size = struct.unpack("<H", extra[at + 2:at + 4])[0]
        if extra[at:at + 2] == _EXTRA_ID and size % 8 == 0 and at + 4 + size <= len(extra):
            offsets = list(struct.unpack(f"<{size // 8}Q", extra[at + 4:at + 4 + size]))
            if offsets and offsets[0] == 12 + len(extra) and offsets == sorted(offsets):
                return offsets
            return None
        at += 4 + size
    return None


class ArchiveBlocks:
    """An archive file opened to read some seqs of one stream: its manifest's signature checked
    and matched with the index's span once, then only the blocks holding the seqs read,
    each inflated on its own and checked against the digest the signed manifest gives it
    (the whole file's digest is what ``FileCheck`` and ``audit verify`` check). ``open``
    returns None for a file written without block offsets: it is read whole."""

    def __init__(self, path: Path, manifest: dict[str, Any], offsets: list[int],
                 blocks: list[tuple[str, int, int, str]]) -> None:
        self.path, self.manifest, self.offsets, self.blocks = path, manifest, offsets, blocks

    @classmethod
    def open(cls, path: Path, key: bytes | None) -> ArchiveBlocks | None:
        if not key:
            raise ArchiveError(f"archive {path} is verified with the chain key (--key)",
                               rule="store.key")
        try:
            with open(path, "rb") as f:
                offsets = _offsets(f)
                if offsets is None or len(offsets) < 3:
                    return None
                head = _inflate(f, offsets[0], offsets[1])
        except FileNotFoundError:
            raise ArchiveError(f"archive {path} is missing", rule="archive.file") from None
        except (OSError, zlib.error):
            return None  # read whole, which names what is wrong
        if not head.endswith(b"\n") or head.count(b"\n") != 1:
            return None
        manifest = _signed_manifest(path, key, head[:-1])
        listed = manifest.get("blocks")
        if not isinstance(listed, list) or len(listed) != len(offsets) - 2:
            return None
        try:
            blocks = [(str(s), int(a), int(b), str(d)) for s, a, b, d in listed]
        except (TypeError, ValueError):
            return None
        return cls(path, manifest, offsets, blocks)

    def matches(self, span: Span) -> bool:
        """The file the index names, holding the span as the index records it, in blocks
        that follow on from one another."""
        streams = self.manifest.get("streams")
        if self.manifest["mac"] != span.mac or not isinstance(streams, dict) or streams.get(
                span.stream) != [span.first, span.first_prev, span.last, span.last_hash]:
            return False
        mine = [(a, b) for s, a, b, _ in self.blocks if s == span.stream]
        return bool(mine) and mine[0][0] == span.first and mine[-1][1] == span.last and all(
            b + 1 == a for (_, b), (a, _) in itertools.pairwise(mine))

    def wanted(self, span: Span, first: int, last: int) -> list[int]:
        """The blocks of ``span``'s stream holding any of seqs ``first``..``last``."""
        return [n for n, (s, a, b, _) in enumerate(self.blocks)
                if s == span.stream and a <= last and b >= first]

    def rows(self, n: int) -> list[Raw]:
        """Block ``n``'s rows (as their lines hold them), its digest and its seqs checked;
        ``ArchiveError`` if not."""
        stream, first, last, digest = self.blocks[n]
        try:
            with open(self.path, "rb") as f:
                data = _inflate(f, self.offsets[n + 1], self.offsets[n + 2])
        except FileNotFoundError:
            raise ArchiveError(f"archive {self.path} is missing", rule="archive.file") from None
        except (OSError, zlib.error) as e:
            raise ArchiveError(f"archive {self.path} cannot be read ({e})",
                               rule="archive.file") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise ArchiveError(f"archive {self.path}: its events are not the ones signed (the "
                               "file was altered)", rule="archive.signature")
        try:
            rows = _parse_rows(data)
        except ValueError:
            rows = []
        if [r[1] for r in rows if type(r) is list and len(r) == 6 and r[0] == stream
                and type(r[3]) is str] != list(range(first, last + 1)):
            raise ArchiveError(f"archive {self.path} does not hold {stream} seqs {first}-{last} "
                               "as its manifest records them", rule="archive.index")
        return rows


def _inflate(f: BinaryIO, start: int, end: int) -> bytes:
    """The bytes of one piece: compressed after a full flush, it inflates on its own."""
    f.seek(start)
    return zlib.decompressobj(-zlib.MAX_WBITS).decompress(f.read(end - start))


def read_manifest_and_rows(path: Path, key: bytes | None) -> tuple[dict[str, Any],
                                                                   dict[str, list[StoredEvent]]]:
    """The verified manifest and rows of an archive file; ``ArchiveError`` if it is missing,
    unreadable, or its signature or its rows' digest does not hold."""
    manifest, body = read_verified(path, key)
    out: dict[str, list[StoredEvent]] = {}
    for line in body.splitlines():
        row = _row(line)
        out.setdefault(row.table, []).append(row)
    return manifest, out


def read_archive(path: Path, key: bytes | None) -> dict[str, list[StoredEvent]]:
    """The verified rows of an archive file, by stream."""
    return read_manifest_and_rows(path, key)[1]


CHUNK = 1 << 16


class FileCheck:
    """A check of one archive file in steps: its manifest's signature, that it is the file
    the index names (``mac``) with the spans the index records, and the digest of its rows -
    decompressed and hashed a budget of bytes at a time, without parsing a row (the rows'
    links were verified before the file was written, and the signed digest holds them), so a
    file of any size is checked at a bounded cost per step. Nothing is held open between
    steps."""

    def __init__(self, path: Path, key: bytes, mac: str, spans: list[Span]) -> None:
        self.path, self.key, self.mac, self.spans = path, key, mac, spans
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._offset = 0
        self._tail = b""
        """Compressed bytes read but not yet inflated (a step stops at its budget)."""
        self._head = b""
        self._manifest: dict[str, Any] | None = None
        self._digest = hashlib.sha256()
        self.done = False

    def step(self, budget: int) -> int:
        """Check up to ``budget`` more decompressed bytes; returns the bytes checked.
        ``ArchiveError`` names what does not hold; ``done`` once the whole file held."""
        used = 0
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                while not self.done and used < budget:
                    if not self._tail:
                        self._tail = f.read(CHUNK)
                        self._offset += len(self._tail)
                        if not self._tail:
                            self._feed(self._inflate.flush())
                            self._finish(extra=False)
                            break
                    data = self._inflate.decompress(self._tail, budget - used)
                    self._tail = self._inflate.unconsumed_tail
                    used += len(data)
                    self._feed(data)
                    if self._inflate.eof:
                        self._finish(extra=bool(self._inflate.unused_data or f.read(1)))
        except FileNotFoundError:
            raise ArchiveError(f"archive {self.path} is missing", rule="archive.file") from None
        except (OSError, zlib.error) as e:
            raise ArchiveError(f"archive {self.path} cannot be read ({e})",
                               rule="archive.file") from None
        return used

    def _feed(self, data: bytes) -> None:
        if self._manifest is None:
            self._head += data
            head, found, rest = self._head.partition(b"\n")
            if not found:
                return
            self._manifest = _signed_manifest(self.path, self.key, head)
            self._matches_index(self._manifest)
            self._head, data = b"", rest
        self._digest.update(data)

    def _matches_index(self, manifest: dict[str, Any]) -> None:
        streams = manifest.get("streams")
        held = {s.stream: [s.first, s.first_prev, s.last, s.last_hash] for s in self.spans}
        if manifest["mac"] != self.mac or not isinstance(streams, dict) or any(
                streams.get(name) != span for name, span in held.items()):
            raise ArchiveError(f"archive {self.path} is not the file the store's index names "
                               "(another signed file stands in its place)",
                               rule="archive.index")

    def _finish(self, *, extra: bool) -> None:
        if self._manifest is None or not self._inflate.eof or extra:
            raise ArchiveError(f"archive {self.path} cannot be read (cut short, or more than "
                               "one file's data)", rule="archive.file")
        if self._digest.hexdigest() != self._manifest.get("rows_sha256"):
            raise ArchiveError(f"archive {self.path}: its events are not the ones signed (the "
                               "file was altered)", rule="archive.signature")
        self.done = True
