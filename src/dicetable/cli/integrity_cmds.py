"""``dicetable keys init``, ``dicetable audit checkpoint`` and the break-glass
``dicetable accounts unlock``.

Break-glass: when every pit boss is locked out nobody can unlock anyone through the floor.
Whoever holds the store's chain key (kept outside the database by the operator) can: the
unlock is recorded in the account's chained stream as ``via: break-glass`` with the operator
named, so it is as auditable as any other.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer

from dicetable.cli.main import SUBCOMMAND_STYLE
from dicetable.cli.output import output
from dicetable.cli.refusal import refused_in_red
from dicetable.core.errors import DicetableError

keys_app = typer.Typer(
    **SUBCOMMAND_STYLE, help="The chain key kept outside the database.", no_args_is_help=True)
accounts_app = typer.Typer(
    **SUBCOMMAND_STYLE, help="Accounts on a store (break-glass).", no_args_is_help=True)
console = output()
err = output(stderr=True)


@keys_app.command("init")
def keys_init(path: Path = typer.Argument(Path("dicetable.db.key"), metavar="PATH",
                                          help="Where to write the key (never overwritten)")
              ) -> None:
    """Create a new 32-byte chain key (hex, mode 0600). Keep it off the database's disk."""
    from dicetable.store.keys import init_key

    with refused_in_red(err):
        written = init_key(path)
    console.print(f"key written to {written}; give it to dicetable with --key {written} "
                  "or DICETABLE_KEY_FILE")


@keys_app.command("rotate")
def keys_rotate(db: str = typer.Option(..., "--db", help="The store (the server stopped)"),
                key_file: Path = typer.Option(..., "--key", help="The current key"),
                new_key: Path = typer.Option(..., "--new-key", help="The new key (dicetable "
                                             "keys init)"),
                checkpoints: Path | None = typer.Option(
                    None, "--checkpoints", help="The checkpoint file: kept (renamed), and a "
                    "new one started under the new key"),
                schema: str = typer.Option("dicetable")) -> None:
    """Re-link every stream under a new key after verifying the log under the old one;
    recorded in the store."""
    from dicetable.store.keys import read_key
    from dicetable.store.rotation import rotate

    with refused_in_red(err):
        done = rotate(db, read_key(key_file), read_key(new_key), schema=schema,
                      checkpoints=checkpoints)
    console.print(f"{db}: {done['events']} events of {done['streams']} streams re-linked "
                  f"under {done['key_id']} (was {done['old_key_id']}); recorded")
    if done["checkpoints_kept"]:
        console.print(f"the old checkpoint file is kept at {done['checkpoints_kept']}")


def checkpoint(db: str = typer.Argument(..., metavar="DB",
                                        help="A SQLite file or a postgresql:// URL"),
               checkpoints: Path = typer.Option(..., "--checkpoints",
                                                help="The append-only checkpoint file"),
               key_file: Path | None = typer.Option(None, "--key", help="The chain key"),
               schema: str = typer.Option("dicetable")) -> None:
    """Append a signed checkpoint of every stream's head (tables and accounts)."""
    from dicetable.store.checkpoints import heads_of, write_checkpoint
    from dicetable.store.keys import find_key
    from dicetable.store.open import open_store

    with refused_in_red(err):
        key = find_key(key_file, db)
        store = open_store(db, schema=schema, create=False, key=key)
        try:
            n = write_checkpoint(checkpoints, key, heads_of([store]),
                                 at=datetime.now(UTC).isoformat())
        finally:
            store.close()
    console.print(f"checkpoint {n} appended to {checkpoints}")


@accounts_app.command("unlock")
def unlock(username: str = typer.Argument(..., metavar="USERNAME", help="The account to unlock"),
           db: str = typer.Option("dicetable.db", "--db", help="The store"),
           operator: str = typer.Option(..., "--operator",
                                        help="Who is breaking the glass (recorded)"),
           key_file: Path | None = typer.Option(None, "--key",
                                                help="The store's chain key (required)"),
           schema: str = typer.Option("dicetable")) -> None:
    """Break-glass unlock: needs the store's chain key; recorded in the account's stream."""
    from dicetable.application.accounts import Accounts
    from dicetable.store.open import open_store

    with refused_in_red(err):
        key = break_glass_key(key_file, db, "accounts.break_glass")
        accounts = Accounts(open_store(db, schema=schema, create=False, key=key))
        try:
            accounts.unlock(username, by=operator, role="break-glass", via="break-glass")
        finally:
            accounts.close()
            accounts.store.close()
    console.print(f"{username} unlocked (break-glass by {operator}, recorded)")


def clear_fault(table: str = typer.Argument(..., metavar="TABLE",
                                            help="The faulted table (or stream)"),
                db: str = typer.Option("dicetable.db", "--db", help="The store"),
                operator: str = typer.Option(..., "--operator", help="Who clears (recorded)"),
                reason: str = typer.Option(..., "--reason", help="Why the log is sound again"),
                key_file: Path | None = typer.Option(None, "--key", help="The chain key"),
                checkpoints: Path | None = typer.Option(
                    None, "--checkpoints", envvar="DICETABLE_CHECKPOINTS",
                    help="The server's checkpoint file: the log is checked against it "
                         "(required for a fault the checkpoints found)"),
                schema: str = typer.Option("dicetable")) -> None:
    """Break-glass: clear an integrity fault when no pit boss can (every table faulted).
    Needs the store's key; refused while the whole log does not verify (the chain, the
    checkpoints, the adjudication of every settlement), naming what fails; recorded."""
    from dicetable.application.integrity import Faults, clear_problems, still_failing
    from dicetable.store.open import open_store

    with refused_in_red(err):
        key = break_glass_key(key_file, db, "integrity.break_glass")
        store = open_store(db, schema=schema, create=False, key=key)
        try:
            faults = Faults(store)
            if table not in faults.open:
                raise DicetableError(f"no open fault on {table!r}", rule="integrity.fault")
            problems = clear_problems(store, table, checkpoints=checkpoints,
                                      fault=faults.open[table])
            if problems:
                raise still_failing(table, problems)
            faults.clear(table, operator, "break-glass", reason, datetime.now(UTC).isoformat())
        finally:
            store.close()
    console.print(f"{table}: fault cleared (break-glass by {operator}, recorded)")


def break_glass_key(key_file: Path | None, db: str, rule: str) -> bytes:
    """The store's chain key, which breaking the glass needs."""
    from dicetable.store.keys import find_key

    key = find_key(key_file, db)
    if key is None:
        raise DicetableError("break-glass needs the store's chain key (--key)", rule=rule)
    return key


# ``dicetable audit`` is store_cmds' group plus these two; the CLI loads it from here, lazily.
from dicetable.cli.store_cmds import audit_app  # noqa: E402

audit_app.command("checkpoint")(checkpoint)
audit_app.command("clear-fault")(clear_fault)
