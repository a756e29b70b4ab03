"""What each wager pays, in the words a printed layout uses, read from the table's pack.

The felt, the phone's wager list and the rules page all show these lines, so a house pack that
changes a price changes what the player reads at once. Each line names the paytable rule it is
read from, with that rule's status and citation.

>>> from dicetable.games.packs import load_preset
>>> table = paytable_of(load_preset("pa-craps"))
>>> table["place6"]["pays"], table["hop1-1"]["pays"]
('7 to 6', '30 to 1')
>>> [(line["when"], line["pays"]) for line in table["field"]["lines"]]
[('on 2', '2 to 1'), ('on 12', '2 to 1'), ('on the other field numbers', '1 to 1')]
>>> table["horn"]["pays"]
'30 to 1 on 2, 15 to 1 on 3, 15 to 1 on 11, 30 to 1 on 12'
>>> table["horn"]["felt"]
'30 to 1 · 15 to 1'
>>> table["horn"]["note"]
'the stake is split in 4 equal parts, one on each number'
>>> table["odds"]["pays"]
'2 to 1 on 4, 3 to 2 on 5, 6 to 5 on 6, 6 to 5 on 8, 3 to 2 on 9, 2 to 1 on 10'
"""

from __future__ import annotations

import functools
from typing import Any

from dicetable.games.packs import compile_pack
from dicetable.rules.model import RulePack
from dicetable.wagers.compile import ODDS_LAY, ODDS_TAKE

_WHEN_BY_TAIL = {
    "two": "on 2", "three": "on 3", "eleven": "on 11", "twelve": "on 12",
    "any7": "on any 7", "anycraps": "on any craps (2, 3, 12)",
    "other": "on the other field numbers",
}
"""The roll a paytable entry pays on, named by its rule id's last part (digits say themselves)."""

_SPLIT_NOTE = "the stake is split in {parts} equal parts, one on each number"
_HIGH_NOTE = ("the stake is split in {parts} equal parts: two on the high number, "
              "one on each other")


def _status(pack: RulePack, rule_id: str) -> dict[str, str]:
    rule = pack.rule(rule_id)
    return {"rule": rule_id, "status": rule.status.value, "citation": rule.citation}


def _when(rule_id: str) -> str:
    tail = rule_id.rsplit(".", 1)[-1]
    if tail.isdigit():
        return f"on {tail}"
    return _WHEN_BY_TAIL.get(tail, "")


def _lines(pack: RulePack, rules: tuple[str, ...]) -> list[dict[str, str]]:
    """One line per price: ``{"when", "pays", "rule", "status", "citation"}``."""
    out: list[dict[str, str]] = []
    for rule_id in rules:
        if not rule_id.startswith("paytable.") or rule_id.endswith(".form"):
            continue  # the field's numbers, the bar and the horn's form are not prices
        value = pack.value(rule_id)
        if isinstance(value, dict):  # a price per count (the Fire Bet's points made)
            out.extend({"when": f"for {count} points made", "pays": str(price),
                        **_status(pack, rule_id)} for count, price in value.items())
        else:
            out.append({"when": _when(rule_id), "pays": str(value), **_status(pack, rule_id)})
    return out


def _short(lines: list[dict[str, str]]) -> str:
    if len({line["pays"] for line in lines}) == 1:
        return lines[0]["pays"]
    return ", ".join(f"{line['pays']} {line['when']}".strip() for line in lines)


def _felt(pays: str, lines: list[dict[str, str]]) -> str:
    """What the felt prints on the spot itself: the price, or the prices where several."""
    if len(pays) <= 14:
        return pays
    return " · ".join(dict.fromkeys(line["pays"] for line in lines))


@functools.lru_cache(maxsize=64)  # packs are immutable and few; views are many
def paytable_of(pack: RulePack) -> dict[str, dict[str, Any]]:
    """Every wager on the pack's menu (``odds`` for the odds taken behind a line bet, and
    ``odds:lay`` for those laid): ``{"pays", "felt", "lines", "note"}``."""
    compiled = compile_pack(pack)
    out: dict[str, dict[str, Any]] = {}
    for code, wager in compiled.items():
        lines = _lines(pack, wager.payout_rules)
        if not lines:
            continue
        note = ""
        if wager.parts > 1:
            even = len(lines) == wager.parts
            note = (_SPLIT_NOTE if even else _HIGH_NOTE).format(parts=wager.parts)
        key = "odds" if code == ODDS_TAKE else code
        pays = _short(lines)
        out[key] = {"pays": pays, "felt": _felt(pays, lines), "lines": lines, "note": note}
        if code == ODDS_LAY:
            out[key]["name"] = "Lay odds"
    return out


__all__ = ["paytable_of"]
