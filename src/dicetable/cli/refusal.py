"""What the ``dicetable`` command says when a command ends in an exception: one line and an exit
code, never a traceback (``dicetable --debug`` or ``DICETABLE_DEBUG=1`` shows it).

Bad input is exit 2 (the command refused it; nothing was done): the domain's own refusals keep
their message, rule and citation, and the kinds of error that only input causes (a file that
cannot be read or written, text that is not UTF-8, JSON or TOML, nesting or a number past
what Python reads, a store that is not a database or cannot be reached) are named with
what is known of where. Anything else is an internal error,
exit 70 (``EX_SOFTWARE``), named but without the traceback that would bury it for an operator.

>>> refusal(FileNotFoundError(2, "No such file or directory", "/nowhere/x.html"))
(2, "cannot use /nowhere/x.html: No such file or directory (there is no folder '/nowhere')")
>>> refusal(UnicodeDecodeError("utf-8", b"ab\\xff", 2, 3, "invalid start byte"))
(2, 'not UTF-8 text: byte 0xff at offset 2 (invalid start byte)')
>>> refusal(KeyError("oops"))[0]
70
"""

from __future__ import annotations

import contextlib
import errno
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from dicetable.core.errors import DicetableError

EXIT_INPUT = 2
"""Refused: the input could not be used; nothing was done."""
EXIT_INTERNAL = 70
"""An internal error (``EX_SOFTWARE``): a bug to report, with ``--debug``'s traceback."""


def refusal(e: BaseException) -> tuple[int | None, str]:
    """The exit code and the one line for ``e``; ``None`` for a closed pipe (say nothing)."""
    if isinstance(e, DicetableError):
        return EXIT_INPUT, str(e)
    if isinstance(e, OSError):
        if e.errno == errno.EPIPE:
            return None, ""
        return EXIT_INPUT, _os_error(e)
    if isinstance(e, UnicodeDecodeError):
        bad = e.object[e.start:e.start + 1]
        byte = f"byte 0x{bad[0]:02x} " if isinstance(bad, bytes) and bad else ""
        return EXIT_INPUT, f"not UTF-8 text: {byte}at offset {e.start} ({e.reason})"
    if isinstance(e, json.JSONDecodeError):
        return EXIT_INPUT, f"not valid JSON: line {e.lineno}, column {e.colno}: {e.msg}"
    if isinstance(e, tomllib.TOMLDecodeError):
        return EXIT_INPUT, f"not valid TOML: {e}"
    if isinstance(e, RecursionError):
        return EXIT_INPUT, "the input is nested too deeply to read"
    if isinstance(e, OverflowError):
        return EXIT_INPUT, f"a number given is out of range ({e})"
    if isinstance(e, ValueError) and "integer string conversion" in str(e):
        return EXIT_INPUT, f"a number given has too many digits ({e})"
    if type(e).__module__.split(".")[0] in ("sqlite3", "psycopg"):
        return EXIT_INPUT, f"the store cannot be used: {type(e).__name__}: {e}"
    return EXIT_INTERNAL, (f"internal error: {type(e).__name__}: {e} (rerun with --debug "
                           "for the traceback, and report it)")


@contextlib.contextmanager
def refused_in_red(console: Console) -> Iterator[None]:
    """A domain refusal inside the block: its message in red on ``console``, exit 2."""
    try:
        yield
    except DicetableError as e:
        console.print(f"[red]{escape(str(e))}[/red]")
        raise typer.Exit(EXIT_INPUT) from None


def _os_error(e: OSError) -> str:
    name = e.filename if e.filename is not None else ""
    what = e.strerror or str(e)
    if not name:
        return f"{type(e).__name__}: {what}"
    text = f"cannot use {name}: {what}"
    if isinstance(e, FileNotFoundError):
        parent = Path(str(name)).parent
        if str(parent) not in ("", ".") and not parent.exists():
            text += f" (there is no folder '{parent}')"
    return text


__all__ = ["EXIT_INPUT", "EXIT_INTERNAL", "refusal", "refused_in_red"]
