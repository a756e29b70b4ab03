"""``store.versioned``: the one loop of appending at the version read - a lost race is read
and decided again, ``RETRIES`` of them in a row end it, and any other refusal ends it at
once (counted, never timed)."""

from __future__ import annotations

import pytest

from dicetable.core.errors import InvalidInput, StaleVersion
from dicetable.store.versioned import RETRIES, retry_stale


def _losing(times: int, calls: list[int]) -> int:
    calls.append(1)
    if len(calls) <= times:
        raise StaleVersion("lost", rule="store.sequence")
    return len(calls)


def test_a_lost_race_is_decided_again_until_it_wins() -> None:
    calls: list[int] = []
    assert retry_stale("s:1", lambda: _losing(3, calls)) == 4


def test_every_race_lost_ends_in_the_streams_refusal() -> None:
    calls: list[int] = []
    with pytest.raises(StaleVersion, match="s:1 is changing too fast") as refused:
        retry_stale("s:1", lambda: _losing(RETRIES, calls))
    assert refused.value.rule == "store.sequence"
    assert len(calls) == RETRIES


def test_a_writer_may_end_its_own_way() -> None:
    calls: list[int] = []
    assert retry_stale("s:1", lambda: _losing(RETRIES, calls), exhausted=lambda: -1) == -1


def test_any_other_refusal_ends_it_at_once() -> None:
    calls: list[int] = []

    def refuse() -> None:
        calls.append(1)
        raise InvalidInput("no", rule="money.amount")

    with pytest.raises(InvalidInput):
        retry_stale("s:1", refuse)
    assert calls == [1]
