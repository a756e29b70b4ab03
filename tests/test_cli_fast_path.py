"""The console entry point reads ``odds`` and ``simulate`` given plain arguments without Typer
(``cli.fast``), and reads them exactly as the Typer commands do: its options are theirs (names,
flags, kinds, ranges, defaults); every argument list it takes gives ``run`` the values Typer
gives it; whatever it does not take (help, an unknown or repeated option, a number out of
range, an option's value that looks like an option) is left to Typer; and the two ways print
the same output and end with the same exit code, refusals included."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dicetable.cli import fast, odds_run, simulate_run
from dicetable.cli.main import app, load_command

ROOT = Path(__file__).resolve().parent.parent
STRATEGY = ROOT / "examples" / "strategies" / "pass-2x-odds.json"
RUNS = {"odds": odds_run, "simulate": simulate_run}
runner = CliRunner()


def defaults(name: str) -> dict[str, Any]:
    run = RUNS[name].run
    return {k: p.default for k, p in inspect.signature(run).parameters.items()
            if p.default is not inspect.Parameter.empty}


def typer_gives(name: str, args: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The keywords the Typer command passes to ``run`` for ``args``."""
    seen: dict[str, Any] = {}

    def record(*positional: Any, **keywords: Any) -> int:
        first = "pack" if name == "odds" else "strategy"
        seen.update({first: positional[0]}, **keywords)
        return 0

    monkeypatch.setattr(RUNS[name], "run", record)
    done = runner.invoke(app, [name, *args])
    assert done.exit_code == 0, done.output
    return seen


def test_the_plain_options_are_the_typer_commands_own() -> None:
    for name, command in fast.COMMANDS.items():
        params = {opt: p for p in load_command(name).params
                  for opt in (*p.opts, *p.secondary_opts)}
        for opt, plain in command.options.items():
            param = params[opt]
            assert param.name == plain.keyword, opt
            assert param.is_flag == (plain.kind == fast.FLAG), opt
            kind = {fast.FLAG: bool, fast.WHOLE: int, fast.TEXT: str}
            assert param.type_descriptor.annotation is kind[plain.kind], opt
            if plain.kind == fast.WHOLE:
                assert (param.min, param.max) == (plain.low, plain.high), opt
            if plain.kind == fast.FLAG:
                assert (opt in param.secondary_opts) == (not plain.value), opt
            assert param.required == (plain.keyword in command.required), opt
            if not param.required:
                assert defaults(name)[plain.keyword] == param.default, opt
        if command.positional is not None:
            assert params[command.positional].param_type_name == "argument"


TAKEN = [
    ("odds", ["pa-craps"]),
    ("odds", ["pa-craps", "--json"]),
    ("odds", ["--csv", "in-craps"]),
    ("odds", ["crapless-craps", "--wide"]),
    ("simulate", ["--strategy", "s.json", "--rolls", "1000000", "--seed", "1", "--json",
                  "--no-progress"]),
    ("simulate", ["--strategy=s.toml", "--sessions=5", "--session-rolls", "0", "--workers", "2",
                  "--engine", "dask", "--kernel", "numpy", "--csv", "--progress", "--wide"]),
    ("simulate", ["--rolls", "10000000000000", "--strategy", "a=b.json", "--seed", "0"]),
]


@pytest.mark.parametrize(("name", "args"), TAKEN, ids=lambda x: " ".join(x) if
                         isinstance(x, list) else x)
def test_plain_arguments_give_run_what_typer_gives_it(
        name: str, args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    plain = fast.parse(fast.COMMANDS[name], args)
    assert plain is not None
    assert {**defaults(name), **plain} == {**defaults(name), **typer_gives(name, args,
                                                                         monkeypatch)}


LEFT_TO_TYPER = [
    [], ["--help"], ["rules", "list"], ["--debug", "odds", "pa-craps"],
    ["odds"], ["odds", "--help"], ["odds", "pa-craps", "--help"], ["odds", "a", "b"],
    ["odds", "pa-craps", "--json", "--json"], ["odds", "pa-craps", "--json=1"],
    ["odds", "pa-craps", "--bet", "pass"], ["odds", "--session", "s.json"],
    ["odds", "pa-craps", "--"], ["odds", ""], ["odds", "pa-craps", "-j"],
    ["simulate", "--rolls", "5"], ["simulate", "--strategy"],
    ["simulate", "--strategy", "s", "--rolls", "0"],
    ["simulate", "--strategy", "s", "--rolls", "10000000000001"],
    ["simulate", "--strategy", "s", "--rolls", "1e6"],
    ["simulate", "--strategy", "s", "--rolls", "-1"],
    ["simulate", "--strategy", "s", "--rolls", "1_000"],
    ["simulate", "--strategy", "s", "--rolls", "\uff11\uff12"],
    ["simulate", "--strategy", "s", "--rolls", " 12"],
    ["simulate", "--strategy", "s", "--rolls"],
    ["simulate", "--strategy", "s", "--engine", "--json"],
    ["simulate", "--strategy=", "--rolls", "5"],
    ["simulate", "--strategy", "s", "--plot", "out"],
    ["simulate", "--strategy", "s", "--scheduler", "tcp://x:1"],
    ["simulate", "--strategy", "s", "--rolls", "5", "extra"],
    ["simulate", "--strategy", "s", "--progress", "--progress"],
]


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=" ".join)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert fast.dispatch(argv) is None


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_DICETABLE_COMPLETE", "bash_source")
    assert fast.dispatch(["odds", "pa-craps"]) is None


TYPER = "import sys; from dicetable.cli.main import app; sys.argv[0] = 'dicetable'; app()"
SECONDS = re.compile(r"rolls in [0-9.]+ s \([0-9.]+ M rolls/s\)")


def both_ways(*args: str, tmp: Path) -> tuple[subprocess.CompletedProcess[str], ...]:
    env = {**os.environ, "DICETABLE_CACHE": str(tmp), "COLUMNS": "100",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("DICETABLE_DEBUG", None)
    return tuple(subprocess.run([sys.executable, *way, *args], capture_output=True, text=True,
                                env=env, timeout=300, check=False)
                 for way in (["-m", "dicetable.cli.main"], ["-c", TYPER]))


@pytest.mark.parametrize("args", [
    ["odds", "pa-craps"], ["odds", "pa-craps", "--csv"], ["odds", "no-such-pack"],
    ["odds", "pa-craps", "--json", "--csv"],
    ["simulate", "--strategy", str(STRATEGY), "--rolls", "20000", "--seed", "3"],
    ["simulate", "--strategy", str(STRATEGY), "--sessions", "3", "--engine", "nope"],
    ["simulate", "--strategy", "/no/such/strategy.json", "--rolls", "10"],
], ids=lambda a: " ".join(a[:3]))
def test_both_ways_print_the_same_and_exit_the_same(args: list[str], tmp_path: Path) -> None:
    plain, typer = both_ways(*args, tmp=tmp_path)
    assert fast.parse(fast.COMMANDS[args[0]], args[1:]) is not None
    assert plain.returncode == typer.returncode
    assert SECONDS.sub("", plain.stdout) == SECONDS.sub("", typer.stdout)
    assert plain.stderr == typer.stderr


def test_a_closed_pipe_ends_quietly_with_exit_1_both_ways(tmp_path: Path) -> None:
    env = {**os.environ, "DICETABLE_CACHE": str(tmp_path),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    for way in (["-m", "dicetable.cli.main"], ["-c", TYPER]):
        read, write = os.pipe()
        os.close(read)  # nobody reads: the first write meets a closed pipe
        with os.fdopen(write, "w") as out:
            done = subprocess.run([sys.executable, *way, "odds", "pa-craps"], stdout=out,
                                  stderr=subprocess.PIPE, text=True, env=env, timeout=300,
                                  check=False)
        assert (done.returncode, done.stderr) == (1, ""), way


def test_the_collector_paused_for_a_command_is_the_callers_as_it_was_after(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A command run here pauses the cyclic collector (``fast.in_process``) and resumes it
    after, but only if it was running: a caller of ``main`` that turned it off finds it off."""
    import gc

    assert gc.isenabled()
    try:
        assert fast.dispatch(["odds", "pa-craps", "--json"]) == 0
        assert gc.isenabled()
        gc.disable()
        assert fast.dispatch(["odds", "pa-craps", "--json"]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert capsys.readouterr().out.count('"house_edge"') > 2


def test_a_command_called_in_process_leaves_the_callers_objects_to_the_collector(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Only the program itself, whose process ends next, freezes what a command made; a
    caller of ``main`` goes on, and its objects stay in the collector's sight."""
    import gc

    before = gc.get_freeze_count()
    assert fast.dispatch(["odds", "pa-craps", "--json"]) == 0
    assert gc.get_freeze_count() == before
    try:
        assert fast.dispatch(["odds", "pa-craps", "--json"], process_ends=True) == 0
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
    capsys.readouterr()


def test_a_command_whose_import_fails_still_resumes_the_collector(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The collector is paused before the command's module is imported; an import that fails
    is refused like any other error, and the collector runs again after it."""
    import gc

    monkeypatch.setitem(sys.modules, "dicetable.cli.odds_run", None)  # import raises
    assert gc.isenabled()
    assert fast.dispatch(["odds", "pa-craps"]) not in (None, 0)
    assert gc.isenabled()
    assert "dicetable:" in capsys.readouterr().err
