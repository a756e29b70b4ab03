"""``dicetable dice fairness`` reads the table store (``--db``) and ``dicetable export`` output,
and says when a sample is too small for its chi-square test (Cochran: >= 5 expected a cell)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.roles import Role
from dicetable.store import DurableTable, SqliteStore

runner = CliRunner()
STAFF = {"sam": Role.STICKPERSON, "bo": Role.BOXPERSON, "dee": Role.DEALER}


def _live_store(path: Path, throws: list[str]) -> None:
    """A live Indiana table whose shooter throws ``throws`` with dice I1 and I2."""
    with SqliteStore(path) as store:
        t = DurableTable.open(store, "in-craps", "in-1", mode="live", actor="fran",
                              role=Role.FLOORPERSON, staff=STAFF).table
        t.join("ann", seat=1)
        t.buy_in("ann", 500_00)
        t.bring_dice("I1", "I2", "I3", "I4", "I5")
        t.offer_dice("ann")
        t.bet("ann", "pass", 10_00)
        t.select_dice()
        for faces in throws:
            t.roll(faces)
            t.settle()
            if t.shooter is None:
                break


def test_fairness_reads_export_output_and_warns_on_a_small_sample(tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    _live_store(db, ["2-2", "3-3", "1-3"])
    export = tmp_path / "log.jsonl"
    assert runner.invoke(app, ["export", str(db), "--out", str(export)]).exit_code == 0
    assert "hash" in json.loads(export.read_text().splitlines()[0])
    out = runner.invoke(app, ["dice", "--log", str(tmp_path / "dice.jsonl"), "fairness",
                              str(export)])
    assert out.exit_code == 0, out.output
    assert "unknown event type" not in out.output
    assert "I1" in out.output
    assert "I2" in out.output
    assert "too few for the chi-square test over 6 outcomes (needs 30" in out.output
    data = json.loads(runner.invoke(app, ["dice", "--log", str(tmp_path / "dice.jsonl"),
                                          "fairness", str(export), "--json"]).output)
    first = next(d for d in data["dice"] if d["serial"] == "I1")
    assert first["rolls"] == 3
    assert first["sample_ok"] is False
    assert any("I1 & I2" in w and "needs 180" in w for w in data["warnings"])


def test_fairness_reads_the_store_with_db(tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    _live_store(db, ["2-2", "3-3", "1-3"])
    out = runner.invoke(app, ["dice", "--log", str(tmp_path / "dice.jsonl"), "fairness",
                              "--db", str(db), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert {d["serial"] for d in data["dice"]} == {"I1", "I2"}
    assert all(d["rolls"] == 3 for d in data["dice"])
    refused = runner.invoke(app, ["dice", "--log", str(tmp_path / "dice.jsonl"), "fairness",
                                  "--db", str(db), "--table", "nope"])
    assert refused.exit_code != 0
    assert "no table 'nope'" in refused.output
