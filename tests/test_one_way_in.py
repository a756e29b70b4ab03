"""One way in for every surface: a command line's custody step and a script's verbs reach
``Application.submit`` (counted through it), in the caller's own name and role, and a table's
go through its pipeline (decided, committed, answered after the commit)."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dicetable.application import service
from dicetable.application.scripts import run_file, run_script
from dicetable.application.service import Acted, Acting, Application, Bare, Local
from dicetable.application.streams import Logged, Unwritten
from dicetable.cli.main import app
from dicetable.core.errors import RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.custody import commands as ccmd
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.model import Key
from dicetable.games import commands as gcmd
from dicetable.table import Table

EXAMPLES = Path(__file__).parent.parent / "examples" / "tables"
runner = CliRunner()


@pytest.fixture
def orders(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """Every order given to any application's ``submit``: (stream, order)."""
    seen: list[tuple[str, object]] = []
    real = Application.submit

    def counted(self: Application[Any], stream: str, order: service.Order,
                **kw: Any) -> Future[Any] | None:
        seen.append((stream, order))
        return real(self, stream, order, **kw)

    monkeypatch.setattr(Application, "submit", counted)
    return seen


def _commands_in(script: Path) -> int:
    """The commands a script gives: its header's staff and players (and their buy-ins), and
    every line of its body but expectations and the clock's."""
    count, body = 0, False
    for line in script.read_text().splitlines()[1:]:
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "staff":
            count += 1
        elif words[0] in ("player", "seat"):  # joins, and buys in when chips are given
            count += 1 + (len(words) == (4 if words[0] == "seat" else 3))
        elif words[0] not in ("pack", "table", "clock", "opener", "mode") or body:
            body = True
            count += words[0] not in ("expect", "advance")
    return count


def test_replay_gives_every_line_of_the_script_to_submit(orders: list[tuple[str, object]]
                                                         ) -> None:
    script = EXAMPLES / "pa_craps_hand.dts"
    out = runner.invoke(app, ["replay", str(script)])
    assert out.exit_code == 0, out.output
    assert len(orders) == _commands_in(script) > 20
    assert {stream for stream, _ in orders} == {"craps-1"}
    settles = [o for _, o in orders if isinstance(o, Acted) and callable(o.command)]
    assert [o.caller for o in settles] == [Acting("dee", Role.DEALER)] * 4  # the one settle


def test_the_librarys_run_script_gives_every_line_to_submit(
        orders: list[tuple[str, object]]) -> None:
    script = EXAMPLES / "pa_craps_hand.dts"
    result = run_script(script.read_text())
    assert result.ok
    assert len(orders) == _commands_in(script) > 20
    assert {stream for stream, _ in orders} == {"craps-1"}
    assert all(isinstance(order, Acted) for _, order in orders)


def test_no_script_runs_its_commands_in_place() -> None:
    """The script modules (tables', banks') read lines and hand their commands on: they have
    no runner of their own, and ``play`` takes one that must be given."""
    import inspect

    from dicetable.table import script, script_runs

    assert not hasattr(script, "run_script")
    assert not hasattr(script, "run_file")
    assert inspect.signature(script.play).parameters["runs"].default is inspect.Parameter.empty
    assert [name for name, value in vars(script_runs).items()
            if isinstance(value, type) and value.__module__ == script_runs.__name__] == ["Runs"]
    from dicetable.bank import script as bank_script

    assert not hasattr(bank_script, "run_bank_script")
    assert inspect.signature(bank_script.play).parameters["runs"].default is \
        inspect.Parameter.empty


def test_a_dice_step_on_a_store_goes_through_submit(tmp_path: Path,
                                                    orders: list[tuple[str, object]]) -> None:
    db = str(tmp_path / "floor.db")
    at = ["dice", "--db", db, "--at", "2026-03-01T08:00:00Z"]
    assert runner.invoke(app, [*at, "open", "--jurisdiction", "pa", "--site", "river"]
                         ).exit_code == 0
    [(stream, opening)] = orders  # the ledger's opening is its first command
    assert stream == "custody:river"
    assert isinstance(opening, service.Open)
    assert opening.caller == Acting("compliance", Role.SHIFT_MANAGER)
    assert isinstance(opening.command, ccmd.OpenCustody)
    del orders[:]
    drawn = runner.invoke(app, [*at, "key", "draw", "table-games", "--actor", "Ann Lee",
                                "--role", "shift-manager"])
    assert drawn.exit_code == 0, drawn.output
    [(stream, order)] = orders
    assert stream == "custody:river"
    assert isinstance(order, Acted)
    assert order.caller == Acting("Ann Lee", Role.SHIFT_MANAGER)
    assert isinstance(order.command, ccmd.DrawKey)


def test_a_script_refusal_comes_back_through_the_pipeline_and_changes_nothing() -> None:
    local = Local()
    try:
        result = run_file(EXAMPLES / "pa_craps_hand.dts", local)
        assert result.ok
        pipeline = local.get("craps-1").pipeline
        assert pipeline is not None
        # Every command was decided on the table's pipeline and committed there; the two
        # lines the script expects refused were answered with their refusal.
        assert pipeline.stats.commands == local.submitted.tables == _commands_in(
            EXAMPLES / "pa_craps_hand.dts")
        assert pipeline.stats.refused >= 3
        assert pipeline.stats.commits == pipeline.stats.commands - pipeline.stats.refused
    finally:
        local.close()


def test_a_command_in_another_callers_name_is_refused_before_it_is_decided() -> None:
    table = Table.open("pa-craps", "t1", mode="bare")
    local = Local()
    try:
        local.host(table)
        before = table.state.seq
        join = gcmd.JoinTable(actor="alice", role=Role.PLAYER, player="alice")
        for caller in (Acting("bob", Role.PLAYER), Acting("alice", Role.DEALER)):
            answer = local.submit("t1", Acted(caller, join))
            assert answer is not None
            with pytest.raises(RoleNotPermitted) as refused:
                answer.result()
            assert refused.value.to_dict()["rule"] == "authority.caller"
        assert table.state.seq == before
        answer = local.submit("t1", Acted(Acting("alice", Role.PLAYER), join))
        assert answer is not None
        assert [e.kind for e in answer.result()] == ["PlayerJoined"]
    finally:
        local.close()


def test_a_held_aggregate_takes_one_command_in_the_callers_name() -> None:
    ledger = CustodyLedger.open("pa", "river")
    local = Local()
    local.hold("custody:river", Bare(ledger))
    draw = ccmd.DrawKey(actor="Ann", role=Role.SHIFT_MANAGER, key=Key.TABLE_GAMES)
    answer = local.submit("custody:river", Acted(Acting("Bob", Role.SHIFT_MANAGER), draw))
    assert answer is not None
    with pytest.raises(RoleNotPermitted):
        answer.result()
    assert ledger.state.seq == 1
    answer = local.submit("custody:river", Acted(Acting("Ann", Role.SHIFT_MANAGER), draw))
    assert answer is not None
    assert [e.kind for e in answer.result()] == ["KeyDrawn"]
    assert local.submitted.held == 2


def test_a_script_through_a_callers_application_gives_the_same_transcript() -> None:
    """An application of the caller's (``run_file(path, app)``) and ``run_script``'s own give
    the same transcript, and the exporter - which replays each command it writes on a table
    deciding in place and refuses a log it does not reproduce - reproduces the log the
    pipeline committed."""
    from dicetable.table.script import transcript
    from dicetable.table.script_export import export_script

    for script in sorted(EXAMPLES.glob("*.dts")):
        local = Local()
        try:
            via = run_file(script, local)
        finally:
            local.close()
        own = run_script(script.read_text(), script.parent)
        assert via.table is not None
        assert own.table is not None
        assert transcript(via.table, via.custody) == transcript(own.table, own.custody)
        assert export_script(via.table.log).startswith("dicetable-script")


def test_a_bank_step_on_a_store_goes_through_submit(tmp_path: Path,
                                                    orders: list[tuple[str, object]]) -> None:
    from dicetable.store.durable import DurableTable
    from dicetable.store.open import open_store

    db = str(tmp_path / "t.db")
    store = open_store(db)
    DurableTable.open(store, "pa-craps", "t1")
    store.close()
    opened = runner.invoke(app, [
        "bank", "open", db, "t1", "--as", "fran:floorperson", "chips=2500x800",
        "counter=bo:boxperson", "observer=fran:floorperson",
        "crew=dee:dealer,dex:dealer,sam:stickperson,bo:boxperson"])
    assert opened.exit_code == 0, opened.output
    refused = runner.invoke(app, ["bank", "request", db, "t1", "--as", "dee:dealer",
                                  "kind=fill", "chips=2500x40", "shift=06:00"])
    assert refused.exit_code == 1
    assert "fill.preparer_roles" in refused.output
    assert [stream for stream, _ in orders] == ["bank:t1"] * 3
    opening, *steps = [order for _, order in orders]
    assert isinstance(opening, service.Open)  # the bank's first events, then its steps
    assert isinstance(opening.command, Logged)
    assert [e.kind for e in opening.command.events] == ["BankOpened"]
    assert all(isinstance(s, service.Step) for s in steps)
    assert [s.caller for s in steps if isinstance(s, service.Step)] == [
        Acting("fran", Role.FLOORPERSON), Acting("dee", Role.DEALER)]


def test_a_dice_room_route_takes_its_step_through_submit(orders: list[tuple[str, object]]
                                                         ) -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from dicetable.application.accounts import Account
    from dicetable.application.accounts import Kind as AccountKind
    from dicetable.core.clock import FixedClock
    from dicetable.custody.model import Person
    from dicetable.server import dice_room
    from dicetable.server.custody_floor import FloorCustody
    from dicetable.server.session_reads import Fixed
    from dicetable.store.memory import MemoryStore

    custody = FloorCustody(MemoryStore(), FixedClock(),
                           roster={"ann": Person("ann", Role.SHIFT_MANAGER, "L1")})
    custody.open_site("pa", "river")
    assert [(stream, type(o)) for stream, o in orders] == [("custody:river", service.Open)]
    del orders[:]
    room = FastAPI()
    dice_room.install(room, custody, Fixed(lambda request: Account("ann", AccountKind.STAFF,
                                                                  "Ann")))
    with TestClient(room) as http:
        reply = http.post("/api/dice-room/river/key-draw", json={"key": "table-games"})
    assert reply.status_code == 200, reply.text
    assert [e["type"] for e in reply.json()["events"]] == ["KeyDrawn"]
    [(stream, order)] = orders
    assert stream == "custody:river"
    assert isinstance(order, Acted)
    assert order.caller == Acting("ann", Role.SHIFT_MANAGER)


def test_a_bank_script_gives_each_step_to_submit(orders: list[tuple[str, object]]) -> None:
    from dicetable.application.scripts import run_bank_script
    from dicetable.bank.script import export_bank_script
    from dicetable.core.events import event_to_dict
    from tests.bank.test_bank_script import a_day

    day = a_day()
    text = export_bank_script(day.bank.state.log, day.log)
    assert orders == []  # the export's own check replays in place
    replayed = run_bank_script(text, day.log)
    lines = text.splitlines()[2:]
    assert len(orders) == len(lines) > 10
    assert {stream for stream, _ in orders} == {f"bank:{day.bank.state.table}"}
    assert [o.caller for _, o in orders if isinstance(o, service.Step)] == [
        Acting(line.split()[1], Role(line.split()[2])) for line in lines]
    assert [event_to_dict(e) for e in replayed.state.log] == [
        event_to_dict(e) for e in day.bank.state.log]


def test_a_refused_step_has_the_same_shape_from_the_command_line_and_over_http(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same step refused by the same ledger: what ``submit`` raised for the command line
    is, made into the server's reply (``server.app.refusal``), the very body the dice room's
    route answers."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from fastapi.testclient import TestClient

    from dicetable.application.accounts import Account
    from dicetable.application.accounts import Kind as AccountKind
    from dicetable.core.clock import FixedClock
    from dicetable.core.errors import DicetableError
    from dicetable.custody.model import Person
    from dicetable.server import dice_room
    from dicetable.server.app import refusal
    from dicetable.server.custody_floor import FloorCustody
    from dicetable.server.session_reads import Fixed
    from dicetable.store.memory import MemoryStore

    raised: list[BaseException] = []
    real = Application.submit

    def watched(self: Application[Any], stream: str, order: service.Order,
                **kw: Any) -> Future[Any] | None:
        answer = real(self, stream, order, **kw)
        if answer is not None and answer.exception() is not None:
            raised.append(answer.exception())  # type: ignore[arg-type]
        return answer

    monkeypatch.setattr(Application, "submit", watched)
    db = str(tmp_path / "floor.db")
    at = ["dice", "--db", db, "--at", "2026-03-01T08:00:00Z"]
    draw = ["key", "draw", "table-games", "--actor", "ann", "--role", "shift-manager"]
    runner.invoke(app, [*at, "open", "--jurisdiction", "pa", "--site", "river"])
    assert runner.invoke(app, [*at, *draw]).exit_code == 0
    again = runner.invoke(app, [*at, *draw])
    assert again.exit_code == 2
    [by_cli] = raised
    assert isinstance(by_cli, DicetableError)
    assert by_cli.message in again.output

    custody = FloorCustody(MemoryStore(), FixedClock(),
                           roster={"ann": Person("ann", Role.SHIFT_MANAGER)})
    custody.open_site("pa", "river")
    room = FastAPI()

    def refused(request: Request, exc: Exception) -> JSONResponse:
        reply = refusal(exc)
        assert reply is not None
        return reply

    room.add_exception_handler(DicetableError, refused)
    dice_room.install(room, custody, Fixed(lambda request: Account("ann", AccountKind.STAFF,
                                                                  "Ann")))
    with TestClient(room) as http:
        assert http.post("/api/dice-room/river/key-draw",
                         json={"key": "table-games"}).status_code == 200
        reply = http.post("/api/dice-room/river/key-draw", json={"key": "table-games"})
    answered = refusal(by_cli)
    assert answered is not None
    assert (reply.status_code, reply.content) == (answered.status_code, answered.body)
    assert set(reply.json()) == {"error", "message", "rule", "citation"}


def test_the_cages_wallet_routes_take_their_moves_through_submit(
        demo_db: Path, tmp_path: Path, orders: list[tuple[str, object]]) -> None:
    """A deposit, a withdrawal and a refused withdrawal at the cage's routes: each a ``Step``
    on ``wallet:alice`` in the cashier's own name and role; the refusal names its rule and
    appends nothing."""
    from fastapi.testclient import TestClient

    from dicetable.server.app import create_app
    from dicetable.server.main import build_floor
    from tests.demo_floor import CHEAP_HASHER
    from tests.server.conftest import Client, close_floor, copy_floor_db

    floor, _ = build_floor(copy_floor_db(demo_db, tmp_path), hasher=CHEAP_HASHER)
    try:
        with TestClient(create_app(floor, electronic_loop=False)) as http:
            cass = Client(http, "cass")
            before = len(list(floor.store.events("wallet:alice")))
            del orders[:]  # logging in and setting up are not wallet moves
            c = "/api/cage/wallets/alice"
            assert cass.post(f"{c}/deposit", {"amount": 200_00}).status_code == 200
            assert cass.post(f"{c}/withdraw", {"amount": 50_00}).status_code == 200
            refused = cass.post(f"{c}/withdraw", {"amount": 1_000_000_00})
            assert refused.status_code == 422
            assert refused.json()["rule"] == "wallet.balance"
            after = len(list(floor.store.events("wallet:alice")))
    finally:
        close_floor(floor)
    moves = [(stream, o) for stream, o in orders if isinstance(o, service.Step)]
    assert [stream for stream, _ in moves] == ["wallet:alice"] * 3
    assert {o.caller for _, o in moves if isinstance(o, service.Step)} == {
        Acting("cass", Role.CHIP_BANK_CASHIER)}
    assert after - before == 2  # the refusal appended nothing


def test_the_wallet_command_line_takes_its_moves_through_submit(
        demo_db: Path, tmp_path: Path, orders: list[tuple[str, object]]) -> None:
    from tests.server.conftest import copy_floor_db

    db = str(copy_floor_db(demo_db, tmp_path))
    cage = "cass:chip-bank-cashier"
    for verb, amount, code in (("deposit", "250", 0), ("withdraw", "100", 0),
                               ("withdraw", "1000000", 1)):
        out = runner.invoke(app, ["wallet", verb, db, "alice", amount, "--as", cage])
        assert out.exit_code == code, out.output
    assert "wallet.balance" in out.output
    assert [stream for stream, _ in orders] == ["wallet:alice"] * 3
    assert all(isinstance(o, service.Step) and o.caller == Acting("cass",
                                                                  Role.CHIP_BANK_CASHIER)
               for _, o in orders)


def test_a_players_buy_in_and_cash_out_at_the_electronic_table_go_through_submit(
        demo_db: Path, tmp_path: Path, orders: list[tuple[str, object]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """At the electronic table, over HTTP: a buy-in's wallet side is a ``Step`` on
    ``wallet:alice`` (the table's own ``system`` caller) before the table's sale; a buy-in the
    wallet refuses reaches neither the table nor the log; one the table refuses after the
    wallet paid comes back whole by a second ``Step``; a cash-out (an amount, all) is the
    table's alone: the wallet reads its ``ChipsCashedOut`` and its stream gains nothing.
    Wallet + table balance never moves."""
    from fastapi.testclient import TestClient

    import dicetable.server.player_money as pm
    from dicetable.application.wallets import TABLES
    from dicetable.server.app import create_app
    from dicetable.server.main import build_floor
    from tests.demo_floor import CHEAP_HASHER
    from tests.server.conftest import Client, close_floor, copy_floor_db

    table = "craps-pa-e1"
    money = f"/api/tables/{table}/money"
    floor, _ = build_floor(copy_floor_db(demo_db, tmp_path), hasher=CHEAP_HASHER)
    seen: list[tuple[list[tuple[str, str]], list[str]]] = []  # each move: its orders, its events
    try:
        with TestClient(create_app(floor, electronic_loop=False)) as http:
            alice = Client(http, "alice")
            start = alice.get(money).json()
            total = start["wallet"] + start["balance"]

            def move(path: str, body: object, status: int = 200) -> dict[str, object]:
                del orders[:]
                before = len(list(floor.store.events("wallet:alice")))
                reply = alice.post(f"{money}/{path}", body)
                assert reply.status_code == status, reply.text
                kinds = [e.kind for e in floor.store.events("wallet:alice")][before:]
                seen.append(([(s, type(o).__name__) for s, o in orders], kinds))
                assert all(o.caller == TABLES for s, o in orders if isinstance(o, service.Step))
                after = alice.get(money).json()
                assert after["wallet"] + after["balance"] == total
                assert after["in_transit"] == 0
                answered: dict[str, object] = reply.json()
                return answered

            assert move("buy-in", {"amount": 250_00})["balance"] == start["balance"] + 250_00
            assert move("buy-in", {"amount": 1_000_00}, 422)["rule"] == "wallet.balance"
            move("cash-out", {"amount": 100_00})
            assert move("cash-out", {})["balance"] == 0  # all of it

            real = pm.give

            def refused_by_the_table(name: str, actor: str, role: Role, **fields: object
                                     ) -> object:
                if name == "buy-chips":  # the sale is refused, decided after the wallet paid
                    fields["amount"] = 0
                return real(name, actor, role, **fields)

            monkeypatch.setattr(pm, "give", refused_by_the_table)
            move("buy-in", {"amount": 50_00}, 422)
    finally:
        close_floor(floor)
    wallet, chore = ("wallet:alice", "Step"), (table, "Chore")
    assert seen == [
        ([wallet, chore], ["WalletToTable"]),
        ([wallet], []),  # refused on the balance read at the wallet's version
        ([chore], []),
        ([chore], []),
        ([wallet, chore, wallet], ["WalletToTable", "WalletReturned"]),
    ]


def test_a_script_load_and_a_dice_import_open_their_streams_through_submit(
        tmp_path: Path, orders: list[tuple[str, object]]) -> None:
    """``script load`` and ``dice import`` write a stream's first events as an ``Open`` (the
    checked log, in the name of whoever opened it) and nothing else; a second load of the
    same stream is refused and appends nothing."""
    from dicetable.store.open import open_store

    db, other = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    script = EXAMPLES / "pa_craps_hand.dts"
    open_store(db, create=True).close()
    loaded = runner.invoke(app, ["script", "load", db, str(script)])
    assert loaded.exit_code == 0, loaded.output
    opens = [(stream, o) for stream, o in orders if isinstance(o, service.Open)]
    assert len(orders) == _commands_in(script) + 1  # each line, then the opening
    [(stream, opening)] = opens
    assert stream == "craps-1"
    assert isinstance(opening.command, Logged)
    assert isinstance(opening.fresh, Unwritten)
    assert opening.caller == Acting("fran", Role.FLOORPERSON)  # the table's opener
    with open_store(db) as store:
        logged = [e.kind for e in store.events("craps-1")]
    assert logged == [e.kind for e in opening.command.events]
    del orders[:]
    again = runner.invoke(app, ["script", "load", db, str(script)])
    assert again.exit_code == 2
    assert "already holds craps-1" in again.output
    assert not [o for _, o in orders if isinstance(o, service.Open)]
    with open_store(db) as store:
        assert [e.kind for e in store.events("craps-1")] == logged

    at = ["--at", "2026-03-01T08:00:00Z"]
    assert runner.invoke(app, ["dice", "--db", db, *at, "open", "--jurisdiction", "pa",
                               "--site", "river"]).exit_code == 0
    out = tmp_path / "river.jsonl"
    assert runner.invoke(app, ["dice", "--db", db, "export", "--out", str(out)]).exit_code == 0
    del orders[:]
    assert runner.invoke(app, ["dice", "--db", other, "import", str(out)]).exit_code == 0
    [(stream, imported)] = orders
    assert stream == "custody:river"
    assert isinstance(imported, service.Open)
    assert isinstance(imported.command, Logged)
    assert [e.kind for e in imported.command.events] == ["CustodyOpened"]


def test_a_stream_is_opened_once() -> None:
    """Two openings of one stream, each on its own fresh aggregate (two processes that both
    saw it empty): the first is taken, the second refused - by the store's version 0 and then
    the ledger's own rule - and the stream holds one opening."""
    from dicetable.core.errors import ProcedureViolation, StaleVersion
    from dicetable.custody.rules import load_custody_pack
    from dicetable.store.custody import DurableCustody
    from dicetable.store.memory import MemoryStore

    store, local = MemoryStore(), Local()
    ann = Acting("ann", Role.SHIFT_MANAGER)
    first, second = (DurableCustody.fresh(store, "river") for _ in range(2))
    opening = ccmd.OpenCustody(actor="ann", role=Role.SHIFT_MANAGER, site="river",
                               pack=load_custody_pack("pa"))
    taken = local.submit("custody:river", service.Open(ann, opening, first))
    assert taken is not None
    assert [e.kind for e in taken.result()] == ["CustodyOpened"]
    refused = local.submit("custody:river", service.Open(ann, opening, second))
    assert refused is not None
    with pytest.raises(ProcedureViolation) as why:
        refused.result()
    assert why.value.rule == "custody.open"
    assert store.head("custody:river").seq == 1

    log = Logged(tuple(first.ledger.log))
    again = local.submit("custody:river", service.Open(
        ann, log, Unwritten(store, "custody:river")))
    assert again is not None
    with pytest.raises(StaleVersion):
        again.result()
    assert store.head("custody:river").seq == 1
    assert local.submitted.held == 3


def test_an_opening_in_another_callers_name_is_refused_before_it_is_written() -> None:
    from dicetable.custody.rules import load_custody_pack
    from dicetable.store.custody import DurableCustody
    from dicetable.store.memory import MemoryStore

    store, local = MemoryStore(), Local()
    opening = ccmd.OpenCustody(actor="ann", role=Role.SHIFT_MANAGER, site="river",
                               pack=load_custody_pack("pa"))
    for caller in (Acting("bob", Role.SHIFT_MANAGER), Acting("ann", Role.DEALER)):
        answer = local.submit("custody:river", service.Open(
            caller, opening, DurableCustody.fresh(store, "river")))
        assert answer is not None
        with pytest.raises(RoleNotPermitted):
            answer.result()
    assert store.head("custody:river").seq == 0


def test_a_live_tables_seat_requests_go_through_submit(
        demo_db: Path, tmp_path: Path, orders: list[tuple[str, object]]) -> None:
    """A player's colour-up request, asked and withdrawn, and the dealer's confirmation of
    another: each a ``Step`` on ``seat-requests:TABLE`` in its caller's own name and role;
    a second ask while one is pending is refused and appends nothing."""
    from fastapi.testclient import TestClient

    from dicetable.server.app import create_app
    from dicetable.server.main import build_floor
    from tests.demo_floor import CHEAP_HASHER
    from tests.server.conftest import Client, close_floor, copy_floor_db
    from tests.server.test_api import T

    table = T.rsplit("/", 1)[1]
    stream = f"seat-requests:{table}"
    floor, _ = build_floor(copy_floor_db(demo_db, tmp_path), hasher=CHEAP_HASHER)
    try:
        with TestClient(create_app(floor, electronic_loop=False)) as http:
            alice, dee = Client(http, "alice"), Client(http, "dee")
            del orders[:]
            asked = alice.post(f"{T}/money/requests", {"what": "colour-up"})
            assert asked.status_code == 200, asked.text
            assert alice.post(f"{T}/money/requests", {"what": "colour-up"}).status_code == 422
            [mine] = asked.json()["requests"]
            assert alice.delete(f"{T}/money/requests/{mine['id']}").status_code == 200
            alice.post(f"{T}/money/requests", {"what": "colour-up"})
            [again] = dee.get(f"{T}/money").json()["requests"]
            confirmed = dee.post(f"{T}/money/requests/{again['id']}/confirm")
            assert confirmed.status_code == 200, confirmed.text
            kinds = [e.kind for e in floor.store.events(stream)]
    finally:
        close_floor(floor)
    steps = [(s, o) for s, o in orders if s == stream]
    assert all(isinstance(o, service.Step) for _, o in steps)
    assert [o.caller for _, o in steps if isinstance(o, service.Step)] == [
        Acting("alice", Role.PLAYER), Acting("alice", Role.PLAYER),
        Acting("alice", Role.PLAYER), Acting("dee", Role.DEALER)]
    assert kinds == ["RequestMade", "RequestSettled", "RequestMade", "RequestSettled"]
