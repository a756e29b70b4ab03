"""Reading the sections a rule's citation names, and what each section is about.

``tests/fixtures/citation_subjects.toml`` is the table: for every section the packs cite, the
subjects its text (as ``spec/`` holds it) speaks of; for every rule, by id prefix, the subject
the rule decides. A citation passes when each section it names speaks of the rule's subject,
or is named as a text not held (only by a rule that does not claim to be regulation), or is
one of the listed mentions (a section named to say what it does *not* provide).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cache
from pathlib import Path

TABLE = Path(__file__).parent / "fixtures" / "citation_subjects.toml"

_LEVEL = r"\((?:[a-zA-Z]|\d{1,2}|[ivx]{1,4})\)"
_CHAIN = rf"(?:{_LEVEL})+(?:\s*-\s*{_LEVEL})?(?:\s*,\s*(?:{_LEVEL})+(?:\s*-\s*{_LEVEL})?)*"

# (pattern, key maker); applied in order, each match blanked out before the next pattern.
_PATTERNS: list[tuple[str, str]] = [
    (r"spec/standards\.md (SEC-\d+)", "standards {0}"),
    (r"spec/standards\.md §\s?(\d+(?:\.\d+)?)(?: item (\d+))?", "standards §{0}"),
    (r"spec/regulations\.md Appendix A(?: item (\d))?", "regulations Appendix A {0}"),
    (r"spec/regulations\.md §\s?([\d.]+)", "regulations §{0}"),
    (r"spec/model-regulations\.md §\s?(\d+)", "model-regulations §{0}"),
    (r"nilapub\.com/games/props-and-hops", "nilapub"),
    (r"LSA #11-375\(E\)", "IN LSA 11-375(E)"),
    (r"205 CMR (146\.46)\(6\)\(a\)", "MA 205 CMR 146.46(6)(a)"),
    (r"COMAR (36\.05\.0\d\.\d+)", "MD COMAR {0}"),
    (r"N\.J\.A\.C\. (13:69[EF]-\d+\.\d+[A-Z]?)", "NJ {0}"),
    (r"NJ (13:69[EF]-\d+\.\d+[A-Z]?)", "NJ {0}"),
    (r"(20:18:\d+(?:\.\d+)?:\d+(?:\.\d+)?)", "SD {0}"),
    (r"(?:Arrêté du 14 mai 2007 \(France\), |France )art\. (55-\d+)(?: ([A-D])(?:-[A-D])?)?",
     "FR {0} {1}"),
    (r"Québec CQLR c S-13\.1, r\. 3(?!, s\.)", "QC 95.17"),
    (r"s\. (95\.17)", "QC {0}"),
    (r"Colorado 1 CCR 207-1 Rule 23", "CO Rule 23"),
    (r"(?:Colorado |CO )?(30-230\d)", "CO {0}"),
    (r"\bCO-(\d)", "model-regulations CO-{0}"),
    (r"68 IAC (\d{1,2}-\d{1,2}-\d{1,2})", "IN {0}"),
    (r"\b(\d{1,2}-\d{1,2}-\d{1,2})\b", "IN {0}"),
    (r"68 IAC (\d{1,2}-\d{1,2})\b", "IN {0}"),
    (r"58 Pa\. Code ch\. (\d{3}[a-z])", "PA ch. {0}"),
    (r"\bch\. (\d{3}[a-z])", "PA ch. {0}"),
    (r"\b(\d{3}[a-z]?\.\d{1,2})\b", "PA {0}"),
    (r"^(58 Pa\. Code|68 IAC)$", "{0}"),
]
# Sub-section chains follow these keys directly: "68 IAC 10-4-3(c)", "§ 585.3(c)-(f), (i)".
_TAKES_CHAIN = ("IN ", "PA ", "NJ ", "MD ", "SD ", "QC ", "CO ")


def _kind(level: str) -> str:
    return "digit" if level.isdigit() else "upper" if level.isupper() else "lower"


def _expand(chain: str) -> list[str]:
    """'(c)-(f), (i)' -> ['(c)', '(d)', '(e)', '(f)', '(i)']; '(b)(3),(b)(7)' -> both."""
    out: list[str] = []
    previous: list[str] = []
    for part in re.split(r"\s*,\s*", chain.strip()):
        if not part:
            continue
        levels = re.findall(r"\(([^()]+)\)", part.split("-")[0])
        if previous and len(levels) < len(previous) and _kind(levels[0]) == _kind(previous[-1]):
            levels = previous[:len(previous) - len(levels)] + levels   # "(b)(4),(8)"
        previous = levels
        base = "".join(f"({x})" for x in levels[:-1])
        last = levels[-1]
        if "-" in part:
            end = re.findall(r"\(([^()]+)\)", part.split("-", 1)[1])[0]
            if last.isdigit() and end.isdigit():
                out += [f"{base}({n})" for n in range(int(last), int(end) + 1)]
            elif len(last) == 1 and len(end) == 1:
                out += [f"{base}({chr(c)})" for c in range(ord(last), ord(end) + 1)]
            else:
                out.append(f"{base}({last})")
        else:
            out.append(f"{base}({last})")
    return out


def sections(citation: str) -> list[str]:
    """The section keys a citation names, most specific first as written.

    >>> sections("58 Pa. Code § 585.3(c)-(e); § 668a.3(d)")
    ['PA 585.3(c)', 'PA 585.3(d)', 'PA 585.3(e)', 'PA 668a.3(d)']
    >>> sections("68 IAC 10-4-3(c); 10-4-4(c)(6)")
    ['IN 10-4-3(c)', 'IN 10-4-4(c)(6)']
    >>> sections("Arrêté du 14 mai 2007 (France), art. 55-8 B 2°-8°; spec/standards.md SEC-5")
    ['FR 55-8 B', 'standards SEC-5']
    """
    text = citation.removesuffix(" [regulation]").removesuffix(" [other-jurisdiction]") \
        .removesuffix(" [industry-default]")
    found: list[tuple[int, str]] = []
    for pattern, key in _PATTERNS:
        for m in re.finditer(pattern, text):
            name = key.format(*(g or "" for g in m.groups())).strip() if m.groups() else key
            keys = [name]
            if name.startswith(_TAKES_CHAIN):
                chain = re.match(rf"\s*({_CHAIN})", text[m.end():])
                if chain:
                    keys = [name + c for c in _expand(chain.group(1))]
                    text = text[:m.end()] + " " * len(chain.group(0)) \
                        + text[m.end() + len(chain.group(0)):]
            found += [(m.start(), k) for k in keys]
            text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
    return [k for _, k in sorted(found, key=lambda x: x[0])]


@dataclass(frozen=True)
class Table:
    subjects: dict[str, frozenset[str]]
    topics: dict[str, str]
    custody_topics: dict[str, str]
    mentions: frozenset[tuple[str, str]]

    def lookup(self, key: str) -> frozenset[str] | None:
        """A section's subjects, falling back to the enclosing (sub)section."""
        while True:
            if key in self.subjects:
                return self.subjects[key]
            shorter = re.sub(r"\([^()]*\)$", "", key)
            if shorter == key:
                return None
            key = shorter

    def topic(self, rule_id: str, custody: bool = False) -> str:
        topics = self.custody_topics if custody else self.topics
        found = [p for p in topics if rule_id == p or rule_id.startswith(p)]
        assert found, f"{rule_id}: no subject in {TABLE.name}"
        return topics[max(found, key=len)]

    def mentioned(self, rule_id: str, key: str) -> bool:
        return any(fnmatch(rule_id, rule) and key == section for rule, section in self.mentions)

    def problems(self, rule_id: str, citation: str, status: str,
                 custody: bool = False) -> list[str]:
        """What is wrong with ``citation`` as the basis of ``rule_id``: empty when nothing."""
        topic = self.topic(rule_id, custody)
        named = sections(citation)
        out: list[str] = []
        if status in ("regulation", "other-jurisdiction") and not named:
            out.append(f"{rule_id}: a {status} rule names no section: {citation!r}")
        for key in named:
            subjects = self.lookup(key)
            if subjects is None:
                out.append(f"{rule_id}: {key} is not in the table ({citation!r})")
            elif "not-held" in subjects:
                if status == "regulation":
                    out.append(f"{rule_id}: regulation resting on {key}, a text not held")
            elif topic not in subjects and not self.mentioned(rule_id, key):
                out.append(f"{rule_id} ({topic}): {key} speaks of {sorted(subjects)}, "
                           f"not of {topic} ({citation!r})")
        if status == "regulation" and named and not any(
                k.startswith(("PA ", "IN ", "58 Pa. Code", "68 IAC")) for k in named):
            out.append(f"{rule_id}: regulation status on no PA or IN text: {citation!r}")
        return out


@cache
def table() -> Table:
    data = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    return Table(
        subjects={k: frozenset(v["subjects"]) for k, v in data["sections"].items()},
        topics=dict(data["topics"]),
        custody_topics=dict(data["custody_topics"]),
        mentions=frozenset((m["rule"], m["section"]) for m in data["mentions"]),
    )
