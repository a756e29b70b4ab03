"""How a table script's commands are run (``Runs``).

The script runner reads lines; it does not decide how a command reaches its table or ledger.
The surfaces (``dicetable replay``, ``dicetable script load``) run a script's commands through
the application's one way in (``dicetable.application.scripts``), as the server runs its
routes'; ``Direct`` - the table and the ledger deciding them in place - is what a script run
from the library alone gets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from dicetable.core.roles import Role
from dicetable.custody import commands as ccmd
from dicetable.custody import events as cev
from dicetable.custody.ledger import CustodyLedger
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.table.table import Table

Caller = tuple[str, Role]
"""The ``ACTOR ROLE`` words of a script's line."""
TableOrder = gcmd.Command | Callable[[], Iterable[gcmd.Command]]
"""A command, or commands made one at a time as they are decided (``Table.settle_steps``)."""


class Runs(Protocol):
    def opened(self, table: Table) -> None:
        """The script's table is open (its header's pack or prelude): host it."""

    def table(self, table: Table, caller: Caller, order: TableOrder) -> list[gev.Event]:
        """Run ``order`` on ``table`` as ``caller``; a refusal raises, changing nothing."""

    def custody(self, ledger: CustodyLedger, caller: Caller,
                command: ccmd.CustodyCommand) -> list[cev.CustodyEvent]:
        """Run a custody step on the script's ledger; a refusal raises, changing nothing."""


class Direct:
    """The table and the ledger decide each command in place."""

    def opened(self, table: Table) -> None:
        pass

    def table(self, table: Table, caller: Caller, order: TableOrder) -> list[gev.Event]:
        if isinstance(order, gcmd.Command):
            return table.execute(order)
        events: list[gev.Event] = []
        for command in order():
            events += table.execute(command)
        return events

    def custody(self, ledger: CustodyLedger, caller: Caller,
                command: ccmd.CustodyCommand) -> list[cev.CustodyEvent]:
        return ledger.execute(command)
