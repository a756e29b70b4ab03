"""Bad input is a typed refusal, never a crash: the house-pack loader, the custody-pack loader,
the strategy loader and the table-script parser either return a valid result or raise the
project's ``DicetableError`` (a ``ValueError`` naming the rule), whatever bytes they are given:
arbitrary bytes, numbers past Python's 4,300-digit limit, nesting deeper than the parser's
recursion, invalid UTF-8, and random mutations of valid files."""

from __future__ import annotations

import base64
import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.application.scripts import run_file, run_script
from dicetable.core.errors import DicetableError
from dicetable.core.textinput import MAX_DEPTH, decode_utf8, parse_json, parse_toml
from dicetable.custody.rules import load_custody_pack
from dicetable.games.packs import load_pack, pack_from_data
from dicetable.rules.model import RulePack
from dicetable.sim.strategy import Strategy, load_strategy
from dicetable.table.script import ScriptResult
from tests.profiles import examples

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(tempfile.mkdtemp(prefix="dicetable-bad-input-"))
VALID_PACK = json.dumps({"id": "house", "name": "House", "extends": "pa-craps",
                         "overrides": {"paytable.field.12": "3 to 1",
                                       "limits.default": {"minimum": 500, "maximum": 500000,
                                                          "unit": 100}}}, indent=1)
SCRIPTS = sorted((ROOT / "examples" / "tables").glob("*.dts"))
STRATEGIES = sorted((ROOT / "examples" / "strategies").glob("*"))

HOSTILE_WORDS = ["9" * 5000, "-" + "9" * 5000, "1e99999", "NaN", "Infinity", "²", "0x10",
                 "[" * 3000, "{" * 3000, '"', "'", "\\", "#", "!", "=", "-", "", "\x00",
                 "\u202e", "1" * 50, "-1", "0", "99999999999999999999", "$-5", "$1e9",
                 "2026-13-45T99:00:00", "a=b=c", "as=", "for=", "!IllegalWager"]
"""Words a fuzzer tries in a file: huge numbers, unbalanced brackets, odd characters."""


def _refused_or_valid(call: Any, *args: Any) -> Any:
    """``call(*args)``: its result, or None when it refused with a rule-naming error."""
    refused: DicetableError | None = None
    try:
        return call(*args)
    except DicetableError as e:
        refused = e
    assert isinstance(refused, ValueError)
    assert refused.rule, f"refusal without a rule: {refused!r}"
    assert str(refused)
    return None


def _file(name: str, data: bytes) -> Path:
    path = WORK / name
    path.write_bytes(data)
    return path


def _mutate(text: str, rnd: random.Random, words: list[str]) -> str:
    """A few random edits: a byte flipped, a span dropped or doubled, a hostile word put in."""
    for _ in range(rnd.randint(1, 4)):
        if not text:
            text = rnd.choice(words)
            continue
        at = rnd.randrange(len(text))
        kind = rnd.randrange(5)
        if kind == 0:
            text = text[:at] + chr(rnd.randrange(32, 127)) + text[at + 1:]
        elif kind == 1:
            text = text[:at] + text[at + rnd.randint(1, 20):]
        elif kind == 2:
            end = min(len(text), at + rnd.randint(1, 40))
            text = text[:end] + text[at:end] + text[end:]
        else:
            text = text[:at] + rnd.choice(words) + text[at:]
    return text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20)
    | st.sampled_from([10**40, -(10**40), 1.5, 1e308]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                               max_size=4),
    max_leaves=20)
rule_ids = st.sampled_from(["paytable.field.12", "paytable.place.6", "limits.default",
                            "noroll.callers", "odds.max", "commission.buy", "vig.rounding",
                            "x", ""]) | st.text(max_size=20)


# -- core.textinput ------------------------------------------------------------------------------
def test_input_text_depth_digits_and_utf8_are_named_with_their_position() -> None:
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(DicetableError, match=r"x.json: line 1, column 70: nested deeper"):
        parse_json(deep, "x.json", rule="t")
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x", rule="t") is not None
    with pytest.raises(DicetableError, match=r"line 2, column 6: a number of 5000 characters"):
        parse_json('{\n "a":' + "9" * 5000 + "}", "x.json", rule="t")
    with pytest.raises(DicetableError, match=r"byte 8 \(line 2, column 3\): not UTF-8 \(byte "
                                             r"0xff\)"):
        decode_utf8(b'{"a":\n 1\xff}', "x.json", rule="t")
    with pytest.raises(DicetableError, match="NaN is not a number"):
        parse_json('{"a": NaN}', "x.json", rule="t")
    with pytest.raises(DicetableError, match=r"x.toml: not valid TOML .*line 1, column"):
        parse_toml("a = = 1", "x.toml", rule="t")
    with pytest.raises(DicetableError, match="x.toml: "):
        parse_toml("a = " + "9" * 5000, "x.toml", rule="t")
    with pytest.raises(DicetableError, match="x.toml: nested"):
        parse_toml("a = " + "[" * 100_000 + "]" * 100_000, "x.toml", rule="t")


# -- house packs ---------------------------------------------------------------------------------
@settings(max_examples=examples(40))
@given(st.binary(max_size=300))
def test_house_pack_loader_arbitrary_bytes(data: bytes) -> None:
    got = _refused_or_valid(load_pack, _file("bytes.json", data))
    assert got is None or isinstance(got, RulePack)


@settings(max_examples=examples(60))
@given(st.dictionaries(st.sampled_from(["id", "name", "extends", "overrides", "description",
                                        "colour"]),
                       json_values | st.sampled_from(["pa-craps", "in-craps", "house"]),
                       max_size=5),
       st.dictionaries(rule_ids, json_values | st.fixed_dictionaries(
           {"value": json_values, "citation": json_values, "status": json_values}),
           max_size=4))
def test_house_pack_loader_arbitrary_structure(top: dict[str, Any],
                                               overrides: dict[str, Any]) -> None:
    data = {"id": "house", "extends": "pa-craps", **top}
    if overrides:
        data["overrides"] = overrides
    got = _refused_or_valid(pack_from_data, data)
    assert got is None or isinstance(got, RulePack)


@settings(max_examples=examples(60))
@given(st.randoms(use_true_random=False))
def test_house_pack_loader_mutations_of_a_valid_pack(rnd: random.Random) -> None:
    text = _mutate(VALID_PACK, rnd, HOSTILE_WORDS)
    got = _refused_or_valid(load_pack, _file("mutant.json", text.encode("utf-8", "replace")))
    assert got is None or isinstance(got, RulePack)


@pytest.mark.parametrize("data", [
    b'{"id": "h", "extends": "pa-craps", "overrides": {"paytable.field.12": ' + b"9" * 5000
    + b"}}",
    b'{"id": "h", "extends": "pa-craps", "overrides": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    b'{"id": "h\xff\xfe", "extends": "pa-craps"}',
    b"\xef\xbb\xbf{}", b"", b"[]", b'"pack"', b"{" * 1_000_000,
])
def test_house_pack_loader_known_crashers_are_refused(data: bytes) -> None:
    with pytest.raises(DicetableError) as e:
        load_pack(_file("crasher.json", data))
    assert "crasher.json" in str(e.value) or e.value.rule


@settings(max_examples=examples(30))
@given(st.randoms(use_true_random=False))
def test_custody_pack_loader_mutations(rnd: random.Random) -> None:
    text = _mutate(json.dumps({"id": "house-custody", "extends": "pa",
                               "overrides": {"site.time_zone": "America/New_York"}}),
                   rnd, HOSTILE_WORDS)
    _refused_or_valid(load_custody_pack, _file("custody.json", text.encode("utf-8",
                                                                           "replace")))


# -- strategies ----------------------------------------------------------------------------------
@settings(max_examples=examples(60))
@given(st.sampled_from(STRATEGIES), st.randoms(use_true_random=False))
def test_strategy_loader_mutations_of_the_examples(example: Path, rnd: random.Random) -> None:
    text = _mutate(example.read_text(encoding="utf-8"), rnd, HOSTILE_WORDS)
    path = _file(f"strategy{example.suffix}", text.encode("utf-8", "replace"))
    got = _refused_or_valid(load_strategy, path)
    assert got is None or isinstance(got, Strategy)


@settings(max_examples=examples(30))
@given(st.binary(max_size=200), st.sampled_from([".json", ".toml"]))
def test_strategy_loader_arbitrary_bytes(data: bytes, suffix: str) -> None:
    _refused_or_valid(load_strategy, _file(f"bytes{suffix}", data))


# -- table scripts -------------------------------------------------------------------------------
def _lines_mutant(text: str, rnd: random.Random) -> str:
    """A script with lines dropped, doubled or swapped, or words replaced by hostile ones."""
    lines = text.splitlines()
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randrange(len(lines))
        kind = rnd.randrange(4)
        if kind == 0:
            del lines[at]
        elif kind == 1:
            lines.insert(at, lines[rnd.randrange(len(lines))])
        elif kind == 2:
            other = rnd.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        else:
            words = lines[at].split()
            if words:
                words[rnd.randrange(len(words))] = rnd.choice(SCRIPT_WORDS)
                lines[at] = " ".join(words)
        if not lines:
            lines = ["dicetable-script 1"]
    return "\n".join(lines)


SCRIPT_WORDS = [*HOSTILE_WORDS, "prelude", "pack-data",
                base64.b64encode(b"[" * 5000 + b"]" * 5000).decode(),
                base64.b64encode(b'{"rules": []}').decode(),
                base64.b64encode(b'[{"type": "TableOpened"}]').decode(),
                base64.b64encode(b"\xff\xfe").decode(),
                base64.b64encode(b"[" + b"9" * 5000 + b"]").decode(),
                "1" + "0" * 5000 + "h", "2-" + "9" * 5000, "9" * 5000 + "-1"]


@settings(max_examples=examples(50))
@given(st.sampled_from(SCRIPTS), st.randoms(use_true_random=False))
def test_script_parser_mutations_of_the_golden_scripts(script: Path,
                                                       rnd: random.Random) -> None:
    text = script.read_text(encoding="utf-8")
    mutant = _lines_mutant(text, rnd) if rnd.random() < 0.7 else _mutate(text, rnd,
                                                                          SCRIPT_WORDS)
    got = _refused_or_valid(run_script, mutant, script.parent)
    assert got is None or isinstance(got, ScriptResult)


@settings(max_examples=examples(40))
@given(st.lists(st.sampled_from(["pack", "pack-data", "prelude", "table", "mode", "clock",
                                 "opener", "staff", "seat", "player", "expect", "advance",
                                 "alice", "player", "bet", "pass", "roll", "balance",
                                 "point", "custody", "automations", *SCRIPT_WORDS]),
                min_size=1, max_size=6).map(" ".join), )
def test_script_parser_header_and_lines_of_hostile_words(line: str) -> None:
    text = f"dicetable-script 2\npack pa-craps\nmode bare\nplayer alice 100\n{line}\n"
    got = _refused_or_valid(run_script, text)
    assert got is None or isinstance(got, ScriptResult)
    header_first = f"dicetable-script 2\n{line}\nmode bare\n"
    got = _refused_or_valid(run_script, header_first)
    assert got is None or isinstance(got, ScriptResult)


@settings(max_examples=examples(30))
@given(st.binary(max_size=200))
def test_script_file_arbitrary_bytes(data: bytes) -> None:
    got = _refused_or_valid(run_file, _file("bytes.dts", b"dicetable-script 1\n" + data))
    assert got is None or isinstance(got, ScriptResult)
