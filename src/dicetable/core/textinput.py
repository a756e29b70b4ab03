"""Reading an operator's files (house packs, strategies, scripts, event lines) so that bad
input is always ``InvalidInput`` naming the file, the position and what is wrong, never a
``UnicodeDecodeError``, a ``RecursionError`` or Python's own digit limit deep inside ``json``.

The bounds are the project's, not Python's: nothing an operator writes needs an array nested
deeper than ``MAX_DEPTH`` or a number longer than ``MAX_NUMBER_CHARS``; they are checked by one
linear pass before the parser runs, so a hostile file costs no more than its length.

>>> parse_json('{"a": [1, 2]}', "pack.json", rule="rules.pack")
{'a': [1, 2]}
>>> parse_json('{"a": ' + '[' * 100 + ']' * 100 + '}', "pack.json", rule="rules.pack")
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: pack.json: line 1, column 70: nested deeper than 64 ...
>>> parse_json('{"a": ' + '9' * 5000 + '}', "pack.json", rule="rules.pack")
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: pack.json: line 1, column 7: a number of 5000 characters ...
>>> decode_utf8(b'{"id": "caf\\xe9"}', "pack.json", rule="rules.pack")
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: pack.json: byte 11 (line 1, column 12): not UTF-8 ...
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from dicetable.core.errors import InvalidInput

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in an input file."""
MAX_NUMBER_CHARS = 100
"""Longest number literal accepted (money is cents, odds are short fractions)."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|[0-9][0-9.eE+-]*', re.DOTALL)
"""Strings (skipped whole: their brackets are text), brackets, and number literals. Each
alternative starts with a different character and the string's two branches are disjoint, so
the scan never backtracks."""


def position(text: str, index: int) -> tuple[int, int]:
    """Line and column (both from 1) of ``text[index]``.

    >>> position("ab\\ncd", 4)
    (2, 2)
    """
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _refuse(source: str, text: str, index: int, what: str, rule: str) -> InvalidInput:
    line, column = position(text, index)
    return InvalidInput(f"{source}: line {line}, column {column}: {what}", rule=rule)


def decode_utf8(data: bytes, source: str, *, rule: str) -> str:
    """``data`` as text; invalid UTF-8 is refused naming its byte offset (from 0)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[:e.start].decode("utf-8")
        line, column = position(good, len(good))
        raise InvalidInput(f"{source}: byte {e.start} (line {line}, column {column}): not "
                           f"UTF-8 (byte 0x{data[e.start]:02x})", rule=rule) from None


def read_utf8(path: Path, *, rule: str, what: str = "") -> str:
    """The text of the file at ``path``; a file that cannot be read, or is not UTF-8, is
    refused naming ``rule`` (``what`` names the kind of file in the message)."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InvalidInput(f"cannot read {what + ' ' if what else ''}{path}: {e.strerror}",
                           rule=rule) from None
    return decode_utf8(raw, str(path), rule=rule)


def check_json_bounds(text: str, source: str, *, rule: str) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH`` and over-long numbers, naming the position."""
    depth = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        first = token[0]
        if first in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _refuse(source, text, m.start(), f"nested deeper than {MAX_DEPTH} levels",
                              rule)
        elif first in "]}":
            depth -= 1
        elif first != '"' and len(token) > MAX_NUMBER_CHARS:
            raise _refuse(source, text, m.start(), f"a number of {len(token)} characters (at "
                          f"most {MAX_NUMBER_CHARS})", rule)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number here")


def parse_json(text: str, source: str, *, rule: str) -> Any:
    """JSON from ``text`` (named ``source`` in errors), within the bounds above.

    ``NaN`` and ``Infinity`` are refused too: no value in dicetable's files is a float that
    is not a number, and they would compare as nothing else does.
    """
    check_json_bounds(text, source, rule=rule)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise InvalidInput(f"{source}: line {e.lineno}, column {e.colno}: not valid JSON "
                           f"({e.msg})", rule=rule) from None
    except (ValueError, RecursionError) as e:  # bounded above; this is the last word
        raise InvalidInput(f"{source}: not valid JSON ({e})", rule=rule) from None


def parse_toml(text: str, source: str, *, rule: str) -> dict[str, Any]:
    """TOML from ``text``; its errors name their line and column."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InvalidInput(f"{source}: not valid TOML ({e})", rule=rule) from None
    except RecursionError:
        raise InvalidInput(f"{source}: nested too deeply to read", rule=rule) from None
    except ValueError as e:  # Python's limit on digits in an integer
        raise InvalidInput(f"{source}: not valid TOML ({e})", rule=rule) from None
    _check_depth(data, source, rule, 0)
    return data


def _check_depth(value: Any, source: str, rule: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{source}: nested deeper than {MAX_DEPTH} levels", rule=rule)
    if isinstance(value, dict):
        for item in value.values():
            _check_depth(item, source, rule, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_depth(item, source, rule, depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{source}: {value} is not a number here", rule=rule)


__all__ = ["MAX_DEPTH", "MAX_NUMBER_CHARS", "check_json_bounds", "decode_utf8", "parse_json",
           "parse_toml", "position"]
