"""Variants carry their own facts: no game's name is compared outside its variant module, in
Python or in the pages' JavaScript (``tools/check_game_names.py``, run by CI)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from dicetable.games.catalogue import variants

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dicetable"
TOOL = ROOT / "tools" / "check_game_names.py"
sys.path.insert(0, str(ROOT / "tools"))
import check_game_names as check  # type: ignore[import-not-found]  # noqa: E402


def test_the_game_names_are_read_from_the_variant_modules() -> None:
    modules, games = check.variant_modules(SRC)
    assert games == {v.name for v in variants()}
    assert {"games/craps.py", "games/props_hops.py", "games/crapless.py"} <= modules
    assert "games/engine.py" not in modules


def test_the_source_tree_compares_no_game_name() -> None:
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout
    count = subprocess.run([sys.executable, str(TOOL), "--count"], capture_output=True,
                           text=True, check=True)
    assert count.stdout.strip() == "0"


def test_the_check_finds_javascript_naming_or_comparing_a_game() -> None:
    games = {"craps", "props-and-hops"}
    js = ('const props = v.game === "props-and-hops";\n'          # 1: literal and compare
          "if (layout.game !== view.game) rebuild();\n"            # 2: .game compared
          "// a comment naming 'craps' is fine\n"                  # 3
          "switch (t.game) { default: }\n"                         # 4
          "const kinds = { 'craps': crapsLayout };\n"              # 5: a dispatch key
          "const fine = view.variant.has_shaker;\n"                # 6
          "/* block 'props-and-hops' */ const also = `craps`;\n")  # 7: template literal
    assert check.js_game_comparisons(js, games) == [1, 2, 4, 5, 7]


def test_the_check_finds_python_comparing_a_game() -> None:
    bad = ast.parse('if state.game == "props-and-hops":\n    pass\n'
                    'x = {"craps": 1}\n'
                    'match g:\n    case "craps":\n        pass\n'
                    'ok = variant_of(g).has_shaker\n')
    assert check.game_comparisons(bad, {"craps", "props-and-hops"}) == [1, 3, 5]


def test_a_new_variant_is_covered_the_moment_it_is_declared(tmp_path: Path) -> None:
    """Copy the tree, declare a game 'baccarat' in a games module, compare it in a page and in
    the server: both are caught; in its own module the name is fine."""
    src = tmp_path / "dicetable"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    (src / "games" / "baccarat.py").write_text(
        'class Baccarat:\n    name = "baccarat"\n\n'
        'def mine(game: str) -> bool:\n    return game == "baccarat"\n', encoding="utf-8")
    (src / "server" / "static" / "js" / "extra.js").write_text(
        'export const b = (v) => v.variant.name === "baccarat";\n', encoding="utf-8")
    (src / "server" / "extra.py").write_text('def f(g: str) -> bool:\n    return g == "baccarat"\n',
                                             encoding="utf-8")
    found = check.problems(src)
    assert [p.split(":")[0] for p in found] == ["server/extra.py", "server/static/js/extra.js"]
    done = subprocess.run([sys.executable, str(TOOL), str(src)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 1
    assert "server/static/js/extra.js:1" in done.stdout
