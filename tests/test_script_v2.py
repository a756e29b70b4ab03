"""Table-script format version 2: version 1 stays valid, version-2 lines need version 2, and
the new expectations fail when the state differs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.application.scripts import run_script
from dicetable.cli.main import app
from dicetable.custody.rules import load_custody_pack, pack_from_dict
from dicetable.table.script import ScriptSyntaxError

runner = CliRunner()
PH = """pack pa-props-and-hops
opener fran floorperson
staff dee dealer
seat 1 amy 100
fran floorperson bring-dice P1 P2 witness=dee
dee dealer shake
dee dealer no-more-bets
dee dealer offer-shaker amy
amy player player-shake 3
amy player remove-lid
"""


def test_pa_585_3_e_version_1_re_covers_by_itself_version_2_says_so() -> None:
    v1 = run_script("dicetable-script 1\n" + PH + "amy player player-shake 3\n"
                    "amy player return-shaker\n")
    assert v1.ok, v1.failure
    v2 = run_script("dicetable-script 2\n" + PH + "amy player player-shake 3 ! "
                    "ProcedureViolation shaker.min_shakes\namy player re-cover\n"
                    "expect shaker-state offered\namy player re-cover ! ProcedureViolation\n")
    assert v2.ok, v2.failure


@pytest.mark.parametrize("line", ["amy player re-cover", "expect shaker-with amy",
                                  "expect void no", "fran floorperson dice-check"])
def test_version_2_lines_need_version_2(line: str) -> None:
    with pytest.raises(ScriptSyntaxError, match="needs 'dicetable-script 2'"):
        run_script("dicetable-script 1\n" + PH + line + "\n")


def test_a_version_2_header_line_needs_version_2() -> None:
    with pytest.raises(ScriptSyntaxError, match="line 2"):
        run_script("dicetable-script 1\ncustody pa\npack pa-craps\n")


def test_pa_603a_13_b_bring_dice_checks_the_serials_were_issued() -> None:
    base = ("dicetable-script 2\npack pa-craps\ntable c1\ncustody pa\nopener fran floorperson\n"
            "staff bo boxperson\n")
    refused = run_script(base + "bo boxperson bring-dice A1 A2 A3 A4 A5 ! ProcedureViolation "
                                "storage.source_only\n")
    assert refused.ok, refused.failure
    unexpected = run_script(base + "bo boxperson bring-dice A1 A2 A3 A4 A5\n")
    assert unexpected.failure is not None
    assert "not issued to c1" in unexpected.failure.message


def test_tick_is_the_system_s_not_a_person_s() -> None:
    r = run_script("dicetable-script 2\npack pa-craps\nopener fran floorperson\n"
                   "fran floorperson tick ! RoleNotPermitted\nclock system tick\n")
    assert r.ok, r.failure


@pytest.mark.parametrize(("expectation", "message"), [
    ("expect void automatic", "voided by a call"),
    ("expect void called bo", "called by sam"),
    ("expect void called sam die-in-bowl", "grounds were die-on-rail"),
    ("expect void called sam die-on-rail observed=", "observed with the call were die-on-rail"),
    ("expect void no", "was voided"),
    ("expect offered ann", "offered to nobody"),
    ("expect alert dice-expired", "no alert dice-expired"),
])
def test_in_10_4_4_c_expectations_fail_when_the_record_differs(expectation: str,
                                                                message: str) -> None:
    r = run_script("dicetable-script 2\npack in-craps\nopener fran floorperson\n"
                   "staff sam stickperson\nstaff bo boxperson\nseat 1 ann 100\n"
                   "bo boxperson bring-dice I1 I2 I3 I4 I5\nann player bet pass 10\n"
                   "sam stickperson offer-dice ann\nann player select-dice I1 I2\n"
                   "sam stickperson roll 2-4\n"
                   "sam stickperson no-roll die-on-rail observed=die-on-rail\n"
                   "expect void called sam die-on-rail observed=die-on-rail\n"
                   + expectation + "\n")
    assert r.failure is not None
    assert message in r.failure.message


def test_in_14_3_5_d_a_custody_log_written_before_calendar_months_still_replays() -> None:
    """A stored pack from before: 92 days, no time zone, no ranks -- upcast on read."""
    old = json.loads(json.dumps(load_custody_pack("in").to_dict()))
    for rid in ("inventory.interval_months", "site.time_zone", "staff.ranks",
                "removal.envelope.signs", "removal.envelope.licensees"):
        del old["rules"][rid]
    old["rules"]["inventory.interval_days"] = {"value": 92, "citation": "68 IAC 14-3-5(d)",
                                               "status": "regulation"}
    old["rules"]["storage.keys"]["value"] = {"security": ["security"],
                                             "table-games": ["shift-manager"]}
    pack = pack_from_dict(old)
    assert pack.number("inventory.interval_months") == 3
    assert "inventory.interval_days" not in pack.rules
    assert str(pack.time_zone) == "America/Indiana/Indianapolis"


def test_replay_prints_the_custody_log_of_a_version_2_script(tmp_path: Path) -> None:
    from tests.test_doc_scripts import SCENARIOS

    script = tmp_path / "walk.dts"
    script.write_text(SCENARIOS["in_10_4_3"])
    out = runner.invoke(app, ["replay", str(script)])
    assert out.exit_code == 0, out.output
    assert "custody of site river:" in out.output
    assert "TamperEnvelopeSealed" in out.output
    data = json.loads(runner.invoke(app, ["replay", str(script), "--json"]).output)
    assert data["custody"][0]["type"] == "CustodyOpened"


def test_in_14_3_5_d_a_site_in_central_time_opens_its_record_in_its_time_zone(
        tmp_path: Path) -> None:
    log = tmp_path / "dice.jsonl"
    base = ["dice", "--log", str(log), "--at", "2026-01-06T05:30:00Z"]
    out = runner.invoke(app, [*base, "open", "--jurisdiction", "in", "--site", "horseshoe",
                              "--time-zone", "America/Chicago"])
    assert out.exit_code == 0, out.output
    bad = runner.invoke(app, ["dice", "--log", str(tmp_path / "x.jsonl"), "open",
                              "--jurisdiction", "in", "--site", "x", "--time-zone", "Mars/Base"])
    assert bad.exit_code == 2
    rules = json.loads(log.read_text().splitlines()[0])["pack"]["rules"]
    assert rules["site.time_zone"]["value"] == "America/Chicago"
    # opened 01-05 23:30 in Chicago: the first count is due by 04-05 there
    late = runner.invoke(app, ["dice", "--log", str(log), "--at", "2026-04-06T05:00:00Z",
                               "check"])
    assert late.exit_code == 1
    assert "due by 2026-04-05 America/Chicago" in late.output
