"""Typed refusals. Each names the broken rule and its citation.

A refused command changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


class DicetableError(ValueError):
    """Base of every refusal the domain raises.

    >>> e = IllegalWager("no such wager", rule="wagers.menu", citation="SD 20:18:33:02")
    >>> str(e)
    'no such wager [rule wagers.menu; SD 20:18:33:02]'
    >>> e.to_dict()["error"]
    'IllegalWager'
    """

    def __init__(self, message: str, *, rule: str = "", citation: str = "") -> None:
        self.message = message
        self.rule = rule
        self.citation = citation
        super().__init__(message)

    def __str__(self) -> str:
        where = "; ".join(part for part in (f"rule {self.rule}" if self.rule else "", self.citation)
                          if part)
        return f"{self.message} [{where}]" if where else self.message

    def to_dict(self) -> dict[str, str]:
        return {
            "error": type(self).__name__,
            "message": self.message,
            "rule": self.rule,
            "citation": self.citation,
        }


class IllegalWager(DicetableError):
    """A wager the rules do not allow: unknown, wrong phase, outside limits, unpayable amount."""


class RoleNotPermitted(DicetableError):
    """The actor's role may not give this command at this game in this jurisdiction."""


class ProcedureViolation(DicetableError):
    """The command is out of the order the table procedure prescribes."""


class StaleVersion(DicetableError):
    """A writer appended with a sequence number that is no longer current."""


class InvalidInput(DicetableError):
    """Malformed or out-of-range input (a roll of 7-1, a negative amount, an unknown id)."""


class RulePackInvalid(DicetableError):
    """A rule pack failed validation; ``problems`` lists every problem found, not just the first."""

    def __init__(self, pack_id: str, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        lines = "; ".join(f"{rule}: {msg}" for rule, msg in problems)
        super().__init__(f"rule pack {pack_id!r} is invalid ({len(problems)} problems): {lines}",
                         rule=next((rule for rule, _ in problems if rule), "rules.pack"))


def one_named(index: Mapping[str, T], name: str, what: str, whats: str, known: Iterable[str],
              *, rule: str) -> T:
    """``index[name]``, or a refusal that lists the ``known`` names.

    >>> one_named({"a": 1}, "b", "step", "steps", ["a"], rule="r")
    Traceback (most recent call last):
    ...
    dicetable.core.errors.InvalidInput: no step 'b'; steps: a [rule r]
    """
    found = index.get(name)
    if found is None:
        raise InvalidInput(f"no {what} {name!r}; {whats}: {', '.join(known)}", rule=rule)
    return found
