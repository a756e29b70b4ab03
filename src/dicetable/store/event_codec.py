"""Events to and from the canonical JSON the store keeps and hashes, for every aggregate.

The conversion itself is the one codec (``dicetable.core.codec``, through
``dicetable.core.events``); this module adds what storage needs: the canonical text that is
hashed, a fast path for parsing it, and the one place where a stored event of an older shape
is brought up to date before it is rebuilt (``upgrade``: a per-event schema version and its
upcasters belong there).

>>> from dicetable.core.dice import Roll
>>> from dicetable.core.roles import Role
>>> from dicetable.games.events import DiceRolled, event_to_dict
>>> e = DiceRolled(table="t1", seq=3, actor="stick", role=Role.STICKPERSON,
...                at="2026-01-01T00:00:00+00:00", roll=Roll(3, 4), source="manual")
>>> decode(event_to_dict(e)) == e
True
>>> kind, body = encode(e)
>>> kind, decode_body(body) == e
('DiceRolled', True)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event, event_from_dict, event_from_owned_dict, event_to_dict
from dicetable.store.chain import canonical

# -- schema versions -----------------------------------------------------------------------------
# Every stored event carries its schema version ("v"; a body without one is version 1). On
# read, an upcaster turns each older version into the next, up to the current one, so code
# only ever sees current events; the committed fixture log (tests/fixtures) keeps it so.
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

VERSIONS: dict[str, int] = {"TableOpened": 3}
"""The current schema version of each event kind that has changed (all others: 1)."""


def _table_opened_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 writes the table's automations in its opening. Before, a table settled by itself
    only under a pack with ``settlement.automatic``, and an electronic table's server ran its
    betting timer and CSPRNG roll: that is what a v1 table keeps doing."""
    from dicetable.table.automation import CHORES, Automation

    if data.get("automations") is None:
        rules = data.get("pack", {}).get("rules", {})
        own: set[Automation] = set()
        if rules.get("settlement.automatic", {}).get("value") is True:
            own |= set(CHORES)
        if data.get("mode") == "electronic":
            own |= {Automation.BETTING_TIMER, Automation.CSPRNG_ROLL}
        data = {**data, "automations": sorted(a.value for a in own)}
    return data


def _table_opened_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """v3 makes two more chores automations: returning a no roll's wagers and passing the
    shaker. Before, every table did both at once, whatever its mode: so does a v2 table."""
    from dicetable.table.automation import AROUND_THE_ROLL, CHORES, Automation

    listed = data.get("automations")
    if listed is None:  # v2's "its mode's own"
        mode = data.get("mode")
        rules = data.get("pack", {}).get("rules", {})
        own = set(Automation) if mode == "electronic" else set(CHORES) if mode == "bare" \
            else set()
        if rules.get("settlement.automatic", {}).get("value") is True:
            own |= set(CHORES)
        listed = [a.value for a in own]
    return {**data, "automations": sorted(set(listed) | {a.value for a in AROUND_THE_ROLL})}


UPCASTERS: dict[tuple[str, int], Upcaster] = {("TableOpened", 1): _table_opened_v1_to_v2,
                                              ("TableOpened", 2): _table_opened_v2_to_v3}
"""(kind, version) -> the function that turns that version into the next."""


def upcast(data: dict[str, Any]) -> dict[str, Any]:
    """A stored event's dict at its kind's current schema version, without the "v" key."""
    version = data.get("v", 1)
    if "v" in data:
        data = {k: v for k, v in data.items() if k != "v"}
    kind = str(data.get("type"))
    current = VERSIONS.get(kind, 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= current:
        raise InvalidInput(f"{kind} schema version {version!r} is not one this code reads "
                           f"(1 to {current})", rule="events.codec")
    while version < current:
        try:
            data = UPCASTERS[(kind, version)](data)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidInput(f"cannot upcast {kind} v{version}: {e}",
                               rule="events.codec") from None
        version += 1
    return data


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A stored event's data in the shape its class has today (``upcast``)."""
    if "v" in data or data.get("type") in VERSIONS:
        return upcast(data)
    return data


def decode(data: dict[str, Any]) -> Event:
    """The event (of any aggregate) a stored dict describes."""
    if not isinstance(data, dict):
        raise InvalidInput("an event is a JSON object", rule="events.codec")
    return event_from_dict(upgrade(data))


_JSON = json.JSONDecoder()


def decode_body(body: str) -> Event:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:  # what orjson refuses, the standard parser decides
        data = None
    if not isinstance(data, dict):
        data, end = _JSON.raw_decode(body)  # stored bodies are canonical: no outer whitespace
        if end != len(body) or not isinstance(data, dict):
            data = json.loads(body)  # raises on trailing garbage, as a tampered body may have
            if not isinstance(data, dict):
                raise InvalidInput("an event is a JSON object", rule="events.codec")
    # The parsed dict is ours: an event of its kind's current version is built from it as it
    # is (no copy); only an older one goes through the upcasters.
    version = data.pop("v", 1)
    if type(version) is not int or version != VERSIONS.get(data.get("type"), 1):  # type: ignore[arg-type]
        data["v"] = version
        return event_from_dict(upcast(data))
    return event_from_owned_dict(data)


def to_dict(event: Event) -> dict[str, Any]:
    """The event as JSON data (``event_to_dict``)."""
    return event_to_dict(event)


def encode(event: Event) -> tuple[str, str]:
    """The event's kind and the canonical JSON that is stored and hashed, with its schema
    version."""
    data = event_to_dict(event)
    data["v"] = VERSIONS.get(event.kind, 1)
    return event.kind, canonical(data)
