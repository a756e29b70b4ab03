"""``dicetable audit verify``, ``recall`` and ``export`` on SQLite files and PostgreSQL URLs."""

from __future__ import annotations

import json
import random
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.store.chain import GENESIS, link_hash
from dicetable.store.durable import DurableTable
from dicetable.store.sqlite import SqliteStore
from tests.store.helpers import play, seat

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "floor.db"
    with SqliteStore(path, synchronous="OFF") as store:  # durability is not under test here
        craps = DurableTable.open(store, "pa-craps", "craps-1", snapshot_every=30)
        seat(craps.table)
        play(craps.table, random.Random(4), 120)
        ph = DurableTable.open(store, "pa-props-and-hops", "ph-1")
        seat(ph.table, ("zed",))
        play(ph.table, random.Random(5), 60)
    return path


def test_audit_verify_clean_log_exits_0(db: Path) -> None:
    result = runner.invoke(app, ["audit", "verify", str(db)])
    assert result.exit_code == 0, result.output
    assert "log intact" in result.output
    assert "craps-1" in result.output
    assert "ph-1" in result.output


def test_audit_verify_tampered_log_names_table_and_seq(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE event_log SET body = replace(body, '\"at\":\"2', '\"at\":\"1') "
                     "WHERE table_id = 'craps-1' AND seq = 4")
    result = runner.invoke(app, ["audit", "verify", str(db)])
    assert result.exit_code == 1
    assert "craps-1 seq 4: altered" in result.output
    js = runner.invoke(app, ["audit", "verify", str(db), "--json"])
    report = json.loads(js.output)
    assert report["ok"] is False
    bad = [t for t in report["tables"] if not t["ok"]]
    assert [(t["table"], t["problems"][0]["seq"], t["problems"][0]["what"]) for t in bad] \
        == [("craps-1", 4, "altered")]


def test_audit_verify_missing_db_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", "verify", str(tmp_path / "none.db")])
    assert result.exit_code == 2
    assert not (tmp_path / "none.db").exists()


def test_recall_json_has_rounds_with_wagers_and_balances(db: Path) -> None:
    result = runner.invoke(app, ["recall", str(db), "--table", "craps-1", "--rounds", "10",
                                 "--json"])
    assert result.exit_code == 0, result.output
    rounds = json.loads(result.output)["rounds"]
    assert len(rounds) == 10
    assert all({"wagers", "rolls", "collections", "payments", "balances_before",
                "balances_after"} <= r.keys() for r in rounds)
    text = runner.invoke(app, ["recall", str(db), "--table", "ph-1", "--rounds", "3"])
    assert text.exit_code == 0, text.output
    assert "round" in text.output
    assert "balances" in text.output


def test_recall_unknown_table_is_a_clear_error(db: Path) -> None:
    result = runner.invoke(app, ["recall", str(db), "--table", "nope"])
    assert result.exit_code == 2
    assert "no table 'nope'" in result.output


def test_export_writes_a_verifiable_json_lines_log(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "log.jsonl"
    result = runner.invoke(app, ["export", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    with SqliteStore(db) as store:
        assert len(lines) == sum(store.head(t).seq for t in store.tables())
    prev: dict[str, str] = {}
    for line in lines:  # the export carries the chain: it can be checked on its own
        body = json.dumps(line["event"], sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)
        assert line["prev_hash"] == prev.get(line["table"], GENESIS)
        assert link_hash(line["prev_hash"], body) == line["hash"]
        prev[line["table"]] = line["hash"]
    stdout = runner.invoke(app, ["export", str(db), "--table", "ph-1"])
    assert stdout.exit_code == 0
    assert all(json.loads(x)["table"] == "ph-1" for x in stdout.output.splitlines())


@pytest.fixture
def pg_db(pg_url: str) -> Iterator[tuple[str, str]]:
    from dicetable.store.postgres import PostgresStore, drop_schema

    schema = f"dt_cli_{uuid.uuid4().hex[:10]}"
    with PostgresStore(pg_url, schema=schema) as store:
        dt = DurableTable.open(store, "pa-craps", "craps-1")
        seat(dt.table)
        play(dt.table, random.Random(6), 60)
    yield pg_url, schema
    drop_schema(pg_url, schema)


def test_audit_and_recall_on_postgresql(pg_db: tuple[str, str]) -> None:
    import psycopg
    url, schema = pg_db
    ok = runner.invoke(app, ["audit", "verify", url, "--schema", schema])
    assert ok.exit_code == 0, ok.output
    rec = runner.invoke(app, ["recall", url, "--schema", schema, "--table", "craps-1",
                              "--json"])
    assert rec.exit_code == 0
    assert json.loads(rec.output)["rounds"]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DELETE FROM "{schema}".event_log WHERE seq = 7')
    bad = runner.invoke(app, ["audit", "verify", url, "--schema", schema])
    assert bad.exit_code == 1
    assert "craps-1 seq 7: deleted" in bad.output
