"""Custody steps inside a table script (format version 2): ``ACTOR ROLE dice-STEP ...``.

The verbs, their words and their formatters are the custody catalogue's
(``dicetable.custody.catalogue``): the same steps, rules and refusals as ``dicetable dice
STEP``, on the script's custody ledger and clock, so one scenario walks dice from the dice
room to the table and back. This module only says what the script around a step knows: its
people, its table and its date.
"""

from __future__ import annotations

from dicetable.core.errors import DicetableError
from dicetable.core.roles import Role
from dicetable.custody.catalogue import CATALOGUE, Context
from dicetable.custody.commands import CustodyCommand
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import Person
from dicetable.games.catalogue import variant_of
from dicetable.table.script_v2 import Runner, parse_role, syntax_error

CUSTODY_VERBS = CATALOGUE.by_verb
"""Custody steps in a script: ``ACTOR ROLE dice-STEP ...``, as ``dicetable dice STEP``."""


class ScriptContext(Context):
    """A custody step's surroundings in a script: people from the header, its table."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def person(self, text: str) -> Person:
        """``NAME[:ROLE[:LICENCE]]``; what is left out comes from the ``person`` and
        ``staff`` lines of the header."""
        runner = self.runner
        parts = text.split(":")
        name = parts[0].strip()
        if not name or len(parts) > 3:
            raise syntax_error(f"not a person: {text!r} (write NAME[:ROLE[:LICENCE]])")
        known = runner.ext.people.get(name)
        if len(parts) > 1:
            role = parse_role(parts[1])
        elif known is not None:
            role = known.role
        else:
            roles = [r for p, r in (*runner.header["staff"], runner.header["opener"])
                     if p == name]
            if len(roles) != 1:
                raise syntax_error(f"{name}: name the role (NAME:ROLE), or add "
                                   f"'person {name} ROLE'")
            role = roles[0]
        licence = parts[2] if len(parts) == 3 else known.licence if known is not None else ""
        return Person(name, role, licence)

    def today(self) -> str:
        return self.runner.clock.now().date().isoformat()

    def table_game(self) -> tuple[str, str, bool] | None:
        table = self.runner.table
        if table is None:  # a script of custody alone
            return None
        # The game's variant says whether its dice go into a shaker (Props & Hops).
        return table.id, table.state.game, variant_of(table.state.game).has_shaker

    def assigned(self, dice: tuple[str, ...], where: str | None) -> tuple[str, ...] | None:
        # The envelope's list of the table's licensees is held against the staff the
        # script's own table has assigned (68 IAC 14-3-4(b)(4)(A)); custody of another
        # table is not known here.
        ledger, table = self.runner.ext.custody, self.runner.table
        if ledger is not None and table is not None and any(
                ledger.state.dice.get(s) is not None and ledger.state.dice[s].table == table.id
                for s in dice):
            return tuple(sorted(table.procedure.staff))
        return None


def custody_step(runner: Runner, words: list[str]
                 ) -> tuple[CustodyLedger, tuple[str, Role], CustodyCommand]:
    """One custody step's line read: the script's ledger, who gives it, and its command
    (the runner runs it; a refusal raises, naming its rule)."""
    ext = runner.ext
    ext.needs_v2(f"the custody step {words[2]!r}")
    if ext.custody is None:
        raise syntax_error("custody steps need a 'custody pa|in' header line")
    actor, role = words[0], parse_role(words[1])
    known = ext.people.get(actor)
    entry = CUSTODY_VERBS[words[2]]
    try:
        command = entry.parse_words(ScriptContext(runner), actor, role, words[3:],
                                    licence=known.licence if known else "")
    except (IndexError, KeyError, ValueError) as e:
        if isinstance(e, DicetableError):
            raise
        raise syntax_error(f"cannot read {words[2]!r} arguments: {' '.join(words[3:])}") \
            from None
    return ext.custody, (actor, role), command
