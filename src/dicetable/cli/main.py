"""The ``dicetable`` command: thin commands over the library."""

from __future__ import annotations

import typer

from dicetable.cli import demo, rules, store_cmds

app = typer.Typer(
    name="dicetable",
    help="Casino dice tables run exactly as the PA and IN regulations write them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # never print secrets in a traceback (standards §4)
)
app.add_typer(rules.app, name="rules")
app.command("demo")(demo.demo)
# -- issue 4: the table log --
app.add_typer(store_cmds.audit_app, name="audit")
app.command("recall")(store_cmds.recall)
app.command("export")(store_cmds.export)
# -- end issue 4 --


def main() -> None:
    app()


if __name__ == "__main__":
    main()
