"""The small aggregates the floor writes itself (accounts, staff changes, faults, kept request
answers): one envelope for their events, and one way to register a kind whose state is a plain
record (a snapshot is its fields).

>>> class NoteEvent(RecordEvent, abstract=True):
...     stream_kind = "notes"
...     owner_field = "desk"
...     desk: str
>>> class NoteWritten(NoteEvent):
...     text: str
>>> e = NoteWritten(seq=1, at="2026-01-01T00:00:00+00:00", desk="front", text="hi")
>>> e.stream, e.actor, e.role.value
('notes:front', 'system', 'system')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from dicetable.core import events as envelope
from dicetable.core.roles import Role
from dicetable.store.base import SEPARATOR, Aggregate, register
from dicetable.store.record_codec import decode_fields, encode_fields, roundtrips


class RecordEvent(envelope.Event, abstract=True):
    """The envelope: written by ``system`` unless said otherwise, to ``KIND:OWNER``, where
    OWNER is the value of the event's ``owner_field`` (the account, the table)."""

    actor: str = "system"
    role: Role = Role.SYSTEM
    stream_kind: ClassVar[str] = ""
    owner_field: ClassVar[str] = ""

    @property
    def stream(self) -> str:
        return f"{self.stream_kind}{SEPARATOR}{getattr(self, self.owner_field)}"


class AccountRecordEvent(RecordEvent, abstract=True):
    """The envelope of a stream an account owns (``KIND:ACCOUNT``: its account, its wallet,
    its kept answers)."""

    owner_field = "account"
    account: str


FLOOR = "floor"
"""The owner of a stream the floor has only one of (``faults:floor``, ``operations:floor``)."""


class FloorEvent(RecordEvent, abstract=True):
    """The envelope of a floor-wide stream's events: the floor owns the stream."""

    owner_field = "floor"
    floor: str = FLOOR


def register_record_kind(base: type[RecordEvent], state: type[Any],
                         fold: Callable[[Any, envelope.Event], None],
                         invariants: Callable[[Any], list[str]],
                         first: type[RecordEvent] | None = None) -> None:
    """Register the kind of ``base``'s events; ``first``: the event every stream starts with."""

    def decode(data: dict[str, Any], first_event: envelope.Event) -> Any:
        if first is not None and not isinstance(first_event, first):
            raise ValueError(f"a {base.stream_kind} stream starts with {first.__name__}")
        return decode_fields(state, data)

    register(Aggregate(base.stream_kind, base, base.owner_field, state, fold, encode_fields,
                       decode, invariants, roundtrips))
