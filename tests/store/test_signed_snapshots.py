"""A keyed store's snapshots are signed (spec/standards.md MEM-2): a resume starts from the
latest snapshot only when its HMAC under the chain key holds, so a state forged into the
snapshots table by someone without the key - re-digested or not - is never loaded; the table
is replayed from its log instead, and the audit names the snapshot."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from dicetable.store.audit import verify_store
from dicetable.store.base import EventStore
from dicetable.store.chain import Snapshot, canonical, make_snapshot
from dicetable.store.durable import DurableTable
from dicetable.store.memory import MemoryStore
from dicetable.store.replay import load_state
from dicetable.store.sqlite import SqliteStore
from tests.store.helpers import play, seat

KEY = bytes(range(32))


@pytest.fixture
def keyed(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[EventStore]:
    if backend == "memory":
        yield MemoryStore(key=KEY)
        return
    if backend == "sqlite":
        with SqliteStore(tmp_path / "log.db", synchronous="OFF", key=KEY) as s:
            yield s
        return
    from dicetable.store.postgres import PostgresStore, drop_schema
    url = request.getfixturevalue("pg_url")
    schema = f"dt_snap_{uuid.uuid4().hex[:10]}"
    with PostgresStore(url, schema=schema, key=KEY) as ps:
        yield ps
    drop_schema(url, schema)


def _played(store: EventStore) -> Snapshot:
    dt = DurableTable.open(store, "pa-craps", "t1", snapshot_every=20)
    seat(dt.table)
    play(dt.table, random.Random(5), 60)
    snap = store.latest_snapshot("t1")
    assert snap is not None
    assert snap.signed
    assert snap.trusted(KEY)
    return snap


def test_mem_2_a_resume_starts_from_a_signed_snapshot(keyed: EventStore) -> None:
    snap = _played(keyed)
    assert load_state(keyed, "t1") == load_state(keyed, "t1", use_snapshot=False)
    assert all(r.ok for r in verify_store(keyed))
    assert snap.seq > 1


@pytest.mark.parametrize("signature", ["unkeyed", "forged"])
def test_mem_2_a_snapshot_forged_without_the_key_is_never_loaded(keyed: EventStore,
                                                                 signature: str) -> None:
    snap = _played(keyed)
    honest = load_state(keyed, "t1")
    data = snap.data()
    player = next(iter(data["players"]))
    data["players"][player]["balance"] += 1_000_00
    forged = make_snapshot("t1", snap.seq, snap.event_hash, data,
                           None if signature == "unkeyed" else b"x" * 32)
    assert forged.body == canonical(data)
    keyed.save_snapshot(forged)
    assert load_state(keyed, "t1").players[player].balance == honest.players[player].balance
    report = verify_store(keyed)[0]
    assert [(p.seq, p.what) for p in report.problems] == [(snap.seq, "snapshot")]
