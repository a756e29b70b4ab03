"""JSON Merge Patch (RFC 7386), and the nulls it cannot carry.

A merge patch turns one JSON document into another: an object in the patch is merged into the
target member by member (a null member removes that member), anything else replaces the target
whole. So a merge patch can never *set* an object's member to null - replacing the parent
object whole does not help, since an object in a patch is always merged. A view holds many
such members (no point, no shooter, an unseated player), so a ``Patch`` is the RFC 7386 patch
(``merge``) and the paths of the members left to set to null after it (``nulls``).

>>> old = {"point": 6, "seats": {"ann": 1, "bob": 2}, "history": [1, 2]}
>>> new = {"point": None, "seats": {"ann": 1, "cat": 3}, "history": [1, 2, 3]}
>>> p = merge_patch(old, new)
>>> p.merge
{'seats': {'bob': None, 'cat': 3}, 'history': [1, 2, 3]}
>>> p.nulls
(('point',),)
>>> apply_patch(old, p) == new
True
>>> merge_patch(new, new)
Patch(merge={}, nulls=())

``apply_patch`` does not change the document it is given (the parts a patch leaves alone are
shared with the result):

>>> apply_patch({"a": {"b": 1}, "c": [0]}, Patch({"a": {"b": None, "d": None}}, (("a", "d"),)))
{'a': {'d': None}, 'c': [0]}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Patch:
    merge: Any
    """An RFC 7386 merge patch."""
    nulls: tuple[tuple[str, ...], ...] = ()
    """Paths (object keys from the top) of the members to set to null once ``merge`` is
    applied; each one's parent is an object after the merge."""

    @property
    def empty(self) -> bool:
        return self.merge == {} and not self.nulls


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``==`` without Python's ``True == 1`` (they are different JSON).

    >>> same({"a": [1, True]}, {"a": [1, True]}), same([1], [True]), same({"a": 0}, {"a": False})
    (True, False, False)
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        # ``==`` in C first: unequal is never the same; equal is the same when each member
        # is of its counterpart's type and none holds more (``True == 1`` is all ``==`` lets
        # through). A player's placeable codes are compared in one step, not code by code.
        if len(a) != len(b) or a != b:
            return False
        types = list(map(type, a))
        if types != list(map(type, b)):
            return False
        if not _NESTED.intersection(types):
            return True
        return all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_NESTED = frozenset((dict, list))


Memo = dict[tuple[int, int], tuple[Any, list[tuple[str, ...]]]]
"""Patches of objects already compared, by their ids, with their null paths relative to
them: for documents that share parts (one push's views of many players share what is alike
in them, wherever they stand: a player's own controls and a dealer's controls for that player
are one object), each pair of shared parts is compared once. Valid only while those objects
are alive and unchanged."""


def merge_patch(old: Any, new: Any, memo: Memo | None = None) -> Patch:
    """The patch that turns ``old`` into ``new``: ``apply_patch(old, merge_patch(old, new))``
    equals ``new`` for any JSON-like documents (dicts with string keys, lists, strings,
    numbers, booleans, None). ``memo``: the patches of shared parts worked out before."""
    nulls: list[tuple[str, ...]] = []
    return Patch(_diff(old, new, (), nulls, memo), tuple(nulls))


def _diff(old: Any, new: Any, path: tuple[str, ...], nulls: list[tuple[str, ...]],
          memo: Memo | None = None) -> Any:
    if not isinstance(new, dict):
        return new  # a value other than an object replaces the old one whole (even a null)
    if not isinstance(old, dict):
        return _whole(new, path, nulls)  # merged into an empty object
    out: dict[str, Any] = {}
    for key in old:
        if key not in new:
            out[key] = None
    for key, value in new.items():
        if key in old:
            before = old[key]
            if before is value:
                continue
            if isinstance(value, dict) and isinstance(before, dict):
                # Objects are merged member by member (equal ones give an empty patch); a
                # pair shared by many documents is compared once (``memo``).
                where = (*path, key)
                done = memo.get((id(before), id(value))) if memo is not None else None
                if done is None:
                    mine: list[tuple[str, ...]] = []
                    done = (_diff(before, value, (), mine, memo), mine)
                    if memo is not None:
                        memo[(id(before), id(value))] = done
                inner, inner_nulls = done
                nulls.extend((*where, *rest) for rest in inner_nulls)
                if inner:
                    out[key] = inner
            elif same(before, value):
                continue
            elif value is None:  # kept from ``old`` by the merge, then set to null
                nulls.append((*path, key))
            else:
                out[key] = _whole(value, (*path, key), nulls)
        elif value is None:
            nulls.append((*path, key))
        else:
            out[key] = _whole(value, (*path, key), nulls)
    return out


def _whole(value: Any, path: tuple[str, ...], nulls: list[tuple[str, ...]]) -> Any:
    """``value`` as a patch member for a target that is not an object: its null members
    (through objects; a list is taken as it stands) are left to ``nulls``."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, member in value.items():
        if member is None:
            nulls.append((*path, key))
        else:
            out[key] = _whole(member, (*path, key), nulls)
    return out


def apply_merge(target: Any, patch: Any) -> Any:
    """RFC 7386 section 2, without changing ``target``.

    >>> apply_merge({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}})
    {'a': 'z', 'c': {'d': 'e'}}
    >>> apply_merge({"a": [{"b": "c"}]}, {"a": [1]}), apply_merge(["a"], {"a": "c"})
    ({'a': [1]}, {'a': 'c'})
    """
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = apply_merge(out.get(key), value)
    return out


def apply_patch(doc: Any, patch: Patch) -> Any:
    """``doc`` with ``patch`` applied: the merge, then the nulls."""
    out = apply_merge(doc, patch.merge)
    copied: set[tuple[str, ...]] = set()  # the objects already copied for this patch
    for path in patch.nulls:
        node = out
        for depth in range(1, len(path)):
            key, prefix = path[depth - 1], path[:depth]
            if prefix not in copied:
                node[key] = dict(node[key])
                copied.add(prefix)
            node = node[key]
        node[path[-1]] = None
    return out
