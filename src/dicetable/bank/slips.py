"""A printable document for one slip: a Fill Slip or Credit Slip (by its serial in the
casino's series of its kind) or a Table Inventory Slip (by its number at the table), with
the contents the rules list and a line for every signature they require.

Fill/Credit Slip contents: 465a.38(b)(1)-(5) for the request; COMAR 36.05.03.04G-H (MD
stand-in) for the slip and its serial; 9 NYCRR 5323.9 (NY stand-in, PA 465a.39 not held) for
a credit's signatures. Table Inventory Slip: COMAR 36.05.03.02E (MD stand-in for PA
465a.36): date and shift, game and table, each denomination's value, the total, the counter's
and the observer's signatures.

>>> doc = SlipDocument("Fill Slip", "fill 7", "cite", (("Table", "t1"),), ((2500, 4),),
...                    (("Chip bank cashier", "cass"),), "completed")
>>> print(render_text(doc))  # doctest: +NORMALIZE_WHITESPACE
Fill Slip  fill 7  [completed]
Table                t1
  4 x $25 = $100
Total                $100
Chip bank cashier    cass
(cite)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dicetable.bank import events as bev
from dicetable.bank.model import Chips, chips_value, money
from dicetable.bank.state import BankState
from dicetable.core.errors import InvalidInput

KINDS = ("fill", "credit", "inventory")


@dataclass(frozen=True)
class SlipDocument:
    title: str
    number: str
    citation: str
    fields: tuple[tuple[str, str], ...]
    chips: Chips
    signatures: tuple[tuple[str, str], ...]
    """(the line, who signed it: NAME (ROLE), or "" where the line is still blank)."""
    status: str

    @property
    def total(self) -> int:
        return chips_value(self.chips)

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "number": self.number, "citation": self.citation,
                "fields": [list(f) for f in self.fields],
                "chips": [[d, n, money(d), money(d * n)] for d, n in self.chips],
                "total": self.total, "total_text": money(self.total),
                "signatures": [list(s) for s in self.signatures], "status": self.status}


def slip_citations(pack: Any) -> dict[str, str]:
    """The citations a slip document prints, from the table's bank pack."""
    return {rid: str(pack.cite(rid)) for rid in ("slips.serial_sequence", "count.observer_roles")}


def render_text(doc: SlipDocument) -> str:
    lines = [f"{doc.title}  {doc.number}  [{doc.status}]"]
    lines += [f"{k:<20} {v}" for k, v in doc.fields]
    lines += [f"  {n} x {money(d)} = {money(d * n)}" for d, n in doc.chips]
    lines.append(f"{'Total':<20} {money(doc.total)}")
    lines += [f"{k:<20} {v or '_' * 24}" for k, v in doc.signatures]
    lines.append(f"({doc.citation})")
    return "\n".join(lines)


def slip_document(state: BankState, kind: str, number: int, *, jurisdiction: str,
                  cite: dict[str, str]) -> SlipDocument:
    """The document of the ``kind`` slip ``number`` at this table; ``cite`` maps the bank
    rule ids used to their citations."""
    if kind not in KINDS:
        raise InvalidInput(f"a slip is one of {', '.join(KINDS)}", rule="slips.kind")
    where = (("Site", state.site), ("Game", state.game), ("Table", state.table),
             ("Jurisdiction", jurisdiction))
    if kind == "inventory":
        return _inventory(state, number, where, cite)
    p = next((x for x in state.requests.values() if x.kind == kind and x.serial == number),
             None)
    if p is None:
        raise InvalidInput(f"no {kind} slip {number} at table {state.table}",
                           rule="slips.serial_sequence")
    at = {type(e): e.at for e in state.log
          if getattr(e, "request", None) == p.request or (
              getattr(e, "serial", None) == p.serial and getattr(e, "slip_kind", kind) == kind)}
    fields: tuple[tuple[str, str], ...] = (*where, ("Gaming day", p.gaming_day),
                                           ("Shift", p.shift),
              ("Request", f"#{p.request}, prepared {at.get(bev.SlipRequested, '')} by "
                          f"{p.prepared_by} ({p.prepared_role})"),
              ("Slip issued", at.get(bev.SlipIssued, "")),
              ("Surveillance told", "yes" if p.surveillance else "no"),
              ("Received (count)", at.get(bev.SlipCompleted, "") or "not yet"))
    if p.status == "voided":
        fields += (("VOID", at.get(bev.SlipVoided, "")),)
    completed = next((e for e in state.log if isinstance(e, bev.SlipCompleted)
                      and e.serial == p.serial and e.slip_kind == kind), None)
    signs = [("Requested by (floorperson+)", p.signed_by),
             ("Chip bank cashier", p.cashier), ("Security (carried)", p.officer)]
    signs += [(f"Signed ({role})", name) for name, role in p.signatures]
    signs.append(("Counted at the table", completed.counter if completed else ""))
    title = "Fill Slip" if kind == "fill" else "Credit Slip"
    return SlipDocument(title, f"{kind} {p.serial}", cite.get("slips.serial_sequence", ""),
                        fields, p.chips, tuple(signs), p.status)


def _inventory(state: BankState, number: int, where: tuple[tuple[str, str], ...],
               cite: dict[str, str]) -> SlipDocument:
    e = next((x for x in state.log if isinstance(x, bev.InventoryCounted) and x.slip == number),
             None)
    if e is None:
        raise InvalidInput(f"no Table Inventory Slip {number} at table {state.table}",
                           rule="count.observer_roles")
    fields: tuple[tuple[str, str], ...] = (*where, ("Gaming day", e.gaming_day),
                                           ("Shift", e.shift),
              ("Purpose", e.purpose), ("Counted at", e.at),
              ("Container", e.container or "-"), ("Slip placed", e.place or "-"))
    if e.expected is not None and e.expected != e.total:
        fields += (("Expected", money(e.expected)),
                   ("Variance", money(e.total - e.expected)))
    return SlipDocument("Table Inventory Slip", f"slip {e.slip}",
                        cite.get("count.observer_roles", ""), fields, e.chips,
                        ((f"Counted by ({e.counter_role})", e.counter),
                         (f"Observed by ({e.observer_role})", e.observer)), e.purpose)
