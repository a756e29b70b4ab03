"""``dicetable bank``: the steps from the catalogue on a stored table, run as a subprocess
would (Typer's runner): open with a counted inventory, a fill end to end, a refusal naming
its rule, the books and the gaming-day report."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.store.durable import DurableTable
from dicetable.store.open import open_store

runner = CliRunner()


def _db(tmp_path: Path) -> str:
    db = str(tmp_path / "t.db")
    store = open_store(db)
    DurableTable.open(store, "pa-craps", "t1")
    store.close()
    return db


def bank(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["bank", *args])
    return result.exit_code, result.output


def test_the_bank_from_the_command_line(tmp_path: Path) -> None:
    db = _db(tmp_path)
    crew = "crew=dee:dealer,dex:dealer,sam:stickperson,bo:boxperson"
    code, out = bank("open", db, "t1", "--as", "fran:floorperson", "chips=2500x800",
                     "counter=bo:boxperson", "observer=fran:floorperson", crew)
    assert code == 0, out
    assert "InventoryCounted" in out
    assert "TableStatusChanged" in out
    code, out = bank("request", db, "t1", "--as", "dee:dealer", "kind=fill", "chips=2500x40",
                     "shift=06:00")
    assert code == 1
    assert "fill.preparer_roles" in out
    assert "465a.38(a)" in out
    steps = [("request", "pam:pit-clerk", ["kind=fill", "chips=2500x40", "shift=06:00"]),
             ("sign", "fran:floorperson", ["request=1"]),
             ("issue", "cass:chip-bank-cashier", ["request=1"]),
             ("carry", "sid:security", ["serial=1"]),
             ("receive", "bo:boxperson", ["serial=1", "chips=2500x40", "officer=sid"])]
    for verb, who, words in steps:
        code, out = bank(verb, db, "t1", "--as", who, *words)
        assert code == 0, (verb, out)
    code, out = bank("show", db, "t1")
    assert code == 0, out
    assert "expected inventory $21,000" in out
    assert "request 1 fill $1,000 completed slip 1" in out
    assert "money conserved" in out
    code, out = bank("drop", db, "t1", "--as", "fran:floorperson", "box=A", "replacement=B",
                     "chips=2500x840", "counter=bo:boxperson", "observer=fran:floorperson",
                     "team=cole:count-team,sid:security")
    assert code == 0, out
    code, out = bank("report", db, "t1")
    assert code == 0, out
    assert "= win" in out
    assert "INFERRED" in out


def test_script_export_all_writes_the_bank_and_load_replays_it(tmp_path: Path) -> None:
    db = _db(tmp_path)
    crew = "crew=dee:dealer,dex:dealer,sam:stickperson,bo:boxperson"
    assert bank("open", db, "t1", "--as", "fran:floorperson", "chips=2500x800",
                "counter=bo:boxperson", "observer=fran:floorperson", crew)[0] == 0
    assert bank("count", db, "t1", "--as", "fran:floorperson", "purpose=shift",
                "chips=2500x799", "counter=bo:boxperson", "observer=fran:floorperson")[0] == 0
    out = tmp_path / "scripts"
    result = runner.invoke(app, ["script", "export", db, "--all", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "bank--t1.dts").read_text(encoding="utf-8").startswith("bank pa t1")
    fresh = str(tmp_path / "fresh.db")
    open_store(fresh).close()
    result = runner.invoke(app, ["script", "load", fresh, *map(str, sorted(out.iterdir()))])
    assert result.exit_code == 0, result.output
    first, second = open_store(db), open_store(fresh)
    try:
        assert list(second.events("bank:t1")) == list(first.events("bank:t1"))
    finally:
        first.close()
        second.close()


def test_md_36_05_03_02e_04g_a_printable_slip_from_the_command_line(tmp_path: Path) -> None:
    db = _db(tmp_path)
    crew = "crew=dee:dealer,dex:dealer,sam:stickperson,bo:boxperson"
    assert bank("open", db, "t1", "--as", "fran:floorperson", "chips=2500x800",
                "counter=bo:boxperson", "observer=fran:floorperson", crew)[0] == 0
    for verb, who, words in [("request", "pam:pit-clerk", ["kind=fill", "chips=2500x40",
                                                           "shift=06:00"]),
                             ("sign", "fran:floorperson", ["request=1"]),
                             ("issue", "cass:chip-bank-cashier", ["request=1"]),
                             ("carry", "sid:security", ["serial=1"])]:
        assert bank(verb, db, "t1", "--as", who, *words)[0] == 0
    code, out = bank("slip", db, "t1", "fill", "1")
    assert code == 0, out
    assert out.startswith("Fill Slip  fill 1  [carried]")
    assert "40 x $25 = $1,000" in out
    assert "Chip bank cashier    cass" in out
    assert "Security (carried)   sid" in out
    assert "Counted at the table " + "_" * 24 in out  # not received yet: a blank line
    assert "COMAR 36.05.03.04H" in out
    code, out = bank("slip", db, "t1", "inventory", "1")
    assert code == 0, out
    assert out.startswith("Table Inventory Slip  slip 1  [opening]")
    assert "Counted by (boxperson) bo" in out
    assert "Observed by (floorperson) fran" in out
    assert "Total                $20,000" in out
    code, out = bank("slip", db, "t1", "credit", "1")
    assert code == 1
    assert "no credit slip 1" in out
