"""The rules submission reads as a document a regulator files: the payouts in the order their
wagers stand on the layout, numbers in numeric order (buy 4 before buy 10), values written as
words rather than JSON, and each status said in words."""

from __future__ import annotations

import re

import pytest

from dicetable.games.packs import PRESETS, load_preset
from dicetable.odds.submission import submission_html


@pytest.mark.parametrize("preset", PRESETS)
def test_submission_paytable_in_layout_order_with_statuses_in_words(preset: str) -> None:
    html = submission_html(load_preset(preset))
    paytable = html[html.index('id="paytable"'):]
    shown = re.findall(r'data-rule="(paytable\.[^"]+)"', paytable)
    assert shown
    for family in ("place", "buy", "lay", "hard"):
        mine = [int(r.rsplit(".", 1)[1]) for r in shown
                if r.startswith(f"paytable.{family}.") and r.rsplit(".", 1)[1].isdigit()]
        assert mine == sorted(mine), (family, mine)
    if "paytable.line" in shown and "paytable.place.4" in shown:
        assert shown.index("paytable.line") < shown.index("paytable.place.4")
    cells = re.findall(r'<td class="status-[a-z-]+">([^<]+)</td>', html)
    assert cells
    assert all(" " in c for c in cells)  # words, not the codes other-jurisdiction & co
    values = re.findall(r'<tr data-rule="[^"]+"><td>[^<]+</td><td>([^<]*)</td>', html)
    assert values
    assert not any(v.startswith(("[", "{")) or "&quot;" in v for v in values)
