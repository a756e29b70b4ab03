"""Terminal tables that fit: cells wrap instead of being cut at the terminal's width, or the
whole table is printed at its natural width with ``--wide``; money in dollars; long exact
fractions shown short (their exact value is in ``--json``)."""

from __future__ import annotations

import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dicetable.core.money import format_cents

if TYPE_CHECKING:  # Rich is imported when something is printed, not with the option's help
    from rich.console import Console
    from rich.table import Table

WIDE_OPTION_HELP = "Print tables at full width instead of wrapping them to the terminal"
SHORT_FRACTION = 24
"""A fraction longer than this many characters is shown as a decimal."""


def console(wide: bool = False) -> Console:
    """A console for tables: the terminal's width, or unbounded with ``wide``."""
    from dicetable.cli.output import UNBOUNDED, Output, output

    return Output(width=UNBOUNDED, soft_wrap=True) if wide else output()


def echo(text: str, nl: bool = True) -> None:
    """Plain text on standard output, flushed now (as ``typer.echo`` writes it), so a closed
    pipe is met here, where the command's error handling sees it, not at exit."""
    sys.stdout.write(text + "\n" if nl else text)
    sys.stdout.flush()


def fit(table: Table) -> Table:
    """Let every column wrap its cells rather than cut them with an ellipsis (a column marked
    ``no_wrap`` keeps its names whole: give it a ``min_width``)."""
    for column in table.columns:
        column.overflow = "fold"
    return table


def short_fraction(value: Fraction | str) -> str:
    """``7/495`` as is; an 80-digit fraction as ``≈0.0333333`` (exact in ``--json``).

    >>> short_fraction(Fraction(7, 495))
    '7/495'
    >>> short_fraction(Fraction(10**30 + 1, 3 * 10**31))
    '≈0.0333333'
    """
    text = str(value)
    if len(text) <= SHORT_FRACTION:
        return text
    return f"≈{float(Fraction(value)):.6g}"


SHORT_NOTE = "≈ a long exact fraction, shown as a decimal; --json has the exact value."


LIMIT_KEYS = ("minimum", "maximum", "unit")


def rule_value(rule_id: str, value: Any) -> str:
    """A rule's value for people: limits and amounts in dollars, the rest as written.

    >>> rule_value("limits.default", {"minimum": 500, "maximum": 500000, "unit": 100})
    'minimum $5.00, maximum $5,000.00, unit $1.00'
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and rule_id.startswith("limits.") and all(
            isinstance(value.get(k), int) for k in LIMIT_KEYS if k in value):
        return ", ".join(f"{k} {format_cents(v)}" if k in LIMIT_KEYS and isinstance(v, int)
                         else f"{k} {v}" for k, v in value.items())
    if isinstance(value, int) and not isinstance(value, bool) and _is_money_rule(rule_id):
        return format_cents(value)
    import json

    return json.dumps(value)


def _is_money_rule(rule_id: str) -> bool:
    last = rule_id.rsplit(".", 1)[-1]
    return last in ("minimum", "maximum", "unit", "amount", "cap") or rule_id.startswith(
        "limits.")
