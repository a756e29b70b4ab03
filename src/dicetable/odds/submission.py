"""The rules submission: one document an operator files with the regulator before offering a
game, built from the very pack the tables run.

It holds every rule with its value, citation and status - the regulation text first, then the
operator's choices (stand-ins from other jurisdictions, industry defaults, house overrides) -
the full paytable with the exact house edge of every wager and option, the permission matrix
(who may give each command), the dice and shaker procedure with the site's custody rules, and
the pack's SHA-256 digest, so the approved document can be matched to the pack a table runs.

Every house edge is written as the exact fraction ``dicetable odds PACK --json`` gives, in a
``data-house-edge`` attribute beside its percentage.

>>> from dicetable.rules.loader import load_preset
>>> html = submission_html(load_preset("pa-craps"))
>>> 'data-wager="pass"' in html and 'data-house-edge="7/495"' in html
True
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable
from typing import Any

from dicetable.bank.rules import BankPack, load_bank_pack
from dicetable.core.errors import InvalidInput, RulePackInvalid
from dicetable.core.roles import Role
from dicetable.custody.rules import CustodyPack, load_custody_pack
from dicetable.odds.report import pack_report
from dicetable.rules.model import Rule, RulePack, Status, family_of
from dicetable.table.procedure import ACTION_RULE

GROUPS = (
    (Status.REGULATION, "Regulation text",
     "Rules as the Pennsylvania or Indiana regulations write them. Not configurable."),
    (Status.OTHER_JURISDICTION, "Operator's choices: stand-ins from other jurisdictions",
     "Where no PA/IN text is held, another regulator's rule stands in. The operator asks "
     "approval for each."),
    (Status.INDUSTRY_DEFAULT, "Operator's choices: industry defaults",
     "Common practice chosen by the operator; configurable, submitted for approval."),
)

PROCEDURE_PREFIXES = ("dice.", "shaker.", "shooter.", "throw.", "noroll.", "authority.dice",
                      "authority.shaker", "authority.shake", "authority.offer_dice",
                      "authority.select_dice", "authority.remove_shooter")

_CSS = """
body { font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 10pt; margin: 1.5cm; }
h1 { font-size: 16pt; margin-bottom: 0; } h2 { font-size: 13pt; margin-top: 1.4em;
  border-bottom: 1px solid #444; page-break-after: avoid; } h3 { font-size: 11pt; }
table { border-collapse: collapse; width: 100%; margin: .4em 0 1em; }
th, td { border: 1px solid #999; padding: 2px 4px; text-align: left; vertical-align: top; }
th { background: #eee; } td.num { text-align: right; white-space: nowrap; }
tr { page-break-inside: avoid; } .digest { font-family: monospace; word-break: break-all; }
.status-regulation { color: #064; } .status-other-jurisdiction { color: #960; }
.status-industry-default { color: #036; } .note { color: #555; font-size: 9pt; }
@page { size: A4; margin: 1.5cm; @bottom-right { content: counter(page) " / " counter(pages); } }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


STATUS_WORDS = {Status.REGULATION: "regulation (PA/IN text)",
                Status.OTHER_JURISDICTION: "another jurisdiction's rule, standing in",
                Status.INDUSTRY_DEFAULT: "industry practice (the operator's choice)"}


def _value(rule: Rule) -> str:
    """A value as a reader writes it: lists as words, yes/no, never JSON brackets."""
    return _words(rule.value)


def _words(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        if not v:
            return "none"
        # A list of groups (each a list: who must be present together) reads group by group.
        return ("; " if any(isinstance(x, list | dict) for x in v) else ", ").join(
            _words(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_words(x)}" for k, x in v.items())
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _natural(rule_id: str) -> tuple[tuple[int, int | str], ...]:
    """``paytable.buy.4`` before ``paytable.buy.10``: numbers compare as numbers."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in rule_id.split("."))


def _rule_rows(rules: Iterable[Rule], order: Callable[[Rule], Any] | None = None) -> str:
    rows = []
    for r in sorted(rules, key=order or (lambda r: _natural(r.id))):
        source = f" (house: {_e(r.source)})" if r.source else ""
        note = f'<div class="note">{_e(r.note)}</div>' if r.note else ""
        rows.append(f'<tr data-rule="{_e(r.id)}"><td>{_e(r.id)}</td><td>{_e(_value(r))}</td>'
                    f'<td>{_e(r.citation)}{source}{note}</td>'
                    f'<td class="status-{r.status.value}">{_e(STATUS_WORDS[r.status])}'
                    '</td></tr>')
    return ("<table><tr><th>rule</th><th>value</th><th>citation</th><th>status</th></tr>"
            + "".join(rows) + "</table>")


def _rules_section(pack: RulePack) -> str:
    out = ['<h2 id="rules">1. Every rule of the game</h2>']
    for status, title, blurb in GROUPS:
        mine = [r for r in pack if r.status is status]
        out.append(f'<h3 data-group="{status.value}">{_e(title)} ({len(mine)})</h3>'
                   f'<p class="note">{_e(blurb)}</p>' + _rule_rows(mine))
    return "".join(out)


def _pct(x: float) -> str:
    return f"{x:.4f}%"


def _paytable_section(pack: RulePack) -> str:
    pays = [r for r in pack if r.id.startswith("paytable.")]
    rows = []
    for row in pack_report(pack):
        option = row.get("odds") or ""
        other = row.get("other_commission")
        alt = ""
        if other:
            alt = (f'<span data-option="{_e(other["commission"])}" data-house-edge='
                   f'"{_e(other["house_edge"])}">{_e(other["commission"])}: '
                   f'{_e(other["house_edge"])} ({_pct(other["house_edge_pct"])})</span>')
        rows.append(
            f'<tr data-wager="{_e(row["wager"])}" data-start="{_e(row["start"])}" '
            f'data-house-edge="{_e(row["house_edge"])}">'
            f'<td>{_e(row["wager"])}</td><td>{_e(row["name"])}</td><td>{_e(row["start"])}</td>'
            f'<td>{_e(option or row.get("commission") or "")}</td>'
            f'<td class="num">{_e(row["house_edge"])}</td>'
            f'<td class="num">{_pct(row["house_edge_pct"])}</td>'
            f'<td class="num">{_pct(row["edge_per_roll_pct"])}</td>'
            f'<td class="num">{_e(row.get("p_push", ""))}</td><td>{alt}</td></tr>')
    return ('<h2 id="paytable">2. The paytable and the exact house edge of every wager</h2>'
            '<h3>Payouts, in the order of the layout</h3>' + _rule_rows(pays, _layout(pack))
            + '<h3>House edge per wager resolved, exact (and per roll in action)</h3>'
            '<table><tr><th>wager</th><th>name</th><th>from</th><th>option</th>'
            '<th>house edge</th><th>%</th><th>per roll</th><th>push</th>'
            '<th>other commission option</th></tr>' + "".join(rows) + "</table>")


def _layout(pack: RulePack) -> Callable[[Rule], Any]:
    """Payout rules in the order their wagers stand on the layout (the pack's menu), then
    by number."""
    families: list[str] = []
    for code in pack.menu_in_order:
        family = family_of(code)
        if family not in families:
            families.append(family)

    def key(rule: Rule) -> tuple[int, tuple[tuple[int, int | str], ...]]:
        family = rule.id.split(".")[1] if rule.id.count(".") else rule.id
        place = families.index(family) if family in families else len(families)
        return place, _natural(rule.id)
    return key


def _matrix_section(pack: RulePack) -> str:
    roles = [r for r in Role if r is not Role.SYSTEM]
    seen: dict[str, list[str]] = {}
    for command, rule_id in ACTION_RULE.items():
        if rule_id in pack.rules:
            seen.setdefault(rule_id, []).append(command.__name__)
    head = "".join(f"<th>{_e(r.value)}</th>" for r in roles)
    rows = []
    for rule_id, commands in sorted(seen.items()):
        allowed = pack.roles(rule_id)
        cells = "".join(f'<td data-role="{_e(r.value)}">{"yes" if r in allowed else ""}</td>'
                        for r in roles)
        rows.append(f'<tr data-rule="{_e(rule_id)}"><td>{_e(", ".join(sorted(commands)))}'
                    f'</td>{cells}<td>{_e(pack.cite(rule_id))}</td></tr>')
    return ('<h2 id="permissions">3. The permission matrix: who may give each command</h2>'
            f'<table><tr><th>commands</th>{head}<th>rule</th></tr>' + "".join(rows)
            + "</table><p class=\"note\">An electronic table's own automation (role system) "
              "closes betting, records the RNG roll and settles; nothing else.</p>")


def _procedure_section(pack: RulePack, custody: CustodyPack | None) -> str:
    mine = [r for r in pack if r.id.startswith(PROCEDURE_PREFIXES)]
    out = ['<h2 id="dice">4. The dice and shaker procedure</h2>'
           '<h3>At the table</h3>' + _rule_rows(mine)]
    if custody is not None:
        out.append(f"<h3>Dice custody, receipt to cancellation ({_e(custody.id)}: "
                   f"{_e(custody.name)})</h3>" + _rule_rows(custody))
    return "".join(out)


def custody_pack_for(pack: RulePack) -> CustodyPack | None:
    """The custody rules of the pack's jurisdiction, when dicetable ships them."""
    jurisdiction = str(pack.get("jurisdiction", "")).lower()
    try:
        return load_custody_pack(jurisdiction)
    except (InvalidInput, RulePackInvalid):  # no custody pack for this jurisdiction
        return None


def bank_pack_for(pack: RulePack) -> BankPack | None:
    """The table-bank rules of the pack's jurisdiction, when dicetable ships them."""
    jurisdiction = str(pack.get("jurisdiction", "")).lower()
    try:
        return load_bank_pack(jurisdiction)
    except (InvalidInput, RulePackInvalid):
        return None


def _bank_section(bank: BankPack | None) -> str:
    if bank is None:
        return ""
    return (f'<h2 id="bank">5. The table bank ({_e(bank.id)}: {_e(bank.name)})</h2>'
            '<p class="note">Table inventory and its six permitted movements, counts and '
            'Table Inventory Slips, fills and credits, the drop and table win. Stand-ins '
            'for text not read are marked as such.</p>'
            f'<p>bank rules digest (SHA-256): <span class="digest" data-bank-digest='
            f'"{bank.digest}">{bank.digest}</span></p>' + _rule_rows(bank))


def submission_html(pack: RulePack, custody: CustodyPack | None = None) -> str:
    """The whole rules submission as one self-contained HTML page."""
    custody = custody if custody is not None else custody_pack_for(pack)
    counts = {s: sum(1 for r in pack if r.status is s) for s, _, _ in GROUPS}
    custody_digest = (f'<tr><th>custody rules digest ({_e(custody.id)})</th><td class="digest" '
                      f'data-custody-digest="{custody.digest}">{custody.digest}</td></tr>'
                      if custody is not None else "")
    summary = (
        f'<table><tr><th>pack</th><td data-pack="{_e(pack.id)}">{_e(pack.id)}: '
        f'{_e(pack.name)}</td></tr><tr><th>game</th><td>{_e(pack.game)}</td></tr>'
        f'<tr><th>jurisdiction</th><td>{_e(pack.get("jurisdiction", ""))}</td></tr>'
        f'<tr><th>based on</th><td>{_e(pack.base or "-")}</td></tr>'
        f'<tr><th>rules</th><td>{len(pack.rules)}: {counts[Status.REGULATION]} regulation, '
        f'{counts[Status.OTHER_JURISDICTION]} other-jurisdiction stand-ins, '
        f'{counts[Status.INDUSTRY_DEFAULT]} industry defaults</td></tr>'
        f'<tr><th>pack digest (SHA-256)</th><td class="digest" data-digest="{pack.digest}">'
        f'{pack.digest}</td></tr>{custody_digest}</table>'
        '<p class="note">The digest is recorded in the first event of every table that runs '
        'this pack (TableOpened.pack_digest): a table runs the approved rules exactly when '
        'the two match.</p>')
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Rules submission: {_e(pack.name)}</title><style>{_CSS}</style></head>"
            f"<body><h1>Rules of the game submitted for approval</h1><p>{_e(pack.name)}</p>"
            + summary + _rules_section(pack) + _paytable_section(pack)
            + _matrix_section(pack) + _procedure_section(pack, custody)
            + _bank_section(bank_pack_for(pack)) + "</body></html>")
