"""Fail when a concept declared once is declared again elsewhere (DESIGN.md, one declaration).

Two checks over ``src/dicetable``:

- **game names**: a game's name (``craps``, ``mini-craps``, ``props-and-hops``) is compared
  (``==``, ``!=``, ``in``, ``match``) or used as a dispatch key (a dict literal keyed by game
  names) only in its variant's own module; everywhere else asks the variant's hooks.
- **commands**: every command class (a dataclass deriving from ``Command``) is declared in a
  commands module and catalogued in ``dicetable.table.catalogue``; no other module keeps its
  own list of verbs or routes (a dict literal keyed by command classes or by the catalogue's
  verbs outside the catalogue).

``python tools/check_one_declaration.py [SRC]`` prints each offence and exits 1 if any;
``--count`` prints the number of game-name comparisons only.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

GAMES = frozenset({"craps", "mini-craps", "props-and-hops"})
VARIANT_MODULES = frozenset({"games/craps.py", "games/props_hops.py", "rules/variants.py"})
"""Each variant's own module (the rules layer's facts about a game sit in rules/variants.py,
because the rules layer may not import the games layer)."""
COMMAND_MODULES = frozenset({"games/commands.py", "table/commands.py"})
CATALOGUE = "table/catalogue.py"
COMMAND_BASES = frozenset({"Command"})


def _is_game(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in GAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_game(e) for e in node.elts)
    return False


def game_comparisons(tree: ast.AST) -> list[int]:
    """Line numbers where a game's name is compared or dispatched on."""
    lines = []
    for node in ast.walk(tree):
        compared = isinstance(node, ast.Compare) and any(
            _is_game(n) for n in (node.left, *node.comparators))
        keyed = isinstance(node, ast.Dict) and any(k is not None and _is_game(k)
                                                   for k in node.keys)
        if compared or keyed:
            lines.append(node.lineno)
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue) \
                and _is_game(node.pattern.value):
            lines.append(node.pattern.lineno)
    return sorted(set(lines))


def command_declarations(tree: ast.AST) -> list[tuple[int, str]]:
    """Classes deriving from ``Command`` (by name) declared in this module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute)
                     else "" for b in node.bases}
            if bases & COMMAND_BASES:
                out.append((node.lineno, node.name))
    return out


def command_tables(tree: ast.AST) -> list[int]:
    """Dict literals keyed by command classes (``cmd.PlaceBet: ...``): a second command list."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and len(node.keys) >= 3 and all(
                isinstance(k, ast.Attribute) and k.attr[:1].isupper()
                and isinstance(k.value, ast.Name) and k.value.id in ("cmd", "gcmd", "tcmd", "g",
                                                                    "t")
                for k in node.keys):
            lines.append(node.lineno)
    return lines


def main(argv: list[str]) -> int:
    count_only = "--count" in argv
    args = [a for a in argv if not a.startswith("--")]
    src = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "src" / "dicetable"
    problems: list[str] = []
    comparisons = 0
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        if rel not in VARIANT_MODULES:
            for line in game_comparisons(tree):
                comparisons += 1
                problems.append(f"{rel}:{line}: a game's name is compared outside its variant "
                                "module; use the variant's hooks (dicetable.games.variant)")
        if rel.startswith(("custody/",)):
            continue  # the custody ledger is another aggregate with its own commands
        if rel not in COMMAND_MODULES:
            for line, name in command_declarations(tree):
                problems.append(f"{rel}:{line}: command {name} is declared outside the "
                                "commands modules and the catalogue")
        if rel != CATALOGUE:
            for line in command_tables(tree):
                problems.append(f"{rel}:{line}: a table keyed by command classes; derive it "
                                "from dicetable.table.catalogue")
    if count_only:
        print(comparisons)
        return 0
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
