"""What the dice room shows before a step is taken: who may sign it, who else must be present,
and the rule (with its citation) that says so, read from the site's custody pack the ledger
decides by. The page refuses a step early, naming that rule, when a required person is not
named; the ledger still decides every step.

>>> from dicetable.custody.rules import load_custody_pack
>>> g = step_guide(load_custody_pack("pa"))
>>> g["receive"]["groups"]
[['assistant-shift-manager', 'shift-manager', 'table-games-manager'], ['security']]
>>> g["inspect"]["sign"]
['boxperson', 'floorperson', 'pit-boss']
"""

from __future__ import annotations

from typing import Any

from dicetable.custody.catalogue import CATALOGUE
from dicetable.custody.rules import CustodyPack

SURVEILLED = {"inspect": "inspection.surveillance", "cancel": "cancellation.surveillance"}
"""Steps done under surveillance where the pack's flag says so."""


def step_guide(pack: CustodyPack) -> dict[str, dict[str, Any]]:
    """For each dice room step: ``sign`` (the roles that may sign it), ``groups`` (one
    distinct person from each must take part: the signer and those named present; empty
    where one signer is enough), ``keys`` (the storage keys and who holds each), ``rule``,
    ``citation``, and ``surveillance`` (the rule that puts it under surveillance, if any)."""
    out: dict[str, dict[str, Any]] = {}
    for entry in CATALOGUE:
        if not entry.route:
            continue
        rule = entry.authority
        info: dict[str, Any] = {"sign": [], "groups": [], "keys": {}, "rule": rule or "",
                                "citation": "", "surveillance": None}
        if rule and rule in pack.rules:
            info["citation"] = pack.cite(rule)
            value = pack.value(rule)
            if isinstance(value, dict):
                keys = {str(k): sorted(r.value for r in roles)
                        for k, roles in ((k, pack.expand(v)) for k, v in value.items())}
                info["keys"] = keys
                info["sign"] = sorted({r for roles in keys.values() for r in roles})
                if entry.witnesses:  # storing needs both key holders
                    info["groups"] = list(keys.values())
            elif isinstance(value, list) and value and isinstance(value[0], list):
                groups = [sorted(r.value for r in g) for g in pack.groups(rule)]
                info["groups"] = groups
                info["sign"] = sorted({r for g in groups for r in g})
            else:
                info["sign"] = sorted(r.value for r in pack.roles(rule))
        flag = SURVEILLED.get(entry.name)
        if flag and flag in pack.rules and pack.flag(flag):
            info["surveillance"] = {"rule": flag, "citation": pack.cite(flag)}
        out[entry.name] = info
    return out
