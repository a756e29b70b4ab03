"""Fail when a game's name is compared outside its variant module, in Python or JavaScript.

Every difference between the games is a fact or hook of the game's variant
(``dicetable.games.catalogue``); the pages read those facts from the view (``view.variant``:
``has_shooter``, ``has_shaker``, ``has_puck``, ``layout``, ``points``, ``round_ends``,
``final_chore``). So nothing else may ask *which* game a table plays:

- **Python** (``src/dicetable/**/*.py``): a game's name compared (``==``, ``!=``, ``in``,
  ``match``) or used as a dispatch key (a dict literal keyed by game names) outside the variant
  modules: the ``games/`` modules that declare a variant (a class with a ``name`` string).
- **JavaScript** (``server/static/**/*.js`` and the pages' inline scripts): any string literal
  that is a game's name (a page has no use for one but to compare or dispatch on it), and any
  comparison or ``switch`` on a ``.game`` property.

The game names are read from the variant modules themselves, so a new variant is covered the
moment it is declared.

``python tools/check_game_names.py [SRC]`` prints each offence and exits 1 if any; ``--count``
prints the number of offences only.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from pathlib import Path


def _declared_name(cls: ast.ClassDef) -> str | None:
    """The game name a variant class declares (``name: ClassVar[str] = "craps"``)."""
    for stmt in cls.body:
        target = value = None
        if isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Name) and target.id == "name" \
                and isinstance(value, ast.Constant) and isinstance(value.value, str) \
                and value.value:
            return value.value
    return None


def variant_modules(src: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(the variant modules relative to ``src``, the game names they declare)."""
    modules: set[str] = set()
    games: set[str] = set()
    for path in sorted((src / "games").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = {n for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                 for n in [_declared_name(node)] if n is not None}
        if names:
            modules.add(path.relative_to(src).as_posix())
            games |= names
    return frozenset(modules), frozenset(games)


def _is_game(node: ast.AST, games: Iterable[str]) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in games
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_game(e, games) for e in node.elts)
    return False


def game_comparisons(tree: ast.AST, games: Iterable[str]) -> list[int]:
    """Line numbers where a game's name is compared or dispatched on (Python)."""
    games = frozenset(games)
    lines = []
    for node in ast.walk(tree):
        compared = isinstance(node, ast.Compare) and any(
            _is_game(n, games) for n in (node.left, *node.comparators))
        keyed = isinstance(node, ast.Dict) and any(k is not None and _is_game(k, games)
                                                   for k in node.keys)
        if compared or keyed:
            lines.append(node.lineno)
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue) \
                and _is_game(node.pattern.value, games):
            lines.append(node.pattern.lineno)
    return sorted(set(lines))


_JS_COMMENT = re.compile(r"/\*.*?\*/|(?<![:\\\"'`])//[^\n]*", re.S)
_JS_STRING = re.compile(r"""(["'`])((?:\\.|(?!\1).)*?)\1""")
_JS_GAME_COMPARE = re.compile(
    r"\.game\s*(?:===|!==|==|!=)|(?:===|!==|==|!=)\s*[\w$.\]\[]*\.game\b"
    r"|switch\s*\([^)]*\.game\s*\)|\.game\s*\)\s*\.(?:includes|indexOf)\b"
    r"|\.(?:includes|indexOf)\s*\(\s*[\w$.]*\.game\s*\)")


def _strip_comments(text: str) -> str:
    """The text with comments blanked out, newlines kept (so line numbers stay right)."""
    return _JS_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def js_game_comparisons(text: str, games: Iterable[str]) -> list[int]:
    """Line numbers where JavaScript names a game or compares a ``.game``."""
    games = frozenset(games)
    code = _strip_comments(text)
    lines = set()
    for m in _JS_STRING.finditer(code):
        if m.group(2) in games:
            lines.add(code.count("\n", 0, m.start()) + 1)
    for m in _JS_GAME_COMPARE.finditer(code):
        lines.add(code.count("\n", 0, m.start()) + 1)
    return sorted(lines)


_INLINE_SCRIPT = re.compile(r"<script\b[^>]*>(.*?)</script>", re.S | re.I)


def _scripts(static: Path) -> Iterable[tuple[Path, str, int]]:
    """Each script of the pages: (file, its text, the line it starts on)."""
    for path in sorted(static.rglob("*.js")):
        yield path, path.read_text(encoding="utf-8"), 1
    for path in sorted(static.rglob("*.html")):
        page = path.read_text(encoding="utf-8")
        for m in _INLINE_SCRIPT.finditer(page):
            yield path, m.group(1), page.count("\n", 0, m.start(1)) + 1


def problems(src: Path) -> list[str]:
    modules, games = variant_modules(src)
    out: list[str] = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel in modules:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out += [f"{rel}:{line}: a game's name is compared outside its variant module; use "
                "the variant's hooks (dicetable.games.catalogue)"
                for line in game_comparisons(tree, games)]
    for path, text, first in _scripts(src / "server" / "static"):
        rel = path.relative_to(src).as_posix()
        out += [f"{rel}:{first + line - 1}: a page names or compares a game; read the "
                "game's facts from the view (view.variant)"
                for line in js_game_comparisons(text, games)]
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    src = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "src" / "dicetable"
    found = problems(src)
    if "--count" in argv:
        print(len(found))
        return 0
    for p in found:
        print(p)
    if found:
        print(f"{len(found)} game-name comparison(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
