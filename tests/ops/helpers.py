"""A small floor for the operations tests: two tables, two staff accounts, a key, and signed
checkpoints - built in a moment, without the demo floor."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from dicetable.application.accounts import Accounts, Kind
from dicetable.cli.main import app
from dicetable.store import DurableTable, open_store
from dicetable.store.base import request_in_progress
from dicetable.store.checkpoints import heads_of, write_checkpoint
from dicetable.store.keys import init_key, read_key
from tests.demo_floor import CHEAP_HASHER

PASSWORD = "correct horse battery"


def small_floor(db: str, key_file: Path, *, schema: str = "dicetable",
                password: str = PASSWORD) -> bytes:
    """Tables ``t1`` and ``t2`` with a few events, staff accounts ``pat`` and ``ann`` and the
    player ``alice``; returns the key (written to ``key_file``)."""
    key = read_key(init_key(key_file))
    with open_store(db, schema=schema, key=key) as store:
        for table in ("t1", "t2"):
            t = DurableTable.open(store, "pa-craps", table).table
            t.join("alice")
            t.buy_in("alice", 100_00)
        accounts = Accounts(store, hasher=CHEAP_HASHER)  # what a restore decides, not Argon2
        accounts.create("pat", password, Kind.STAFF)
        accounts.create("ann", password, Kind.STAFF)
        accounts.create("alice", PASSWORD, Kind.PLAYER)
        accounts.close()
    return key


def play(db: str, key: bytes, table: str, requests: list[str], *,
         schema: str = "dicetable") -> dict[str, int]:
    """One buy-in per request key on ``table``; returns each key's seq."""
    out = {}
    with open_store(db, schema=schema, key=key) as store:
        durable = DurableTable.resume(store, table)
        for request in requests:
            with request_in_progress(request):
                durable.table.buy_in("alice", 1_00)
            out[request] = store.head(table).seq
    return out


def checkpoint(db: str, key: bytes, cp: Path, *, schema: str = "dicetable") -> int:
    with open_store(db, schema=schema, key=key) as store:
        return write_checkpoint(cp, key, heads_of([store]), at=datetime.now(UTC).isoformat())


def cli(*args: str, stdin: str = "") -> Any:
    """The CLI in this process (typer's runner)."""
    return CliRunner().invoke(app, list(args), input=stdin)


def cli_process(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The CLI as its own process."""
    return subprocess.run([sys.executable, "-m", "dicetable.cli.main", *args], input=stdin,
                          capture_output=True, text=True, env={**os.environ}, timeout=600,
                          check=False)
