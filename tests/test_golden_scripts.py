"""Golden table scripts: ``dicetable replay`` must print exactly the expected transcript.

Set DICETABLE_UPDATE_GOLDEN=1 to rewrite the ``.expected`` files after a deliberate change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app

SCRIPTS = Path(__file__).parent.parent / "examples" / "tables"
runner = CliRunner()


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.dts")), ids=lambda p: p.stem)
def test_golden_transcript(script: Path) -> None:
    # --citations: the transcript pins each event's rule citation as well as its fields.
    out = runner.invoke(app, ["replay", "--citations", str(script)])
    assert out.exit_code == 0, out.output
    assert "(no citation)" not in out.output
    expected = script.with_suffix(".expected")
    if os.environ.get("DICETABLE_UPDATE_GOLDEN") or not expected.exists():
        expected.write_text(out.output)
    assert out.output == expected.read_text()


def test_replay_json_gives_events_and_balances() -> None:
    out = runner.invoke(app, ["replay", str(SCRIPTS / "pa_craps_hand.dts"), "--json"])
    assert out.exit_code == 0
    data = json.loads(out.output)
    assert set(data) == {"events", "balances"}
    assert data["balances"] == {"alice": 42500, "bob": 31200}
    assert data["events"][0]["type"] == "TableOpened"


def test_replay_exits_nonzero_at_the_first_unmet_expectation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.dts"
    bad.write_text("dicetable-script 1\npack pa-craps\nmode bare\nplayer al 10\n"
                   "al player bet pass 5\nexpect balance al 4\nal player bet field 1\n")
    out = runner.invoke(app, ["replay", str(bad)])
    assert out.exit_code == 1
    assert "line 6" in out.output
    assert "expectation not met" in out.output


def test_replay_reports_an_unexpected_refusal_with_its_citation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.dts"
    bad.write_text("dicetable-script 1\npack pa-craps\nstaff sam stickperson\n"
                   "sam stickperson roll 3-4\n")
    out = runner.invoke(app, ["replay", str(bad)])
    assert out.exit_code == 1
    assert "line 4" in out.output
    assert "ProcedureViolation" in out.output


@pytest.mark.parametrize("text", ["", "dicetable-script 4\n", "dicetable-script 1\npack\n",
                                  "dicetable-script 1\npack pa-craps\nsam wizard roll 3-4\n",
                                  "dicetable-script 1\npack pa-craps\nmode bare\n"
                                  "x player frobnicate\n",
                                  "dicetable-script 1\npack pa-craps\nadvance forever\n"])
def test_unreadable_scripts_exit_2(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "bad.dts"
    bad.write_text(text)
    out = runner.invoke(app, ["replay", str(bad)])
    assert out.exit_code == 2, out.output
    assert "line" in out.output or "starts with" in out.output
