"""``dicetable backup`` and ``dicetable restore`` on SQLite and PostgreSQL (store/backup.py,
store/restore.py): a backup refuses to be read once altered; a restore needs two people,
lists what it loses, is recorded and signed, and the checkpoints hold the restored store to
the lines after it only."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from dicetable.core.errors import InvalidInput
from dicetable.store import open_store
from dicetable.store.backup import read_backup
from dicetable.store.checkpoints import verify_checkpoints
from dicetable.store.operations_stream import STREAM, StoreRestored
from tests.ops.helpers import PASSWORD, checkpoint, cli, play, small_floor
from tests.store.conftest import pg_url_or_skip

TWO = f"{PASSWORD}\n{PASSWORD}\n"


def _restore(db: str, bk: Path, cp: Path, *extra: str, stdin: str = TWO) -> Any:
    return cli("restore", "--db", db, "--from", str(bk), "--by", "pat", "--approved-by", "ann",
               "--reason", "test", "--checkpoints", str(cp), "--passwords-from-stdin", *extra,
               stdin=stdin)


def test_a_backup_altered_in_any_file_or_its_manifest_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "floor.db")
    key = small_floor(db, tmp_path / "floor.db.key")
    cp = tmp_path / "cp.jsonl"
    checkpoint(db, key, cp)
    made = cli("backup", "--db", db, "--to", str(tmp_path / "bk"), "--checkpoints", str(cp))
    assert made.exit_code == 0, made.output
    manifest = json.loads((tmp_path / "bk" / "manifest.json").read_text())
    assert set(manifest["files"]) == {"store.db", "chain.key", "checkpoints.jsonl"}
    assert manifest["checkpoint"] == 1
    assert manifest["heads"]["t1"][0] == 3
    read_backup(tmp_path / "bk", key)
    with pytest.raises(InvalidInput, match="signed with this key"):
        read_backup(tmp_path / "bk", b"x" * 32)
    with (tmp_path / "bk" / "checkpoints.jsonl").open("a") as f:
        f.write("{}\n")
    with pytest.raises(InvalidInput, match="checkpoints.jsonl in the backup is not"):
        read_backup(tmp_path / "bk", key)
    manifest["files"]["checkpoints.jsonl"] = "0" * 64
    (tmp_path / "bk" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InvalidInput, match="not signed with this key"):
        read_backup(tmp_path / "bk", key)
    again = cli("backup", "--db", db, "--to", str(tmp_path / "bk"))
    assert again.exit_code == 2
    assert "backup.directory" in again.output or "not empty" in again.output


def test_a_restore_lists_every_command_after_the_backup_and_is_recorded(
        tmp_path: Path) -> None:
    db = str(tmp_path / "floor.db")
    key = small_floor(db, tmp_path / "floor.db.key")
    cp = tmp_path / "cp.jsonl"
    before = play(db, key, "t1", ["dee:a", "dee:b"])
    checkpoint(db, key, cp)
    assert cli("backup", "--db", db, "--to", str(tmp_path / "bk"), "--checkpoints",
               str(cp)).exit_code == 0
    after = play(db, key, "t1", ["dee:c", "dee:d"])
    after |= play(db, key, "t2", ["dee:e"])
    checkpoint(db, key, cp)
    late = play(db, key, "t1", ["dee:f"])  # after the last checkpoint: in the old store only
    # a rolled-back store without a recorded restore is faulted as truncated
    import shutil

    shutil.copyfile(tmp_path / "bk" / "store.db", tmp_path / "rolled.db")
    with open_store(tmp_path / "rolled.db", create=False, key=key) as rolled:
        assert {p.what for p in verify_checkpoints(cp, key, [rolled])} == {"truncated"}

    assert _restore(db, tmp_path / "bk", cp, stdin=f"{PASSWORD}\nwrong\n").exit_code == 2
    done = _restore(db, tmp_path / "bk", cp, "--report", str(tmp_path / "r.json"))
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "r.json").read_text())
    listed = {r["request"]: r["last_seq"] for r in report["requests"]}
    assert listed == after | late
    assert not set(listed) & set(before)
    assert report["streams"]["t1"]["lost"] == 3
    assert report["streams"]["t1"]["checkpointed_seq"] == after["dee:d"]
    assert report["streams"]["t2"]["lost"] == 1
    unvouched = [e for e in report["events"] if not e["checkpointed"]]
    assert [(e["stream"], e["seq"]) for e in unvouched] == [("t1", late["dee:f"])]
    assert "request dee:f: t1" in done.output
    assert report["previous"]
    assert Path(report["previous"]).exists()

    with open_store(db, create=False, key=key) as store:
        assert store.head("t1").seq == before["dee:b"]
        events = list(store.events(STREAM))
        assert verify_checkpoints(cp, key, [store]) == []
    assert isinstance(events[-1], StoreRestored)
    assert (events[-1].actor, events[-1].approved_by, events[-1].lost_requests) == \
        ("pat", "ann", 4)
    last = json.loads(cp.read_text().splitlines()[-1])
    assert last["heads"] == {}
    assert last["restore"]["stream"] == STREAM
    assert cli("audit", "verify", db, "--checkpoints", str(cp)).exit_code == 0

    # the restore line is honoured only while the store holds the restore it names
    shutil.copyfile(tmp_path / "bk" / "store.db", db)
    with open_store(db, create=False, key=key) as store:
        assert [p.what for p in verify_checkpoints(cp, key, [store])] == ["restore"]


@pytest.fixture
def pg_schema() -> Iterator[tuple[str, str]]:
    url = pg_url_or_skip()
    schema = f"ops_{uuid.uuid4().hex[:10]}"
    yield url, schema
    with psycopg.connect(url, autocommit=True) as conn:
        for (name,) in conn.execute("SELECT schema_name FROM information_schema.schemata "
                                    "WHERE schema_name LIKE %s", (f"{schema}%",)).fetchall():
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))


@pytest.mark.parametrize("method", ["pg_dump", "copy"])
def test_a_postgresql_floor_backs_up_and_restores(pg_schema: tuple[str, str], tmp_path: Path,
                                                  method: str) -> None:
    url, schema = pg_schema
    key = small_floor(url, tmp_path / "k", schema=schema)
    cp = tmp_path / "cp.jsonl"
    checkpoint(url, key, cp, schema=schema)
    made = cli("backup", "--db", url, "--schema", schema, "--to", str(tmp_path / "bk"),
               "--key", str(tmp_path / "k"), "--checkpoints", str(cp), "--method", method)
    assert made.exit_code == 0, made.output
    after = play(url, key, "t1", ["dee:x"], schema=schema)
    checkpoint(url, key, cp, schema=schema)
    done = _restore(url, tmp_path / "bk", cp, "--schema", schema, "--key", str(tmp_path / "k"),
                    "--report", str(tmp_path / "r.json"))
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert {r["request"]: r["last_seq"] for r in report["requests"]} == after
    with open_store(url, schema=schema, create=False, key=key) as store:
        assert store.head("t1").seq == after["dee:x"] - 1
        assert isinstance(list(store.events(STREAM))[-1], StoreRestored)
        assert verify_checkpoints(cp, key, [store]) == []
    assert report["previous"].startswith(f"{schema}_before_restore_")
    assert cli("audit", "verify", url, "--schema", schema, "--key", str(tmp_path / "k"),
               "--checkpoints", str(cp)).exit_code == 0


def test_a_postgresql_store_is_not_restored_while_a_server_holds_it(
        pg_schema: tuple[str, str], tmp_path: Path) -> None:
    from dicetable.store.serving import exclusive, hold_serving

    url, schema = pg_schema
    key = small_floor(url, tmp_path / "k", schema=schema)
    cp = tmp_path / "cp.jsonl"
    checkpoint(url, key, cp, schema=schema)
    made = cli("backup", "--db", url, "--schema", schema, "--to", str(tmp_path / "bk"),
               "--key", str(tmp_path / "k"), "--checkpoints", str(cp))
    assert made.exit_code == 0, made.output
    first, second = hold_serving(url, schema), hold_serving(url, schema)  # two workers
    try:
        busy = _restore(url, tmp_path / "bk", cp, "--schema", schema, "--key",
                        str(tmp_path / "k"), "--report", str(tmp_path / "r.json"))
        assert busy.exit_code == 2
        assert "store.serving" in busy.output or "a server is serving" in busy.output
        with exclusive(url, "restore", f"{schema}_other"):  # another schema is another store
            pass
        first.release()
        with pytest.raises(InvalidInput, match="a server is serving"), \
                exclusive(url, "restore", schema):
            pass
    finally:
        first.release()
        second.release()
    with exclusive(url, "restore", schema), pytest.raises(InvalidInput, match="being restored"):
        hold_serving(url, schema)
    assert _restore(url, tmp_path / "bk", cp, "--schema", schema, "--key",
                    str(tmp_path / "k"), "--report", str(tmp_path / "r.json")).exit_code == 0
