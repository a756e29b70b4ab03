"""docs/operators-guide.md: every ``sh`` block is run, in order, as one shell script against a
real floor (the demo floor on SQLite, a small floor on PostgreSQL) - the commands an operator
reads are the commands that work. The guide's first block (its settings) is replaced by this
test's own values; ``text`` blocks are not run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from dicetable.server.demo import DEMO_PASSWORD
from tests.demo_floor import copy_demo_db
from tests.ops.helpers import small_floor
from tests.server.processes import free_port
from tests.store.conftest import pg_url_or_skip

GUIDE = Path(__file__).parent.parent.parent / "docs" / "operators-guide.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(GUIDE.read_text()) if lang == kind]


@pytest.fixture
def pg_schema() -> Iterator[tuple[str, str]]:
    url = pg_url_or_skip()
    schema = f"guide_{uuid.uuid4().hex[:10]}"
    yield url, schema
    with psycopg.connect(url, autocommit=True) as conn:
        for (name,) in conn.execute("SELECT schema_name FROM information_schema.schemata "
                                    "WHERE schema_name LIKE %s", (f"{schema}%",)).fetchall():
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))


def test_the_guide_names_every_section_the_operator_needs() -> None:
    text = GUIDE.read_text()
    for heading in ("## Install", "## The chain key", "**Rotation.**", "**Loss.**",
                    "TLS", "## Monitoring", "## Backups", "## Restores", "## Upgrades",
                    "## Archiving", "## PostgreSQL, several processes and machines",
                    "(scale-out.md)"):
        assert heading in text
    assert len(blocks("sh")) >= 10


def test_every_command_in_the_operators_guide_runs(demo_db: Path, tmp_path: Path,
                                                    pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    copy_demo_db(demo_db, tmp_path / "floor.db")
    (tmp_path / "keys").mkdir()
    small_floor(url, tmp_path / "keys" / "pg.key", schema=schema, password=DEMO_PASSWORD)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "dicetable"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m dicetable.cli.main "$@"\n')
    shim.chmod(0o755)
    settings = "\n".join([
        f"export DB={tmp_path / 'floor.db'}", f"export CHECKPOINTS={tmp_path / 'floor.cp'}",
        f"export PORT={free_port()}", f"export PGURL={url}", f"export SCHEMA={schema}",
        f"export PAT_PASSWORD='{DEMO_PASSWORD}' ANN_PASSWORD='{DEMO_PASSWORD}'"])
    runnable = blocks("sh")
    # A block that fails leaves the servers it started in the background: stopped on the way
    # out, whatever happens (a failed run left a server verifying every 5 s until the machine
    # went down).
    script = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT", settings]
    for n, body in enumerate(runnable[1:], 2):
        script += [f"echo '### block {n}' >&2", body]
    (tmp_path / "guide.sh").write_text("\n".join(script) + "\n")
    with (tmp_path / "out.txt").open("w") as out:
        done = subprocess.run(["bash", str(tmp_path / "guide.sh")], cwd=tmp_path, stdout=out,
                              stderr=subprocess.STDOUT, timeout=1200, check=False,
                              env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    output = (tmp_path / "out.txt").read_text()
    assert done.returncode == 0, output[-6000:]
    report = json.loads((tmp_path / "restore-report.json").read_text())
    assert (report["by"], report["approved_by"]) == ("pat", "ann")
    # the store was made by dicetable serve, which brought it to this version at once
    assert "is at store version 3; nothing to do" in output
    assert "store version 3" in output
    assert (tmp_path / "backups" / "pg" / "manifest.json").exists()
    assert "re-linked under" in output
