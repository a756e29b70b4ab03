"""The custody role matrix: who may take each step, and who must be there.

The matrix is rule-pack data (``receipt.roles``, ``storage.keys``, ``inspection.roles``...);
these helpers apply it and raise ``RoleNotPermitted`` naming the rule and its citation.

>>> from dicetable.custody.rules import load_custody_pack
>>> pa = load_custody_pack("pa")
>>> ann = Person("Ann", Role.SHIFT_MANAGER); sam = Person("Sam", Role.SECURITY)
>>> require_people((ann, sam), pa, "receipt.roles", "receive dice")
>>> require_people((ann, Person("Pat", Role.PIT_BOSS)), pa, "receipt.roles", "receive dice")
Traceback (most recent call last):
...
dicetable.core.errors.RoleNotPermitted: receive dice needs someone in role security present ...
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import permutations

from dicetable.core.errors import InvalidInput, RoleNotPermitted
from dicetable.core.roles import Role
from dicetable.custody.model import Person
from dicetable.custody.rules import CustodyPack


def _names(roles: Iterable[Role]) -> str:
    return " or ".join(sorted(r.value for r in roles))


def require_role(role: Role, pack: CustodyPack, rule_id: str, what: str) -> None:
    """The role must be one the rule lists."""
    allowed = pack.roles(rule_id)
    if role not in allowed:
        raise RoleNotPermitted(f"a {role} may not {what}; only {_names(allowed)}",
                               rule=rule_id, citation=pack.cite(rule_id))


def distinct_people(people: Sequence[Person]) -> None:
    """Two roles need two people: one name may not fill both."""
    names = [p.name.strip() for p in people]
    if any(not n for n in names):
        raise InvalidInput("every person taking part needs a name", rule="custody.person")
    seen: set[str] = set()
    for n in names:
        if n.casefold() in seen:
            raise InvalidInput(f"{n} is named twice: each required person is someone else",
                               rule="custody.person")
        seen.add(n.casefold())


def require_people(people: Sequence[Person], pack: CustodyPack, rule_id: str,
                   what: str) -> None:
    """One distinct person from each role group of ``rule_id``; the actor belongs to one."""
    distinct_people(people)
    groups = pack.groups(rule_id)
    listing = "; ".join(_names(g) for g in groups)
    actor = people[0]
    if not any(actor.role in g for g in groups):
        raise RoleNotPermitted(f"a {actor.role} may not {what} (one person from each of: "
                               f"{listing})", rule=rule_id, citation=pack.cite(rule_id))
    if len(people) >= len(groups):
        for chosen in permutations(people, len(groups)):
            if all(p.role in g for p, g in zip(chosen, groups, strict=True)):
                return
    present = {p.role for p in people}
    missing = [g for g in groups if not g & present] or list(groups)
    raise RoleNotPermitted(f"{what} needs someone in role {_names(missing[0])} present "
                           f"(one person from "
                           f"each of: {listing})", rule=rule_id, citation=pack.cite(rule_id))
