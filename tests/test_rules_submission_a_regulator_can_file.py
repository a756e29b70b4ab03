"""The rules submission is a document a regulator files (#31 item 7): a cover naming the
operator, the site, the date, dicetable's version and the digests; contents; a drawing of the
layout with every wager's price read from the pack; citations that name public sources, never
the project's own files or internal pack names; HTML and PDF from the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable import __version__
from dicetable.cli.main import app
from dicetable.core.errors import InvalidInput
from dicetable.games.packs import PRESETS, load_pack, load_preset
from dicetable.games.paytable import paytable_of
from dicetable.odds.layout_drawing import layout_svg
from dicetable.odds.public_citation import public_citation
from dicetable.odds.submission import CONTENTS, submission_html

runner = CliRunner()


def _document(preset: str, tmp_path: Path, *extra: str) -> str:
    out = tmp_path / f"{preset}.html"
    result = runner.invoke(app, ["rules", "submission", preset, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out.read_text("utf-8")


@pytest.mark.parametrize("preset", PRESETS)
def test_the_cover_names_operator_site_date_version_and_digest(preset: str,
                                                               tmp_path: Path) -> None:
    html = _document(preset, tmp_path, "--operator", "River Casino LLC", "--site",
                     "Philadelphia")
    cover = html[html.index('<section class="cover">'):html.index("</section>")]
    assert '<td data-cover="operator">River Casino LLC</td>' in cover
    assert '<td data-cover="site">Philadelphia</td>' in cover
    assert 'data-cover="prepared"' in cover
    assert f"<td>{__version__}</td>" in cover
    assert f'data-digest="{load_preset(preset).digest}"' in cover
    # The contents list each section, and each link lands on a heading of the document.
    contents = html[html.index('<nav class="contents">'):html.index("</nav>")]
    for anchor, title in CONTENTS:
        if f'id="{anchor}"' in html:
            assert f'href="#{anchor}">{title}<' in contents


def test_a_cover_without_names_says_what_to_complete_and_never_invents_them(
        tmp_path: Path) -> None:
    out = tmp_path / "s.html"
    result = runner.invoke(app, ["rules", "submission", "pa-craps", "--out", str(out)])
    assert result.exit_code == 0
    assert "pass --operator NAME and --site NAME" in " ".join(result.output.split())
    html = out.read_text("utf-8")
    assert '<td data-cover="operator">to be completed before filing</td>' in html
    assert '<td data-cover="site">to be completed before filing</td>' in html


@pytest.mark.parametrize("name", ["", "   ", "Evil\x1b[31mCorp", "x" * 201])
def test_a_cover_name_that_cannot_be_printed_is_refused_naming_the_rule(
        name: str, tmp_path: Path) -> None:
    out = tmp_path / "s.html"
    result = runner.invoke(app, ["rules", "submission", "pa-craps", "--out", str(out),
                                 "--operator", name])
    assert result.exit_code == 2
    assert "submission.cover" in result.output
    assert not out.exists()


@pytest.mark.parametrize("preset", PRESETS)
def test_no_internal_file_or_pack_name_reaches_the_document(preset: str) -> None:
    html = submission_html(load_preset(preset))
    assert "spec/" not in html
    assert not re.search(r"\b[\w-]+\.md\b", html)
    assert "_craps-base" not in html
    assert "(house:" not in html


def test_a_citation_pointer_with_no_public_wording_is_refused() -> None:
    with pytest.raises(InvalidInput) as refused:
        public_citation("spec/standards.md §9.9 (something new)")
    assert refused.value.rule == "submission.citations"


@pytest.mark.parametrize("preset", PRESETS)
def test_the_layout_drawing_shows_every_wager_with_the_packs_price(preset: str) -> None:
    pack = load_preset(preset)
    svg = layout_svg(pack)
    paytable = paytable_of(pack)
    drawn = dict(re.findall(r'data-code="([^"]+)" data-pays="([^"]+)"', svg))
    offered = [c for c in pack.menu_in_order if c in paytable and c != "odds"]
    assert offered
    assert all(svg.count(f'data-code="{c}"') == 1 for c in offered)
    for code in offered:
        want = paytable[code]["pays"] if code == "field" else paytable[code]["felt"]
        assert drawn[code] == want.replace("'", "&#x27;"), code
    if "odds" in paytable:
        assert drawn["odds"] == paytable["odds"]["pays"]
    assert set(drawn) <= set(offered) | {"odds", "odds:lay"}
    assert "<svg" in submission_html(pack)


def test_a_house_packs_price_is_drawn_at_once(tmp_path: Path) -> None:
    house = tmp_path / "river.json"
    house.write_text(json.dumps({"id": "river-house", "name": "River Craps",
                                 "extends": "pa-craps",
                                 "overrides": {"paytable.hop.nonpair": "16 to 1"}}))
    svg = layout_svg(load_pack(house))
    assert 'data-code="hop1-2" data-pays="16 to 1"' in svg
    assert 'data-code="hop1-2" data-pays="15 to 1"' in layout_svg(load_preset("pa-craps"))


def test_the_pdf_carries_the_cover_and_the_drawing(tmp_path: Path) -> None:
    pytest.importorskip("weasyprint")
    out = tmp_path / "s.pdf"
    result = runner.invoke(app, ["rules", "submission", "pa-props-and-hops", "--out", str(out),
                                 "--operator", "River Casino LLC", "--site", "Philadelphia"])
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    assert len(data) > 10_000
