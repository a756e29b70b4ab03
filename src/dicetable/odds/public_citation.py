"""Citations as a regulator reads them: the project's own research notes named by what they
record, never by their file names.

A pack's citation may point into the project's specification (``spec/regulations.md Appendix A
item 1``), which a regulator cannot open. The rules submission prints each such pointer as the
public source the note records (the secondary sources, the other regulators' rules, the
internal-control provisions). A pointer this module does not know is refused, so a new one
cannot reach a filed document unexplained.

>>> public_citation("spec/regulations.md Appendix A item 1 (true odds)")
'secondary sources on U.S. craps paytables (not regulation text) (true odds)'
>>> public_citation("Colorado 1 CCR 207-1 Rule 23 (reported, spec/model-regulations.md CO-1)")
'Colorado 1 CCR 207-1 Rule 23 (reported, Colorado rule CO-1 as reported)'
>>> public_citation("58 Pa. Code 623a.8(c)")
'58 Pa. Code 623a.8(c)'
"""

from __future__ import annotations

import re

from dicetable.core.errors import InvalidInput

_SOURCES: dict[tuple[str, str], str] = {
    ("regulations", "Appendix A item 1"):
        "secondary sources on U.S. craps paytables (not regulation text)",
    ("regulations", "Appendix A item 2"):
        "a third-party design document's unverified references to 58 Pa. Code 623a",
    ("regulations", "Appendix A item 3"): "the Fire Bet's published paytable (Shuffle Master)",
    ("regulations", "Appendix A item 4"): "Bonus Craps's published paytable (Galaxy Gaming)",
    ("regulations", "Appendix A item 5"):
        "a published analysis of Props & Hops (not regulation text)",
    ("regulations", "§0.4"): "the published text's own omission, read in context",
    ("model-regulations", "CO-1"): "Colorado rule CO-1 as reported",
    ("model-regulations", "§9"): "other regulators' rules for the same provision",
    ("standards", "SEC-5"):
        "segregation of duties (58 Pa. Code 465a.37-465a.38, 603a.13(c); 68 IAC 15-12-3, -4)",
    ("standards", "§5.2"): "common commission practice on buy and lay bets",
    ("standards", "§1.3"): "dice suppliers' stated tolerances",
    ("standards", "§3.1"): "dice-fairness monitoring practice",
    ("standards", "§0 item 8"): "die-by-die custody practice",
    ("table-bank", "§8"): "trade press on pit ratings (Global Gaming Business; E. Krigman)",
    ("table-bank", "§7 item 3"): "the rating formula of table-games management systems",
}

_POINTER = re.compile(
    r"(?:see )?spec/(?P<file>[a-z-]+)\.md(?:\s+(?P<part>Appendix A item \d+|§[\d.]+(?: item \d+)?"
    r"|[A-Z]+-\d+))?(?:, (?P<more>§[\d.]+))?")


def public_citation(text: str) -> str:
    """``text`` with every pointer into the project's notes replaced by the source it records.

    Raises ``InvalidInput`` for a pointer with no public wording (rule ``submission.citations``).
    """
    def word(match: re.Match[str]) -> str:
        words = []
        for part in (match.group("part") or "", match.group("more")):
            if part is None:
                continue
            found = _SOURCES.get((match.group("file"), part))
            if found is None:
                raise InvalidInput("no public wording for the citation pointer "
                                   f"{match.group(0)!r}", rule="submission.citations")
            words.append(found)
        return "; ".join(words)
    return _POINTER.sub(word, text)


__all__ = ["public_citation"]
