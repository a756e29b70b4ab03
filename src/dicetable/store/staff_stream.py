"""Staff changes of one table as a stream of the one store: ``staff:TABLE``.

The table's own log decides who holds which role there (``StaffAssigned``/``StaffRelieved``
in the table's stream); this stream is the floor's register of those changes beside it, by
whom and when, chained and checkpointed like every other stream.

>>> AT = "2026-01-01T00:00:00+00:00"
>>> s = StaffState()
>>> apply(s, StaffRoleGranted(table_id="t1", seq=1, actor="pat", at=AT, person="dee",
...                           staff_role="dealer", table_seq=5))
>>> s.roles
{'dee': ['dealer']}
>>> apply(s, StaffRoleWithdrawn(table_id="t1", seq=2, actor="pat", at=AT, person="dee",
...                             staff_role="dealer", table_seq=9))
>>> s.roles, invariants(s), roundtrips(s)
({}, [], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dicetable.core import events as envelope
from dicetable.store.record_codec import roundtrips as roundtrips
from dicetable.store.record_stream import RecordEvent
from dicetable.store.versioned import retry_stale
from dicetable.table.events import StaffAssigned, StaffChange

if TYPE_CHECKING:
    from dicetable.store.base import EventStore

KIND = "staff"


class StaffEvent(RecordEvent, abstract=True):
    stream_kind = KIND
    owner_field = "table_id"
    actor: str
    table_id: str
    person: str
    staff_role: str
    table_seq: int
    """The seq of the table's own ``StaffAssigned``/``StaffRelieved``."""
    by_role: str = ""


class StaffRoleGranted(StaffEvent):
    """The table's log assigned ``person`` to ``staff_role``."""


class StaffRoleWithdrawn(StaffEvent):
    """The table's log relieved ``person`` of ``staff_role``."""


@dataclass
class StaffState:
    seq: int = 0
    roles: dict[str, list[str]] = field(default_factory=dict)


def apply(state: StaffState, event: envelope.Event) -> None:
    if not isinstance(event, StaffEvent):
        raise ValueError(f"a {event.kind} is not a staff event")
    held = state.roles.setdefault(event.person, [])
    if isinstance(event, StaffRoleGranted):
        if event.staff_role not in held:
            held.append(event.staff_role)
            held.sort()
    elif event.staff_role in held:
        held.remove(event.staff_role)
    if not held:
        del state.roles[event.person]
    state.seq = event.seq


def invariants(state: Any) -> list[str]:
    return [f"{person} holds {roles}: a role twice" for person, roles in state.roles.items()
            if len(set(roles)) != len(roles)]


def record_staff(store: EventStore, table_id: str,
                 changes: Sequence[StaffChange]) -> None:
    """Register a table's committed staff changes (its ``StaffAssigned``/``StaffRelieved``)
    in ``staff:TABLE``."""
    stream = f"{KIND}:{table_id}"

    def attempt() -> None:  # another process registered a change meanwhile: after it, then
        head = store.head(stream).seq
        events = [(StaffRoleGranted if isinstance(e, StaffAssigned) else StaffRoleWithdrawn)(
            table_id=table_id, seq=head + 1 + i, actor=e.actor, at=e.at,
            person=e.person, staff_role=e.staff_role.value,
            table_seq=e.seq, by_role=e.role.value) for i, e in enumerate(changes)]
        store.append(stream, events, expected=head, request="")

    retry_stale(stream, attempt)
