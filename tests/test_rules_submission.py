"""``dicetable rules submission``: the document an operator files with the regulator. Its house
edges are exactly those of ``dicetable odds PACK --json``; every rule is in it once, the
regulation text first; the digest names the pack the tables run; the PDF carries the same."""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.games.packs import PRESETS, load_pack

runner = CliRunner()


class Submission(HTMLParser):
    """The data attributes the document carries, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.edges: dict[tuple[str, str], str] = {}
        self.options: dict[tuple[str, str, str], str] = {}
        self.rules: list[str] = []
        self.groups: list[str] = []
        self.section = ""
        self.digest = ""
        self._row: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "h2":
            self.section = a.get("id", "")
        if tag == "h3" and "data-group" in a:
            self.groups.append(a["data-group"])
        if tag == "tr" and "data-wager" in a:
            self._row = (a["data-wager"], a["data-start"])
            self.edges[self._row] = a["data-house-edge"]
        if tag == "tr" and "data-rule" in a and self.section == "rules":
            self.rules.append(a["data-rule"])
        if tag == "span" and "data-option" in a and self._row is not None:
            self.options[(*self._row, a["data-option"])] = a["data-house-edge"]
        if "data-digest" in a:
            self.digest = a["data-digest"]


def _write(pack: str, out: Path) -> Submission:
    result = runner.invoke(app, ["rules", "submission", pack, "--out", str(out)])
    assert result.exit_code == 0, result.output
    parsed = Submission()
    parsed.feed(out.read_text("utf-8"))
    return parsed


@pytest.mark.parametrize("pack", PRESETS)
def test_submission_house_edges_equal_dicetable_odds_json(pack: str, tmp_path: Path) -> None:
    doc = _write(pack, tmp_path / "s.html")
    odds = json.loads(runner.invoke(app, ["odds", pack, "--json"]).output)
    assert doc.edges == {(r["wager"], r["start"]): r["house_edge"] for r in odds}
    options = {(r["wager"], r["start"], r["other_commission"]["commission"]):
               r["other_commission"]["house_edge"] for r in odds if r.get("other_commission")}
    assert doc.options == options
    rules = load_pack(pack)
    assert sorted(doc.rules) == sorted(rules.rules)
    assert len(doc.rules) == len(set(doc.rules))
    assert doc.groups == ["regulation", "other-jurisdiction", "industry-default"]
    statuses = [rules.rule(r).status.value for r in doc.rules]
    assert statuses == sorted(statuses, key=doc.groups.index)  # regulation text first
    assert doc.digest == rules.digest


def test_pa_craps_submission_pdf_carries_the_same_edges_and_digest(tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf")
    try:
        import weasyprint  # noqa: F401  (a dev dependency; its Pango libraries are the system's)
    except (ImportError, OSError) as e:
        if os.environ.get("DICETABLE_CI") == "1":
            pytest.fail(f"DICETABLE_CI=1 and WeasyPrint cannot run: {e}")
        pytest.skip(f"WeasyPrint cannot run here: {e}")
    out = tmp_path / "s.pdf"
    result = runner.invoke(app, ["rules", "submission", "pa-craps", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:5] == b"%PDF-"
    text = "".join(page.extract_text() for page in pypdf.PdfReader(out).pages)
    flat = "".join(text.split())
    odds = json.loads(runner.invoke(app, ["odds", "pa-craps", "--json"]).output)
    for row in odds:
        assert row["house_edge"] in flat, row["wager"]
    digest = load_pack("pa-craps").digest
    assert digest in flat
    assert "Regulationtext" in flat
    assert "permissionmatrix" in flat


def test_a_house_pack_shows_its_overrides_as_the_operators_choice(tmp_path: Path) -> None:
    house = tmp_path / "river.json"
    house.write_text(json.dumps({"id": "river-house", "name": "River Craps",
                                 "extends": "pa-craps",
                                 "overrides": {"paytable.field.12": "3 to 1"}}))
    doc = _write(str(house), tmp_path / "s.html")
    html = (tmp_path / "s.html").read_text("utf-8")
    assert doc.digest == load_pack(house).digest != load_pack("pa-craps").digest
    assert "set by the operator&#x27;s house pack &#x27;river-house&#x27;" in html
    odds = json.loads(runner.invoke(app, ["odds", str(house), "--json"]).output)
    field = next(r for r in odds if r["wager"] == "field")
    assert doc.edges[("field", field["start"])] == field["house_edge"]
    assert field["house_edge"] != next(r["house_edge"] for r in json.loads(runner.invoke(
        app, ["odds", "pa-craps", "--json"]).output) if r["wager"] == "field")


def test_submission_refuses_an_unknown_pack_or_format(tmp_path: Path) -> None:
    assert runner.invoke(app, ["rules", "submission", "nope", "--out",
                               str(tmp_path / "s.html")]).exit_code == 2
    bad = runner.invoke(app, ["rules", "submission", "pa-craps", "--out",
                              str(tmp_path / "s.doc")])
    assert bad.exit_code == 2
    assert not (tmp_path / "s.doc").exists()
