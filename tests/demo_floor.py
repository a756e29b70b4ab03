"""Copies of the demo floor's file (the ``demo_db`` fixture builds it once per test process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from argon2 import PasswordHasher

from dicetable.server.floor import Floor

CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
"""Argon2id at a test's cost (1 MiB, one pass) for the floors the tests build: a login pays
what its stored hash says, and at the production parameters (64 MiB, three passes, four
lanes) each login took about 0.4 CPU-s. The tests check what a login decides, never how long
Argon2 takes; ``test_sec_4_a_floors_passwords_are_hashed_at_argon2s_own_cost`` keeps the
production parameters checked."""


def copy_demo_db(demo_db: Path, to: Path) -> Path:
    """A copy of the demo floor's file at ``to``, its chain key beside it."""
    shutil.copyfile(demo_db, to)
    shutil.copyfile(f"{demo_db}.key", f"{to}.key")
    return to


def record_creation_order(demo_db: Path, tables: list[str]) -> None:
    Path(f"{demo_db}.order.json").write_text(json.dumps(tables))


def as_created(floor: Floor, demo_db: Path) -> Floor:
    """``floor``, loaded from a copy, with its tables in the order the demo created them (a
    floor loaded from its file lists them by name): the order a fresh ``dicetable serve``
    shows, and so the table a player's login lands on."""
    for table in json.loads(Path(f"{demo_db}.order.json").read_text()):
        floor.tables[table] = floor.tables.pop(table)
    return floor
