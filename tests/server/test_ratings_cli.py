"""spec/table-bank.md §7 item 3, §8 from the command line: ``dicetable ratings --db FILE``
rates the players of a stored floor, as the pit's route does."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.server.floor import Floor
from tests.server.conftest import Login
from tests.server.test_api import T, shooter_ready


def test_8_dicetable_ratings_prints_both_theos_of_the_stored_floor(
        login: Login, floor: Floor, tmp_path: Path) -> None:
    shooter_ready(login)
    sam, dee = login("sam"), login("dee")
    assert sam.post(f"{T}/roll", {"faces": "2-2"}).status_code == 200
    dee.post(f"{T}/settle")
    db = str(tmp_path / "floor.db")
    runner = CliRunner()
    out = runner.invoke(app, ["ratings", "--db", db, "--table", "craps-pa-1", "--json"])
    assert out.exit_code == 0, out.output
    [alice] = [r for r in json.loads(out.output)["ratings"] if r["player"] == "alice"]
    assert Fraction(alice["theo_exact"]) == 1000 * Fraction(7, 495)
    assert alice["rolls"] == 1
    assert "industry_theo" in alice

    text = runner.invoke(app, ["ratings", "--db", db, "--edge", "2%"])
    assert text.exit_code == 0, text.output
    assert "Industry theo" in text.output
    assert "alice" in text.output
    assert "ratings.industry.edge = 2%" in text.output

    for bad in (["--edge", "lots"], ["--day", "yesterday"], ["--table", "nowhere"]):
        refused = runner.invoke(app, ["ratings", "--db", db, *bad])
        assert refused.exit_code == 2, bad
        assert refused.output.strip(), bad


def test_8_rules_show_lists_the_ratings_rule_values_with_their_citations() -> None:
    from typer.testing import CliRunner

    from dicetable.cli.main import app as cli
    out = CliRunner().invoke(cli, ["rules", "show", "bank-pa", "--section", "ratings",
                                   "--json"])
    assert out.exit_code == 0, out.output
    import json
    rules = json.loads(out.output)["rules"]
    assert set(rules) == {"ratings.industry.decisions_per_hour", "ratings.industry.edge"}
    assert rules["ratings.industry.decisions_per_hour"]["value"] == 60
    assert all(r["status"] == "industry-default" and r["citation"] for r in rules.values())
    shown = CliRunner().invoke(cli, ["rules", "show", "bank-in", "--section", "chips"])
    assert shown.exit_code == 0, shown.output
    assert "chips.breakdown" in shown.output
