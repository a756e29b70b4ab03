"""Table scripts round-trip: a stored table's log -> ``script export`` -> ``replay``.

A random session (refusals included, which change nothing) is exported and run again; the
replay gives the same event kinds and payloads (ids and clock aside) and the same state.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicetable.application.scripts import run_script
from dicetable.cli.main import app
from dicetable.core.clock import FixedClock
from dicetable.core.dice import Roll
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games import events as ev
from dicetable.games.packs import derive_pack, load_preset
from dicetable.store import DurableTable, SqliteStore
from dicetable.table import Table
from dicetable.table import commands as t
from dicetable.table.script_export import export_script
from tests.profiles import examples

STAFF = {"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER}
WAGERS = ("pass", "dontpass", "come", "field", "place6", "place8", "hard8", "any7", "buy4",
          "hop1-2", "double4", "horn")
PACKS = ("pa-craps", "pa-mini-craps", "in-craps", "pa-props-and-hops", "house")


def _pack(name: str) -> Any:
    if name == "house":  # a house pack travels with the script (pack-data)
        return derive_pack(load_preset("pa-craps"), "river", {
            "noroll.effect": "wagers-returned", "leaving.wagers": "take-down"})
    return load_preset(name)


def _open(name: str, mode: str) -> Table:
    pack = _pack(name)
    staff = dict(STAFF) if mode == "live" else {"dee": Role.DEALER} if mode == "electronic" \
        else {}
    if pack.game == "mini-craps":
        staff.pop("bo", None)
    table = Table.open(pack, "t1", mode=mode, clock=FixedClock(), actor="fran", staff=staff)
    for seat, player in enumerate(("ann", "ben"), start=1):
        table.join(player, seat=seat)
        table.buy_in(player, 300_00)
    if mode == "live":
        if pack.game == "props-and-hops":
            table.bring_dice("P1", "P2", witness="dee")
            table.execute(t.ShakeShaker(actor="dee", role=Role.DEALER))
        else:
            table.bring_dice("A1", "A2", "A3", "A4", "A5")
    return table


def _step(table: Table, choice: int, a: int, b: int) -> None:
    """One thing someone at the table tries (refusals are part of the session)."""
    player = ("ann", "ben")[a % 2]
    bets = sorted(table.state.bets)
    p = table.procedure
    options: list[Any] = [
        lambda: table.bet(player, WAGERS[b % len(WAGERS)], (1 + a % 4) * 5_00),
        lambda: table.roll(Roll(1 + a % 6, 1 + b % 6),
                           facts=("die-off-table",) if b % 9 == 0 else ()),
        lambda: table.settle(),
        lambda: table.no_more_bets(),
        lambda: table.odds(player, bets[b % len(bets)], 10_00) if bets else None,
        lambda: table.remove(bets[b % len(bets)], actor=player) if bets else None,
        lambda: table.execute(g.ChangeBet(actor=player, role=Role.PLAYER,
                                          bet=bets[b % len(bets)], amount=15_00))
        if bets else None,
        lambda: table.call_no_roll("dice-in-cup"),
        lambda: table.execute(g.LeaveTable(actor=player, role=Role.PLAYER, player=player)),
        lambda: table.join(player, seat=1 + a % 2),
    ]
    if table.mode == "live" and table.pack.game != "props-and-hops" and p.shooter is None:
        options.append(lambda: table.new_shooter(player))
    if table.mode == "live" and table.pack.game == "props-and-hops":
        options.append(lambda: table.shaker_round(Roll(1 + a % 6, 1 + b % 6)))
    with contextlib.suppress(ValueError):  # refused: nothing changed
        options[choice % len(options)]()


def _payload(e: ev.Event) -> dict[str, Any]:
    return {f.name: getattr(e, f.name) for f in dataclasses.fields(e)
            if f.name not in ("seq", "at", "table")}


def _same(original: Table, replayed: Table) -> None:
    assert [e.kind for e in replayed.log] == [e.kind for e in original.log]
    for x, y in zip(original.log, replayed.log, strict=True):
        assert _payload(x) == _payload(y), (x, y)
    assert replayed.balances == original.balances
    assert replayed.state.house == original.state.house
    assert replayed.state.point == original.state.point
    assert replayed.state.phase == original.state.phase
    assert sorted(replayed.state.bets) == sorted(original.state.bets)


@settings(max_examples=examples(40))
@given(pack=st.sampled_from(PACKS), mode=st.sampled_from(("live", "bare", "electronic")),
       steps=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 50), st.integers(0, 50)),
                      max_size=40))
def test_lesson_8_random_session_export_replay_gives_the_same_log_and_state(
        pack: str, mode: str, steps: list[tuple[int, int, int]]) -> None:
    table = _open(pack, mode)
    for choice, a, b in steps:
        _step(table, choice, a, b)
    script = export_script(table.log)
    result = run_script(script)
    assert result.ok, (result.failure, script)
    assert result.table is not None
    _same(table, result.table)
    # Every event names the rule that allowed or forced it, from the pack it ran on.
    assert all(e.rule for e in table.log), [e.kind for e in table.log if not e.rule]


@settings(max_examples=examples(15))
@given(pack=st.sampled_from(PACKS),
       steps=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 50), st.integers(0, 50)),
                      min_size=5, max_size=30),
       cut=st.integers(1, 60))
def test_lesson_8_export_from_a_sequence_number_keeps_the_log_before_as_its_prelude(
        pack: str, steps: list[tuple[int, int, int]], cut: int) -> None:
    table = _open(pack, "live")
    for choice, a, b in steps:
        _step(table, choice, a, b)
    result = run_script(export_script(table.log, from_seq=min(cut, table.state.seq)))
    assert result.ok, result.failure
    assert result.table is not None
    _same(table, result.table)


def test_script_export_cli_round_trips_a_stored_live_table(tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    with SqliteStore(db) as store:
        durable = DurableTable.open(store, "in-craps", "in-1", mode="live", actor="fran",
                                    staff=STAFF)
        table = durable.table
        table.join("ann", seat=1)
        table.buy_in("ann", 200_00)
        table.bring_dice("I1", "I2", "I3", "I4", "I5")
        line = table.bet("ann", "pass", 10_00)
        table.new_shooter("ann")
        table.roll("3-3")
        table.settle()
        table.odds("ann", line, 20_00)
        table.roll("1-1", thrower="ann")
        table.settle()
        final = table.balances
    runner = CliRunner()
    script = tmp_path / "incident.dts"
    out = runner.invoke(app, ["script", "export", str(db), "--table", "in-1", "--out",
                              str(script)])
    assert out.exit_code == 0, out.output
    replayed = runner.invoke(app, ["replay", "--json", str(script)])
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.stdout)["balances"] == final
    missing = runner.invoke(app, ["script", "export", str(db), "--table", "nope"])
    assert missing.exit_code == 2
