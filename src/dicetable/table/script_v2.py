"""Table-script format version 2: what a regulator's scenario needs beyond version 1.

Version 2 keeps every version-1 line and adds (``docs/table-scripts.md``):

- header lines ``custody pa|in|FILE [SITE [OPENER ROLE]]`` (the site's custody ledger, on the
  script's clock; ``custody-data BASE64 SITE OPENER ROLE`` carries an exported ledger's pack;
  the table then takes only dice issued to it) and ``person NAME ROLE [LICENCE]`` (someone the
  custody steps name: security, surveillance, a licence number);
- custody steps as commands, ``ACTOR ROLE dice-STEP ...``, the same steps as
  ``dicetable dice STEP``: one scenario walks dice from the dice room to the table and back;
- the ``re-cover`` verb (58 Pa. Code 585.3(e)): a lid taken off is put back explicitly;
- expectations for who is offered the dice, who holds the shaker and how, whether and how the
  last roll was voided (automatically or by whose call, on which grounds), rule-cited alerts of
  the table and of custody, and where a die is in custody.

Declared apart from the version-1 verbs, so the command catalogue can take them over: this
module (the version, the header lines, the table verbs), ``script_custody`` (the custody
steps) and ``script_expect`` (the expectations). ``dicetable.application.scripts`` shows a
version-2 scenario run.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dicetable.core.clock import Clock
from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import Person
from dicetable.custody.rules import PRESETS, load_custody_pack
from dicetable.custody.rules import pack_from_dict as custody_pack_from_dict
from dicetable.games.events import Event
from dicetable.games.state import TableState

VERSIONS = (1, 2, 3)
"""The script format versions ``run_script`` reads (the first line names one)."""

HEADER = ("custody", "custody-data", "person")
"""Version-2 header lines."""


class V2SyntaxError(InvalidInput):
    """A version-2 line that cannot be read (the script runner adds the line number)."""


def syntax_error(message: str) -> V2SyntaxError:
    return V2SyntaxError(message, rule="script.syntax")


@dataclass
class Extras:
    """What a version-2 script adds to the runner: its version, custody, its people."""

    version: int = 1
    custody: CustodyLedger | None = None
    people: dict[str, Person] = field(default_factory=dict)

    def needs_v2(self, what: str, version: int = 2) -> None:
        if self.version < version:
            raise syntax_error(f"{what} needs 'dicetable-script {version}' (this script is "
                               f"version {self.version})")


class ProcedureSeen(Protocol):
    """What the steps read of the table's live procedure (``dicetable.table.procedure.Procedure``;
    named here so that this module, which the catalogue imports, does not import it)."""

    @property
    def staff(self) -> dict[str, set[Role]]: ...
    @property
    def offer_to(self) -> str | None: ...
    @property
    def shaker_holder(self) -> str | None: ...
    @property
    def shaker(self) -> str: ...
    @property
    def lid_off(self) -> bool: ...


class ScriptTable(Protocol):
    """What the version-2 steps read of the script's table (``dicetable.table.Table``)."""

    @property
    def id(self) -> str: ...
    @property
    def state(self) -> TableState: ...
    @property
    def procedure(self) -> ProcedureSeen: ...
    @property
    def log(self) -> list[Event]: ...


class Runner(Protocol):
    """What this module needs of the script runner (``dicetable.table.script._Runner``)."""

    @property
    def ext(self) -> Extras: ...
    @property
    def header(self) -> dict[str, Any]: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def base_dir(self) -> Path: ...
    @property
    def table(self) -> ScriptTable | None: ...


# -- the header -------------------------------------------------------------------------------
def header_line(runner: Runner, words: list[str]) -> None:
    key, args = words[0], words[1:]
    ext = runner.ext
    ext.needs_v2(f"the header line {key!r}")
    if key in ("custody", "custody-data") and len(args) in (1, 2, 4):
        if ext.custody is not None:
            raise syntax_error("one custody ledger per script")
        name = args[0]
        if key == "custody-data":  # a stored ledger's own pack (export)
            try:
                pack = custody_pack_from_dict(json.loads(base64.b64decode(name,
                                                                          validate=True)))
            except (ValueError, TypeError, KeyError):
                raise syntax_error("custody-data is a base64 JSON custody pack") from None
        else:
            where: str | Path = name if name in PRESETS or name in PRESETS.values() \
                else (runner.base_dir / name).resolve()
            pack = load_custody_pack(where)
        actor, role = (args[2], parse_role(args[3])) if len(args) == 4 else \
            ("compliance", Role.SHIFT_MANAGER)
        ext.custody = CustodyLedger.open(pack, args[1] if len(args) >= 2 else "site",
                                         clock=runner.clock, actor=actor, role=role)
    elif key == "person" and len(args) in (2, 3):
        licence = args[2] if len(args) == 3 else ""
        ext.people[args[0]] = Person(args[0], parse_role(args[1]), licence)
    else:
        raise syntax_error(f"cannot read header line {' '.join(words)!r}")


def parse_role(text: str) -> Role:
    try:
        return Role(text)
    except ValueError:
        raise syntax_error(f"unknown role {text!r}; roles: {', '.join(r.value for r in Role)}") \
            from None
