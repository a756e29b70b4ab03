"""68 IAC 14-3-4(b) through ``dicetable dice``: a casino whose tables are not run on this
system still seals tampered dice for the enforcement agent. The envelope's list of the table's
licensees is taken as given, and held against a table's store only when one is named."""

from __future__ import annotations

import json
from pathlib import Path

from tests.custody.test_cli_dice import ANN, PAT, WITH_SAM, dice


def _dice_at_table(log: Path) -> None:
    early = "2026-02-20T08:00:00Z"
    dice(log, "open", "--jurisdiction", "in", "--site", "river", at=early)
    dice(log, "transport-notice", "--notice", "N1", "--supplier", "Acme;1 Cube Way;555",
         "--method", "road", "--carrier", "Fast;2 Dock;556", "--recipient", "River;3 Rd;557",
         "--responsible", "Al;Cy;Ann", "--quantity", "4", "--description", "red dice", *ANN,
         "--delivery", "2026-03-02T08:00:00Z", at=early)
    dice(log, "key", "draw", "table-games", *ANN)
    dice(log, "key", "draw", "security", "--actor", "Sam Ortiz", "--role", "security",
         "--licence", "SE-2")
    dice(log, "receive", "--shipment", "S1", "--manufacturer", "Acme", "--address",
         "1 Cube Way", "--phone", "555-0100", "--box", "B1=D0001-D0004", *ANN, *WITH_SAM,
         "--delivery-witness", "Agent Cole")
    dice(log, "store", "D0001-D0004", *ANN, *WITH_SAM)
    dice(log, "issue-day", "D0001-D0004", "--gaming-day", "2026-03-02", *ANN, *WITH_SAM)
    dice(log, "inspect", "--die", "D0001=0.750,0.750,0.750", "--die", "D0002=0.760,0.760,0.760",
         *PAT)
    dice(log, "issue-table", "D0001", "D0002", "--table", "craps-9",
         "--received-by", "Bob Ray:boxperson", *PAT)


def test_in_14_3_4_b_tampered_dice_are_sealed_without_the_tables_store(tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    _dice_at_table(log)
    dice(log, "remove", "D0001", "D0002", "--reason", "tampered", "--signs", "shaved edge",
         "--staff", "Bob Ray:boxperson:BX-5", "--staff", "Flo Diaz:floorperson:FP-4",
         "--envelope", "E-7", *PAT)
    dice(log, "deliver", "E-7", "--agent", "Agent Cole", *PAT)
    report = json.loads(dice(log, "report", "--json"))
    where = {d["serial"]: d["location"] for d in report["dice"]}
    assert where["D0001"] == where["D0002"] == "enforcement agent (Agent Cole)"
    with log.open() as f:
        sealed = [json.loads(line) for line in f if "TamperEnvelopeSealed" in line]
    assert len(sealed) == 1
    assert "Flo Diaz" in json.dumps(sealed[0])                 # the names, as given


def test_in_14_3_4_b_4_A_the_envelope_still_names_the_licensees(tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    _dice_at_table(log)
    before = log.read_text()
    out = dice(log, "remove", "D0001", "--reason", "tampered", "--signs", "shaved edge",
               "--envelope", "E-7", *PAT, code=2)
    assert "removal.envelope.licensees" in out
    assert "68 IAC 14-3-4(b)(4)(A)" in out
    assert log.read_text() == before                           # refused: nothing recorded
