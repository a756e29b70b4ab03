"""Where a rule comes from, and how much weight it carries."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    """The authority behind a rule (DESIGN.md, 'Rules whose text is missing')."""

    REGULATION = "regulation"
    """Pennsylvania or Indiana regulation text held in ``spec/regulations.md``."""

    OTHER_JURISDICTION = "other-jurisdiction"
    """Another regulator's rule standing in for PA/IN text we lack.

    See ``spec/model-regulations.md``.
    """

    INDUSTRY_DEFAULT = "industry-default"
    """Common practice (``spec/regulations.md`` Appendix A); no regulator's text behind it."""

    @property
    def configurable(self) -> bool:
        """Only stand-ins may be changed by an operator; regulation text may not.

        >>> Status.REGULATION.configurable, Status.INDUSTRY_DEFAULT.configurable
        (False, True)
        """
        return self is not Status.REGULATION


@dataclass(frozen=True, slots=True)
class Citation:
    """A rule's source text reference and its status."""

    text: str
    status: Status

    def __str__(self) -> str:
        return f"{self.text} [{self.status}]"
