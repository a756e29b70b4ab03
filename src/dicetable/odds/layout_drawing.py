"""A drawing of a pack's layout for the rules submission: every wager the pack offers, in the
place a printed layout gives it, with what it pays.

The drawing is a plan, not the felt's artwork: the number boxes across the top (each with the
place, buy, lay and put prices of its number), then the bands of the come, the field, the big
6 and 8 and the line bets, then the proposition centre (hardways, one-roll bets, hops, doubles,
features). It is built from the pack's own menu and paytable, so a house pack's change of
wagers or prices is drawn at once, and each spot carries ``data-code`` and ``data-pays`` for a
reader (or a test) to check against the paytable section.

>>> from dicetable.games.packs import load_preset
>>> svg = layout_svg(load_preset("pa-craps"))
>>> svg.startswith("<svg") and 'data-code="place6"' in svg and 'data-pays="7 to 6"' in svg
True
>>> 'data-code="pass"' in layout_svg(load_preset("pa-props-and-hops"))   # not on that menu
False
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

from dicetable.games.paytable import paytable_of
from dicetable.rules.model import RulePack, display_name, family_of

WIDTH = 900
_GAP = 6
_NUMBER_FAMILIES = ("place", "buy", "lay", "lose", "put")
"""The wagers drawn in their number's box, in the order the box lists them."""
_BANDS = (("come", "dontcome"), ("field",), ("big",), ("dontpass",), ("pass",))
"""The bands below the number boxes, top to bottom (a code or a family)."""
_CENTRE = ("hard", "prop", "double", "hop", "fire", "bonus")
"""The proposition centre's groups, in layout order."""
_CENTRE_TITLES = {"hard": "Hardways", "prop": "One-roll propositions", "double": "Doubles",
                  "hop": "Hop bets", "fire": "Feature bets", "bonus": "Feature bets"}


@dataclass(frozen=True)
class Spot:
    """One wager's place on the drawing."""

    code: str
    name: str
    pays: str
    x: float
    y: float
    w: float
    h: float


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _number(code: str) -> int:
    found = re.search(r"(\d+)$", code)
    return int(found.group(1)) if found else 0


def _row(codes: list[str], names: dict[str, str], pays: dict[str, str], y: float, h: float,
         columns: int | None = None) -> Iterator[Spot]:
    """Codes laid left to right in equal cells, wrapping after ``columns``."""
    per_row = columns or max(len(codes), 1)
    w = (WIDTH - _GAP * (per_row - 1)) / per_row
    for i, code in enumerate(codes):
        row, col = divmod(i, per_row)
        yield Spot(code, names[code], pays[code], col * (w + _GAP), y + row * (h + _GAP), w, h)


def plan(pack: RulePack) -> tuple[list[tuple[str, float]], list[Spot], float]:
    """The drawing's spots and titles ``(title, y)`` and its height, in layout order."""
    paytable = paytable_of(pack)
    menu = [c for c in pack.menu_in_order if c in paytable and c != "odds"]
    names = {c: display_name(c) for c in menu}
    pays = {c: str(paytable[c]["felt"]) for c in menu}
    titles: list[tuple[str, float]] = []
    spots: list[Spot] = []
    y = 0.0

    numbers = sorted({_number(c) for c in menu if family_of(c) in _NUMBER_FAMILIES})
    if numbers:
        titles.append(("Numbers: place, buy, lay and put prices of each number", y + 12))
        y += 20
        w = (WIDTH - _GAP * (len(numbers) - 1)) / len(numbers)
        for i, n in enumerate(numbers):
            mine = sorted((c for c in menu if family_of(c) in _NUMBER_FAMILIES
                           and _number(c) == n),
                          key=lambda c: _NUMBER_FAMILIES.index(family_of(c)))
            for j, code in enumerate(mine):
                spots.append(Spot(code, names[code], pays[code], i * (w + _GAP),
                                  y + j * 34, w, 30))
        y += 34 * max(sum(1 for c in menu if family_of(c) in _NUMBER_FAMILIES
                          and _number(c) == n) for n in numbers) + 10

    for band in _BANDS:
        codes = [c for c in menu if c in band or (family_of(c) in band and c not in
                 ("pass", "dontpass", "come", "dontcome"))]
        if codes:
            spots.extend(_row(codes, names, pays, y, 36))
            y += 36 + _GAP
    # The odds have no spot of their own (they stand behind a line bet): one band each, and
    # the field's band, say every price in full where the plan has the room.
    for key, name in (("odds", "Odds behind a line bet"), ("odds:lay", "Lay odds")):
        if key in paytable:
            names[key], pays[key] = name, str(paytable[key]["pays"])
            spots.extend(_row([key], names, pays, y, 36))
            y += 36 + _GAP
    if "field" in pays:
        pays["field"] = str(paytable["field"]["pays"])
        spots = [s if s.code != "field" else Spot(s.code, s.name, pays["field"], s.x, s.y, s.w,
                                                  s.h) for s in spots]

    for group in _CENTRE:
        codes = [c for c in menu if family_of(c) == group]
        if not codes:
            continue
        title = _CENTRE_TITLES[group]
        if not titles or titles[-1][0] != title:
            titles.append((title, y + 14))
            y += 22
        columns = 6 if len(codes) > 6 else None
        rows = -(-len(codes) // (columns or len(codes)))
        spots.extend(_row(codes, names, pays, y, 36, columns))
        y += rows * (36 + _GAP)
    drawn = {s.code for s in spots}
    rest = [c for c in menu if c not in drawn]  # a family this plan has no place for
    if rest:
        titles.append(("Other wagers", y + 14))
        y += 22
        spots.extend(_row(rest, names, pays, y, 36, 6))
        y += -(-len(rest) // 6) * (36 + _GAP)
    return titles, spots, y


def layout_svg(pack: RulePack) -> str:
    """The drawing as one self-contained SVG element."""
    titles, spots, height = plan(pack)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="layout-drawing" role="img" '
             f'viewBox="-2 -2 {WIDTH + 4} {height + 4}" width="100%" '
             f'aria-label="{_e(pack.get("table.description", pack.name))}: layout plan">'
             '<style>.spot rect{fill:#0b6b3a;stroke:#fff;stroke-width:1.2}'
             '.spot text{fill:#fff;font:9px "DejaVu Sans",Arial,sans-serif}'
             '.spot .pays{fill:#ffe680;font-weight:bold}'
             '.title{fill:#222;font:bold 10px "DejaVu Sans",Arial,sans-serif}</style>']
    for title, y in titles:
        parts.append(f'<text class="title" x="0" y="{y:.1f}">{_e(title)}</text>')
    for s in spots:
        cx = s.x + s.w / 2
        parts.append(
            f'<g class="spot" data-code="{_e(s.code)}" data-pays="{_e(s.pays)}">'
            f'<rect x="{s.x:.1f}" y="{s.y:.1f}" width="{s.w:.1f}" height="{s.h:.1f}" rx="4"/>'
            f'<text x="{cx:.1f}" y="{s.y + s.h * 0.38:.1f}" text-anchor="middle">'
            f'{_e(s.name)}</text><text class="pays" x="{cx:.1f}" y="{s.y + s.h * 0.78:.1f}" '
            f'text-anchor="middle">{_e(s.pays)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["Spot", "layout_svg", "plan"]
