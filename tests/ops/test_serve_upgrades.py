"""``dicetable serve`` upgrades an older store before it serves it (each migration once,
recorded), or with ``--upgrade refuse`` (``DICETABLE_UPGRADE``) does not serve it - on the
golden stores written by earlier commits, through the real server."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import httpx
import pytest

from dicetable.store import open_store
from dicetable.store.operations_stream import STREAM, MigrationApplied
from dicetable.store.schema_version import CURRENT, version_of
from tests.ops.helpers import cli, cli_process
from tests.server.processes import TIMEOUT, start_serve
from tests.store.test_golden_stores import GOLDEN, STORES, _copy, _facts


def _migrations(db: Path, key: bytes) -> list[tuple[int, int]]:
    with open_store(db, create=False, key=key) as store:
        return [(e.version_from, e.version_to) for e in store.events(STREAM)
                if isinstance(e, MigrationApplied)]


@pytest.mark.parametrize("name", sorted(STORES))
def test_serve_upgrades_an_older_store_once_and_refuses_when_told_to(
        name: str, tmp_path: Path) -> None:
    # The refusals are asked of the CLI in this process (the option decides, not the process
    # boundary); the port is one held here, so a serve that failed to refuse could not serve.
    # The environment variable is read when a process starts: that one is a process of its own.
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    held = str(holder.getsockname()[1])
    try:
        _upgrades_once_and_refuses_when_told_to(name, tmp_path, held)
    finally:
        holder.close()


def _upgrades_once_and_refuses_when_told_to(name: str, tmp_path: Path, held: str) -> None:
    db, key = _copy(name, tmp_path)
    expected = json.loads((GOLDEN / f"store-{name}.db.expected.json").read_text())
    if key is None:  # an unkeyed store is re-linked under a key: none, none served
        bare = cli("serve", "--db", str(db), "--port", held)
        assert bare.exit_code == 2, bare.output
        assert "rule store.key" in bare.stderr
        assert version_of(db) == STORES[name]
        assert cli("keys", "init", f"{db}.key").exit_code == 0
        from dicetable.store.keys import read_key
        key = read_key(f"{db}.key")
    refused = cli("serve", "--db", str(db), "--upgrade", "refuse", "--port", held)
    assert refused.exit_code == 2, refused.output
    assert "rule store.version" in refused.stderr
    assert f"store version {STORES[name]}" in refused.stderr
    os.environ["DICETABLE_UPGRADE"] = "refuse"
    try:
        by_env = cli_process("serve", "--db", str(db), "--port", "1")
    finally:
        del os.environ["DICETABLE_UPGRADE"]
    assert by_env.returncode == 2
    assert "rule store.version" in by_env.stderr
    assert version_of(db) == STORES[name]  # refused: nothing changed
    assert _migrations(db, key) == []
    for _ in range(2):  # the second start finds nothing to do
        server = start_serve(["--db", str(db)])
        try:
            ready = httpx.get(f"{server.base}/readyz", timeout=TIMEOUT)
            assert ready.status_code == 200, ready.text
        finally:
            server.stop()
    assert version_of(db) == CURRENT
    assert _migrations(db, key) == [(v, v + 1) for v in range(STORES[name], CURRENT)]
    assert _facts(db, key) == expected
    assert cli("audit", "verify", str(db)).exit_code == 0
