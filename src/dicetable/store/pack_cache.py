"""One pack object per digest, checked against the digest its log recorded.

A table's rule pack and a site's custody pack both travel in their stream's first event, with
their digest beside them. Building the pack again for every replay would compile its wager
tables again; trusting the copy without its digest would let an edited log run under other
rules. So each kind of pack has one cache: built once per digest in a process, refused when the
data do not hash to the recorded digest.

>>> class P:
...     def __init__(self, data): self.digest = data["d"]
>>> cache = PackCache(P, "table")
>>> cache.get("x", {"d": "x"}, "t1") is cache.get("x", {"d": "x"}, "t2")
True
>>> cache.get("y", {"d": "z"}, "t3")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: table 't3': the pack ... does not match the digest ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

from dicetable.core.errors import InvalidInput


class Digested(Protocol):
    @property
    def digest(self) -> str: ...


P = TypeVar("P", bound=Digested)


class PackCache(Generic[P]):
    """Packs of one kind (``build`` turns their recorded data into a pack), by digest."""

    def __init__(self, build: Callable[[Mapping[str, Any]], P], kind: str) -> None:
        self._build, self._kind = build, kind
        self._packs: dict[str, P] = {}

    def get(self, digest: str, data: Mapping[str, Any], subject: str) -> P:
        """The pack recorded as ``data`` with ``digest`` in the stream of ``subject``."""
        pack = self._packs.get(digest)
        if pack is None:
            pack = self._build(data)
            if pack.digest != digest:
                raise InvalidInput(f"{self._kind} {subject!r}: the pack in its first event "
                                   "does not match the digest recorded with it",
                                   rule="store.pack")
            self._packs[digest] = pack
        return pack

    def share(self, pack: P) -> P:
        """The one object of ``pack``'s digest (``pack`` itself the first time)."""
        return self._packs.setdefault(pack.digest, pack)


__all__ = ["PackCache"]
