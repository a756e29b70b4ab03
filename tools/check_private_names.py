"""Fail when a module under ``src/dicetable`` uses another module's private names.

A private name is one with a single leading underscore (``_name``; dunders are public protocol).
Every module is parsed with ``ast`` (nothing is imported or run); a use is reported when:

- ``from pkg.mod import _name`` imports it from another module;
- ``mod._name`` reads it through a module the file imported (``import pkg.mod as mod``);
- ``obj._name`` reads an attribute of anything but ``self`` or ``cls``, and this module
  defines no function, class, attribute or variable of that name: the name can only be
  another module's (a module may use its own private names on any object it made). A
  ``Protocol``'s bodiless ``def _name(...): ...`` defines nothing: it only names another
  module's method.

``python tools/check_private_names.py [SRC]`` prints each use with its file and line, and exits 1
if there is any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


NAMEDTUPLE_API = frozenset(("_replace", "_asdict", "_fields", "_make", "_field_defaults"))
"""A named tuple's public methods: underscored only to keep clear of its field names."""
ENUM_API = frozenset(("_value_", "_name_", "_missing_", "_generate_next_value_", "_ignore_",
                      "_order_"))
"""An enum's documented ``_sunder_`` names (``_value_``: a member's value, read without the
``value`` property's descriptor)."""
STDLIB_API = frozenset((("os", "_exit"),))
"""Standard-library functions documented as public though underscored (``os._exit``: the end of
a process without the interpreter's teardown)."""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in NAMEDTUPLE_API \
        and name not in ENUM_API


def _stub(node: ast.AST) -> bool:
    """A declaration without a body (a ``Protocol``'s ``def _name(...): ...``): it names
    what another module defines, it defines nothing."""
    body = getattr(node, "body", [])
    return isinstance(node, ast.FunctionDef) and len(body) == 1 \
        and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and body[0].value.value is Ellipsis


def _defined(tree: ast.Module) -> set[str]:
    """Every name this module defines: functions, classes, their attributes, variables."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if not _stub(node):
                names.add(node.name)
            for arg in (*node.args.args, *node.args.kwonlyargs) \
                    if not isinstance(node, ast.ClassDef) else ():
                names.add(arg.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    # A ``from x import _name`` is not this module's own name.
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _private(alias.name) and alias.asname is None:
                    names.discard(alias.name)
    return names


def uses(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    own = _defined(tree)
    modules = {alias.asname or alias.name for node in ast.walk(tree)
               if isinstance(node, ast.Import) for alias in node.names}
    modules |= {alias.asname or alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith("dicetable") for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _private(alias.name):
                    yield node.lineno, f"from {node.module} import {alias.name}"
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            value = node.value
            if isinstance(value, ast.Name) and (value.id in ("self", "cls")
                                                or (value.id, node.attr) in STDLIB_API):
                continue
            if isinstance(value, ast.Name) and value.id in modules \
                    and not isinstance(node.ctx, ast.Store):
                if node.attr not in own or value.id in modules:
                    yield node.lineno, f"{value.id}.{node.attr}"
                continue
            if node.attr not in own:
                yield node.lineno, f"{ast.unparse(value)}.{node.attr}"


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else ROOT / "src" / "dicetable"
    found = 0
    for path in sorted(src.rglob("*.py")):
        for line, what in uses(path):
            print(f"{path.relative_to(src.parent)}:{line}: {what} (another module's private name)")
            found += 1
    if found:
        print(f"{found} uses of another module's private names", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
