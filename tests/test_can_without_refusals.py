"""``can`` answers a control's yes/no question without building the refusal that deciding
would raise, where the handler declares what the state must be (``decides(needs=...)``): the
settlement chores out of turn, 'no more bets' while betting is closed, the shaker's steps.
Each need is only ever a necessary condition: wherever it fails, deciding refuses."""

from __future__ import annotations

from typing import Any

import pytest

from dicetable.application.accounts import Kind
from dicetable.core.errors import DicetableError, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.server.controls import console_can
from dicetable.table import Table
from dicetable.table import commands as tcmd
from tests.server.pipeline_helpers import T, account, small_floor

GATED: tuple[type[g.Command], ...] = (
    g.CollectLosers, g.PayWinners, g.MovePuck, g.CompleteRound, g.CloseBetting, g.ReturnWagers,
    tcmd.ShakeShaker, tcmd.UncoverShaker)


def _built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The refusals built from now on (every error of the project is a ``DicetableError``)."""
    built: list[str] = []
    real = DicetableError.__init__

    def counting(self: DicetableError, *args: Any, **kwargs: Any) -> None:
        built.append(type(self).__name__)
        real(self, *args, **kwargs)

    monkeypatch.setattr(DicetableError, "__init__", counting)
    return built


def test_chores_out_of_turn_are_answered_no_without_a_refusal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    table = small_floor().tables[T].table  # betting open: nothing to settle
    built = _built(monkeypatch)
    chores: tuple[type[g.Command], ...] = (g.CollectLosers, g.PayWinners, g.MovePuck)
    for chore in chores:
        assert not table.can(chore(actor="dee", role=Role.DEALER))
    assert built == []
    with pytest.raises(ProcedureViolation, match="no roll to collect") as refused:
        table.decide(g.CollectLosers(actor="dee", role=Role.DEALER))
    assert refused.value.rule == "settlement.order"
    for kind in GATED:  # under the procedure too, a need fails only where deciding refuses
        command = kind(actor="dee", role=Role.DEALER)
        assert table.can(command) == _decides(table, command)


def _decides(table: Table, command: g.Command) -> bool:
    try:
        table.engine.decide(table.state, command, table.now())
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(("pack", "wager"), [("pa-craps", "field"), ("pa-mini-craps", "field"),
                                             ("pa-props-and-hops", "any7")])
def test_a_need_fails_only_where_deciding_refuses(pack: str, wager: str) -> None:
    table = Table.open(pack, "t", mode="bare")
    table.join("alice", seat=1)
    table.buy_in("alice", 500_00)
    checked = 0
    for faces in ("2-2", "3-4", "6-6", "3-3", "4-3", "5-6", "1-1", "4-4", "2-5"):
        for step in range(5):
            for kind in GATED:
                command = kind(actor="table", role=Role.DEALER)
                if not table.engine.can(table.state, command, table.now()):
                    assert not _decides(table, command)
                else:
                    assert _decides(table, command)
                checked += 1
            if step == 0:
                table.bet("alice", wager, 5_00)
                close = g.CloseBetting(actor="table", role=Role.DEALER)
                if table.can(close):  # where 'no more bets' comes before the throw
                    table.execute(close)
                table.roll(faces)
            elif table.can(g.CollectLosers(actor="table", role=Role.DEALER)):
                table.execute(g.CollectLosers(actor="table", role=Role.DEALER))
            elif table.can(g.PayWinners(actor="table", role=Role.DEALER)):
                table.execute(g.PayWinners(actor="table", role=Role.DEALER))
            else:
                table.settle()
    assert checked == 9 * 5 * len(GATED)


def test_the_dealers_console_is_lit_without_building_one_refusal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    floor = small_floor()
    dee = account("dee", Kind.STAFF)
    table = floor.tables[T].table
    built = _built(monkeypatch)
    lit = console_can(table, "dee", lambda kind: floor.role_for(dee, T, kind))
    assert [name for name, on in lit.items() if on] == ["no-more-bets"]
    assert built == []  # 27 were built and caught for this console before the needs
