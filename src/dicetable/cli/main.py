"""The ``dicetable`` command: thin commands over the library."""

from __future__ import annotations

import typer

from dicetable.cli import (
    demo,
    dice,
    integrity_cmds,
    replay,
    rng,
    rules,
    script_cmds,
    serve,
    store_cmds,
)
from dicetable.cli import odds as odds_cli
from dicetable.cli import simulate as simulate_cli

app = typer.Typer(
    name="dicetable",
    help="Casino dice tables run exactly as the PA and IN regulations write them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # never print secrets in a traceback (standards §4)
)
app.add_typer(rules.app, name="rules")
app.command("serve")(serve.serve)
app.command("demo")(demo.demo)
app.command("replay")(replay.replay)
app.add_typer(dice.app, name="dice")
app.command("rng-test")(rng.rng_test)
app.command("odds")(odds_cli.odds)
app.command("simulate")(simulate_cli.simulate)
app.add_typer(store_cmds.audit_app, name="audit")
app.command("recall")(store_cmds.recall)
app.command("export")(store_cmds.export)
app.add_typer(script_cmds.app, name="script")
app.add_typer(integrity_cmds.keys_app, name="keys")
app.add_typer(integrity_cmds.accounts_app, name="accounts")
store_cmds.audit_app.command("checkpoint")(integrity_cmds.checkpoint)
store_cmds.audit_app.command("clear-fault")(integrity_cmds.clear_fault)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
