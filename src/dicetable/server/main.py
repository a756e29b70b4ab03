"""Build the app for ``dicetable serve`` (also an ASGI factory for several worker processes).

The store's location comes from ``DICETABLE_DB`` when uvicorn imports the factory itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI

from dicetable.core.clock import Clock, SystemClock
from dicetable.server.accounts import Accounts
from dicetable.server.app import create_app
from dicetable.server.custody_floor import FloorCustody
from dicetable.server.demo import ROSTER, create_demo_floor
from dicetable.server.floor import Floor
from dicetable.store.open import open_store


def build_floor(db: str | Path, *, bet_seconds: int = 20, schema: str = "dicetable",
                clock: Clock | None = None) -> tuple[Floor, dict[str, str]]:
    """The floor on ``db``; on an empty store, the demo floor and its credentials.

    ``schema`` names the PostgreSQL schema (ignored for SQLite); ``clock`` is injected in
    tests (the tables, the custody ledgers and the floor's scheduler all read it).
    """
    clock = clock or SystemClock()
    store = open_store(db, schema=schema)
    accounts = Accounts(db, schema=schema)
    floor = Floor(store, accounts, bet_seconds=bet_seconds, clock=clock,
                  custody=FloorCustody(store, clock, roster=ROSTER))
    credentials: dict[str, str] = {}
    if not store.tables() and accounts.empty():
        credentials = create_demo_floor(floor)
    return floor, credentials


_LEADER: list[object] = []


def lead_electronic_tables(db: str) -> bool:
    """Of several processes on one PostgreSQL store, only one runs the electronic tables'
    cycles: the one holding a session-level advisory lock (kept until the process ends)."""
    if not db.startswith(("postgresql://", "postgres://")):
        return True
    import psycopg

    conn = psycopg.connect(db, autocommit=True)
    row = conn.execute("SELECT pg_try_advisory_lock(74611)").fetchone()
    if row and row[0]:
        _LEADER.append(conn)
        return True
    conn.close()
    return False


def app_from_env() -> FastAPI:
    """uvicorn's factory: ``uvicorn --factory dicetable.server.main:app_from_env``."""
    db = os.environ.get("DICETABLE_DB", "dicetable.db")
    floor, _ = build_floor(db, bet_seconds=int(os.environ.get("DICETABLE_BET_SECONDS", "20")),
                           schema=os.environ.get("DICETABLE_SCHEMA", "dicetable"))
    run_electronic = os.environ.get("DICETABLE_ELECTRONIC", "1") == "1"
    clock = float(os.environ.get("DICETABLE_CLOCK_SECONDS", "60"))
    return create_app(floor, electronic_loop=run_electronic and lead_electronic_tables(db),
                      clock_seconds=clock or None)
