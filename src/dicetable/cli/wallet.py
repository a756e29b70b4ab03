"""``dicetable wallet``: the cage's wallet moves on a store: ``show``, ``deposit`` and
``withdraw`` a player's wallet, given ``--as NAME:ROLE`` in the cage's role (house rule
``wallet.cage``), each a step through ``Application.submit`` as the cage's routes take it. A
withdrawal is decided on the balance at the wallet stream's version and appended only if the
stream is still there (another process spending meanwhile makes it decide again). A refusal
prints its rule and citation and exits 1; nothing changes.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from dicetable.application.service import Acting
from dicetable.application.wallets import (
    deposited,
    moved,
    on_store,
    table_credits,
    taken,
    wallet_summary,
)
from dicetable.bank.catalogue import parse_person
from dicetable.cli.main import SUBCOMMAND_STYLE
from dicetable.cli.store_cmds import DB_HELP, KEY_HELP, SCHEMA_HELP, chain_key, err, opened
from dicetable.core.clock import SystemClock
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.money import format_cents, parse_money
from dicetable.store import account_stream
from dicetable.store.base import EventStore
from dicetable.table.player_money import PlayerMoneyRules

app = typer.Typer(**SUBCOMMAND_STYLE,
                  help="Players' wallets at the cage: show, deposit, withdraw.",
                  no_args_is_help=True)
AS_HELP = "Who works the cage: NAME:ROLE (the role the house rule wallet.cage names)"


def _player(store: EventStore, name: str) -> str:
    state = account_stream.AccountState()
    for e in store.events(f"{account_stream.KIND}:{name}"):
        account_stream.apply(state, e)
    if state.kind != "player":
        raise InvalidInput(f"there is no player account {name!r}", rule="wallet.account")
    return name


def _print(store: EventStore, name: str) -> None:
    shown = wallet_summary(store, name, table_credits(store, name))
    typer.echo(f"{name}: {format_cents(shown['balance'])} (deposited "
               f"{format_cents(shown['deposited'])}, withdrawn "
               f"{format_cents(shown['withdrawn'])}, to tables "
               f"{format_cents(shown['to_tables'])}, from tables "
               f"{format_cents(shown['from_tables'])}; version {shown['version']})")
    for m in shown["moves"]:
        where = f" {m['table']}" if m.get("table") else ""
        typer.echo(f"{m['seq']:>4} {m['type']:<16} {format_cents(m['amount']):>12}{where} "
                   f"by {m['by']} {m.get('reason', '')}".rstrip())


def _move(db: str, schema: str, key_file: Path | None, who: str, name: str, amount: str,
          reason: str, taking: bool) -> None:
    house = PlayerMoneyRules()
    with opened(db, schema, chain_key(key_file, db)) as store:
        try:
            actor, role = parse_person(who)
            house.check_cage(actor, role)
            cents = parse_money(amount)
            player = _player(store, name)
            at = SystemClock().now().isoformat()
            if taking and cents <= 0:
                raise InvalidInput("a withdrawal is more than $0", rule="money.amount")
            move = (taken(player, cents, at, credits=table_credits(store, player),
                          check=lambda balance: house.check_withdrawal(cents, wallet=balance),
                          reason=reason or "cage withdrawal") if taking
                    else deposited(player, cents, reason or "cage deposit", at))
            moved(on_store(store), player, Acting(actor, role), move)
        except DicetableError as e:
            err.print(f"[red]refused: {escape(str(e))}[/red]")
            raise typer.Exit(1) from None
        _print(store, player)


@app.command("show")
def show(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
         account: str = typer.Argument(..., metavar="ACCOUNT", help="The player"),
         key_file: Path | None = typer.Option(None, "--key", help=KEY_HELP),
         schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
    """A wallet: balance, deposits, withdrawals, moves to and from tables, last moves."""
    with opened(db, schema, chain_key(key_file, db)) as store:
        try:
            _print(store, _player(store, account))
        except DicetableError as e:
            err.print(f"[red]refused: {escape(str(e))}[/red]")
            raise typer.Exit(1) from None


def _move_command(name: str, amount_help: str, reason_help: str, doc: str,
                  taking: bool) -> None:
    """Declare ``wallet NAME``: a cage move, in (``deposit``) or out (``withdraw``)."""

    def command(db: str = typer.Argument(..., metavar="DB", help=DB_HELP),
                account: str = typer.Argument(..., metavar="ACCOUNT", help="The player"),
                amount: str = typer.Argument(..., metavar="AMOUNT", help=amount_help),
                actor: str = typer.Option(..., "--as", help=AS_HELP),
                reason: str = typer.Option("", help=reason_help),
                key_file: Path | None = typer.Option(None, "--key", help=KEY_HELP),
                schema: str = typer.Option("dicetable", help=SCHEMA_HELP)) -> None:
        _move(db, schema, key_file, actor, account, amount, reason, taking=taking)

    command.__doc__ = doc
    app.command(name)(command)


_move_command("deposit", "Dollars: 50, 12.50", "What the cage took (cash, a cheque)",
              "The cage puts AMOUNT into the player's wallet.", taking=False)
_move_command("withdraw", "Dollars", "How it was paid",
              "The cage pays AMOUNT out of the player's wallet (never more than it holds).",
              taking=True)
