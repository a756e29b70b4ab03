"""A wallet cannot be overdrawn by two writers at once (NJAC 13:69E-1.37A, spec/standards.md
SEC-4: no overdraft, no simultaneous transactions on one account): money leaves a wallet only
by an event appended at the stream version its balance was read at, and a writer that finds
the stream moved on reads the balance again and decides again. Each move is a wallet ``Step``
through ``Application.submit`` (``wallets.moved``), as the routes give it.

Raced on every backend by two store handles (two connections, as two server processes have),
and by two real processes on one SQLite file and on one PostgreSQL schema.
"""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest

from dicetable.application.wallets import TABLES, deposit, moved, on_store, taken, wallet_state
from dicetable.core.errors import InvalidInput
from dicetable.store.base import EventStore
from dicetable.store.open import open_store
from tests.store.conftest import StoreFactory

AT = "2026-01-01T00:00:00+00:00"


def _enough(amount: int, seen: list[int]) -> object:
    def check(balance: int) -> None:
        seen.append(balance)
        if amount > balance:
            raise InvalidInput(f"the wallet holds {balance}", rule="wallet.balance")
    return check


def test_two_writers_deciding_on_one_balance_cannot_both_spend_it(
        store_factory: StoreFactory) -> None:
    first, second = store_factory(), store_factory()
    deposit(first, "al", 100_00, "cage", AT)
    both_read = threading.Barrier(2, timeout=30)
    seen: dict[str, list[int]] = {"a": [], "b": []}
    outcome: dict[str, str] = {}

    def spend(name: str, store: EventStore) -> None:
        inner = _enough(80_00, seen[name])

        def check(balance: int) -> None:
            if not seen[name]:  # both have read the balance at the same version
                both_read.wait()
            inner(balance)  # type: ignore[operator]
        try:
            moved(on_store(store), "al", TABLES,
                  taken("al", 80_00, AT, credits=0, check=check, table="e1", transfer=name))
            outcome[name] = "taken"
        except InvalidInput as refused:
            outcome[name] = refused.rule

    threads = [threading.Thread(target=spend, args=("a", first)),
               threading.Thread(target=spend, args=("b", second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcome.values()) == ["taken", "wallet.balance"]
    loser = next(n for n, o in outcome.items() if o != "taken")
    assert seen[loser] == [100_00, 20_00]  # decided again on the balance the winner left
    assert wallet_state(first, "al").own() == 20_00
    assert [e.kind for e in first.events("wallet:al")] == ["WalletDeposited", "WalletToTable"]


def _spend_dollars(location: str, schema: str, start: object, out: object) -> None:
    store = open_store(location, schema=schema)
    spent = refused = 0
    start.wait()  # type: ignore[attr-defined]
    try:
        while True:
            try:
                moved(on_store(store), "al", TABLES, taken(
                    "al", 1_00, AT, credits=0, check=_enough(1_00, []),  # type: ignore[arg-type]
                    reason="cage"))
                spent += 1
            except InvalidInput:
                refused += 1
                break
    finally:
        store.close()
    out.put((spent, refused))  # type: ignore[attr-defined]


def _race_processes(location: str, schema: str) -> None:
    store = open_store(location, schema=schema)
    try:
        deposit(store, "al", 40_00, "cage", AT)
    finally:
        store.close()
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Barrier(2, timeout=60), ctx.Queue()
    procs = [ctx.Process(target=_spend_dollars, args=(location, schema, start, out))
             for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert sum(taken for taken, _ in results) == 40  # every dollar once, none twice
    assert all(refused == 1 for _, refused in results)
    store = open_store(location, schema=schema)
    try:
        state = wallet_state(store, "al")
        assert (state.own(), state.withdrawn, state.seq) == (0, 40_00, 41)
    finally:
        store.close()


def test_two_processes_spending_one_sqlite_wallet_never_overdraw(tmp_path: Path) -> None:
    _race_processes(str(tmp_path / "log.db"), "dicetable")


def test_two_processes_spending_one_postgresql_wallet_never_overdraw(pg_url: str) -> None:
    import uuid

    from dicetable.store.postgres import drop_schema

    schema = f"dt_test_{uuid.uuid4().hex[:12]}"
    try:
        _race_processes(pg_url, schema)
    finally:
        drop_schema(pg_url, schema)


@pytest.mark.parametrize("amount", [0, -5])
def test_a_deposit_of_nothing_is_refused_and_writes_nothing(amount: int,
                                                            store: EventStore) -> None:
    with pytest.raises(InvalidInput) as refused:
        deposit(store, "al", amount, "cage", AT)
    assert refused.value.rule == "money.amount"
    assert list(store.events("wallet:al")) == []
