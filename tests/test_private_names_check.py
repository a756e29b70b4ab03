"""DESIGN.md, small modules: no module calls another module's private names
(``tools/check_private_names.py``, run by CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "check_private_names.py"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"__init__.py": "", **files}.items():
        path = tmp_path / "dicetable" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "dicetable"


def _run(src: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(TOOL)] + ([str(src)] if src is not None else [])
    return subprocess.run(args, capture_output=True, text=True, check=False)


def test_no_module_uses_another_modules_private_names() -> None:
    result = _run()
    assert result.returncode == 0, result.stdout


OWNER = "class Floor:\n    def _catch_up(self) -> None: ...\n    def run(self) -> None:\n" \
        "        self._catch_up()\n"


@pytest.mark.parametrize("user", [
    "from dicetable.floor import _helper\n",
    "def go(floor: object) -> None:\n    floor._catch_up()\n",
    "import dicetable.floor as f\nf._helper()\n",
    # A protocol that declares the other module's private method defines nothing.
    "from typing import Protocol\nclass Host(Protocol):\n    def _catch_up(self) -> None: ...\n"
    "def go(host: Host) -> None:\n    host._catch_up()\n",
])
def test_a_use_of_another_modules_private_name_is_reported(tmp_path: Path, user: str) -> None:
    src = _tree(tmp_path, {"floor.py": OWNER + "def _helper() -> None: ...\n",
                           "pipeline.py": user})
    result = _run(src)
    assert result.returncode == 1
    assert "pipeline.py" in result.stdout
    assert "floor.py" not in result.stdout


@pytest.mark.parametrize("fine", [
    "class A:\n    def _own(self) -> None:\n        return None\n"
    "    def other(self, a: 'A') -> None:\n        a._own()\n        self._own()\n",
    "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n"
    "def moved(p: P) -> P:\n    return p._replace(x=1)\n",
    "def f() -> None:\n    _local = 1\n    print(_local)\n",
    "import os\ndef end() -> None:\n    os._exit(0)\n",
    "import enum\ndef value(member: enum.Enum) -> object:\n    return member._value_\n",
])
def test_a_modules_own_private_names_are_its_own(tmp_path: Path, fine: str) -> None:
    result = _run(_tree(tmp_path, {"mine.py": fine}))
    assert result.returncode == 0, result.stdout
