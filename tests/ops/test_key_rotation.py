"""``dicetable keys rotate``: every stream re-linked under a new key after the log verified
under the old one; recorded; the old checkpoint file kept and a new one started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dicetable.core.errors import InvalidInput
from dicetable.store import DurableTable, open_store, verify_store
from dicetable.store.checkpoints import verify_checkpoints
from dicetable.store.keys import init_key, read_key
from dicetable.store.operations_stream import STREAM, MigrationApplied
from dicetable.store.replay import load_state
from dicetable.store.rotation import rotate
from tests.ops.helpers import checkpoint, cli, small_floor


def test_a_rotated_store_verifies_under_the_new_key_only(tmp_path: Path) -> None:
    db = str(tmp_path / "floor.db")
    old = small_floor(db, tmp_path / "old.key")
    cp = tmp_path / "cp.jsonl"
    checkpoint(db, old, cp)
    new_file = init_key(tmp_path / "new.key")
    with pytest.raises(InvalidInput, match="not with the old key"):
        rotate(db, read_key(new_file), old)
    out = cli("keys", "rotate", "--db", db, "--key", str(tmp_path / "old.key"), "--new-key",
              str(new_file), "--checkpoints", str(cp))
    assert out.exit_code == 0, out.output
    new = read_key(new_file)
    with open_store(db, create=False, key=new) as store:
        assert all(r.ok for r in verify_store(store))
        assert load_state(store, "t1").balance("alice") == 100_00
        rotation = [e for e in store.events(STREAM) if isinstance(e, MigrationApplied)]
        assert verify_checkpoints(cp, new, [store]) == []
        DurableTable.resume(store, "t1").table.buy_in("alice", 1_00)  # appends go on
    assert [e.name for e in rotation] == ["key-rotation"]
    assert json.loads(rotation[0].detail)["old_key_id"].startswith("k-")
    kept = list(tmp_path.glob("cp.jsonl.before-rotation-*"))
    assert len(kept) == 1
    with open_store(db, create=False, key=old) as store:  # the old key no longer verifies
        assert not all(r.ok for r in verify_store(store, replay=False))
        with pytest.raises(InvalidInput, match="store.key|chained with"):
            DurableTable.resume(store, "t2").table.buy_in("alice", 1_00)


def test_a_store_with_archives_is_rotated_its_archives_re_signed(tmp_path: Path) -> None:
    import gzip

    from dicetable.store.archive import archive_through
    from dicetable.store.archive_file import read_archive
    from dicetable.store.incremental import ChainVerifier
    from dicetable.store.recall import recall_day
    from dicetable.store.sqlite import SqliteStore
    from tests.store.test_archive import DAYS, KEY, _play_days

    db = tmp_path / "floor.db"
    (tmp_path / "old.key").write_text(KEY.hex())
    with SqliteStore(db, synchronous="OFF", key=KEY) as store:
        _play_days(store)
        archive_through(store, DAYS[1], tmp_path / "arch", today=DAYS[2])
        bodies = {t: [r.body for r in store.records(t)] for t in store.stream_ids()}
        days = {d: recall_day(store, "t1", d) for d in DAYS}
        old_files = sorted({s.file for t in store.stream_ids() for s in store.archive_spans(t)})
    cp = tmp_path / "cp.jsonl"
    checkpoint(str(db), KEY, cp)
    new_file = init_key(tmp_path / "new.key")
    out = cli("keys", "rotate", "--db", str(db), "--key", str(tmp_path / "old.key"),
              "--new-key", str(new_file), "--checkpoints", str(cp))
    assert out.exit_code == 0, out.output
    new = read_key(new_file)
    with SqliteStore(db, key=new, create=False) as store:
        assert all(r.ok for r in verify_store(store)), [r.to_dict() for r in verify_store(store)]
        assert {t: [r.body for r in store.records(t)] for t in bodies} == bodies
        assert {d: recall_day(store, "t1", d) for d in DAYS} == days
        files = sorted({s.file for t in store.stream_ids() for s in store.archive_spans(t)})
        assert len(files) == len(old_files)
        assert not set(files) & set(old_files)  # the index names the re-signed files
        chains = ChainVerifier(store, slice_events=50)
        assert all(chains.check_new(s) is None for s in store.stream_ids())
        while chains.passes < 1:
            assert chains.roll() == []
        assert verify_checkpoints(cp, new, [store]) == []
        DurableTable.resume(store, "t1").table.join("newcomer")  # appends go on
    for path in files:
        read_archive(Path(path), new)
        with pytest.raises(InvalidInput, match="signature"):
            read_archive(Path(path), KEY)
    for path in old_files:  # kept as they were, signed by the old key
        read_archive(Path(path), KEY)
        assert gzip.decompress(Path(path).read_bytes())
    with SqliteStore(db, key=KEY, create=False) as store:
        assert not all(r.ok for r in verify_store(store, replay=False))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_store_is_not_rotated_while_a_server_serves_it(backend: str, tmp_path: Path) -> None:
    """``dicetable serve`` holds the serving lock shared (a flock on ``DB.serving``, an advisory
    lock on a PostgreSQL schema); a rotation under it is refused, naming ``store.serving``,
    and changes nothing: not the chain, not the checkpoint file."""
    import uuid

    from dicetable.store.chain import key_id
    from dicetable.store.postgres import drop_schema
    from dicetable.store.serving import hold_serving
    from tests.store.conftest import pg_url_or_skip

    db, schema = str(tmp_path / "floor.db"), "dicetable"
    if backend == "postgresql":
        db, schema = pg_url_or_skip(), f"rot_{uuid.uuid4().hex[:10]}"
    try:
        old = small_floor(db, tmp_path / "old.key", schema=schema)
        cp = tmp_path / "cp.jsonl"
        checkpoint(db, old, cp, schema=schema)
        signed = cp.read_bytes()
        new_file = init_key(tmp_path / "new.key")
        args = ("keys", "rotate", "--db", db, "--schema", schema, "--key",
                str(tmp_path / "old.key"), "--new-key", str(new_file), "--checkpoints", str(cp))
        serving = hold_serving(db, schema)  # what a running `dicetable serve` holds
        try:
            busy = cli(*args)
            with pytest.raises(InvalidInput, match="a server is serving") as refused:
                rotate(db, old, read_key(new_file), schema=schema)
        finally:
            serving.release()
        assert busy.exit_code == 2, busy.output
        assert "rule store.serving" in busy.output
        assert "stop every server on it before the key rotation" in busy.output
        assert refused.value.rule == "store.serving"
        assert cp.read_bytes() == signed
        assert not list(tmp_path.glob("cp.jsonl.before-rotation-*"))
        with open_store(db, schema=schema, create=False, key=old) as store:
            assert store.recorded_key_id() == key_id(old)
            assert all(r.ok for r in verify_store(store, replay=False))
            assert not [e for e in store.events(STREAM) if isinstance(e, MigrationApplied)]
        done = cli(*args)  # the server stopped: the same command rotates
        assert done.exit_code == 0, done.output
    finally:
        if backend == "postgresql":
            drop_schema(db, schema)
