"""``dicetable dice``: each step over a JSON-lines event file, and the reports."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.dice import Roll
from dicetable.core.events import event_to_dict
from dicetable.core.roles import Role
from dicetable.games.events import DiceRolled
from dicetable.store import DurableTable, SqliteStore

runner = CliRunner()
ANN = ["--actor", "Ann Lee", "--role", "shift-manager", "--licence", "TG-1"]
SAM = ["--actor", "Sam Ortiz", "--role", "security", "--licence", "SE-2"]
PAT = ["--actor", "Pat Kim", "--role", "pit-boss", "--licence", "PB-3"]
WITH_SAM = ["--with", "Sam Ortiz:security:SE-2"]


def dice(log: Path, *args: str, at: str = "2026-03-02T08:00:00Z", code: int = 0) -> str:
    result = runner.invoke(app, ["dice", "--log", str(log), "--at", at, *args])
    assert result.exit_code == code, result.output
    return result.output


def test_cli_walks_dice_from_receipt_to_cancellation(tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    dice(log, "open", "--jurisdiction", "pa", "--site", "river")
    out = dice(log, "key", "draw", "table-games", "--actor", "Gail", "--role", "floorperson",
               code=2)
    assert "603a.13(c) [regulation]" in out                  # TV-72, with the citation
    dice(log, "key", "draw", "table-games", *ANN)
    dice(log, "key", "draw", "security", *SAM)
    dice(log, "receive", "--shipment", "S1", "--manufacturer", "Acme", "--address", "1 Cube Way",
         "--phone", "555-0100", "--box", "B1=D0001-D0006", *ANN, *WITH_SAM)
    dice(log, "store", "D0001-D0006", *ANN, *WITH_SAM)
    dice(log, "issue-day", "D0001-D0006", "--gaming-day", "2026-03-02", *ANN, *WITH_SAM)
    out = dice(log, "inspect", "--die", "D0001=0.750,0.750,0.750",
               "--die", "D0002=0.749,0.749,0.749", "--die", "D0003=0.775,0.775,0.775", *PAT,
               code=1)                                  # recorded, and D0002 failed: exit 1
    assert "D0002: side 0.749 in is below the 0.750 in minimum" in out
    out = dice(log, "issue-table", "D0001", "D0002", "--table", "craps-1",
               "--received-by", "Bob Ray:boxperson", *PAT, code=2)
    assert "failed inspection" in out
    dice(log, "issue-table", "D0001", "D0003", "--table", "craps-1",
         "--received-by", "Bob Ray:boxperson", *PAT)
    dice(log, "remove", "D0002", "--reason", "flawed", *PAT)
    tamper = ["remove", "D0003", "--reason", "tampered", "--signs", "shaved edge",
              "--staff", "Bob Ray:boxperson:BX-5", "--envelope", "E-1", *PAT]
    out = dice(log, "remove", "D0003", "--reason", "tampered", "--signs", "shaved edge",
               "--envelope", "E-1", *PAT, code=2)
    assert "removal.envelope.licensees" in out            # the envelope names the licensees
    floor = tmp_path / "floor.db"
    with SqliteStore(floor) as store:
        DurableTable.open(store, "pa-craps", "craps-1", mode="live", actor="Flo Diaz",
                          staff={"Bob Ray": Role.BOXPERSON})
    out = dice(log, *tamper, "--table-db", str(floor), code=2)
    assert "assigned at craps-1 but not named: Flo Diaz" in out
    dice(log, *tamper, "--staff", "Flo Diaz:floorperson:FP-4", "--table-db", str(floor))
    dice(log, "deliver", "E-1", "--agent", "Agent Cole", *PAT)
    dice(log, "transfer", "D0002", "--accepted-by", "Sam Ortiz:security:SE-2", *PAT)
    out = dice(log, "cancel", "D0002", "--method", "drill", "--hole", "0.25", *SAM, code=2)
    assert "surveillance" in out
    dice(log, "cancel", "D0002", "--method", "drill", "--hole", "0.25", *SAM,
         "--with", "Sue Wu:surveillance")
    out = dice(log, "count", "D0001", "D0004-D0006", *ANN, *WITH_SAM)
    assert "ALERT" not in out
    assert "ALERT" not in dice(log, "check", at="2026-03-03T08:00:00Z")   # exactly 24 h
    out = dice(log, "check", at="2026-03-03T08:00:01Z", code=1)
    assert "ALERT: 1 die at craps-1" in out

    report = json.loads(dice(log, "report", "--json"))
    where = {d["serial"]: d["location"] for d in report["dice"]}
    assert where["D0001"] == "table:craps-1"
    assert where["D0003"] == "enforcement agent (Agent Cole)"
    assert where["D0002"] == "cancelled"
    text = dice(log, "report")
    assert "D0001        at-table" in text
    pit = json.loads(dice(log, "log", "pit", "--json"))
    assert pit[0]["dice_removed"] == 1
    assert pit[0]["pit_manager_licence"] == "PB-3"
    assert "destroyed" in dice(log, "log", "cancellation")
    assert "Acme" in dice(log, "log", "inventory")
    lines = log.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, 17))  # refusals: none


def test_cli_refuses_before_open_and_twice(tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    assert "dicetable dice open" in dice(log, "report", code=2)
    dice(log, "open", "--jurisdiction", "in", "--site", "river")
    dice(log, "open", "--jurisdiction", "in", "--site", "river", code=2)


def test_cli_rules_lists_citations_and_status() -> None:
    out = runner.invoke(app, ["dice", "rules", "in"]).output
    assert "cancellation.min_hole_in" in out
    assert "68 IAC 14-3-4(c)(1)" in out
    data = json.loads(runner.invoke(app, ["dice", "rules", "pa", "--json"]).output)
    assert data["rules"]["storage.keys"]["status"] == "regulation"


def test_cli_fairness_reads_table_events_and_records_alerts(tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    dice(log, "open", "--jurisdiction", "pa", "--site", "river")
    dice(log, "key", "draw", "table-games", *ANN)
    dice(log, "key", "draw", "security", *SAM)
    dice(log, "receive", "--shipment", "S1", "--manufacturer", "Acme", "--address", "x",
         "--phone", "y", "--box", "B1=D0001-D0002", *ANN, *WITH_SAM)
    table = tmp_path / "table.jsonl"
    rolls = [DiceRolled(table="craps-1", seq=i + 1, actor="stick", role=Role.STICKPERSON,
                        at="2026-03-02T09:00:00+00:00", roll=Roll(6, 1 + i % 6),
                        source="manual", serials=("D0001", "D0002")) for i in range(120)]
    table.write_text("".join(json.dumps(event_to_dict(e)) + "\n" for e in rolls))
    out = dice(log, "fairness", str(table), "--record", code=1)     # an alert: exit 1
    assert "ALERT D0001: face 6" in out
    report = json.loads(dice(log, "report", "--json"))
    d1 = next(d for d in report["dice"] if d["serial"] == "D0001")
    assert d1["fairness_alerts"] >= 1
    assert d1["history"][-1]["event"] == "FairnessAlertRaised"
