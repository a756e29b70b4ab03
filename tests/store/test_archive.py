"""Archiving closed gaming days (spec/standards.md MEM-2, REC-1, REC-4): a day's table
events move to a signed, compressed file whose first and last links are anchored in the
chain; the audit, the adjudication, recall and export read them as before; an archive file
altered, swapped or lost is found; a day still open, or one that does not verify, is not
archived. On every backend, and through ``dicetable archive``."""

from __future__ import annotations

import gzip
import json
import random
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.core.clock import FixedClock
from dicetable.core.errors import InvalidInput
from dicetable.store.adjudicate import adjudicate_store
from dicetable.store.archive import RETENTION, archive_through, gaming_day
from dicetable.store.audit import verify_store
from dicetable.store.base import EventStore
from dicetable.store.checkpoints import heads_of, verify_checkpoints, write_checkpoint
from dicetable.store.durable import DurableTable
from dicetable.store.incremental import ChainVerifier
from dicetable.store.memory import MemoryStore
from dicetable.store.recall import recall_day, recall_rounds
from dicetable.store.replay import load_state
from dicetable.store.sqlite import SqliteStore
from tests.store.helpers import play, seat

KEY = bytes(range(32))
DAYS = ("2026-03-01", "2026-03-02", "2026-03-03")


def _play_days(store: EventStore) -> None:
    """Two tables played on three gaming days (noon to evening, UTC)."""
    clock = FixedClock(datetime(2026, 3, 1, 12, tzinfo=UTC))
    craps = DurableTable.open(store, "pa-craps", "t1", clock=clock, snapshot_every=25)
    seat(craps.table)
    ph = DurableTable.open(store, "pa-props-and-hops", "t2", clock=clock)
    seat(ph.table, ("zed",))
    rng = random.Random(11)
    for day in range(3):
        clock.set(datetime(2026, 3, 1 + day, 12, tzinfo=UTC))
        for _ in range(20):
            play(craps.table, rng, 2)
            clock.advance(minutes=5)
        play(ph.table, rng, 15)


@pytest.fixture
def keyed(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[EventStore]:
    if backend == "memory":
        store: EventStore = MemoryStore(key=KEY)
        _play_days(store)
        yield store
        return
    if backend == "sqlite":
        with SqliteStore(tmp_path / "log.db", synchronous="OFF", key=KEY) as s:
            _play_days(s)
            yield s
        return
    from dicetable.store.postgres import PostgresStore, drop_schema
    url = request.getfixturevalue("pg_url")
    schema = f"dt_arch_{uuid.uuid4().hex[:10]}"
    with PostgresStore(url, schema=schema, key=KEY) as ps:
        _play_days(ps)
        yield ps
    drop_schema(url, schema)


def _export(store: EventStore) -> list[str]:
    return [json.dumps(r.to_line(), sort_keys=True) for t in store.streams()
            for r in store.records(t)]


def test_mem_2_archived_days_leave_the_live_log_and_read_back_unchanged(
        keyed: EventStore, tmp_path: Path) -> None:
    before = _export(keyed)
    rounds = {d: recall_day(keyed, "t1", d) for d in DAYS}
    last_rounds = recall_rounds(keyed, "t1", 3)
    state = load_state(keyed, "t1")
    done = archive_through(keyed, DAYS[1], tmp_path / "arch", today=DAYS[2])
    assert sorted(done.days) == list(DAYS[:2])
    assert [Path(f).name for f in done.files] == [f"{d}.jsonl.gz" for d in DAYS[:2]]
    spans = keyed.archive_spans("t1")
    assert [s.day for s in spans] == list(DAYS[:2])
    assert spans[0].first == 1
    assert spans[1].first == spans[0].last + 1  # each archive starts where the last ended
    # The live log holds only the open day; everything reads back exactly as before.
    assert _export(keyed) == before
    assert all(r.ok for r in verify_store(keyed)), [r.problems for r in verify_store(keyed)]
    assert adjudicate_store(keyed) == []
    assert load_state(keyed, "t1") == state
    assert {d: recall_day(keyed, "t1", d) for d in DAYS} == rounds
    assert recall_rounds(keyed, "t1", 3) == last_rounds
    chains = ChainVerifier(keyed, slice_events=7)
    assert all(chains.check_new(s) is None for s in keyed.stream_ids())
    while chains.passes < 1:
        assert chains.roll() == []


def test_mem_2_the_live_chain_is_anchored_on_the_last_archived_link(
        keyed: EventStore, tmp_path: Path) -> None:
    archive_through(keyed, DAYS[0], tmp_path / "arch", today=DAYS[2])
    span = keyed.archive_spans("t1")[-1]
    first_live = next(iter(keyed.records("t1", after=span.last)))
    assert first_live.prev_hash == span.last_hash
    assert gaming_day(json.loads(first_live.body)["at"]) == DAYS[1]


def test_mem_2_an_archive_altered_or_lost_is_found(keyed: EventStore, tmp_path: Path) -> None:
    done = archive_through(keyed, DAYS[1], tmp_path / "arch", today=DAYS[2])
    chains = ChainVerifier(keyed, slice_events=1000)
    assert all(chains.check_new(s) is None for s in keyed.stream_ids())  # read, verified
    path = Path(done.files[0])
    lines = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    lines[3] = lines[3].replace('"actor', '"actress')
    original = path.read_bytes()
    path.write_bytes(gzip.compress("".join(lines).encode()))
    problems = [p for r in verify_store(keyed) for p in r.problems]
    assert {(p.table, p.what) for p in problems} >= {("t1", "archive")}
    assert any("not the ones signed" in p.detail for p in problems)
    found = chains.roll()  # the rolling pass reads the archived history again
    assert {(p.table, p.what) for p in found} >= {("t1", "archive")}
    path.unlink()
    problems = [p for r in verify_store(keyed) for p in r.problems]
    assert any(p.what == "archive" and "missing" in p.detail for p in problems)
    path.write_bytes(original)
    assert all(r.ok for r in verify_store(keyed))


def _live_events(store: EventStore) -> int:
    return sum(store.head(s).seq - (spans[-1].last if (spans := store.archive_spans(s)) else 0)
               for s in store.stream_ids())


def test_mem_2_the_rolling_pass_walks_only_the_live_log_and_hashes_archives_in_steps(
        keyed: EventStore, tmp_path: Path) -> None:
    done = archive_through(keyed, DAYS[1], tmp_path / "arch", today=DAYS[2])
    chains = ChainVerifier(keyed, slice_events=3)
    assert all(chains.check_new(s) is None for s in keyed.stream_ids())
    checked = [0]
    while chains.passes < 1:
        before = chains.checked_archive_bytes
        assert chains.roll() == []
        checked.append(chains.checked_archive_bytes - before)
    # No archived event was walked again; each file was read whole, a slice's bytes a call.
    assert chains.walked_rolling == _live_events(keyed)
    files = sum(len(gzip.decompress(Path(f).read_bytes())) for f in done.files)
    assert chains.checked_archive_bytes == files
    assert max(checked) <= 3 * 512
    # The next pass finds a file cut short, altered, or the index's spans not linking.
    path = Path(done.files[1])
    path.write_bytes(path.read_bytes()[:-20])
    found = []
    while chains.passes < 2:
        found += chains.roll()
    assert {(p.table, p.what) for p in found} == {("t1", "archive"), ("t2", "archive")}
    assert all("cut short" in p.detail or "cannot be read" in p.detail for p in found)


def test_mem_2_a_table_read_from_a_day_file_parses_only_its_own_rows(
        keyed: EventStore, tmp_path: Path) -> None:
    archive_through(keyed, DAYS[0], tmp_path / "arch", today=DAYS[2])
    rows = list(keyed.records("t2", after=0, until=3))
    assert [r.seq for r in rows] == [1, 2, 3]
    held = next(iter(keyed._archive_files.values()))  # what was read, seen from inside
    assert held.body is None
    assert held.blocks is not None
    assert {held.blocks.blocks[n][0] for n in held.parsed} == {"t2"}


def test_mem_2_some_seqs_of_a_day_are_read_from_their_blocks_each_checked(
        keyed: EventStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file is written in blocks of rows, each signed by its digest in the manifest: a
    read inflates and checks only the blocks holding what it asks for, and a block altered
    (its digest no longer the signed one) is found when it is read."""
    import dicetable.store.archive_file as archive_file

    monkeypatch.setattr(archive_file, "BLOCK_ROWS", 16)
    before = _export(keyed)
    rounds = {(t, d): recall_day(keyed, t, d) for t in ("t1", "t2") for d in DAYS}
    last_rounds = recall_rounds(keyed, "t1", 5)
    done = archive_through(keyed, DAYS[1], tmp_path / "arch", today=DAYS[2])
    assert _export(keyed) == before
    keyed._archive_files.clear()
    # A day recalled from its blocks (and the snapshot before it from the day before's) is
    # the day recalled from the live log.
    assert {(t, d): recall_day(keyed, t, d) for t in ("t1", "t2") for d in DAYS} == rounds
    assert recall_rounds(keyed, "t1", 5) == last_rounds
    span = keyed.archive_spans("t1")[1]
    fresh = keyed
    fresh._archive_files.clear()  # as a store opened afresh
    rows = list(fresh.records("t1", after=span.first + 20, until=span.first + 22))
    assert [r.seq for r in rows] == [span.first + 21, span.first + 22]
    held = fresh._archive_files[span.mac]
    assert held.body is None
    assert held.blocks is not None
    assert len(held.parsed) == 1
    # Alter the rows of one block of the second day's file, keeping gzip's own checks whole.
    path = Path(done.files[1])
    data = path.read_bytes()
    blocks = archive_file.ArchiveBlocks.open(path, KEY)
    assert blocks is not None
    n = blocks.wanted(span, span.first + 40, span.first + 40)[0]
    start, end = blocks.offsets[n + 1], blocks.offsets[n + 2]
    import zlib
    text = zlib.decompressobj(-zlib.MAX_WBITS).decompress(data[start:end])
    forged = text.replace(b'"actor', b'"actres', 1)
    squeeze = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = squeeze.compress(forged) + squeeze.flush(zlib.Z_FULL_FLUSH)
    shift = len(piece) - (end - start)
    import struct
    offsets = [o + shift if o > start else o for o in blocks.offsets]
    head = data[:16] + struct.pack(f"<{len(offsets)}Q", *offsets)
    path.write_bytes(head + data[len(head):start] + piece + data[end:])
    fresh._archive_files.clear()
    assert blocks.rows(n - 1)  # the blocks around it still read
    with pytest.raises(archive_file.ArchiveError, match="not the ones signed"):
        archive_file.ArchiveBlocks.open(path, KEY).rows(n)  # type: ignore[union-attr]
    # A read of it falls back to the whole file, whose own checks name the damage.
    with pytest.raises(archive_file.ArchiveError, match="cannot be read"):
        list(fresh.records("t1", after=span.first + 39, until=span.first + 40))
    problems = [p for r in verify_store(keyed) for p in r.problems]
    assert any(p.what == "archive" and "cannot be read" in p.detail for p in problems)


def test_mem_2_another_signed_archive_in_its_place_is_found(keyed: EventStore,
                                                            tmp_path: Path) -> None:
    done = archive_through(keyed, DAYS[1], tmp_path / "arch", today=DAYS[2])
    first, second = (Path(f) for f in done.files)
    first.write_bytes(second.read_bytes())  # a genuine file, but not the one indexed
    problems = [p for r in verify_store(keyed) for p in r.problems]
    assert any(p.what == "archive" and "index" in p.detail for p in problems)


def test_mem_2_checkpoints_over_archived_events_still_verify(keyed: EventStore,
                                                             tmp_path: Path) -> None:
    cps = tmp_path / "cp.jsonl"
    write_checkpoint(cps, KEY, heads_of([keyed]), at="2026-03-03T20:00:00+00:00")
    archive_through(keyed, DAYS[1], tmp_path / "arch", today=DAYS[2])
    assert verify_checkpoints(cps, KEY, [keyed]) == []


def test_an_open_day_or_a_day_that_does_not_verify_is_not_archived(
        keyed: EventStore, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not closed"):
        archive_through(keyed, DAYS[2], tmp_path / "arch", today=DAYS[2])
    assert keyed.archive_spans("t1") == []
    unkeyed = MemoryStore()
    with pytest.raises(InvalidInput, match="key"):
        archive_through(unkeyed, DAYS[0], tmp_path / "arch", today=DAYS[2])


def test_retention_is_a_rule_with_its_citation_and_status(keyed: EventStore,
                                                          tmp_path: Path) -> None:
    assert RETENTION["PA"].status == "industry-default"  # PA 465a.6's text was not read
    assert "465a.6" in RETENTION["PA"].citation
    done = archive_through(keyed, DAYS[0], tmp_path / "arch", today=DAYS[2],
                           retention_years=7)
    with gzip.open(done.files[0], "rt") as f:
        manifest = json.loads(f.readline())
    pa = manifest["retention"]["by_jurisdiction"]["PA"]
    assert (pa["years"], pa["keep_until"]) == (7, "2033-03-01")
    assert "--retention-years 7" in pa["citation"]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_dicetable_archive_then_verify_recall_a_day_and_export(backend: str,
                                                               tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    key = tmp_path / "floor.db.key"
    key.write_text(KEY.hex())
    with SqliteStore(db, synchronous="OFF", key=KEY) as store:
        _play_days(store)
        day_before = recall_day(store, "t1", DAYS[0])
    run = CliRunner()
    out = run.invoke(app, ["archive", "--db", str(db), "--through", DAYS[1],
                           "--today", DAYS[2]])
    assert out.exit_code == 0, out.output
    assert f"{DAYS[0]}: " in out.output
    assert "retention PA: 10 years (industry-default)" in out.output
    assert (tmp_path / "floor.db.archive" / f"{DAYS[0]}.jsonl.gz").exists()
    with sqlite3.connect(db) as conn:
        live = conn.execute("SELECT min(seq) FROM event_log WHERE table_id = 't1'").fetchone()
    assert live[0] > 1
    verified = run.invoke(app, ["audit", "verify", str(db), "--adjudicate"])
    assert verified.exit_code == 0, verified.output
    recalled = run.invoke(app, ["recall", str(db), "--table", "t1", "--day", DAYS[0],
                                "--json"])
    assert recalled.exit_code == 0, recalled.output
    rounds = json.loads(recalled.output)["rounds"]
    assert rounds == [r.to_dict() for r in day_before]
    assert rounds
    assert all(gaming_day(r["started"]) == DAYS[0] for r in rounds)
    exported = run.invoke(app, ["export", str(db), "--table", "t1"])
    assert exported.exit_code == 0, exported.output
    seqs = [json.loads(line)["seq"] for line in exported.output.splitlines()]
    assert seqs == list(range(1, len(seqs) + 1))
    archive = tmp_path / "floor.db.archive" / f"{DAYS[0]}.jsonl.gz"
    archive.write_bytes(archive.read_bytes()[:-10])  # cut short
    broken = run.invoke(app, ["audit", "verify", str(db)])
    assert broken.exit_code == 1
    assert "archive" in broken.output


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_dicetable_archive_is_refused_while_a_server_serves_the_store(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The serving lock ``dicetable serve`` holds shared (``DB.serving``'s flock, a PostgreSQL
    schema's advisory lock) refuses an archive run, naming ``store.serving``: nothing moves."""
    from dicetable.store.open import open_store
    from dicetable.store.postgres import drop_schema
    from dicetable.store.serving import hold_serving

    (tmp_path / "k").write_text(KEY.hex())
    db, schema = str(tmp_path / "floor.db"), "dicetable"
    if backend == "postgresql":
        db, schema = request.getfixturevalue("pg_url"), f"dt_arch_{uuid.uuid4().hex[:10]}"
    args = ["archive", "--db", db, "--schema", schema, "--key", str(tmp_path / "k"),
            "--through", DAYS[1], "--today", DAYS[2], "--dir", str(tmp_path / "arch")]
    try:
        with open_store(db, schema=schema, key=KEY) as store:
            _play_days(store)
            before = _export(store)
        serving = hold_serving(db, schema)  # what a running `dicetable serve` holds
        try:
            busy = CliRunner().invoke(app, args)
        finally:
            serving.release()
        assert busy.exit_code == 2, busy.output
        assert "rule store.serving" in busy.output
        assert "stop every server on it before the archive" in busy.output
        assert not (tmp_path / "arch").exists() or not list((tmp_path / "arch").iterdir())
        with open_store(db, schema=schema, create=False, key=KEY) as store:
            assert _export(store) == before
            assert not store.archive_spans("t1")
        done = CliRunner().invoke(app, args)  # the server stopped: the same command archives
        assert done.exit_code == 0, done.output
        assert (tmp_path / "arch" / f"{DAYS[0]}.jsonl.gz").exists()
    finally:
        if backend == "postgresql":
            drop_schema(db, schema)
