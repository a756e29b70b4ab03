"""Table scripts run through the application: each line's command is an ``Acted`` order given
to ``Application.submit`` - decided on the table's pipeline, answered after its commit, in the
caller's name and role - the way the server runs a route's. This is the one way a script is
run: the library's callers (``run_script``, ``run_file``), ``dicetable replay`` and ``dicetable
script load``; bank scripts' steps too (``Step``). ``dicetable.table.script`` reads the format
(``docs/table-scripts.md``) and says which command each line gives.

>>> result = run_script('''
... dicetable-script 1
... pack pa-craps
... mode bare
... player alice 100
... alice player bet pass 10
... stick stickperson roll 5-6
... dealer dealer settle
... expect balance alice 110
... alice player bet pass 3 ! IllegalWager limits.default
... ''')
>>> result.ok, result.table.balance("alice") if result.table else None
(True, 11000)

A version-2 scenario (``table.script_v2``): a lid taken off must be put back before the
shaker is returned.

>>> r = run_script('''
... dicetable-script 2
... pack pa-props-and-hops
... opener fran floorperson
... staff dee dealer
... seat 1 amy 100
... fran floorperson bring-dice P1 P2 witness=dee
... dee dealer shake
... dee dealer no-more-bets
... dee dealer offer-shaker amy
... expect shaker-with amy
... amy player player-shake 3
... amy player remove-lid
... expect shaker-state lid-off
... amy player return-shaker ! ProcedureViolation shaker.min_shakes
... amy player re-cover
... amy player player-shake 3
... amy player return-shaker
... expect shaker-with dealer
... ''')
>>> r.ok, str(r.failure or "")
(True, '')
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dicetable.application.service import Acted, Acting, Bare, Local, Step
from dicetable.bank import script as bank_script
from dicetable.bank.catalogue import Person
from dicetable.bank.ledger import TableBank
from dicetable.bank.script import BankStep
from dicetable.core.events import Event
from dicetable.core.textinput import read_utf8
from dicetable.custody import commands as ccmd
from dicetable.custody import events as cev
from dicetable.custody.ledger import CustodyLedger
from dicetable.games import events as gev
from dicetable.store.bank_stream import bank_stream
from dicetable.store.custody import custody_stream
from dicetable.table import Table
from dicetable.table import script as table_script
from dicetable.table.script_runs import Caller, TableOrder


class Submitting:
    """A script's ``Runs``: every command through ``app.submit``."""

    def __init__(self, app: Local) -> None:
        self.app = app

    def opened(self, table: Table) -> None:
        self.app.host(table)

    def table(self, table: Table, caller: Caller, order: TableOrder) -> list[gev.Event]:
        answer = self.app.submit(table.id, Acted(Acting(*caller), order))
        assert answer is not None
        events: list[gev.Event] = answer.result()
        return events

    def custody(self, ledger: CustodyLedger, caller: Caller,
                command: ccmd.CustodyCommand) -> list[cev.CustodyEvent]:
        stream = custody_stream(ledger.state.site)
        if stream not in self.app.held:
            self.app.hold(stream, Bare(ledger))
        answer = self.app.submit(stream, Acted(Acting(*caller), command))
        assert answer is not None
        events: list[cev.CustodyEvent] = answer.result()
        return events


def run_bank_script(text: str, table_events: Sequence[Event] = (),
                    app: Local | None = None) -> TableBank:
    """Replay a bank script (``bank.script``) against its table's log, every step an
    application's ``Step`` through ``app`` (a fresh one by default).

    >>> from dicetable.bank.script import export_bank_script
    >>> from dicetable.core.clock import FixedClock
    >>> from dicetable.core.roles import Role
    >>> bank = TableBank.open("pa", "t1", site="river", game="craps", clock=FixedClock())
    >>> _ = bank.count("closed-daily", ((2500, 800),), counter="bo",
    ...                counter_role=Role.BOXPERSON, observer="fran",
    ...                observer_role=Role.FLOORPERSON, container="C-1")
    >>> run_bank_script(export_bank_script(bank.state.log)).state.log == bank.state.log
    True
    """
    local = Local() if app is None else app

    def runs(bank: TableBank, who: Person, step: BankStep) -> Any:
        stream = bank_stream(bank.state.table)
        if stream not in local.held:
            local.hold(stream, Bare(bank))
        answer = local.submit(stream, Step(Acting(*who), step))
        assert answer is not None
        return answer.result()

    return bank_script.play(text, table_events, runs)


def run_script(text: str, base_dir: Path | str = ".", app: Local | None = None
               ) -> table_script.ScriptResult:
    """Run a script (``base_dir``: where its relative pack and custody files are), every
    command through ``app``'s ``submit`` (a fresh application by default, closed once the
    script has run; the result's table and ledger stay readable). Stops at the first unmet
    expectation or unexpected refusal; a line that cannot be read raises
    ``ScriptSyntaxError`` naming its line number."""
    own = app is None
    local = Local() if app is None else app
    try:
        return table_script.play(text, base_dir, Submitting(local))
    finally:
        if own:
            local.close()


def run_file(path: Path | str, app: Local | None = None) -> table_script.ScriptResult:
    """``run_script`` of the file at ``path``, its directory the base of its relative
    files."""
    p = Path(path)
    return run_script(read_utf8(p, rule="script.file"), p.parent, app)
