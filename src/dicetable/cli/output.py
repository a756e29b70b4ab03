"""Where the commands print: the terminal's width on a terminal; anywhere else (a pipe, a file,
a test's capture) nothing is wrapped, so a row, an amount or an identifier is never split
across lines whatever ``COLUMNS`` says. Colour and markup are Rich's: off when not a terminal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.console import Console, ConsoleDimensions

UNBOUNDED = 100_000
"""The width a table is laid out in when nothing wraps it (its natural width is used)."""


class Output(Console):
    """A Rich console that wraps only on a terminal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._asked_soft_wrap = False
        self._asked_width = kwargs.get("width") is not None  # not COLUMNS: a pipe ignores it
        super().__init__(*args, **kwargs)

    @property
    def size(self) -> ConsoleDimensions:
        found = Console.size.fget(self)  # type: ignore[attr-defined]
        if not self._asked_width and not self.is_terminal:
            return ConsoleDimensions(UNBOUNDED, found.height)
        return found  # type: ignore[no-any-return]

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    @property
    def soft_wrap(self) -> bool:
        """Text is not wrapped off a terminal, as if ``soft_wrap=True`` had been asked."""
        return self._asked_soft_wrap or not self.is_terminal

    @soft_wrap.setter
    def soft_wrap(self, value: bool) -> None:
        self._asked_soft_wrap = value

    def rule(self, title: Any = "", *args: Any, **kwargs: Any) -> None:
        """A heading: a rule across a terminal; off it, the title on a line of its own."""
        if self.is_terminal:
            super().rule(title, *args, **kwargs)
        else:
            self.print(f"── {title} ──" if title else "──")


def output(stderr: bool = False) -> Output:
    """The console a command prints its results (or, with ``stderr``, its refusals) on."""
    return Output(stderr=stderr)



def human_time(stamp: str, since: str | None = None) -> str:
    """A log's ISO time stamp as people read it, to the second in its own zone; with
    ``since`` (the stamp before it) the date is left out when it is the same day.

    >>> human_time("2026-12-02T10:03:07.512+00:00")
    '2 Dec 2026 10:03:07 UTC'
    >>> human_time("2026-12-02T10:05:00+00:00", since="2026-12-02T10:03:07+00:00")
    '10:05:00 UTC'
    >>> human_time("not a time")
    'not a time'
    """
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp  # shown as recorded rather than hidden
    zone = when.tzname() or ""
    zone = "UTC" if zone in ("UTC", "UTC+00:00") else zone
    clock = when.strftime("%H:%M:%S") + (f" {zone}" if zone else "")
    try:
        same_day = since is not None and datetime.fromisoformat(since).date() == when.date()
    except ValueError:
        same_day = False
    return clock if same_day else f"{when.day} {when.strftime('%b %Y')} {clock}"
