"""The CLI reads well anywhere: through a pipe nothing is wrapped, so no amount, identifier or
word is split across lines whatever ``COLUMNS`` says (the output at 80 columns is the output
at 400); every command's help is in one plain style and only ``dicetable`` itself offers shell
completion; ``rules show --section`` filters; ``recall`` prints times people read; ``replay
--against DB`` says whether a script reproduces a stored log; the example tables in
``examples/tables`` run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from dicetable.cli.main import app, load_command
from dicetable.store.open import open_store

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples" / "tables"
HAND = EXAMPLES / "pa_craps_hand.dts"
runner = CliRunner()
MONEY = re.compile(r"\$[0-9][0-9,.]*")
WHOLE_MONEY = re.compile(r"\$\d{1,3}(,\d{3})*(\.\d\d)?")  # prose may say "$1"


def _leaves(name: str, command: Any, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    out = [path]
    for sub, child in sorted(getattr(command, "commands", {}).items()):
        out += _leaves(sub, child, (*path, sub))
    return out


def every_command() -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = [()]
    for name in get_command(app).list_commands(None):  # type: ignore[attr-defined]
        paths += _leaves(name, load_command(name), (name,))
    return paths


def piped(*args: str, columns: int, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``dicetable ARGS | cat`` with COLUMNS set: stdout is a pipe, not a terminal."""
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "dicetable.cli.main", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def assert_whole(text: str) -> None:
    for amount in MONEY.findall(text):
        assert WHOLE_MONEY.fullmatch(amount.rstrip(".,")), (amount, text)


@pytest.mark.parametrize("path", every_command(), ids=lambda p: " ".join(p) or "dicetable")
def test_every_help_is_unwrapped_in_a_pipe_in_one_style(path: tuple[str, ...]) -> None:
    narrow = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    wide = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "400"})
    assert narrow.exit_code == 0, narrow.output
    assert narrow.output == wide.output  # nothing in it depends on the width: nothing wraps
    assert not any(ch in narrow.output for ch in "╭│╰─")  # plain help, never boxed
    assert ("--install-completion" in narrow.output) == (path == ())
    usage = narrow.output.split("\n\n", 1)[0]
    assert "{" not in usage, usage  # arguments named plainly (DB, not {DB} or {db})
    assert_whole(narrow.output)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the example PA Craps hand (table ``craps-1``)."""
    db = tmp_path_factory.mktemp("store") / "hand.db"
    open_store(db).close()
    loaded = runner.invoke(app, ["script", "load", str(db), str(HAND)])
    assert loaded.exit_code == 0, loaded.output
    return db


SAMPLES = [("rules", "list"), ("rules", "show", "pa-craps"), ("odds", "pa-craps"),
           ("replay", str(HAND)), ("dice", "rules", "pa"), ("recall", "{db}", "--table",
                                                            "craps-1")]


@pytest.mark.parametrize("args", SAMPLES, ids=lambda a: " ".join(a[:2]))
def test_a_sample_run_through_a_pipe_at_80_columns_splits_no_value(args: tuple[str, ...],
                                                                    stored: Path) -> None:
    args = tuple(str(stored) if a == "{db}" else a for a in args)
    narrow, wide = piped(*args, columns=80), piped(*args, columns=400)
    assert narrow.returncode == 0, narrow.stderr
    assert narrow.stdout == wide.stdout
    assert max(len(line) for line in narrow.stdout.splitlines()) > 80  # it would have wrapped
    assert_whole(narrow.stdout)
    assert "\x1b[" not in narrow.stdout  # no colour codes in a pipe


def test_rules_show_section_filters_and_names_the_sections() -> None:
    shown = runner.invoke(app, ["rules", "show", "pa-craps", "--section", "noroll"])
    assert shown.exit_code == 0, shown.output
    ids = set(re.findall(r"\b(noroll\.\w+|paytable\.\S+|authority\.\w+)", shown.output))
    assert ids
    assert all(i.startswith("noroll.") for i in ids)
    assert "noroll.window" in shown.output
    unknown = runner.invoke(app, ["rules", "show", "pa-craps", "--section", "nothing"])
    assert unknown.exit_code == 2
    assert "sections: authority" in unknown.output
    full = runner.invoke(app, ["rules", "show", "pa-craps"])
    assert "sections (--section): authority" in full.output


def test_recall_prints_human_times(stored: Path) -> None:
    out = runner.invoke(app, ["recall", str(stored), "--table", "craps-1", "--rounds", "1"])
    assert out.exit_code == 0, out.output
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", out.output)  # no raw ISO stamps
    assert re.search(r"\d{1,2} [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d", out.output)


def test_replay_against_says_whether_a_script_reproduces_the_stored_log(
        stored: Path, tmp_path: Path) -> None:
    same = runner.invoke(app, ["replay", str(HAND), "--against", str(stored)])
    assert same.exit_code == 0, same.output
    assert "reproduces craps-1" in same.output
    changed = tmp_path / "changed.dts"
    changed.write_text("\n".join(
        line.replace("bet dontpass 10", "bet dontpass 15") for line in
        HAND.read_text().splitlines() if not line.lstrip().startswith("expect")) + "\n")
    differs = runner.invoke(app, ["replay", str(changed), "--against", str(stored)])
    assert differs.exit_code == 1
    assert "does NOT reproduce craps-1" in differs.output
    assert "BetPlaced" in differs.output
    assert "stored 1000, replayed 1500" in differs.output
    missing = runner.invoke(app, ["replay", str(HAND), "--against", str(stored),
                                  "--table", "no-such-table"])
    assert missing.exit_code == 2


@pytest.mark.parametrize("script", sorted(EXAMPLES.glob("*.dts")), ids=lambda p: p.stem)
def test_the_example_tables_run(script: Path) -> None:
    out = runner.invoke(app, ["replay", str(script)])
    assert out.exit_code == 0, out.output
