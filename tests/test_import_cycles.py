"""DESIGN.md, layers: no module imports another that imports it back, however indirectly
(``tools/check_import_cycles.py``, run by CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "check_import_cycles.py"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"__init__.py": "", **files}.items():
        path = tmp_path / "dicetable" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _run(src: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(TOOL)] + ([str(src)] if src is not None else [])
    return subprocess.run(args, capture_output=True, text=True, check=False)


def test_the_project_has_no_import_cycle() -> None:
    result = _run()
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("back", [
    "from dicetable import a\n",
    "def f() -> None:\n    from dicetable.a import x\n",  # deferred: still a dependency
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dicetable.a import x\n",
    "import importlib\nimportlib.import_module('dicetable.a')\n",
    "from . import a\n",  # relative
])
def test_a_cycle_is_found_however_the_import_is_written(tmp_path: Path, back: str) -> None:
    src = _tree(tmp_path, {"a.py": "from dicetable.b import y\nx = 1\n",
                           "b.py": back + "y = 2\n"})
    result = _run(src)
    assert result.returncode == 1
    assert "import cycle among 2 modules: dicetable.a, dicetable.b" in result.stdout


def test_imports_that_only_go_down_pass(tmp_path: Path) -> None:
    src = _tree(tmp_path, {"a.py": "from dicetable.b import y\nimport os\n",
                           "b.py": "from dicetable import c\ny = 2\n", "c.py": ""})
    assert _run(src).returncode == 0


def test_a_name_from_a_package_is_an_edge_to_its_init(tmp_path: Path) -> None:
    """``from pkg import name`` of a name the package's ``__init__`` defines depends on it."""
    src = _tree(tmp_path, {"p/__init__.py": "from dicetable.p.m import z\n",
                           "p/m.py": "from dicetable.q import w\nz = 1\n",
                           "q.py": "from dicetable.p import z\nw = 1\n"})
    result = _run(src)
    assert result.returncode == 1
    assert "dicetable.p, dicetable.p.m, dicetable.q" in result.stdout
