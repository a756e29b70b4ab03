"""``dicetable odds PACK`` and ``dicetable simulate ...`` given plain arguments, without Typer.

Building a Typer command's parameters imports Typer, its click and Pydantic (a type adapter per
option): more CPU than ``odds`` takes to print a cached report, and several times what a
simulation of a million rolls takes. So the console entry point reads these two commands'
arguments here when they are plain: known options each given once, as ``--name VALUE``,
``--name=VALUE`` or a bare flag, whole numbers in their range, no help. Anything else (help, an
unknown or repeated option, a number out of range, a value that looks like an option,
``DICETABLE_DEBUG``, shell completion) returns ``None`` and Typer parses it as always, usage
errors included. Both ways call the same ``run`` with the same values and end the same way: a
refusal in one line with its exit code, a closed pipe quietly with exit 1, Ctrl-C with 130.
``tests/test_cli_fast_path.py`` checks that these options are the Typer commands' own.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any, NamedTuple

FLAG, WHOLE, TEXT = "flag", "whole", "text"


class Plain(NamedTuple):
    """One option read here: ``run``'s keyword, its kind, and (whole numbers) its range.
    (These two records are named tuples: a frozen dataclass is made by compiling its methods'
    source when the module loads, four times the CPU.)"""

    keyword: str
    kind: str
    low: int | None = None
    high: int | None = None
    value: bool = True
    """What a flag sets (``--no-progress`` sets False)."""


class Command(NamedTuple):
    """A command read here: the options (and the positional) its ``run`` takes."""

    options: dict[str, Plain]
    positional: str | None = None
    required: tuple[str, ...] = ()


ODDS = Command({
    "--json": Plain("as_json", FLAG), "--csv": Plain("as_csv", FLAG),
    "--wide": Plain("wide", FLAG),
}, positional="pack", required=("pack",))

SIMULATE = Command({
    "--strategy": Plain("strategy", TEXT),
    "--rolls": Plain("rolls", WHOLE, 1, 10**13),
    "--sessions": Plain("sessions", WHOLE, 1, 10**9),
    "--session-rolls": Plain("session_rolls", WHOLE, None, 10**13),
    "--workers": Plain("workers", WHOLE, 1, 1024),
    "--seed": Plain("seed", WHOLE, 0, None),
    "--engine": Plain("engine", TEXT), "--kernel": Plain("kernel", TEXT),
    "--json": Plain("as_json", FLAG), "--csv": Plain("as_csv", FLAG),
    "--progress": Plain("progress", FLAG), "--no-progress": Plain("progress", FLAG, value=False),
    "--wide": Plain("wide", FLAG),
}, required=("strategy",))

COMMANDS = {"odds": ODDS, "simulate": SIMULATE}


def parse(command: Command, args: list[str]) -> dict[str, Any] | None:
    """``run``'s keywords for ``args``, or None when they are not plain (Typer reads them)."""
    found: dict[str, Any] = {}
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-"):
            if command.positional is None or command.positional in found or not token:
                return None
            found[command.positional] = token
            continue
        name, eq, text = token.partition("=")
        plain = command.options.get(name)
        if plain is None or plain.keyword in found:
            return None
        if plain.kind == FLAG:
            if eq:
                return None
            found[plain.keyword] = plain.value
            continue
        if not eq:
            if not rest:
                return None
            text = rest.pop(0)
        value = _value(plain, text)
        if value is None:
            return None
        found[plain.keyword] = value
    if any(name not in found for name in command.required):
        return None
    return found


def _value(plain: Plain, text: str) -> object | None:
    if not text or text.startswith("-"):
        return None
    if plain.kind == TEXT:
        return text
    if not text.isascii() or not text.isdigit():
        return None
    number = int(text)
    if (plain.low is not None and number < plain.low) or (
            plain.high is not None and number > plain.high):
        return None
    return number


def dispatch(argv: list[str], *, process_ends: bool = False) -> int | None:
    """Run ``argv`` (the words after ``dicetable``) here and give its exit code, or None.
    ``process_ends``: the process ends next (the program itself), so what the command made
    may be frozen out of the collector's sight rather than gone through once more."""
    if not argv or argv[0] not in COMMANDS or any(
            key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ):
        return None
    command = COMMANDS[argv[0]]
    keywords = parse(command, argv[1:])
    if keywords is None:
        return None
    # Paused only where it runs: a caller of ``main`` that has turned it off keeps it off.
    paused = in_process(keywords) and gc.isenabled()
    if paused:
        gc.disable()  # see in_process
    try:  # the imports too: one that fails still turns the collector back on (finally)
        if command is ODDS:
            from dicetable.cli.odds_run import run
        else:
            from dicetable.cli.simulate_run import run  # type: ignore[assignment]
        code: int = run(**keywords)
        return code
    except KeyboardInterrupt:
        return 130
    except EOFError:
        print(file=sys.stderr)
        print("Aborted!", file=sys.stderr)
        return 1
    except Exception as e:
        from dicetable.cli.refusal import refusal

        said, message = refusal(e)
        if said is None:  # a closed pipe: nothing more is written to it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        print(f"dicetable: {message}", file=sys.stderr)
        return said
    finally:
        if paused:
            if process_ends:  # what was made stays to the end, which is next: a collection
                gc.freeze()  # now would go through all of it once more, finding nothing
            gc.enable()


def in_process(keywords: dict[str, Any]) -> bool:
    """Whether the command does all its work in this process (``odds``; ``simulate`` on one
    local worker), which then runs without the cyclic garbage collector: loading makes tens of
    thousands of objects that all live to the end (NumPy's and the simulator's modules,
    functions, classes), which the collector would go through again and again as they are
    made, finding nothing; the work makes next to no cycles (Numba's loading, once). Work
    spread over other processes (a pool, a Dask or Ray cluster) keeps the collector: its many
    exchanges may leave cycles."""
    local: bool = keywords.get("engine", "local") == "local"
    return local and keywords.get("workers", 1) == 1
