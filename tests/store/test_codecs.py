"""The store's fast event decoder agrees with ``event_from_dict``; snapshots restore states
exactly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.application.scripts import run_file, run_script
from dicetable.core.errors import InvalidInput
from dicetable.games.events import EVENT_TYPES, event_from_dict, event_to_dict
from dicetable.games.packs import load_preset
from dicetable.store.chain import (
    VERSIONS,
    canonical,
    canonical_plain,
    decode,
    decode_body,
    encode,
    to_dict,
)
from dicetable.store.state_codec import decode_state, encode_state, roundtrips, share_pack
from dicetable.table import Table
from tests.profiles import examples
from tests.store.helpers import electronic, seat, step

SCRIPTS = Path(__file__).parent.parent / "scripts"


def _played(preset: str, seed: int, steps: int) -> Table:
    t = Table.open(electronic() if preset == "electronic" else preset, "t1")
    share_pack(t.state)  # compile each pack's wagers once, not once per example
    seat(t)
    rng = random.Random(seed)
    for _ in range(steps):
        step(t, rng)
    return t


@pytest.mark.parametrize("preset", ["pa-craps", "pa-props-and-hops", "in-craps", "electronic"])
def test_fast_decoder_matches_the_reference_codec(preset: str) -> None:
    t = _played(preset, 1, 300)
    for event in t.log:
        kind, body = encode(event)
        assert kind == event.kind
        assert to_dict(event) == event_to_dict(event)
        # The stored body is the reference dict plus the event's schema version.
        versioned = {**event_to_dict(event), "v": VERSIONS.get(kind, 1)}
        assert body == json.dumps(versioned, sort_keys=True, separators=(",", ":"),
                                  ensure_ascii=False)
        data = json.loads(body)
        assert decode(data) == event_from_dict(event_to_dict(event)) == event
        assert decode_body(body) == event
        assert type(decode_body(body)) is type(event)


def _live_logs() -> list[Table]:
    """Live tables from the golden scripts and the spec's vectors: the procedure's events."""
    from tests.test_spec_vectors import VECTORS

    tables = [run_file(p).table for p in sorted(SCRIPTS.glob("*.dts"))]
    tables += [run_script(text).table for text in VECTORS.values()]
    return [t for t in tables if t is not None]


def test_fast_decoder_matches_the_reference_codec_on_live_tables() -> None:
    for table in _live_logs():
        for event in table.log:
            _, body = encode(event)
            assert decode_body(body) == event_from_dict(event_to_dict(event)) == event
            assert body == canonical({**event_to_dict(event), "v": VERSIONS.get(event.kind, 1)})
        assert roundtrips(table.state)


_FLOATLESS = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4)
    | st.dictionaries(st.integers(), inner, max_size=2),
    max_leaves=12)


@settings(max_examples=examples(300), deadline=None)
@given(_FLOATLESS)
def test_stored_text_of_floatless_data_is_json_text_byte_for_byte(data: object) -> None:
    """MEM-2: the hashed body of an event is one text whichever encoder wrote it: orjson's
    (``canonical_plain``, events without float fields) is json's, every character escaped the
    same, keys in the same order, a big integer or a number key handed to json."""
    assert canonical_plain(data) == canonical(data)


def test_every_table_event_type_is_seen_by_the_codec_tests() -> None:
    from dicetable.games.events import Event as TableEvent

    seen = {e.kind for p in ("pa-craps", "pa-props-and-hops") for e in _played(p, 2, 400).log}
    seen |= {e.kind for t in _live_logs() for e in t.log}
    table_kinds = {k for k, cls in EVENT_TYPES.items() if issubclass(cls, TableEvent)}
    missing = table_kinds - seen - {"PlayerLeft", "BetChanged", "BetWorkingSet"}
    assert not missing


def test_decoder_refuses_unknown_and_malformed_events() -> None:
    with pytest.raises(InvalidInput):
        decode({"type": "Nope"})
    with pytest.raises(InvalidInput):
        decode_body("[1, 2]")
    with pytest.raises(ValueError, match="Extra data"):
        decode_body('{"type": "PlayerLeft"} trailing')
    with pytest.raises(InvalidInput):
        decode({"type": "PlayerJoined", "table": "t", "seq": 1})
    with pytest.raises(InvalidInput):
        decode({"type": "DiceRolled", "table": "t", "seq": 1, "actor": "a", "role": "dealer",
                "at": "", "roll": "7-1", "source": "manual"})


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=st.integers(0, 150),
       preset=st.sampled_from(["pa-craps", "pa-props-and-hops", "electronic"]))
def test_snapshot_restores_every_reachable_state(seed: int, steps: int, preset: str) -> None:
    t = _played(preset, seed, steps)
    assert roundtrips(t.state)
    data = json.loads(json.dumps(encode_state(t.state)))  # as stored
    assert decode_state(data, t.pack) == t.state


def test_snapshot_under_other_rules_is_refused() -> None:
    t = _played("pa-craps", 3, 20)
    with pytest.raises(InvalidInput):
        decode_state(encode_state(t.state), load_preset("in-craps"))


def test_event_to_dict_is_what_is_stored() -> None:
    t = _played("pa-craps", 4, 10)
    e = t.log[-1]
    assert json.loads(encode(e)[1]) == {**event_to_dict(e), "v": VERSIONS.get(e.kind, 1)}
