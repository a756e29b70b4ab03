"""Fail when the project's modules import each other in a cycle.

Every module under ``src/dicetable`` is parsed with ``ast`` (nothing is imported or run) and
every ``import`` and ``from ... import`` statement in it is an edge of the module graph, wherever
it stands: at module level, inside a function (a deferred import is still a dependency, only a
hidden one), and under ``if TYPE_CHECKING:`` (an annotation that names a module above is the same
knot in the design, and mypy follows it). Relative imports are resolved against the module's
package, and ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg`` itself. Importing a submodule is not counted as importing its parent packages' ``__init__``
(Python runs them, but counting that would put every package that re-exports its modules in a
cycle with each of them); a ``from pkg import name`` of a name that ``__init__`` defines or
re-exports is an edge to ``__init__``, which is where the name lives.

The strongly connected components of the graph (Tarjan) with more than one module, or one module
that imports itself, are the cycles. ``python tools/check_import_cycles.py [SRC]`` prints each
component, with one cycle through it spelled out and the lines that make it, and exits 1 if there
is any; ``--count`` prints the number of modules that sit in a cycle.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "dicetable"


@dataclass(frozen=True)
class Edge:
    """One import statement that makes ``source`` depend on ``target``."""

    source: str
    target: str
    line: int
    deferred: bool  # inside a function or class body, or under ``if TYPE_CHECKING:``


def module_name(src: Path, path: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(src: Path) -> dict[str, Path]:
    """Every module of the package below ``src``, by its dotted name."""
    return {
        module_name(src, path): path for path in sorted((src / PACKAGE).rglob("*.py"))
    }


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _dynamic(node: ast.AST) -> ast.Import | None:
    """``importlib.import_module("a.b")`` or ``__import__("a.b")`` with a literal name, as an
    ``import a.b`` (an import by string is still an import)."""
    if not (isinstance(node, ast.Call) and node.args):
        return None
    func = node.func
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in {"import_module", "__import__"}
    )
    arg = node.args[0]
    if not (named and isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return None
    return ast.Import(names=[ast.alias(name=arg.value)], lineno=node.lineno, col_offset=0)


Statement = ast.Import | ast.ImportFrom


def _imports(tree: ast.Module) -> Iterator[tuple[Statement, bool]]:
    """Every import statement, with whether it is deferred (not run when the module loads)."""

    def walk(node: ast.AST, deferred: bool) -> Iterator[tuple[Statement, bool]]:
        for child in ast.iter_child_nodes(node):
            dynamic = _dynamic(child)
            if dynamic is not None:
                yield dynamic, deferred
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, deferred
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, True)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), True)
                for stmt in child.orelse:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), deferred)
            else:
                yield from walk(child, deferred)

    yield from walk(tree, False)


def _resolve(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module named by ``from <node.module> import ...`` in module ``name``."""
    if node.level == 0:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def edges(src: Path) -> list[Edge]:
    known = modules(src)
    out: list[Edge] = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node, deferred in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(name, is_package, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in known else base)
            for target in targets:
                # ``import a.b.c`` where only ``a.b`` is ours and ``c`` is a name: the module.
                while target and target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known:
                    out.append(Edge(name, target, node.lineno, deferred))
    return out


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit); components in discovery order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def cycles(src: Path) -> tuple[list[list[str]], list[Edge]]:
    """The import cycles (components of two or more modules, or a self-import), and the edges."""
    all_edges = edges(src)
    graph: dict[str, set[str]] = {name: set() for name in modules(src)}
    for edge in all_edges:
        graph[edge.source].add(edge.target)
    components = [
        c for c in strongly_connected(graph) if len(c) > 1 or c[0] in graph[c[0]]
    ]
    return components, all_edges


def _one_cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first, inside it)."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    return [start]


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    src = Path(args[0]) if args else ROOT / "src"
    components, all_edges = cycles(src)
    if "--count" in argv:
        print(sum(len(c) for c in components))
        return 0
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], Edge] = {}
    for edge in all_edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
        where.setdefault((edge.source, edge.target), edge)
    for component in components:
        print(f"import cycle among {len(component)} modules: {', '.join(component)}")
        path = _one_cycle(component, graph)
        for a, b in itertools.pairwise(path):
            edge = where[(a, b)]
            how = " (deferred)" if edge.deferred else ""
            print(f"  {modules(src)[a].relative_to(src)}:{edge.line}: {a} imports {b}{how}")
    if components:
        print(f"{len(components)} import cycle(s): move the shared names down (deferring an")
        print("import inside a function does not break a cycle; it only hides it)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
