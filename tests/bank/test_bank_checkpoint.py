"""spec/table-bank.md §7 item 1 (reconcile continuously): a count made cold - nothing in
memory but the bank's log and the table's - resumes from the latest checkpoint of the running
totals and reads only the table events since, with the same result as folding the whole log.
Counted, not timed: how many table events the cold read touches."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from typing import overload

from dicetable.bank import events as bev
from dicetable.bank.follow import Totals
from dicetable.bank.ledger import TableBank
from dicetable.core.events import Event

from .helpers import B, F, pit


class Touched(Sequence[Event]):
    """A table log that counts the events read from it."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.read = 0

    def __len__(self) -> int:
        return len(self.events)

    @overload
    def __getitem__(self, i: int) -> Event: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Event]: ...
    def __getitem__(self, i: int | slice) -> Event | Sequence[Event]:
        got = self.events[i]
        self.read += len(got) if isinstance(i, slice) else 1  # type: ignore[arg-type]
        return got

    def __iter__(self) -> Iterator[Event]:
        for e in self.events:
            self.read += 1
            yield e


def _played(rolls: int, seed: int = 3) -> tuple[object, list[Event]]:
    p = pit()
    t = p.table
    t.join("alice")
    t.buy_in("alice", 2_000_00)
    rng = random.Random(seed)
    for _ in range(rolls):
        if t.balance("alice") < 100_00:
            t.buy_in("alice", 1_000_00)
        held = {b.wager for b in t.state.bets_of("alice")}
        if "pass" not in held and t.state.point is None:
            t.bet("alice", "pass", 10_00)
        if t.state.point is not None and "buy4" not in held:
            t.bet("alice", "buy4", 25_00)
        t.bet("alice", "field", 5_00)
        t.roll(f"{rng.randint(1, 6)}-{rng.randint(1, 6)}")
    return p, p.log


def test_reconcile_continuously_a_checkpoint_resumes_to_the_whole_fold() -> None:
    _, log = _played(400)
    whole = Totals().fold(log)
    for cut in (1, 57, len(log) // 2, len(log) - 1):
        head = Totals().fold(log, until=cut)
        resumed = Totals.resume(head.to_checkpoint(), head.value_counts()).fold(log, after=cut)
        assert resumed == whole, cut
    assert whole.count_of(5_00) == sum(
        1 for e in log for m in _moves(e) if abs(m) == 5_00)


def _moves(e: Event) -> list[int]:
    from dicetable.bank.follow import movements
    return [m.value for m in movements([e])]


def test_reconcile_continuously_a_cold_count_reads_only_the_events_since_the_checkpoint() -> None:
    p, log = _played(600)
    bank: TableBank = p.bank  # type: ignore[attr-defined]
    middle = len(log) - 120
    bank.note(Totals().fold(log, until=middle))
    cold = TableBank.replay(list(bank.state.log))
    touched = Touched(log)
    short = bank.expected(log, len(log)) - 5_00
    chips = ((500, short // 500),) if short % 500 == 0 else ((100, short // 100),)
    cold.count("shift", chips, counter="bo", counter_role=B, observer="fran",
               observer_role=F, table_log=touched, table_seq=len(log))
    # the tail since the checkpoint, and the newest $5 movements read back from the end
    assert touched.read <= 2 * (len(log) - middle)
    # the same count folding the whole log (no checkpoint) says the same
    bare = [e for e in bank.state.log if not isinstance(e, bev.TotalsNoted)]
    whole = TableBank.replay([dataclasses.replace(e, seq=i + 1) for i, e in enumerate(bare)])
    whole.count("shift", chips, counter="bo", counter_role=B, observer="fran",
                observer_role=F, table_log=log, table_seq=len(log))
    a = [e for e in cold.state.log if isinstance(e, bev.DiscrepancyFound)][-1]
    b = [e for e in whole.state.log if isinstance(e, bev.DiscrepancyFound)][-1]
    assert (a.expected, a.counted, a.variance) == (b.expected, b.counted, b.variance)
    assert a.variance == -5_00
    assert a.suspects[-1] == b.suspects[-1]  # "... and N more movements of $5": same N
    assert "more movements of $5" in a.suspects[-1]
