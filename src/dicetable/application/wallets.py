"""A player's wallet on the store: its own stream ``wallet:ACCOUNT`` (deposits, withdrawals,
buy-ins) and what the electronic tables cashed out to it. Money leaves a wallet only at the
version its balance was read at (``take``): two processes on one store cannot overdraw one
wallet. The cage's routes (``server.player_money``) and ``dicetable wallet`` both move money
here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dicetable.core.errors import InvalidInput, StaleVersion
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.games import events as ev
from dicetable.store import player_money_stream as pms
from dicetable.store.base import EventStore
from dicetable.table.player_money import ELECTRONIC


def wallet_state(store: EventStore, account: str) -> pms.WalletState:
    state = pms.WalletState()
    for e in store.events(f"{pms.WALLET}:{account}"):
        pms.apply_wallet(state, e)
    return state


def deposit(store: EventStore, account: str, amount: int, reason: str, at: str, *,
            actor: str = "system", role: Role = Role.SYSTEM) -> None:
    """The cage puts money into a player's wallet."""
    if amount <= 0:
        raise InvalidInput("a deposit is more than $0", rule="money.amount")
    append_at_version(store, f"{pms.WALLET}:{account}", pms.WalletState, pms.apply_wallet,
                      lambda st: pms.WalletDeposited(seq=st.seq + 1, at=at, account=account,
                                                     amount=amount, reason=reason, actor=actor,
                                                     role=role))


def table_credits(store: EventStore, account: str) -> int:
    """What the electronic tables of ``store`` cashed out to ``account`` (cents), read from
    every table's log (the CLI's read; a server follows its loaded tables: ``Ledger``)."""
    total = 0
    for table in store.tables():
        electronic = False
        for e in store.table_events(table):
            if isinstance(e, ev.TableOpened):
                electronic = e.mode == ELECTRONIC
            elif electronic and isinstance(e, ev.ChipsCashedOut) and e.player == account:
                total += e.amount
    return total


def wallet_summary(store: EventStore, account: str, credits: int,
                   in_transit: int | None = None) -> dict[str, Any]:
    """A wallet as the cage sees it: balance, its parts, and its last moves."""
    state = wallet_state(store, account)
    moves = []
    for e in list(store.events(f"{pms.WALLET}:{account}"))[-20:]:
        fields = {k: getattr(e, k) for k in ("amount", "table", "reason", "transfer")
                  if hasattr(e, k)}
        moves.append({"seq": e.seq, "at": e.at, "type": e.kind, "by": e.actor, **fields})
    out: dict[str, Any] = {
        "account": account, "balance": state.own() + credits, "deposited": state.deposited,
        "withdrawn": state.withdrawn, "to_tables": sum(state.to_tables.values()),
        "from_tables": credits, "version": state.seq, "moves": moves}
    if in_transit is not None:
        out["in_transit"] = in_transit
    return out


def take(store: EventStore, account: str, amount: int, at: str, *, credits: int,
         check: Callable[[int], None], table: str = "", transfer: str = "",
         reason: str = "", actor: str = "system", role: Role = Role.SYSTEM) -> None:
    """Take ``amount`` out of a wallet: onto electronic table ``table`` (a buy-in), or paid
    out by the cage (no table). ``check`` is given the balance read at the stream's version
    v and refuses by raising; the event is appended only if the stream is still at v, else
    the balance is read again and ``check`` decides again (another process spent meanwhile).
    ``credits``: the tables' cash-outs to the wallet, read before (a late read only
    understates)."""

    def decide(state: pms.WalletState) -> Event:
        check(state.own() + credits)
        if table:
            return pms.WalletToTable(seq=state.seq + 1, at=at, account=account, amount=amount,
                                     table=table, transfer=transfer, actor=actor, role=role)
        return pms.WalletWithdrawn(seq=state.seq + 1, at=at, account=account, amount=amount,
                                   reason=reason, actor=actor, role=role)

    append_at_version(store, f"{pms.WALLET}:{account}", pms.WalletState, pms.apply_wallet,
                      decide)


def give_back(store: EventStore, account: str, amount: int, table: str, transfer: str,
              reason: str, at: str) -> None:
    """A buy-in the table refused: its money back in the wallet."""
    append_at_version(store, f"{pms.WALLET}:{account}", pms.WalletState, pms.apply_wallet,
                      lambda st: pms.WalletReturned(seq=st.seq + 1, at=at, account=account,
                                                    amount=amount, table=table, transfer=transfer,
                                                    reason=reason[:200]))


def append_at_version(store: EventStore, stream: str, state_type: type[Any],
                      fold: Callable[[Any, Event], None], decide: Callable[[Any], Event]) -> None:
    """Fold ``stream``, decide its next event from the state, append it only if the stream is
    still at the version folded; another writer got there first: fold and decide again."""
    for _ in range(50):
        state = state_type()
        for e in store.events(stream):
            fold(state, e)
        try:
            store.append(stream, [decide(state)], expected=state.seq, request="")
            return
        except StaleVersion:
            continue
    raise StaleVersion(f"{stream} is changing too fast", rule="store.sequence")
