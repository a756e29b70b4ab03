"""``dicetable dice --db``: custody on the store (SQLite here; PostgreSQL is the same store
interface, covered by the conformance suite), JSON lines as import/export, and the IN 14-3-10
transport steps from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dicetable.cli.main import app

runner = CliRunner()
WHO = ["--actor", "Ann Lee", "--role", "shift-manager", "--licence", "TG-1"]


def dice(db: Path, at: str, *args: str, code: int = 0) -> str:
    result = runner.invoke(app, ["dice", "--db", str(db), "--at", at, *args])
    assert result.exit_code == code, result.output
    return result.output


def test_in_14_3_10_custody_on_the_store_with_transport_and_export(tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    dice(db, "2026-03-01T08:00:00Z", "open", "--jurisdiction", "in", "--site", "evansville")
    notice = ["transport-notice", "--notice", "N1", "--supplier", "Acme;1 Cube Way;555",
              "--method", "road", "--carrier", "Fast;2 Dock;556", "--recipient",
              "River;3 Rd;557", "--responsible", "Al;Cy;Ann", "--quantity", "3",
              "--description", "red dice", *WHO]
    dice(db, "2026-03-01T08:00:00Z", *notice, "--delivery", "2026-03-10T08:00:00Z", code=2)
    dice(db, "2026-03-01T08:00:00Z", *notice, "--delivery", "2026-03-11T08:00:00Z")
    receive = ["receive", "--shipment", "S1", "--manufacturer", "Acme", "--address", "x",
               "--phone", "1", "--box", "B1=D0001-D0003", *WHO, "--with", "Sam Ortiz:security"]
    dice(db, "2026-03-11T08:00:00Z", *receive, code=2)  # no gaming agent named at delivery
    dice(db, "2026-03-11T08:00:00Z", *receive, "--delivery-witness", "Agent Cole")
    dice(db, "2026-03-20T08:00:00Z", "prove-receipt", "--notice", "N1", "--shipment", "S1",
         "--requested-by", "executive director", *WHO)
    report = json.loads(dice(db, "2026-03-20T08:00:00Z", "report", "--json"))
    assert report["in_building"] == 3
    out = tmp_path / "ledger.jsonl"
    runner.invoke(app, ["dice", "--db", str(db), "export", "--out", str(out)])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["type"] for x in lines][-2:] == ["ShipmentReceived", "ReceiptProved"]
    # The file reads back as a --log ledger, and imports into another store unchanged.
    again = runner.invoke(app, ["dice", "--log", str(out), "report", "--json"])
    assert json.loads(again.output)["in_building"] == 3
    other = tmp_path / "other.db"
    assert runner.invoke(app, ["dice", "--db", str(other), "import", str(out)]).exit_code == 0
    assert runner.invoke(app, ["dice", "--db", str(other), "import", str(out)]).exit_code == 2
    verified = runner.invoke(app, ["audit", "verify", str(other), "--json"])
    assert verified.exit_code == 0
    assert json.loads(verified.output)["tables"][0]["table"] == "custody:evansville"
    # Two sites in one store: --site picks one.
    dice(db, "2026-03-20T08:00:00Z", "open", "--jurisdiction", "pa", "--site", "river")
    dice(db, "2026-03-20T08:00:00Z", "report", code=2)
    assert "report: river (PA" in dice(db, "2026-03-20T08:00:00Z", "--site", "river",
                                       "report")
