"""The server checks before it serves (spec/standards.md MEM-2, MEM-3, RES-2, RES-3).

At start-up, before a request is taken, and then periodically, every stream is verified: each
table's keyed chain and recorded head, the other streams (accounts, staff, faults), and the
signed checkpoints when a checkpoint file is kept. A table whose log fails is put in a locked
fault state: it is not loaded (a forged balance is never served), a ``TableFaulted`` record
goes into the chained ``faults`` stream, and the pit console lists it. It stays locked - also
across restarts, even once the log verifies again - until a pit boss or shift manager clears
it with an authorised, recorded command, which verifies the log once more first.
"""

from __future__ import annotations

import logging
from typing import Any

from dicetable.core.errors import DicetableError, ProcedureViolation
from dicetable.core.roles import Role
from dicetable.store.audit import verify_table
from dicetable.store.base import EventStore
from dicetable.store.streamlog import StreamLog, verify_streams

log = logging.getLogger(__name__)

FAULTS = "faults"
"""The stream of fault records (raised and cleared)."""
FAULT_CITATION = ("25 CFR 547.10 (critical memory error: stop play, record a fault event; "
                  "spec/standards.md MEM-3) [other-jurisdiction]")
CLEARERS = frozenset({Role.PIT_BOSS, Role.SHIFT_MANAGER})
"""Who may clear a fault (industry-default: a supervisor above the table)."""


class TableFaulted(DicetableError):
    """The table's log failed verification: locked until an authorised clear."""


class Faults:
    """The open faults, from the chained ``faults`` stream."""

    def __init__(self, streams: StreamLog) -> None:
        self.streams = streams
        self.open: dict[str, dict[str, Any]] = {}
        for row in streams.records(FAULTS):
            data = row.data()
            if row.kind == "TableFaulted":
                self.open[str(data["table"])] = data
            elif row.kind == "FaultCleared":
                self.open.pop(str(data["table"]), None)

    def raise_fault(self, table: str, what: str, detail: str, at: str) -> None:
        if table in self.open:
            return
        self.streams.append(FAULTS, "TableFaulted",
                            {"table": table, "what": what, "detail": detail, "at": at})
        self.open[table] = {"table": table, "what": what, "detail": detail, "at": at}
        log.error("integrity fault on %s: %s - %s", table, what, detail)

    def clear(self, table: str, by: str, role: str, reason: str, at: str) -> None:
        self.streams.append(FAULTS, "FaultCleared",
                            {"table": table, "by": by, "role": role, "reason": reason,
                             "at": at})
        self.open.pop(table, None)

    def refuse(self, table: str) -> None:
        fault = self.open.get(table)
        if fault is not None:
            raise TableFaulted(f"{table} is locked: its log failed verification "
                               f"({fault['what']}: {fault['detail']}); a pit boss must clear "
                               "the fault", rule="integrity.fault", citation=FAULT_CITATION)


def table_problem(store: EventStore, table: str) -> tuple[str, str] | None:
    """(what, detail) of the table's first chain problem, or None when it verifies.

    The table may be in play: an append landing between reading its head and its rows looks
    like rows "added outside the store". Every append moves the head, so a problem found
    while the head stood still is real; one found while it moved is checked again.
    """
    for _ in range(5):
        before = store.head(table)
        report = verify_table(store, table, replay=False)
        if report.ok:
            return None
        if store.head(table) == before:
            break
    p = report.problems[0]
    return p.what, f"seq {p.seq}: {p.detail}"


def stream_problems(streams: StreamLog) -> list[tuple[str, str, str]]:
    return [(p.stream, p.what, f"seq {p.seq}: {p.detail}") for p in verify_streams(streams)
            if p.stream != FAULTS]


def still_failing(table: str, problem: tuple[str, str]) -> ProcedureViolation:
    return ProcedureViolation(f"{table} still fails verification ({problem[0]}: {problem[1]}); "
                              "restore its log before clearing", rule="integrity.fault",
                              citation=FAULT_CITATION)
