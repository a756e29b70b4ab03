"""Every ``dicetable`` command that reads a file, writes an ``--out`` path, opens a store or takes
a number answers bad input with exit 2 and one line naming what was wrong, never a traceback.

The cases are generated (hostile contents × every command that reads a file, seeded mutations
of valid packs, strategies, scripts and logs, paths that cannot be written, numbers out of
range) and bounded; ``python -m tests.test_cli_bad_input`` prints how many inputs over how
many commands ran, and how many showed a traceback (0).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dicetable.cli.main import app
from dicetable.store.durable import DurableTable
from dicetable.store.sqlite import SqliteStore

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
STRATEGY = ROOT / "examples" / "strategies" / "pass-2x-odds.json"
SCRIPT = ROOT / "examples" / "tables" / "pa_craps_hand.dts"
PACK = json.dumps({"id": "house", "name": "House", "extends": "pa-craps",
                   "overrides": {"paytable.field.12": "3 to 1"}}, indent=1)
EVENTS = "\n".join(json.dumps(line) for line in (
    {"type": "DiceRolled", "table": "t1", "seq": 3, "actor": "sam", "role": "stickperson",
     "at": "2026-03-01T20:00:00+00:00", "rule": "", "roll": [3, 4]},
    {"type": "BetPlaced", "table": "t1", "seq": 4})) + "\n"

HOSTILE: dict[str, bytes | None] = {
    "missing file": None,
    "a directory": b"<dir>",
    "empty": b"",
    "invalid UTF-8": b'{"id": "house\xff\xfe", "extends": "pa-craps"}',
    "5,000-digit integer": b'{"id": "h", "extends": "pa-craps", "overrides": '
                           b'{"odds.max": ' + b"9" * 5000 + b"}}",
    "deep array nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep object nesting": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "NaN": b'{"id": NaN, "extends": "pa-craps"}',
    "wrong top type": b"[1, 2, 3]",
    "binary": bytes(range(256)) * 4,
    "deep TOML": b"a = " + b"[" * 50_000 + b"]" * 50_000,
    "5,000-digit TOML": b"bankroll = " + b"9" * 5000,
    "rich markup": b"[/red] [bold] [/] [rule x]",
    "SQLite header then garbage": b"SQLite format 3\x00" + b"\x00\xff" * 600,
    "events with a 5,000-digit seq": b'{"type": "DiceRolled", "seq": ' + b"9" * 5000 + b"}\n",
    "JSON lines, one deep": b'{"type": "DiceRolled"}\n' + b"[" * 100_000 + b"\n",
    "script with a 5,000-digit seat": b"dicetable-script 1\npack pa-craps\nseat "
                                      + b"9" * 5000 + b" alice 100\n",
}
"""Contents no command may crash on (None: the path does not exist)."""


@dataclass(frozen=True)
class Case:
    command: str
    kind: str
    argv: tuple[str, ...]
    verdict_ok: bool = False
    """Exit 1 is the command's own verdict here (an invalid pack, an unmet expectation)."""

    @property
    def id(self) -> str:
        return f"{self.command} | {self.kind}"


@dataclass(frozen=True)
class Setup:
    work: Path
    db: Path


def _setup() -> Setup:
    work = Path(tempfile.mkdtemp(prefix="dicetable-cli-bad-"))
    db = work / "floor.db"
    with SqliteStore(db, synchronous="OFF") as store:
        DurableTable.open(store, "pa-craps", "craps-1")
    (work / "plain.txt").write_text("x", encoding="utf-8")
    (work / "a-folder.html").mkdir()
    return Setup(work, db)


def _hostile_file(work: Path, n: int, kind: str, suffix: str) -> Path:
    data = HOSTILE[kind]
    path = work / f"in{n}{suffix}"
    if data == b"<dir>":
        path.mkdir(exist_ok=True)
    elif data is not None:
        path.write_bytes(data)
    return path


FileCommand = Callable[[Setup, str], list[str]]
FILE_COMMANDS: dict[str, tuple[str, FileCommand, bool]] = {
    # name: (suffix of the file it reads, argv, exit 1 is a verdict)
    "rules validate": (".json", lambda s, f: ["rules", "validate", f], True),
    "rules show": (".json", lambda s, f: ["rules", "show", f], False),
    "rules submission": (".json", lambda s, f: ["rules", "submission", f, "--out",
                                                str(s.work / "out.html")], False),
    "odds": (".json", lambda s, f: ["odds", f], False),
    "odds --session": (".json", lambda s, f: ["odds", "--session", f, "--sessions", "100",
                                              "--rolls", "3"], False),
    "simulate (JSON)": (".json", lambda s, f: ["simulate", "--strategy", f, "--rolls", "50",
                                               "--seed", "1"], False),
    "simulate (TOML)": (".toml", lambda s, f: ["simulate", "--strategy", f, "--rolls", "50",
                                               "--seed", "1"], False),
    "replay": (".dts", lambda s, f: ["replay", f], True),
    "dice --log report": (".jsonl", lambda s, f: ["dice", "--log", f, "report"], False),
    "dice fairness FILE": (".jsonl", lambda s, f: ["dice", "fairness", f], True),
    "dice open --jurisdiction FILE": (".json", lambda s, f: [
        "dice", "--log", str(s.work / "never.jsonl"), "open", "--jurisdiction", f,
        "--site", "s"], False),
    "dice rules FILE": (".json", lambda s, f: ["dice", "rules", f], False),
    "dice import FILE": (".jsonl", lambda s, f: ["dice", "--db", str(s.work / "imp.db"),
                                                 "import", f], False),
    "audit verify DB": (".db", lambda s, f: ["audit", "verify", f], False),
    "audit verify --key FILE": (".key", lambda s, f: ["audit", "verify", str(s.db), "--key",
                                                      f], False),
    "audit verify --checkpoints FILE": (".jsonl", lambda s, f: [
        "audit", "verify", str(s.db), "--checkpoints", f], True),
    "audit checkpoint --checkpoints FILE": (".jsonl", lambda s, f: [
        "audit", "checkpoint", str(s.db), "--checkpoints", f], False),
    "recall DB": (".db", lambda s, f: ["recall", f], False),
    "export DB": (".db", lambda s, f: ["export", f], False),
    "script export DB": (".db", lambda s, f: ["script", "export", f, "--table", "craps-1"],
                         False),
    "accounts unlock --key FILE": (".key", lambda s, f: [
        "accounts", "unlock", "u", "--db", str(s.db), "--operator", "o", "--key", f], False),
    "accounts unlock --db DB": (".db", lambda s, f: ["accounts", "unlock", "u", "--db", f,
                                                     "--operator", "o"], False),
    "audit clear-fault --db DB": (".db", lambda s, f: [
        "audit", "clear-fault", "t", "--db", f, "--operator", "o", "--reason", "r"], False),
    "dice fairness --db DB": (".db", lambda s, f: ["dice", "fairness", "--db", f], True),
    "dice --db DB report": (".db", lambda s, f: ["dice", "--db", f, "report"], False),
}
"""Every command that reads an operator's file or opens a store by path."""

VALID_FOR = {".json": PACK, ".dts": SCRIPT.read_text(encoding="utf-8"),
             ".jsonl": EVENTS, ".toml": (ROOT / "examples" / "strategies"
                                         / "press-6-8.toml").read_text(encoding="utf-8")}
"""A valid input of each kind, for the mutations (a strategy for the commands that read one)."""
STRATEGY_COMMANDS = ("odds --session", "simulate (JSON)")
MUTATIONS = 3
"""Seeded random mutations of a valid input per file-reading command."""
HUGE = "9" * 5000


def _mutate(text: str, rnd: random.Random) -> str:
    words = [HUGE, "[" * 200, '"', "\\", "\xff", "NaN", "-1", "0", "{", "}", "\n", "#", "!"]
    for _ in range(rnd.randint(1, 4)):
        at = rnd.randrange(len(text) + 1)
        kind = rnd.randrange(3)
        if kind == 0:
            text = text[:at] + text[at + rnd.randint(1, 30):]
        elif kind == 1:
            text = text[:at] + rnd.choice(words) + text[at:]
        else:
            text = text[:at] + chr(rnd.randrange(32, 127)) + text[at + 1:]
    return text


def cases(s: Setup) -> Iterator[Case]:
    """Every generated case (deterministic: seeded)."""
    n = 0
    for command, (suffix, argv, verdict) in FILE_COMMANDS.items():
        for kind in HOSTILE:
            n += 1
            yield Case(command, kind, tuple(argv(s, str(_hostile_file(s.work, n, kind,
                                                                       suffix)))), verdict)
        valid = STRATEGY.read_text(encoding="utf-8") if command in STRATEGY_COMMANDS \
            else VALID_FOR.get(suffix)
        if valid is None:
            continue
        rnd = random.Random(command)
        for m in range(MUTATIONS):
            n += 1
            path = s.work / f"in{n}{suffix}"
            path.write_bytes(_mutate(valid, rnd).encode("utf-8", "replace"))
            yield Case(command, f"mutation {m + 1}", tuple(argv(s, str(path))), verdict)
    for command, name in (("rules validate", "name 5,000 characters long"),
                          ("odds", "name 5,000 characters long"),
                          ("replay", "name 5,000 characters long")):
        argv = FILE_COMMANDS[command][1]
        yield Case(command, name, tuple(argv(s, HUGE + ".json")))
    yield from _out_cases(s)
    yield from _number_cases(s)
    yield from _store_url_cases(s)


STORE_URLS = {"nothing listening": "postgresql://127.0.0.1:1/floor",
              "broken IPv6 host": "postgresql://[::1", "bad percent-escape": "postgres://%zz"}


def _store_url_cases(s: Setup) -> Iterator[Case]:
    for kind, url in STORE_URLS.items():
        for command, argv in (("recall URL", ["recall", url, "--table", "t"]),
                              ("export URL", ["export", url]),
                              ("audit verify URL", ["audit", "verify", url]),
                              ("script export URL", ["script", "export", url, "--table", "t"]),
                              ("dice --db URL report", ["dice", "--db", url, "report"]),
                              ("dice fairness --db URL", ["dice", "fairness", "--db", url]),
                              ("audit checkpoint URL", [
                                  "audit", "checkpoint", url, "--checkpoints",
                                  str(s.work / "c.jsonl"), "--key", str(s.work / "plain.txt")])):
            yield Case(command, kind, tuple(argv))


OUT_KINDS = {"missing folder": "nope/out.html", "under a plain file": "plain.txt/out.html",
             "a directory": "a-folder.html", "name 5,000 characters long": HUGE + ".html"}


def _out_cases(s: Setup) -> Iterator[Case]:
    for kind, rel in OUT_KINDS.items():
        def out(n: int, rel: str = rel) -> str:
            """Each command its own missing folder (``keys init`` makes the one it is given)."""
            return rel if rel.startswith("9") else str(s.work / rel.replace("nope", f"nope{n}"))

        yield Case("rules submission --out", kind, ("rules", "submission", "pa-craps",
                                                    "--out", out(1)))
        yield Case("export --out", kind, ("export", str(s.db), "--out", out(2)))
        yield Case("script export --out", kind, ("script", "export", str(s.db), "--table",
                                                 "craps-1", "--out", out(3)))
        yield Case("simulate --plot", kind, ("simulate", "--strategy", str(STRATEGY),
                                             "--rolls", "50", "--seed", "1", "--plot", out(4)))
        yield Case("keys init", kind, ("keys", "init", out(5)))
        yield Case("audit checkpoint --checkpoints (out)", kind, (
            "audit", "checkpoint", str(s.db), "--checkpoints", out(6)))
        yield Case("dice --log (out)", kind, ("dice", "--log", out(7), "open", "--jurisdiction",
                                              "pa", "--site", "s"))


def _number_cases(s: Setup) -> Iterator[Case]:
    strategy = str(STRATEGY)
    for value in (HUGE, "-" + HUGE, "-1", "0", "1e9", "abc", "1" + "0" * 30):
        yield Case("odds --bet", value[:12], ("odds", "pa-craps", "--bet", f"pass={value}"))
        yield Case("odds --bet odds", value[:12], ("odds", "pa-craps", "--bet",
                                                   f"pass=10x{value}"))
        yield Case("odds --point", value[:12], ("odds", "pa-craps", "--bet", "place6=12",
                                                "--table", "--point", value))
        yield Case("odds --session --bankroll", value[:12], (
            "odds", "--session", strategy, "--bankroll", value, "--sessions", "100",
            "--rolls", "3"))
        yield Case("simulate --seed", value[:12], ("simulate", "--strategy", strategy,
                                                   "--rolls", "50", "--seed", value))
        yield Case("demo --seed", value[:12], ("demo", "--rolls", "2", "--seed", value))
        yield Case("script export --from", value[:12], (
            "script", "export", str(s.db), "--table", "craps-1", "--from", value))
        yield Case("dice --at", value[:12], ("dice", "--log", str(s.work / "at.jsonl"), "--at",
                                             value, "open", "--jurisdiction", "pa", "--site",
                                             "s"))
        if value not in ("1e9",):  # a valid size for these would run for real
            for option in ("--rolls", "--sessions", "--session-rolls", "--workers"):
                mode = ["--sessions", "2"] if option == "--session-rolls" else \
                    [] if option in ("--rolls", "--sessions") else ["--rolls", "50"]
                yield Case(f"simulate {option}", value[:12], (
                    "simulate", "--strategy", strategy, *mode, option, value))
            yield Case("rng-test --rolls", value[:12], ("rng-test", "--rolls", value))
            yield Case("demo --rolls", value[:12], ("demo", "--rolls", value))
            yield Case("odds --session --rolls", value[:12], (
                "odds", "--session", strategy, "--rolls", value, "--sessions", "100"))


def run_case(case: Case) -> tuple[bool, str, int]:
    """(the answer is clean, why not, the exit code): exit 0 or 2 (or the command's verdict
    1), no traceback, and a refusal says something."""
    result = runner.invoke(app, list(case.argv))
    out = result.output
    allowed = {0, 1, 2} if case.verdict_ok else {0, 2}
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    if "Traceback" in out or crashed:
        return False, f"traceback: {out[-500:]!r} {result.exception!r}", result.exit_code
    if result.exit_code not in allowed:
        return False, f"exit {result.exit_code}: {out[-500:]!r}", result.exit_code
    if result.exit_code == 2 and not out.strip():
        return False, "exit 2 without a message", 2
    return True, "", result.exit_code


@pytest.fixture(scope="module")
def setup() -> Setup:
    return _SETUP


def _by_command() -> dict[str, list[int]]:
    """Case indexes per command, so each command is its own test (named after it)."""
    groups: dict[str, list[int]] = {}
    for i, case in enumerate(cases(_SETUP)):
        groups.setdefault(case.command, []).append(i)
    return groups


_SETUP = _setup()
_CASES = list(cases(_SETUP))
_GROUPS = _by_command()


@pytest.mark.parametrize("command", sorted(_GROUPS))
def test_cli_command_answers_bad_input_with_exit_2_and_no_traceback(command: str) -> None:
    failures = []
    for i in _GROUPS[command]:
        ok, why, _ = run_case(_CASES[i])
        if not ok:
            failures.append(f"{_CASES[i].id}: {why}")
    assert failures == []


def test_cli_bad_input_figures_cover_every_file_command() -> None:
    commands = {c.command for c in _CASES}
    assert set(FILE_COMMANDS) <= commands
    assert len(_CASES) >= 500
    assert {c.kind for c in _CASES} >= set(HOSTILE) | set(OUT_KINDS)


def test_cli_names_the_file_position_and_problem(setup: Setup) -> None:
    """The three inputs that printed tracebacks, and --out into a missing folder."""
    work = setup.work
    big = work / "big.json"
    big.write_bytes(HOSTILE["5,000-digit integer"] or b"")
    deep = work / "deep.json"
    deep.write_bytes(b'{"id":\n ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    bad = work / "bad.json"
    bad.write_bytes(HOSTILE["invalid UTF-8"] or b"")
    for argv in (["rules", "validate"], ["rules", "show"], ["odds"],
                 ["rules", "submission", "--out", str(work / "x.html")]):
        answers = {name: runner.invoke(app, [*argv, str(path)]) for name, path in
                   (("big", big), ("deep", deep), ("bad", bad))}
        for answer in answers.values():
            assert answer.exit_code == 2, answer.output
            assert "Traceback" not in answer.output
        text = {name: " ".join(a.output.split()) for name, a in answers.items()}
        assert f"{big}: line 1, column 62: a number of 5000 characters (at most 100) " \
               "[rule rules.pack]" in text["big"]
        assert f"{deep}: line 2, column 65: nested deeper than 64 levels" in text["deep"]
        assert f"{bad}: byte 13 (line 1, column 14): not UTF-8 (byte 0xff)" in text["bad"]
    missing = runner.invoke(app, ["rules", "submission", "pa-craps", "--out",
                                  str(work / "no-such-folder" / "s.html")])
    assert missing.exit_code == 2
    assert f"there is no folder '{work / 'no-such-folder'}'" in " ".join(missing.output.split())
    assert not (work / "no-such-folder").exists()


def test_cli_domain_refusals_keep_their_rule_and_citation(setup: Setup) -> None:
    pack = setup.work / "regulation.json"
    pack.write_text(json.dumps({"id": "h", "extends": "pa-craps",
                                "overrides": {"noroll.callers": ["dealer"]}}))
    shown = runner.invoke(app, ["rules", "show", str(pack)])
    assert shown.exit_code == 2
    assert "noroll.callers: is regulation text" in shown.output
    assert "[rule noroll.callers]" in " ".join(shown.output.split())


def test_cli_internal_error_is_one_line_unless_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug (not bad input) is exit 70 without a traceback; --debug shows the traceback."""
    from dicetable.cli import rules as rules_cli

    def broken(name: str) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(rules_cli, "load_pack", broken)
    plain = runner.invoke(app, ["rules", "show", "pa-craps"])
    assert plain.exit_code == 70
    assert "internal error: KeyError: 'a bug'" in plain.output
    assert "--debug" in plain.output
    assert "Traceback" not in plain.output
    debug = runner.invoke(app, ["--debug", "rules", "show", "pa-craps"])
    assert isinstance(debug.exception, KeyError)
    monkeypatch.setenv("DICETABLE_DEBUG", "1")
    assert isinstance(runner.invoke(app, ["rules", "show", "pa-craps"]).exception, KeyError)


def _entry_point() -> list[str]:
    script = Path(sys.executable).with_name("dicetable")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dicetable.cli.main"]


@pytest.mark.parametrize(("argv", "says"), [
    (["rules", "validate", "{big}"], "a number of 5000 characters"),
    (["odds", "{deep}"], "nested deeper than 64 levels"),
    (["rules", "submission", "{bad}", "--out", "{work}/x.html"], "not UTF-8 (byte 0xff)"),
    (["rules", "submission", "pa-craps", "--out", "{work}/never-made/x.html"],
     "there is no folder"),
    (["replay", "{bad}"], "not UTF-8"),
    (["audit", "verify", "{bad}"], "cannot"),
])
def test_cli_bad_input_through_a_real_process(setup: Setup, argv: list[str],
                                              says: str) -> None:
    work = setup.work
    files = {"big": work / "p-big.json", "deep": work / "p-deep.json",
             "bad": work / "p-bad.json"}
    files["big"].write_bytes(HOSTILE["5,000-digit integer"] or b"")
    files["deep"].write_bytes(HOSTILE["deep array nesting"] or b"")
    files["bad"].write_bytes(HOSTILE["invalid UTF-8"] or b"")
    names = {k: str(v) for k, v in files.items()} | {"work": str(work)}
    env = {**os.environ, "COLUMNS": "400"}
    env.pop("DICETABLE_DEBUG", None)
    done = subprocess.run([*_entry_point(), *(a.format(**names) for a in argv)],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert says in " ".join((done.stdout + done.stderr).split())


if __name__ == "__main__":  # the figures: python -m tests.test_cli_bad_input
    from collections import Counter

    answers = [(c, *run_case(c)) for c in _CASES]
    bad = [(c, why) for c, ok, why, _ in answers if not ok]
    tracebacks = sum(1 for _, why in bad if why.startswith("traceback"))
    for c, why in bad:
        print(f"{c.id}: {why}")
    codes = Counter(code for *_, code in answers)
    print(f"{len(_CASES)} bad inputs over {len({c.command for c in _CASES})} commands "
          f"({len(FILE_COMMANDS)} that read a file or store): {tracebacks} tracebacks, "
          f"{len(bad)} answers other than exit 0/2 (or the command's verdict 1); exit codes "
          + ", ".join(f"{k}: {v}" for k, v in sorted(codes.items())))
