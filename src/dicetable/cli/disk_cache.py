"""What a command works out the same way every time, kept on disk under a digest.

A key is the digest of everything the value was made from: the command's own inputs (a
strategy file's bytes, a preset's name, its settings) and every file of this package (its
code and its preset packs, by path, size and modification time). Any change to either makes
another key, so a stale value is never read; what the digest cannot cover (a house pack in a
file of its own) is not cached.

The cache is ``$DICETABLE_CACHE`` (default ``$XDG_CACHE_HOME/dicetable`` or
``~/.cache/dicetable``); ``DICETABLE_CACHE=off`` turns it off. Its files are pickles, read
only from the user's own cache folder; a damaged or foreign one is ignored.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from typing import TypeVar

# Paths are plain names here (os.path), not pathlib's: a cached ``simulate`` imports nothing
# else that needs pathlib, which with what it imports is 3% of its CPU at 10^6 rolls.
PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
"""The ``dicetable`` package: its files are part of every key."""
FORMAT = 1

T = TypeVar("T")


def cache_dir() -> str | None:
    """Where values are kept (None: the cache is off)."""
    chosen = os.environ.get("DICETABLE_CACHE", "")
    if chosen.lower() in ("off", "0", "no"):
        return None
    if chosen:
        return chosen
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return os.path.join(xdg or os.path.join(os.path.expanduser("~"), ".cache"), "dicetable")


def _package_digest() -> bytes:
    lines: list[str] = []
    _list_files(PACKAGE, ".", lines)
    return hashlib.sha256("".join(lines).encode()).digest()


def _list_files(folder: str, where: str, lines: list[str]) -> None:
    """A line for each file under ``folder`` (``where`` from the package): its path, size and
    modification time, each folder's files by name, then its folders by name (``__pycache__``
    aside). Read with ``os.scandir``, whose entries stat a file without joining its path."""
    with os.scandir(folder) as found:
        entries = sorted(found, key=lambda e: e.name)
    for e in entries:
        if not e.is_dir():
            st = e.stat()
            lines.append(f"{where}/{e.name}:{st.st_size}:{st.st_mtime_ns}\n")
    for e in entries:
        if e.is_dir() and e.name != "__pycache__" and not e.is_symlink():  # as os.walk
            _list_files(e.path, e.name if where == "." else f"{where}/{e.name}", lines)


def key(kind: str, *parts: bytes | str | int | None) -> str:
    """The key of a ``kind`` of value made from ``parts`` by this package as it is now."""
    h = hashlib.sha256(f"{kind} {FORMAT}\n".encode())
    h.update(_package_digest())
    for part in parts:
        h.update(part if isinstance(part, bytes) else repr(part).encode())
        h.update(b"\0")
    return f"{kind}-{h.hexdigest()}"


def load(name: str, kind: type[T]) -> T | None:
    """The ``kind`` kept under ``name``, if any."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, f"{name}.pickle"), "rb") as f:
            found = pickle.load(f)
    except Exception:  # missing, unreadable or from another version: work it out again
        return None
    return found if isinstance(found, kind) else None


def save(name: str, value: object) -> None:
    """Keep ``value`` under ``name`` (written whole, then renamed; a failure is ignored: the
    cache only saves time)."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        os.makedirs(folder, exist_ok=True)
        part = os.path.join(folder, f"{name}.{os.getpid()}.part")
        with open(part, "wb") as f:
            f.write(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(part, os.path.join(folder, f"{name}.pickle"))
    except OSError:
        pass
