"""``merge_patch`` and ``apply_patch``: the patch between any two JSON-like documents turns the
one into the other exactly, nulls and all, without changing the documents it was given; the
merge part alone follows RFC 7386 (its appendix A examples)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.server.grouped_members import Grouped
from dicetable.server.live_views import Memo, apply_merge, apply_patch, merge_patch, same
from tests.profiles import examples

KEYS = st.sampled_from(["a", "b", "c", "me", "seat", "0", ""])
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "null"])
DOCS = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20)
OBJECTS = st.dictionaries(KEYS, DOCS, max_size=5)


@given(DOCS, DOCS)
def test_the_patch_turns_old_into_new(old: Any, new: Any) -> None:
    kept_old, kept_new = copy.deepcopy(old), copy.deepcopy(new)
    patch = merge_patch(old, new)
    assert same(apply_patch(old, patch), new)
    assert same(old, kept_old)
    assert same(new, kept_new)
    # What goes on the wire comes back the same.
    wire = json.loads(json.dumps({"patch": patch.merge, "nulls": patch.nulls}))
    assert same(apply_merge(old, wire["patch"]), apply_merge(old, patch.merge))


@given(OBJECTS, OBJECTS)
def test_a_patch_between_objects_names_only_what_changed(old: dict[str, Any],
                                                          new: dict[str, Any]) -> None:
    patch = merge_patch(old, new)
    for key in patch.merge:
        assert key not in old or key not in new or not same(old[key], new[key])
    for path in patch.nulls:  # each one a null in ``new``
        node: Any = new
        for key in path:
            node = node[key]
        assert node is None
    assert merge_patch(new, new).empty


def test_a_value_turned_null_is_named_in_nulls_not_deleted() -> None:
    patch = merge_patch({"me": {"seat": 3, "bets": []}, "point": 6},
                        {"me": {"seat": None, "bets": []}, "point": None})
    assert patch.merge == {}
    assert patch.nulls == (("me", "seat"), ("point",))


def test_an_object_that_replaces_a_value_brings_its_nulls() -> None:
    patch = merge_patch({"pending": None}, {"pending": {"roll": "3-4", "point_after": None}})
    assert patch.merge == {"pending": {"roll": "3-4"}}
    assert patch.nulls == (("pending", "point_after"),)


@pytest.mark.parametrize(("target", "patch", "result"), [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
])
def test_the_merge_follows_rfc_7386_appendix_a(target: Any, patch: Any, result: Any) -> None:
    assert apply_merge(target, patch) == result


@given(OBJECTS, OBJECTS)
def test_parts_shared_by_many_documents_are_compared_once(old: dict[str, Any],
                                                          new: dict[str, Any]) -> None:
    """One push patches many players' views that share parts (the wagers open to all): with
    a memo each shared pair is compared once, and every patch is still exact."""
    memo: Memo = {}
    olds = [{"me": {"player": f"p{i}", "open": old}} for i in range(3)]
    news = [{"me": {"player": f"p{i}", "open": new}} for i in range(3)]
    for before, after in zip(olds, news, strict=True):
        patch = merge_patch(before, after, memo)
        assert patch == merge_patch(before, after)
        assert same(apply_patch(before, patch), after)
    assert len([k for k in memo if k == (id(old), id(new))]) <= 1


@given(OBJECTS, OBJECTS)
def test_a_part_shared_at_different_paths_is_compared_once_and_patched_at_each(
        old: dict[str, Any], new: dict[str, Any]) -> None:
    """A player's own controls are also the dealer's controls for that player, one object at
    two paths: compared once, its nulls put at each path."""
    memo: Memo = {}
    player_before, player_after = {"me": {"controls": old}}, {"me": {"controls": new}}
    dealer_before = {"controls": {"p1": old}, "can": {"pay": True}}
    dealer_after = {"controls": {"p1": new}, "can": {"pay": False}}
    for before, after in ((player_before, player_after), (dealer_before, dealer_after)):
        patch = merge_patch(before, after, memo)
        assert patch == merge_patch(before, after)
        assert same(apply_patch(before, patch), after)
    assert len([k for k in memo if k == (id(old), id(new))]) <= 1


@pytest.mark.parametrize(("a", "b", "alike"), [
    (["pass", "field"], ["pass", "field"], True),
    (["pass", "field"], ["field", "pass"], False),
    ([1, 2], [True, 2], False),  # equal to Python, different JSON
    ([1], [1.0], False),
    ([None, "a"], [None, "a"], True),
    ([{"a": 1}], [{"a": True}], False),  # nested: member by member
    ([[0, "x"]], [[False, "x"]], False),
    ([{"a": [1]}], [{"a": [1]}], True),
])
def test_lists_are_the_same_only_as_json_is(a: list[Any], b: list[Any], alike: bool) -> None:
    assert same(a, b) is alike
    assert same(b, a) is alike


def _reference(old: Any, new: Any, path: tuple[str, ...], nulls: list[tuple[str, ...]]) -> Any:
    """``merge_patch``'s walk as first written, member by member in Python: the order of the
    members and nulls it gives is the order of the bytes a push sends."""
    if not isinstance(new, dict):
        return new
    if not isinstance(old, dict):
        return _reference_whole(new, path, nulls)
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
                inner = _reference(before, value, (*path, key), nulls)
                if inner:
                    out[key] = inner
            elif same(before, value):
                continue
            elif value is None:
                nulls.append((*path, key))
            else:
                out[key] = _reference_whole(value, (*path, key), nulls)
        elif value is None:
            nulls.append((*path, key))
        else:
            out[key] = _reference_whole(value, (*path, key), nulls)
    return out


def _reference_whole(value: Any, path: tuple[str, ...], nulls: list[tuple[str, ...]]) -> Any:
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, member in value.items():
        if member is None:
            nulls.append((*path, key))
        else:
            out[key] = _reference_whole(member, (*path, key), nulls)
    return out


@given(OBJECTS, OBJECTS, st.booleans())
def test_the_patch_is_the_first_walks_to_the_byte(old: dict[str, Any], new: dict[str, Any],
                                                   shared: bool) -> None:
    if shared:  # parts shared between the two, as a push's views share them
        for key in list(new)[::2]:
            if key in old:
                new[key] = old[key]
    nulls: list[tuple[str, ...]] = []
    reference = _reference(old, new, (), nulls)
    memo: Memo = {}
    for _ in range(2):  # the second time from the memo
        patch = merge_patch({"x": old}, {"x": new}, memo)
        inner = patch.merge.get("x", {})
        assert json.dumps(inner) == json.dumps(reference)
        assert [p[1:] for p in patch.nulls] == nulls


LADDERS = st.fixed_dictionaries({"first": st.integers(1, 2), "last": st.integers(2, 3)})
GROUP_VALUES = st.none() | LADDERS | OBJECTS | SCALARS
"""Mostly what a ladder group holds (none, or a ladder), sometimes any value at all."""
LAYOUTS = st.lists(st.tuples(st.sampled_from(["pass", "field", "hard4", "hard6", "hop1-1", "c"]),
                             st.integers(0, 3)), max_size=8, unique_by=lambda m: m[0])


@settings(max_examples=examples(300))
@given(LAYOUTS, st.none() | LAYOUTS, st.lists(GROUP_VALUES, min_size=4, max_size=4),
       st.lists(GROUP_VALUES, min_size=4, max_size=4),
       st.lists(st.booleans(), min_size=4, max_size=4))
def test_objects_cut_to_layouts_are_patched_group_by_group_to_the_byte(
        layout: list[tuple[str, int]], other: list[tuple[str, int]] | None, before: list[Any],
        after: list[Any], kept: list[bool]) -> None:
    # A player's open wagers after a roll (``controls._cut``): some ladders kept (the same
    # object), some cut, some gone, some new, on the same layout or another one (a wager
    # held now, another one open); whatever the values, the patch is the one a walk member
    # by member makes.
    shape = tuple(layout)
    now = [b if keep else a for a, b, keep in zip(after, before, kept, strict=True)]
    old = Grouped.of(shape, tuple(before))
    new = Grouped.of(shape if other is None else tuple(other), tuple(now))
    nulls: list[tuple[str, ...]] = []
    reference = _reference(dict(old), dict(new), (), nulls)
    memo: Memo = {}
    for _ in range(2):
        patch = merge_patch({"open": old}, {"open": new}, memo)
        assert json.dumps(patch.merge.get("open", {})) == json.dumps(reference)
        assert [p[1:] for p in patch.nulls] == nulls
    assert same(apply_patch({"open": dict(old)}, patch), {"open": dict(new)})


def test_a_ladder_made_again_alike_is_no_patch_and_a_gone_group_removes_its_members() -> None:
    layout = (("field", 0), ("hard4", 1), ("hard6", 1), ("pass", 2))
    old = Grouped.of(layout, ({"first": 1, "last": 9}, {"first": 1, "last": 5}, None))
    new = Grouped.of(layout[1:], ({"first": 1, "last": 9}, {"first": 1, "last": 5},
                                  {"first": 5, "last": 5}))
    patch = merge_patch({"open": old}, {"open": new})
    assert patch.merge == {"open": {"field": None, "pass": {"first": 5, "last": 5}}}
    assert list(patch.merge["open"]) == ["field", "pass"]
