"""A JSON object whose members come in groups, each group's members holding one value.

A player's open wagers are seventy members on a dozen ladders (the hop bets share one, the
place bets another): cut to a balance, the members of a group hold the very same ladder.
``Grouped`` is such an object that also knows its ``layout`` (each member's group, in order)
and its ``groups`` (each group's value; ``None``: its members are left out), so that the
merge patch between two of them cut from one layout is worked out group by group
(``live_views``), not member by member for each of 1,000 players after a roll.

>>> layout = (("field", 0), ("hard4", 1), ("hard6", 1))
>>> small = Grouped.of(layout, ({"last": 100}, None))
>>> small, small.groups[1] is None
({'field': {'last': 100}}, True)
>>> big = Grouped.of(layout, ({"last": 500}, {"last": 900}))
>>> big == {"field": {"last": 500}, "hard4": {"last": 900}, "hard6": {"last": 900}}
True
"""

from __future__ import annotations

from typing import Any

Layout = tuple[tuple[str, int], ...]
"""Each member's name and the index of its group, in the object's order."""


class Grouped(dict[str, Any]):
    """A ``dict`` (sent as any JSON object) with its ``layout`` and ``groups``; never changed
    once made."""

    __slots__ = ("groups", "layout")
    layout: Layout
    groups: tuple[Any, ...]

    @classmethod
    def of(cls, layout: Layout, groups: tuple[Any, ...]) -> Grouped:
        """The object holding, for each member of ``layout``, its group's value (the members
        of a group whose value is ``None`` left out)."""
        out = cls({name: value for name, at in layout if (value := groups[at]) is not None})
        out.layout = layout
        out.groups = groups
        return out
