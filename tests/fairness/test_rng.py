"""The RNG certification: the bulk draw is randbelow's scaling, the battery passes a good
generator and fails bad ones (seeded byte streams; the OS CSPRNG only where nothing is
asserted about chance)."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable

import numpy as np
import pytest

from dicetable.fairness.rng import battery, certify, csprng_faces, faces_from_bytes


def byte_stream(seed: int) -> Callable[[int], bytes]:
    rng = np.random.default_rng(seed)
    return lambda n: rng.bytes(n)


def test_bulk_draw_gives_exactly_what_secrets_randbelow_gives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = np.random.default_rng(1).bytes(4000)
    at = [0]

    class Exhausted(Exception):
        pass

    def urandom(n: int) -> bytes:
        if at[0] + n > len(data):
            raise Exhausted
        at[0] += n
        return data[at[0] - n:at[0]]

    # SystemRandom.getrandbits(3) reads one byte from random._urandom and keeps its top 3 bits
    monkeypatch.setattr(random, "_urandom", urandom)
    expected: list[int] = []
    try:
        while True:
            expected.append(secrets.randbelow(6) + 1)
    except Exhausted:
        pass
    got = faces_from_bytes(data)
    assert len(expected) >= 2900
    assert list(got[:len(expected)]) == expected


def test_bulk_draw_fills_exactly_n_faces_over_many_blocks() -> None:
    faces = csprng_faces(100_001, byte_stream(2), block=4096)
    assert len(faces) == 100_001
    assert set(np.unique(faces)) == {1, 2, 3, 4, 5, 6}


def test_battery_passes_a_good_generator_at_99_percent() -> None:
    result = certify(300_000, randbytes=byte_stream(2026))
    assert len(result.results) == 11
    assert result.passed, [r.name for r in result.results if not r.passed()]
    assert result.false_failure_rate == pytest.approx(1 - 0.99 ** 11)


def test_battery_fails_modulo_scaling() -> None:
    # byte % 6 favours faces 1-4 (43/256 against 42/256): RNG-4 forbids exactly this
    data = np.frombuffer(np.random.default_rng(3).bytes(1_000_000), np.uint8)
    faces = (data % 6 + 1).astype(np.uint8)
    failed = {r.name for r in battery(faces[0::2], faces[1::2]) if not r.passed()}
    assert {"chi-square faces, first die", "chi-square faces, second die"} <= failed


def test_battery_fails_a_stream_that_repeats_itself() -> None:
    faces = csprng_faces(400_000, byte_stream(4))
    repeat = np.random.default_rng(5).random(len(faces)) < 0.02
    for i in np.flatnonzero(repeat[2:]) + 2:
        faces[i] = faces[i - 2]                   # a face echoes the same die's last roll
    failed = {r.name for r in battery(faces[0::2], faces[1::2]) if not r.passed()}
    assert "serial correlation lag 1, first die" in failed


def test_certify_the_tables_own_path_and_the_os_generator() -> None:
    engine = certify(2_000, source="engine")
    assert engine.source.startswith("CsprngDice.next_roll")
    assert engine.rolls == 2_000
    bulk = certify(50_000)
    assert bulk.results[0].n == 50_000
    assert len(bulk.to_dict()["tests"]) == 11
    with pytest.raises(ValueError, match="unknown source"):
        certify(1_000, source="dice")
