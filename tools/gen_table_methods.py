"""Write ``src/dicetable/table/command_methods.py``: the ``Table`` facade's method for every
catalogued command that declares one (``Entry.method``), typed from the command's fields.

``python tools/gen_table_methods.py`` rewrites the module; ``--check`` exits 1 when it is not
what the catalogue gives (``.ci/run`` runs it through ``tools/check_one_declaration.py``).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "dicetable" / "table" / "command_methods.py"

HEADER = '''"""The ``Table`` facade's command methods, generated from the command catalogue.

Do not edit: ``python tools/gen_table_methods.py`` writes this module from each catalogue
entry's ``method`` (``dicetable.games.catalogue.Method``) and its command's fields, and CI
fails when it differs. Each method gives its command through ``Table.do``, which works out
who gives it and the values the table supplies when a field is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from dicetable.core.dice import Roll
from dicetable.core.dice_sources import DiceSource
from dicetable.core.roles import Role
from dicetable.games import events as ev


class CommandMethods:
    """One method per catalogued command that declares one."""

    def do(self, name: str, *, actor: str | None = None, role: Role | None = None,
           **fields: object) -> list[ev.Event]:
        raise NotImplementedError

    def placed(self, events: list[ev.Event]) -> str:
        """The id of the bet ``events`` placed."""
        return [e for e in events if isinstance(e, ev.BetPlaced)][-1].bet
'''


def _type(hint: Any) -> str:
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    out = []
    for option in options:
        if option is type(None):
            out.append("None")
        elif typing.get_origin(option) is tuple:
            out.append("Sequence[str]")
        elif option.__name__ == "Roll":
            out += ["Roll", "str", "DiceSource"]
        elif option is Fraction:
            out.append("Fraction")
        else:
            out.append(option.__name__)
    return " | ".join(out)


def _default(f: dataclasses.Field[Any]) -> str | None:
    if f.default is dataclasses.MISSING:
        return None
    return json.dumps(f.default) if isinstance(f.default, str) else repr(f.default)


def method_source(entry: Any) -> str:
    m = entry.method
    hints = typing.get_type_hints(entry.command)
    fields = {f.name: f for f in dataclasses.fields(entry.command)
              if f.name not in ("actor", "role")}
    table_defaults = dict(m.defaults)
    params = ["self"]
    for name in m.args:
        kind = _type(hints[name])
        default = _default(fields[name])
        if name in table_defaults:
            kind, default = (kind if "None" in kind else f"{kind} | None"), "None"
        params.append(f"{name}: {kind}" + (f" = {default}" if default is not None else ""))
    if m.varargs is not None:
        params.append(f"*{m.varargs}: str")
    rest = [n for n in fields if n not in m.args and n != m.varargs]
    if m.varargs is None:
        params.append("*")
    for name in rest:
        kind = _type(hints[name])
        default = _default(fields[name])
        if name in table_defaults:
            kind, default = (kind if "None" in kind else f"{kind} | None"), "None"
        params.append(f"{name}: {kind}" + (f" = {default}" if default is not None else ""))
    params += ["actor: str | None = None", "role: Role | None = None"]
    returns = "str" if m.returns_bet else "list[ev.Event]"
    given = ["actor=actor", "role=role", *(f"{n}={n}" for n in fields)]
    lines = [f"    def {m.name}("]
    lines += [f"        {p}," for p in params]
    lines += [f"    ) -> {returns}:", f'        """{_doc(entry.help)}"""',
              f'        {"return self.placed(" if m.returns_bet else "return "}self.do('
              f'"{entry.name}",']
    pad = " " * (len(lines[-1]) - len(f'"{entry.name}",'))
    lines += [f"{pad}{g}," for g in given[:-1]]
    lines += [f"{pad}{given[-1]})" + (")" if m.returns_bet else "")]
    return "\n".join(lines)


def _doc(text: str) -> str:
    words, line, out = text.split(), "", []
    for w in words:
        if len(line) + len(w) + 1 > 86:
            out.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    out.append(line)
    return "\n        ".join(out)


def source() -> str:
    sys.path.insert(0, str(ROOT / "src"))
    from dicetable.table.catalogue import CATALOGUE

    methods = [method_source(e) for e in CATALOGUE if e.method is not None]
    return HEADER + "\n" + "\n\n".join(methods) + "\n"


def main(argv: list[str]) -> int:
    text = source()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is not what the catalogue gives: run "
                  "python tools/gen_table_methods.py")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
