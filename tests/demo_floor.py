"""Copies of the demo floor's file (the ``demo_db`` fixture builds it once per test process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dicetable.server.floor import Floor


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
