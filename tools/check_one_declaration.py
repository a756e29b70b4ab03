"""Fail when a concept declared once is declared again elsewhere (DESIGN.md, one declaration).

Checks over ``src/dicetable`` (a game's name compared outside its variant module, in Python
or JavaScript, is ``tools/check_game_names.py``'s):

- **commands**: every command class (a dataclass deriving from ``Command``) is declared in a
  commands module and catalogued in ``dicetable.table.catalogue``; no other module keeps its
  own list of verbs or routes (a dict literal keyed by command classes or by the catalogue's
  verbs outside the catalogue).
- **routes and methods**: no server route outside ``install`` in ``server/app.py`` (which
  registers the catalogue's) gives a catalogued command by its class, and the ``Table``
  facade builds none by hand (its command methods are generated:
  ``tools/gen_table_methods.py``, checked to be what the catalogue gives); ``OpenTable``, the
  opening, is the one it builds itself.

- **custody commands**: every custody command class (deriving from ``CustodyCommand``) is
  declared in ``custody/commands.py`` or ``custody/transport.py`` and catalogued in
  ``custody/catalogue.py`` (``OpenCustody``, the ledger's opening, aside); the custody
  surfaces (``cli/dice.py``, ``server/dice_room.py``, ``table/script_custody.py``) build no
  catalogued custody command by its class (their commands, routes and verbs are generated
  from the catalogue), and no module outside the catalogue keys a table by custody verbs
  (``"dice-receive": ...``) or by custody command classes.

``python tools/check_one_declaration.py [SRC]`` prints each offence and exits 1 if any.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

COMMAND_MODULES = frozenset({"games/commands.py", "table/commands.py"})
CATALOGUE = "table/catalogue.py"
COMMAND_BASES = frozenset({"Command"})
COMMAND_GROUPS = frozenset({"PlayerCommand", "BetCommand"})
"""Bases that declare a field several commands share (the player or the bet a command is
about): not commands themselves; what derives from them is."""


def command_declarations(tree: ast.AST) -> list[tuple[int, str]]:
    """Classes deriving from ``Command`` or one of its field groups (by name) declared in
    this module, the groups aside."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name not in COMMAND_GROUPS:
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute)
                     else "" for b in node.bases}
            if bases & (COMMAND_BASES | COMMAND_GROUPS):
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


ROUTE_MODULE = "server/app.py"
ROUTE_INSTALLER = "install"  # the function of ROUTE_MODULE that registers the catalogue's
TABLE_MODULE = "table/table.py"
ROUTE_DECORATORS = frozenset({"get", "post", "put", "patch", "delete", "api_route"})
BUILT_BY_THE_TABLE = frozenset({"OpenTable"})


def command_names(src: Path) -> frozenset[str]:
    """The catalogued command classes, by name (those the commands modules declare)."""
    names: set[str] = set()
    for rel in COMMAND_MODULES:
        tree = ast.parse((src / rel).read_text(encoding="utf-8"))
        names |= {name for _, name in command_declarations(tree)}
    return frozenset(names)


def _used_commands(node: ast.AST, commands: frozenset[str]) -> list[tuple[int, str]]:
    return [(n.lineno, n.attr if isinstance(n, ast.Attribute) else n.id)
            for n in ast.walk(node)
            if (isinstance(n, ast.Attribute) and n.attr in commands)
            or (isinstance(n, ast.Name) and n.id in commands)]


def hand_written_routes(tree: ast.AST, commands: frozenset[str], *,
                        installer: str | None = None) -> list[tuple[int, str]]:
    """Route functions (``@app.post(...)`` and the like) that give a catalogued command,
    outside the module-level function ``installer`` (the catalogue's own)."""
    out = []
    skipped = {id(n) for top in getattr(tree, "body", ())
               if isinstance(top, ast.FunctionDef) and top.name == installer
               for n in ast.walk(top)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                and d.func.attr in ROUTE_DECORATORS for d in node.decorator_list):
            out += _used_commands(node, commands)
    return out


def hand_built_commands(tree: ast.AST, commands: frozenset[str]) -> list[tuple[int, str]]:
    """Catalogued commands the ``Table`` class builds by hand (``cmd.PlaceBet(...)``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Table":
            for call in ast.walk(node):
                if isinstance(call, ast.Call):
                    name = call.func.attr if isinstance(call.func, ast.Attribute) else \
                        call.func.id if isinstance(call.func, ast.Name) else ""
                    if name in commands and name not in BUILT_BY_THE_TABLE:
                        out.append((call.lineno, name))
    return out


def generated_methods_current() -> str | None:
    """None when ``table/command_methods.py`` is what the catalogue gives, else why not."""
    import importlib.util

    path = Path(__file__).resolve().parent / "gen_table_methods.py"
    spec = importlib.util.spec_from_file_location("gen_table_methods", path)
    assert spec is not None
    assert spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    if not gen.TARGET.exists() or gen.TARGET.read_text(encoding="utf-8") != gen.source():
        return (f"{gen.TARGET.name} is not what the catalogue gives: run "
                "python tools/gen_table_methods.py")
    return None


CUSTODY_COMMAND_MODULES = frozenset({"custody/commands.py", "custody/transport.py"})
CUSTODY_CATALOGUE = "custody/catalogue.py"
CUSTODY_SURFACES = frozenset({"cli/dice.py", "server/dice_room.py", "table/script_custody.py"})
CUSTODY_BASES = frozenset({"CustodyCommand"})
CUSTODY_GROUPS = frozenset({"DiceCommand"})
"""Bases that declare a field several custody commands share (the dice named): not
commands themselves."""
OPENED_BY_THE_LEDGER = frozenset({"OpenCustody"})


def custody_declarations(tree: ast.AST) -> list[tuple[int, str]]:
    """Classes deriving from ``CustodyCommand`` (or from one of those) in this module."""
    out: list[tuple[int, str]] = []
    bases = set(CUSTODY_BASES)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            named = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute)
                     else "" for b in node.bases}
            if named & bases:
                if node.name not in CUSTODY_GROUPS:
                    out.append((node.lineno, node.name))
                bases.add(node.name)
    return out


def custody_command_names(src: Path) -> frozenset[str]:
    names: set[str] = set()
    for rel in CUSTODY_COMMAND_MODULES:
        tree = ast.parse((src / rel).read_text(encoding="utf-8"))
        names |= {name for _, name in custody_declarations(tree)}
    return frozenset(names)


def catalogued_custody(tree: ast.AST) -> set[str]:
    """The command classes the custody catalogue's ``Entry(...)`` calls name first."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "Entry" and node.args:
            first = node.args[0]
            out.add(first.attr if isinstance(first, ast.Attribute) else
                     first.id if isinstance(first, ast.Name) else "")
    return out


def custody_verb_tables(tree: ast.AST, commands: frozenset[str]) -> list[int]:
    """Dict literals keyed by custody verbs (``"dice-receive"``) or custody command classes."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict) or len(node.keys) < 3:
            continue
        verbs = all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                    and k.value.startswith("dice-") for k in node.keys)
        classes = all(isinstance(k, ast.Attribute) and k.attr in commands for k in node.keys)
        if verbs or classes:
            lines.append(node.lineno)
    return lines


def custody_problems(src: Path, rel: str, tree: ast.AST,
                     custody: frozenset[str]) -> list[str]:
    problems = []
    if rel not in CUSTODY_COMMAND_MODULES:
        for line, name in custody_declarations(tree):
            problems.append(f"{rel}:{line}: custody command {name} is declared outside "
                            "custody/commands.py and custody/transport.py")
    if rel == CUSTODY_CATALOGUE:
        for name in sorted(custody - OPENED_BY_THE_LEDGER - catalogued_custody(tree)):
            problems.append(f"{rel}: custody command {name} is not catalogued")
    elif rel != "custody/engine.py":  # the engine's handlers decide; they list no surface
        for line in custody_verb_tables(tree, custody):
            problems.append(f"{rel}:{line}: a table of custody verbs or commands; derive it "
                            "from dicetable.custody.catalogue")
    if rel in CUSTODY_SURFACES:
        for line, name in _used_commands(tree, custody - OPENED_BY_THE_LEDGER):
            problems.append(f"{rel}:{line}: the custody surface names {name} by hand; give it "
                            "through the custody catalogue")
    return problems


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    src = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "src" / "dicetable"
    problems: list[str] = []
    commands = command_names(src)
    custody = custody_command_names(src)
    if custody and not (src / CUSTODY_CATALOGUE).exists():
        problems.append(f"{CUSTODY_CATALOGUE} is missing: the custody commands are catalogued "
                        "there")
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        problems += custody_problems(src, rel, tree, custody)
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
        if rel.startswith("server/"):
            installer = ROUTE_INSTALLER if rel == ROUTE_MODULE else None
            for line, name in hand_written_routes(tree, commands, installer=installer):
                problems.append(f"{rel}:{line}: a hand-written route gives {name}; declare its "
                                f"route in the catalogue ({ROUTE_MODULE}'s {ROUTE_INSTALLER} "
                                "registers it)")
        if rel == TABLE_MODULE:
            for line, name in hand_built_commands(tree, commands):
                problems.append(f"{rel}:{line}: the Table builds {name} by hand; give it "
                                "through its generated method or Table.do")
    if not args:  # the repository's own tree: its generated methods are current
        stale = generated_methods_current()
        if stale:
            problems.append(stale)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
