"""The keyed, anchored chain (spec/standards.md MEM-2, issue 12 break 4): every insider
rewrite - raising a chip purchase, forging a payout, erasing a cash-out, dropping the last
events - is found, whether the rows are only edited, rehashed without the key, or rehashed
with it; the CLI (keys init, audit checkpoint, audit verify --checkpoints --adjudicate)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from bench.tamper_cases import ATTACKERS, KEY, TABLE, _rewrite, build, run_all
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.errors import InvalidInput
from dicetable.store.audit import verify_store
from dicetable.store.chain import link_hash
from dicetable.store.sqlite import SqliteStore

runner = CliRunner()


def test_mem_2_every_rewrite_is_detected_with_and_without_the_key(tmp_path: Path) -> None:
    outcomes = run_all(tmp_path)
    assert len(outcomes) == 5 * len(ATTACKERS)
    missed = [o for o in outcomes if not o.detected]
    assert not missed, missed
    by = {(o.case, o.attacker): o.by for o in outcomes}
    # without the key, no rehash passes the keyed chain
    assert all(v == "keyed chain" for (_, a), v in by.items() if a != "key")
    # with the key: the checkpoints anchor history, the adjudication judges the rest
    assert by[("forge a payout after the checkpoint", "key")] == "adjudication"
    assert by[("drop the last events, behind the checkpoint", "key")] == "checkpoint"


def test_mem_2_the_unkeyed_chain_is_what_let_a_rehash_through(tmp_path: Path) -> None:
    """Today's plain SHA-256 chain: a rehashed rewrite verifies - the break this fixes."""
    with SqliteStore(tmp_path / "plain.db") as store:
        from dicetable.store.durable import DurableTable

        t = DurableTable.open(store, "pa-craps", TABLE).table
        t.join("alice")
        t.buy_in("alice", 100_00)
    assert link_hash("0" * 64, "{}") != link_hash("0" * 64, "{}", KEY)


def test_mem_2_a_keyed_store_refuses_a_writer_without_its_key(tmp_path: Path) -> None:
    db, _ = build(tmp_path)
    with SqliteStore(db) as store:  # no key
        from dicetable.store.durable import DurableTable

        with pytest.raises(InvalidInput, match="chained with key"):
            DurableTable.resume(store, TABLE).table.join("mallory")
        assert [p.what for r in verify_store(store) for p in r.problems] == ["key"]


def test_keys_init_writes_a_private_key_once(tmp_path: Path) -> None:
    path = tmp_path / "chain.key"
    first = runner.invoke(app, ["keys", "init", str(path)])
    assert first.exit_code == 0, first.output
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(bytes.fromhex(path.read_text().strip())) == 32
    again = runner.invoke(app, ["keys", "init", str(path)])
    assert again.exit_code == 2
    assert "never overwritten" in again.output


def test_audit_verify_checkpoints_and_adjudicate(tmp_path: Path) -> None:
    db, cps = build(tmp_path)
    key = tmp_path / "k"
    key.write_text(KEY.hex())
    ok = runner.invoke(app, ["audit", "verify", str(db), "--key", str(key), "--checkpoints",
                             str(cps), "--adjudicate"])
    assert ok.exit_code == 0, ok.output
    assert "keyed chain" in ok.output
    more = runner.invoke(app, ["audit", "checkpoint", str(db), "--key", str(key),
                               "--checkpoints", str(cps)])
    assert more.exit_code == 0, more.output
    assert cps.read_text().count("\n") == 2
    forged = tmp_path / "forged.db"
    shutil.copyfile(db, forged)
    from bench.tamper_cases import CASES

    _rewrite(forged, CASES["forge a payout after the checkpoint"], "key")
    caught = runner.invoke(app, ["audit", "verify", str(forged), "--key", str(key),
                                 "--checkpoints", str(cps), "--adjudicate"])
    assert caught.exit_code == 1, caught.output
    assert "adjudication: payment" in caught.output
    assert "rules call for" in caught.output
    truncated = tmp_path / "cut.db"
    shutil.copyfile(db, truncated)
    from bench.tamper_cases import _drop_after

    _rewrite(truncated, _drop_after(5), "key")
    cut = runner.invoke(app, ["audit", "verify", str(truncated), "--key", str(key),
                              "--checkpoints", str(cps)])
    assert cut.exit_code == 1
    assert "truncated" in cut.output
    import json

    line = json.loads(cps.read_text().splitlines()[0])
    line["heads"][TABLE][0] -= 1  # an insider moves the anchor back without the key
    cps.write_text(json.dumps(line) + "\n")
    bad = runner.invoke(app, ["audit", "verify", str(db), "--key", str(key), "--checkpoints",
                              str(cps)])
    assert bad.exit_code == 1
    assert "forged" in bad.output


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres"])
def test_mem_2_every_backend_keys_its_chain_and_its_streams(backend: str,
                                                            tmp_path: Path) -> None:
    import uuid

    from dicetable.application.accounts import Accounts, Kind
    from dicetable.store.audit import verify_table
    from dicetable.store.durable import DurableTable
    from dicetable.store.open import open_store
    from dicetable.store.postgres import drop_schema
    from tests.store.conftest import pg_url_or_skip

    schema = f"t_{uuid.uuid4().hex[:10]}"
    where = {"memory": "memory", "sqlite": str(tmp_path / "k.db")}.get(backend) \
        or pg_url_or_skip()
    store = open_store(where, schema=schema, key=KEY)
    try:
        t = DurableTable.open(store, "pa-craps", "k1").table
        t.join("alice")
        rows = list(store.records("k1"))
        assert all(r.hash == link_hash(r.prev_hash, r.body, KEY) for r in rows)
        assert store.recorded_key_id() == store.key_id
        Accounts(store).create("alice", "alice-password", Kind.PLAYER)
        assert verify_table(store, "account:alice").ok
        assert all(r.hash == link_hash(r.prev_hash, r.body, KEY)
                   for r in store.records("account:alice"))
        if backend != "memory":  # a second handle without the key is refused, writes nothing
            keyless = open_store(where, schema=schema)
            try:
                with pytest.raises(InvalidInput, match="chained with key"):
                    DurableTable.resume(keyless, "k1").table.join("bob")
                assert keyless.head("k1") == store.head("k1")
            finally:
                keyless.close()
            other = Accounts(where, schema=schema)
            with pytest.raises(InvalidInput, match="chained with key"):
                other.create("bob", "bob-password", Kind.PLAYER)
            other.close()
    finally:
        store.close()
        if backend == "postgres":
            drop_schema(where, schema)
