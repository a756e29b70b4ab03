"""A strategy ready to simulate, as plain data, and the cache that keeps it on disk.

Checking a strategy against its rule pack and compiling its tables needs the rules, the
games and the exact odds - most of a short run's time is importing them. What a run and its
report need of the result is small and plain (``Prepared``: the kernel's arrays, the labels,
the exact edges), so ``dicetable simulate`` keeps it in a cache file named by a digest of
everything it was made from: the strategy file's bytes and every file of this package (its
code and its preset packs). Any change to either makes a new digest, so a stale entry is
never read; a strategy whose pack is a file of its own is not cached.

The cache is ``$DICETABLE_CACHE`` (default ``$XDG_CACHE_HOME/dicetable`` or
``~/.cache/dicetable``); ``DICETABLE_CACHE=off`` turns it off. Its files are pickles: they are
read only from the user's own cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from dicetable.sim.kernel import Kernel
from dicetable.sim.session import SessionSpec

PACKAGE = Path(__file__).resolve().parent.parent
"""The ``dicetable`` package: its files are part of every digest."""
FORMAT = 1


@dataclass(frozen=True)
class Prepared:
    """What a simulation and its report need of a compiled strategy."""

    name: str
    pack: str
    labels: tuple[str, ...]
    codes: tuple[str, ...]
    exact_edges: tuple[Fraction | None, ...]
    """Each label's exact house edge (None where there is no single one)."""
    opening_cost: int
    """Cash the first bets take: stakes plus commissions paid up front."""
    tables: Kernel
    session: SessionSpec

    def kernel(self) -> Kernel:
        return self.tables


def cache_dir() -> Path | None:
    """Where prepared strategies are kept (None: the cache is off)."""
    chosen = os.environ.get("DICETABLE_CACHE", "")
    if chosen.lower() in ("off", "0", "no"):
        return None
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dicetable"


def _package_digest() -> bytes:
    """Every file of the package, by path, size and modification time."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            st = os.stat(os.path.join(folder, name))
            h.update(f"{os.path.relpath(folder, PACKAGE)}/{name}:{st.st_size}:"
                     f"{st.st_mtime_ns}\n".encode())
    return h.digest()


def digest(strategy: Path, *extra: object) -> str | None:
    """The cache key of a strategy file (and of ``extra`` settings), or None when it cannot
    be cached: unreadable or malformed (the full check then reports it), or a pack of its
    own (a file the digest does not cover)."""
    try:
        raw = strategy.read_bytes()
        text = raw.decode("utf-8")
        data = tomllib.loads(text) if strategy.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or str(data.get("pack", "")).endswith(".json"):
        return None
    h = hashlib.sha256(f"prepared-strategy {FORMAT}\n".encode())
    h.update(_package_digest())
    h.update(repr((strategy.suffix, extra)).encode())
    h.update(raw)
    return h.hexdigest()


def load(key: str) -> Prepared | None:
    """The prepared strategy kept under ``key``, if any (a damaged entry is ignored)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(folder / f"{key}.prepared", "rb") as f:
            found = pickle.load(f)
    except Exception:  # missing, unreadable or from another version: prepare it again
        return None
    return found if isinstance(found, Prepared) else None


def save(key: str, prepared: Prepared) -> None:
    """Keep ``prepared`` under ``key`` (written whole, then renamed; a failure is ignored:
    the cache only saves time)."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f"{key}.{os.getpid()}.part"
        part.write_bytes(pickle.dumps(prepared, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(part, folder / f"{key}.prepared")
    except OSError:
        pass
