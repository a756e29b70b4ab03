"""``tools/follow_moves.py`` brings code written against moved modules and names to where they
live now, and the moves file it reads names only modules and names that exist."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import follow_moves  # type: ignore[import-not-found]  # noqa: E402

MOVES = follow_moves.Moves(
    modules={"pkg.old": "pkg.new", "pkg.sub.gone": "pkg.kept", "pkg.a": "pkg.b", "pkg.b": "pkg.c"},
    names={("pkg.owners", "table_of"): ("pkg.door", "table_of")},
)


def test_single_line_and_aliased_imports_follow_the_module() -> None:
    text = "from pkg.old import A, b as c  # why\nimport pkg.old\nx = pkg.old.A\n"
    assert follow_moves.rewrite(text, MOVES) == (
        "from pkg.new import A, b as c  # why\nimport pkg.new\nx = pkg.new.A\n")


def test_parenthesised_imports_over_several_lines() -> None:
    text = "def f():\n    from pkg.old import (\n        A,  # a comment\n        b,\n    )\n"
    assert follow_moves.rewrite(text, MOVES) == "def f():\n    from pkg.new import A, b\n"


def test_a_moved_name_splits_the_statement_and_the_rest_stays() -> None:
    text = "from pkg.owners import DECIDED_BY, Split, table_of\n"
    assert follow_moves.rewrite(text, MOVES) == (
        "from pkg.owners import DECIDED_BY, Split\nfrom pkg.door import table_of\n")


def test_a_module_imported_from_its_package_keeps_its_local_name() -> None:
    assert follow_moves.rewrite("from pkg.sub import gone, other\n", MOVES) == (
        "from pkg import kept as gone\nfrom pkg.sub import other\n")
    assert follow_moves.rewrite("from pkg.sub import gone as g\n", MOVES) == (
        "from pkg import kept as g\n")


def test_dotted_strings_and_chains_of_moves() -> None:
    text = 'patch("pkg.owners.table_of")\npatch("pkg.a.X")\n"pkg.older" and "pkg.old_x"\n'
    assert follow_moves.rewrite(text, MOVES) == (
        'patch("pkg.door.table_of")\npatch("pkg.c.X")\n"pkg.older" and "pkg.old_x"\n')


def test_a_line_marked_keep_is_left_alone() -> None:
    text = 'PUBLISHED = "pkg.old"  # follow-moves: keep\nUSED = "pkg.old"\n'
    assert follow_moves.rewrite(text, MOVES) == (
        'PUBLISHED = "pkg.old"  # follow-moves: keep\nUSED = "pkg.new"\n')


def test_configuration_gets_only_the_dotted_names() -> None:
    assert follow_moves.rewrite('layers = ["pkg.old"]\n', MOVES, python=False) == (
        'layers = ["pkg.new"]\n')


def test_check_mode_changes_nothing_and_says_what_would(tmp_path: Path) -> None:
    moves = tmp_path / "moves.txt"
    moves.write_text("# a comment\npkg.old pkg.new\n")
    code = tmp_path / "code"
    code.mkdir()
    (code / "m.py").write_text("from pkg.old import A\n")
    run = [sys.executable, str(ROOT / "tools" / "follow_moves.py"), "--moves", str(moves)]
    checked = subprocess.run([*run, "--check", str(code)], capture_output=True, text=True)
    assert checked.returncode == 1
    assert "m.py" in checked.stdout
    assert (code / "m.py").read_text() == "from pkg.old import A\n"
    subprocess.run([*run, str(code)], check=True, capture_output=True)
    assert (code / "m.py").read_text() == "from pkg.new import A\n"


def test_a_malformed_moves_line_is_refused_naming_it(tmp_path: Path) -> None:
    moves = tmp_path / "moves.txt"
    moves.write_text("pkg.old:name pkg.new\n")
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "follow_moves.py"),
                          "--moves", str(moves), str(tmp_path)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "moves.txt:1" in run.stderr


def test_the_project_moves_lead_to_what_exists_and_nothing_is_left_behind() -> None:
    moves = follow_moves.read_moves(follow_moves.MOVES)
    for old, new in moves.modules.items():
        importlib.import_module(new)
        assert importlib.util.find_spec(old) is None, f"{old} is still there (no shims)"
    for (old, name), (new, new_name) in moves.names.items():
        assert hasattr(importlib.import_module(new), new_name)
        assert not hasattr(importlib.import_module(old), name), f"{old}.{name} is still there"
    roots = [str(ROOT / d) for d in ("src", "tests", "bench", "tools")]
    stale = subprocess.run([sys.executable, str(ROOT / "tools" / "follow_moves.py"), "--check",
                            *roots], capture_output=True, text=True)
    assert stale.returncode == 0, stale.stdout
