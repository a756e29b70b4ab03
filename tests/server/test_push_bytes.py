"""The bytes each connection is sent, hello and pushes, are those the code before the push's
rework sent for the same rounds (issue 28: making a roll's push cheaper changes nothing any
viewer receives). ``push_transcript`` plays the rounds; its fixture holds the digests of what
the earlier code sent (how to write it again: ``push_transcript``'s docstring)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.push_transcript import digests, transcript

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "push_transcript.json"


def test_every_viewer_is_sent_the_bytes_the_earlier_code_sent() -> None:
    expected: dict[str, list[str]] = json.loads(FIXTURE.read_text())
    texts = transcript()
    got = digests(texts)
    assert sorted(got) == sorted(expected)
    for name, sent in got.items():
        assert len(sent) == len(expected[name]), name
        for i, (now, then) in enumerate(zip(sent, expected[name], strict=True)):
            assert now == then, f"{name}'s message {i} differs: {texts[name][i][:2000]}"
    # What the rounds hold (so that the fixture covers them): come bets travelling with odds
    # behind them, a seven-out, and a player leaving, seen by the player and the dealer.
    for name in ("alice", "dee"):
        seen = "".join(texts[name])
        for mark in ('"seven_out":true', "Odds on Come", "Come on 6", "PlayerLeft", "Place 6"):
            assert mark in seen, (name, mark)
    assert len(set(got["alice"]) & set(got["dee"])) == 0  # the dealer sees more than alice
