"""One value per key, kept: the get-or-make that the server's views, controls and meters share.

>>> made = []
>>> cache: dict[str, list[int]] = {}
>>> first = shared(cache, "a", lambda: made.append(1) or [1])
>>> shared(cache, "a", lambda: made.append(2) or [2]) is first, made
(True, [1])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")
SHARED_MAX = 65_536
"""How many values one ``shared`` cache keeps, unless told, before it forgets them all."""


def shared(cache: dict[K, V], key: K, make: Callable[[], V], limit: int = SHARED_MAX) -> V:
    """The one value ``make`` gave for ``key``, kept in ``cache``: equal keys are answered the
    same object (never changed once made), so a push after a roll finds what is unchanged by
    identity, not member by member. At ``limit`` values the cache is forgotten whole:
    forgetting costs only the shortcut. Two threads making one key keep the first's value
    (``setdefault``)."""
    found = cache.get(key)
    if found is None:
        if len(cache) >= limit:
            cache.clear()
        found = cache.setdefault(key, make())
    return found
