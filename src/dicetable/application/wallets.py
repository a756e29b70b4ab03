"""A player's wallet on the store: its own stream ``wallet:ACCOUNT`` (deposits, withdrawals,
buy-ins) and what the electronic tables cashed out to it. Money leaves a wallet only at the
version its balance was read at (``Wallet``, ``store.versioned``): two processes on one store
cannot overdraw one wallet. Every move (``deposited``, ``taken``, ``returned``) is a ``Step``
order on the wallet's stream, through ``Application.submit`` (``moved``): the cage's routes and
an electronic table's buy-ins (``server.player_money``), ``dicetable wallet``, the demo floor.
A cash-out adds nothing here: it is the table's ``ChipsCashedOut``, read as a credit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from dicetable.application.service import Acting, Application, Local, Step
from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event
from dicetable.core.roles import Role
from dicetable.games import events as ev
from dicetable.store import player_money_stream as pms
from dicetable.store import versioned
from dicetable.store.base import EventStore, kind_of, name_of
from dicetable.table.player_money import ELECTRONIC

T = TypeVar("T")


def wallet_state(store: EventStore, account: str) -> pms.WalletState:
    state = pms.WalletState()
    for e in store.events(f"{pms.WALLET}:{account}"):
        pms.apply_wallet(state, e)
    return state


def wallet_stream(account: str) -> str:
    return f"{pms.WALLET}:{account}"


TABLES = Acting("system", Role.SYSTEM)
"""The caller of an electronic table's wallet moves (a player's buy-in and its return): the
wallet events' own ``system`` envelope, as the table's sale is by its ``system`` role."""

Move = Callable[[pms.WalletState, tuple[str, Role]], Event]
"""A wallet move as a ``service.Step``: given the wallet's state at the version read and its
caller (name, role), decides the one event appended at that version (or refuses)."""


class AtVersion:
    """A stream held for ``Application.submit`` (``service.Holds``) whose every step decides
    one event on the stream folded at its version, appended only at that version; another
    process that appended first makes it fold and decide again (``store.versioned``)."""

    def __init__(self, store: EventStore, stream: str, state_type: type[Any],
                 fold: Callable[[Any, Event], None]) -> None:
        self.store = store
        self.stream = stream
        self.state_type = state_type
        self.fold = fold

    def run(self, step: Callable[[Any], T]) -> T:
        """``step`` decides the stream's next event (the one appended, and answered)."""
        decide = cast(Callable[[Any], Event], step)
        return cast(T, versioned.append_at_version(
            self.store, self.stream, self.state_type, self.fold, decide))


class Wallet(AtVersion):
    """A player's wallet (``wallet:ACCOUNT``) held for its moves."""

    def __init__(self, store: EventStore, account: str) -> None:
        super().__init__(store, wallet_stream(account), pms.WalletState, pms.apply_wallet)
        self.account = account


def seat_requests(store: EventStore, table: str) -> AtVersion:
    """A live table's players' requests to its dealer (``seat-requests:TABLE``: colour up,
    leaving), held for their steps (``server.player_money``: made, withdrawn, confirmed)."""
    return AtVersion(store, f"{pms.REQUESTS}:{table}", pms.RequestsState, pms.apply_request)


def deposited(account: str, amount: int, reason: str, at: str) -> Move:
    """The cage puts money into a player's wallet."""

    def decide(state: pms.WalletState, who: tuple[str, Role]) -> Event:
        if amount <= 0:
            raise InvalidInput("a deposit is more than $0", rule="money.amount")
        return pms.WalletDeposited(seq=state.seq + 1, at=at, account=account, amount=amount,
                                   reason=reason, actor=who[0], role=who[1])

    return decide


def taken(account: str, amount: int, at: str, *, credits: int, check: Callable[[int], None],
          table: str = "", transfer: str = "", reason: str = "") -> Move:
    """``amount`` out of a wallet: onto electronic table ``table`` (a buy-in), or paid out by
    the cage (no table). ``check`` is given the balance read at the stream's version and
    refuses by raising. ``credits``: the tables' cash-outs to the wallet, read before (a late
    read only understates)."""

    def decide(state: pms.WalletState, who: tuple[str, Role]) -> Event:
        check(state.own() + credits)
        if table:
            return pms.WalletToTable(seq=state.seq + 1, at=at, account=account, amount=amount,
                                     table=table, transfer=transfer, actor=who[0],
                                     role=who[1])
        return pms.WalletWithdrawn(seq=state.seq + 1, at=at, account=account, amount=amount,
                                   reason=reason, actor=who[0], role=who[1])

    return decide


def moved(app: Application[Any], account: str, caller: Acting, move: Move) -> Event:
    """A wallet move through the application's one way in (the cage's routes, an electronic
    table's buy-in and its return, ``dicetable wallet``): a ``Step`` on ``wallet:ACCOUNT`` in
    the caller's own name and role; a refusal is raised with its rule, and nothing is
    appended."""
    answer = app.submit(wallet_stream(account), Step(caller, move))
    assert answer is not None
    event: Event = answer.result()
    return event


def on_store(store: EventStore) -> Application[Any]:
    """An application holding the wallets of ``store`` and nothing else (``dicetable
    wallet``, tests); a server's floor holds them itself."""
    return Local(holders=lambda stream: Wallet(store, name_of(stream))
                 if kind_of(stream) == pms.WALLET else None)


def deposit(store: EventStore, account: str, amount: int, reason: str, at: str, *,
            actor: str = "system", role: Role = Role.SYSTEM) -> None:
    """``deposited`` on ``store`` through ``on_store``'s way in (the demo floor's set-up,
    tests)."""
    moved(on_store(store), account, Acting(actor, role), deposited(account, amount, reason, at))


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


def returned(account: str, amount: int, table: str, transfer: str, reason: str,
             at: str) -> Move:
    """A buy-in the table refused (``transfer``, moved by ``taken``): its money back in the
    wallet, whole."""

    def decide(state: pms.WalletState, who: tuple[str, Role]) -> Event:
        return pms.WalletReturned(seq=state.seq + 1, at=at, account=account, amount=amount,
                                  table=table, transfer=transfer, reason=reason[:200],
                                  actor=who[0], role=who[1])

    return decide
