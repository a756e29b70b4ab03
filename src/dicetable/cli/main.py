"""The ``dicetable`` command: thin commands over the library.

Each command's module is imported only when that command runs (``--help`` lists them from the
table below), so ``dicetable --help``, ``rules`` and ``odds`` start without NumPy, SciPy or the
server; ``bench/cli_startup.py`` measures it. Typer itself is imported when ``app`` is first
used: the console entry point runs ``odds`` and ``simulate`` given plain arguments without it
(``cli.fast``), since building a command's parameters costs more than those commands' work.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from collections.abc import Callable

    import typer

    app: typer.Typer

SUBCOMMAND_STYLE: dict[str, Any] = {"rich_markup_mode": None, "add_completion": False,
                                    "pretty_exceptions_show_locals": False}
"""Every command group's help in the top level's one plain style; shell completion is
offered once, by ``dicetable`` itself, not repeated on every command."""

UNWRAPPED = 100_000
"""The help's width off a terminal: nothing wraps."""
DEBUG_ENV = "DICETABLE_DEBUG"
DEBUG = "dicetable.debug"
"""Set (not 0) to show the traceback of an error instead of its one line (``--debug``)."""

COMMANDS: dict[str, tuple[str, str, str]] = {
    # name: (module, attribute, one-line help for the listing)
    "rules": ("dicetable.cli.rules", "app",
              "Rule packs: every rule with its value, citation and status."),
    "serve": ("dicetable.cli.serve", "serve",
              "Serve the floor; an empty store gets the demo floor (credentials printed)."),
    "demo": ("dicetable.cli.demo", "demo",
             "Play a short session at a PA Craps table and print every settlement."),
    "replay": ("dicetable.cli.replay", "replay",
               "Run a table script: its event log and final balances; exit 1 at the first "
               "unmet expectation."),
    "dice": ("dicetable.cli.dice", "app",
             "Dice custody from receipt to cancellation (PA 603a.13, IN 68 IAC 14-3)."),
    "bank": ("dicetable.cli.bank", "app",
             "A table's chip bank: counts, fills and credits, the drop, win and hold."),
    "rng-test": ("dicetable.cli.rng", "rng_test",
                 "Chi-square, runs and serial-correlation tests at 99% on the CSPRNG's dice."),
    "odds": ("dicetable.cli.odds", "odds",
             "Exact house edge of every wager of a pack (Fractions, by Markov chains)."),
    "simulate": ("dicetable.cli.simulate", "simulate",
                 "Simulate a strategy: realised house edge, risk of ruin, bankroll percentiles."),
    "audit": ("dicetable.cli.integrity_cmds", "audit_app",
              "Check every stream's keyed chain, checkpoints and settlements; clear faults."),
    "recall": ("dicetable.cli.store_cmds", "recall",
               "Game recall: the last rounds of a table, wagers, rolls, outcomes, balances."),
    "export": ("dicetable.cli.store_cmds", "export",
               "Write the table log as JSON Lines, hashes included."),
    "archive": ("dicetable.cli.store_cmds", "archive",
                "Move closed gaming days into signed archive files, anchored in the chain."),
    "backup": ("dicetable.cli.ops_cmds", "backup",
               "Back up a running floor: store, key, checkpoints, archives, signed manifest."),
    "restore": ("dicetable.cli.ops_cmds", "restore",
                "Restore from a backup: two people, the loss listed, recorded and signed."),
    "upgrade": ("dicetable.cli.ops_cmds", "upgrade",
                "Bring a store's layout to this version (each migration once, recorded)."),
    "script": ("dicetable.cli.script_cmds", "app",
               "Table scripts: export a stored table's log as a script that replays it."),
    "keys": ("dicetable.cli.integrity_cmds", "keys_app",
             "The chain key kept outside the database (keys init)."),
    "ratings": ("dicetable.cli.ratings", "ratings",
                "Player ratings: exact theo of every wager beside the industry formula."),
    "wallet": ("dicetable.cli.wallet", "app",
               "Players' wallets at the cage: show, deposit, withdraw."),
    "accounts": ("dicetable.cli.integrity_cmds", "accounts_app",
                 "Accounts on a store: the break-glass unlock."),
}


def load_command(name: str) -> Any:
    """The (click) command for ``name``, importing its module now."""
    import typer

    module, attribute, _ = COMMANDS[name]
    target: Any = getattr(importlib.import_module(module), attribute)
    command: Any
    if isinstance(target, typer.Typer):
        command = typer.main.get_group(target)
    else:
        single = typer.Typer(**SUBCOMMAND_STYLE)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    _plain_usage(command)
    return command


_PLAIN: dict[type, type] = {}


def _plain_usage(command: Any) -> None:
    """Usage lines name a required argument plainly (``recall [OPTIONS] DB``), as the help's
    own argument list and every Unix usage line do, not in Typer's braces (``{DB}``)."""
    cls = type(command)
    plain = _PLAIN.get(cls)
    if plain is None:
        def collect_usage_pieces(self: Any, ctx: Any, base: Any = cls) -> list[str]:
            pieces: list[str] = base.collect_usage_pieces(self, ctx)
            return [re.sub(r"^\{(.+)\}(\.\.\.)?$", r"\1\2", p) for p in pieces]
        plain = _PLAIN[cls] = type(f"Plain{cls.__name__}", (cls,),
                                   {"collect_usage_pieces": collect_usage_pieces,
                                    "__module__": __name__})
    command.__class__ = plain
    for sub in getattr(command, "commands", {}).values():
        _plain_usage(sub)


def _build_app() -> typer.Typer:
    """The Typer app of every command (Typer and click are imported here)."""
    import typer
    from typer.core import TyperGroup

    class LazyGroup(TyperGroup):
        """A group whose commands are imported when invoked, listed from ``COMMANDS``.

        (Typer may vendor its own click, so the click types are left as ``Any`` here.)
        """

        def list_commands(self, ctx: Any) -> list[str]:
            return list(COMMANDS)

        def get_command(self, ctx: Any, cmd_name: str) -> Any:
            if cmd_name not in COMMANDS:
                return None
            return load_command(cmd_name)

        def invoke(self, ctx: Any) -> Any:
            """Run the command; bad input ends in one clean line and exit 2 (``refusal``)."""
            try:
                return super().invoke(ctx)
            except (typer.Exit, typer.Abort, typer.TyperException):
                raise  # the commands' own exits and Typer's usage errors (already exit 2)
            except Exception as e:
                if ctx.meta.get(DEBUG) or os.environ.get(DEBUG_ENV, "") not in ("", "0"):
                    raise
                from dicetable.cli.refusal import refusal  # only when something went wrong

                code, message = refusal(e)
                if code is None:
                    raise  # a broken pipe: Typer closes quietly
                typer.echo(f"dicetable: {message}", err=True)
                raise typer.Exit(code) from None

        def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                         **extra: Any) -> Any:
            """Off a terminal (a pipe, a file) help is not wrapped, whatever COLUMNS says: each
            option's line stays whole for grep; the subcommands' contexts inherit the width."""
            if parent is None and "terminal_width" not in extra and not sys.stdout.isatty():
                extra["terminal_width"] = UNWRAPPED
            return super().make_context(info_name, args, parent, **extra)

        def format_commands(self, ctx: Any, formatter: Any) -> None:
            rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    built = typer.Typer(
        name="dicetable",
        cls=LazyGroup,
        help="Casino dice tables run exactly as the PA and IN regulations write them.",
        no_args_is_help=True,
        rich_markup_mode=None,  # plain help: Rich is imported by the commands that print tables
        pretty_exceptions_show_locals=False,  # never print secrets in a traceback (standards §4)
    )

    @built.callback()
    def _root(ctx: typer.Context,
              debug: bool = typer.Option(False, "--debug", envvar=DEBUG_ENV,
                                         help="Show the traceback of an internal error")) -> None:
        """Casino dice tables run exactly as the PA and IN regulations write them."""
        ctx.meta[DEBUG] = debug

    # Typer reads the parameters' types from the annotations, which this module's globals
    # cannot resolve (Typer is not imported at its top): give them as objects.
    _root.__annotations__ = {"ctx": typer.Context, "debug": bool, "return": None}
    return built


def __getattr__(name: str) -> Any:
    """``app``, built on first use."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = _build_app()
    globals()["app"] = built
    return built


BLAS_THREADS = "OPENBLAS_NUM_THREADS"
"""Threads NumPy's BLAS starts at import, one unless set (``main``)."""


def main() -> None:
    """The command line, as called in a process that goes on after it (a test, a program of
    the operator's): it ends with ``SystemExit``, as any Typer app does."""
    _run(sys.exit)


def script() -> None:
    """The ``dicetable`` program itself (its console script, ``python -m``): ``main``, but a
    command run by ``cli.fast`` ends the process at once (``_end``)."""
    _run(_end)


def _run(end: Callable[[int], NoReturn]) -> None:
    # NumPy's BLAS starts a thread per core when imported, each spinning a while for work it
    # never gets: no command does linear algebra (the simulator looks rolls up in tables). One
    # thread, unless the operator sets it, is a third of ``simulate``'s CPU at 10^6 rolls.
    os.environ.setdefault(BLAS_THREADS, "1")
    if DEBUG_ENV not in os.environ:  # else Typer reads it (and a traceback may be shown)
        from dicetable.cli.fast import dispatch

        code = dispatch(sys.argv[1:], process_ends=end is _end)
        if code is not None:
            end(code)
    __getattr__("app")()


def _end(code: int) -> NoReturn:
    """End the process after a command run by ``cli.fast``: its output flushed, then at once,
    without the interpreter's teardown (every module's objects freed one by one, a last
    collection, the exit handlers): a tenth of ``simulate``'s CPU at 10^6 rolls. Only for the
    program itself (``script``: a caller of ``main`` goes on), and only where the teardown
    has nothing to finish: no thread but this one (a worker pool, a cluster client, a
    progress bar) and nothing left unwritten; else the usual exit."""
    threading = sys.modules.get("threading")  # not imported: no thread was started with it
    if threading is None or threading.active_count() == 1:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(code)  # the usual exit says what failed, as it always has
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    script()
