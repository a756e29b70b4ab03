"""How a table script's commands are run (``Runs``).

The script runner reads lines; it does not decide how a command reaches its table or ledger.
Every script runs its commands through the application's one way in
(``dicetable.application.scripts.Submitting``), as the server runs its routes': the library's
``run_script``, ``dicetable replay`` and ``dicetable script load`` alike.
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

