"""Rewrite imports of moved modules and names, from ``tools/module_moves.txt``.

When modules are merged or a name moves between modules there are no shim modules left
behind; code written against the old places (another branch merged later, a script kept
outside the tree) is brought over by this tool instead:

    python tools/follow_moves.py src tests bench tools      # rewrite in place, list the files
    python tools/follow_moves.py --check src tests           # list what would change, exit 1

Each line of the moves file is ``old new``: either two modules (``a.old_module a.new_module``:
everything the old module had is in the new one) or two names (``a.old:name a.new:name``: one
name moved). ``#`` starts a comment. What is rewritten:

- ``from old import a, b`` (one line, or parenthesised over several lines; comments inside
  the parentheses are dropped when the statement must be rewritten) - to the new module, split
  into one statement per target module when only some names moved;
- ``from package import old_leaf [as x]`` - to ``from new_package import new_leaf as old_leaf``
  (or ``as x``), so that code using ``old_leaf.name`` keeps working;
- every other dotted occurrence, in code and in strings: ``import old``, ``old.name`` in
  ``mock.patch("...")`` targets, configuration (``.toml``, ``.cfg``, ``.ini``, ``.md``, ``.txt``).

A line carrying ``follow-moves: keep`` in a comment names an old place on purpose (a name
published under it) and is left as it is. Statements it rewrites are written in the project's
style (ruff's isort sorts the names of one statement; run ``ruff check --fix`` afterwards to
re-sort the import blocks).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

MOVES = Path(__file__).resolve().with_name("module_moves.txt")
OWN = (MOVES, Path(__file__).resolve())  # their examples name old places
SUFFIXES = (".py", ".pyi", ".toml", ".cfg", ".ini", ".md", ".txt")
LINE_LENGTH = 100
KEEP = "follow-moves: keep"
"""A line that carries this (in a comment) names an old place on purpose and is left alone."""
_FROM = re.compile(
    r"^(?P<indent>[ \t]*)from[ \t]+(?P<module>[\w.]+)[ \t]+import[ \t]+"
    r"(?:\((?P<group>[^)]*)\)|(?P<line>(?:[^\n#\\]|\\\n)+))(?P<comment>[ \t]*#[^\n]*)?",
    re.MULTILINE,
)


@dataclass
class Moves:
    """The module moves (old -> new) and name moves ((module, name) -> new module)."""

    modules: dict[str, str] = field(default_factory=dict)
    names: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)


def read_moves(path: Path) -> Moves:
    """The moves file, checked: two fields per line, both of the same kind."""
    moves = Moves()
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2 or (":" in fields[0]) != (":" in fields[1]):
            raise SystemExit(f"{path}:{number}: expected 'old new' (two modules or two "
                             f"module:name), got {raw!r}")
        old, new = fields
        if ":" in old:
            old_module, old_name = old.split(":")
            new_module, new_name = new.split(":")
            moves.names[(old_module, old_name)] = (new_module, new_name)
        else:
            moves.modules[old] = new
    return moves


def _final_module(moves: Moves, module: str) -> str:
    """Where a module lives now, following chains of moves (a -> b, b -> c)."""
    seen = set()
    while module in moves.modules and module not in seen:
        seen.add(module)
        module = moves.modules[module]
    return module


def _names(text: str) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for line in text.replace("\\\n", " ").splitlines():
        for part in line.split("#", 1)[0].split(","):
            words = part.split()
            if not words:
                continue
            if len(words) == 3 and words[1] == "as":
                out.append((words[0], words[2]))
            elif len(words) == 1:
                out.append((words[0], None))
            else:
                raise ValueError(f"cannot read import name {part.strip()!r}")
    return out


def _statement(indent: str, module: str, names: list[str]) -> str:
    def kind(name: str) -> int:  # isort's order by type: CONSTANTS, Classes, functions
        word = name.split()[0]
        return 0 if word.isupper() and len(word) > 1 else 1 if word[:1].isupper() else 2

    names = sorted(set(names), key=lambda n: (kind(n), n))
    one = f"{indent}from {module} import {', '.join(names)}"
    if len(one) <= LINE_LENGTH:
        return one
    inner = "".join(f"{indent}    {name},\n" for name in names)
    return f"{indent}from {module} import (\n{inner}{indent})"


def _rewrite_from(match: re.Match[str], moves: Moves) -> str:
    module = match["module"]
    if module.startswith("."):
        return match[0]
    body = match["group"] if match["group"] is not None else match["line"]
    try:
        names = _names(body)
    except ValueError:
        return match[0]
    targets: dict[str, list[str]] = {}
    changed = False
    for name, alias in names:
        target = _final_module(moves, module)
        new_name = name
        if (module, name) in moves.names:
            target, new_name = moves.names[(module, name)]
            target = _final_module(moves, target)
        elif f"{module}.{name}" in moves.modules:
            moved = _final_module(moves, f"{module}.{name}")
            target, _, new_name = moved.rpartition(".")
        if target != module or new_name != name:
            changed = True
        bound = alias if alias is not None else name
        spelled = new_name if bound == new_name else f"{new_name} as {bound}"
        targets.setdefault(target, []).append(spelled)
    if not changed:
        return match[0]
    indent = match["indent"]
    lines = [_statement(indent, target, spelled) for target, spelled in targets.items()]
    if match["comment"] and match["group"] is None:
        lines[0] += "  " + match["comment"].strip()
    return "\n".join(lines)


def _dotted(moves: Moves) -> list[tuple[re.Pattern[str], str]]:
    subs = [(f"{old}.{name}", f"{_final_module(moves, new)}.{new_name}")
            for (old, name), (new, new_name) in moves.names.items()]
    subs += [(old, _final_module(moves, old)) for old in moves.modules]
    subs.sort(key=lambda pair: -len(pair[0]))  # the longest first: a name before its module
    return [(re.compile(rf"(?<![\w.]){re.escape(old)}(?![\w])"), new) for old, new in subs]


def rewrite(text: str, moves: Moves, *, python: bool = True) -> str:
    """The text with every import and dotted name of a moved module or name brought over."""
    if python:
        text = _FROM.sub(lambda m: _rewrite_from(m, moves), text)
    subs = _dotted(moves)
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if KEEP not in line:
            for pattern, new in subs:
                line = pattern.sub(new, line)
            lines[i] = line
    return "".join(lines)


def files(roots: list[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
            continue
        found += [p for p in sorted(root.rglob("*"))
                  if p.is_file() and p.suffix in SUFFIXES and p.resolve() not in OWN
                  and not any(part.startswith(".") or part == "__pycache__"
                              for part in p.relative_to(root).parts)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--moves", type=Path, default=MOVES)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if "
                        "anything would change")
    args = parser.parse_args(argv)
    moves = read_moves(args.moves)
    changed = []
    for path in files(args.roots):
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = rewrite(text, moves, python=path.suffix in (".py", ".pyi"))
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new)
    for path in changed:
        print(path)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
