"""Money the player handles (``dicetable.table.player_money``), as routes.

At an electronic table the player buys in from their wallet and cashes out to it, and leaves
(cashed out first). At a live table the player asks the dealer to colour them up or says they
are leaving; the dealer's console shows each pending request with one click to confirm, and
the dealer may cash a player out in full (the amount is the player's whole table balance,
read when the command is decided: nobody types it).

Every move is a table command (``buy-chips``/``cash-out``, by the electronic table's own
``system`` role or by the dealer), so the table's log holds it. Money leaving a wallet is
first an event of the wallet's own stream, a ``Step`` through ``Application.submit``
(``wallets.moved``) appended only at the version its balance was read at: two server
processes on one store cannot overdraw one wallet. A buy-in the table then refuses comes back
whole (``WalletReturned``, the same way in); one whose process stopped between the two
appends stays "in transit" (shown, never spendable twice). A cash-out is the table's
``ChipsCashedOut`` alone: the wallet reads it as a credit (``Ledger``).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from dicetable.application.accounts import Account, Kind
from dicetable.application.service import Acting, Step
from dicetable.application.wallets import (  # the cage's command line moves them too
    TABLES,
    deposited,
    moved,
    returned,
    taken,
    wallet_state,
    wallet_summary,
)
from dicetable.bank.catalogue import format_chips, parse_chips
from dicetable.bank.model import breakdown
from dicetable.core.errors import DicetableError, InvalidInput, RoleNotPermitted
from dicetable.core.events import Event
from dicetable.core.money import format_cents
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games import events as ev
from dicetable.server.bank_floor import banks_of
from dicetable.server.floor import Chore, Floor, Given
from dicetable.server.session_reads import Identify
from dicetable.store import player_money_stream as pms
from dicetable.store.base import EventStore
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.player_money import ELECTRONIC, PlayerMoneyRules

SYSTEM_SELLER = "table"
"""The actor an electronic table's own buy-ins and cash-outs are recorded under."""


def give(name: str, actor: str, role: Role, **fields: Any) -> g.Command:
    """A table command built by its catalogue entry (its one declaration), from JSON fields."""
    return CATALOGUE.named(name).from_json(actor, role, fields)


def kind(name: str) -> type[g.Command]:
    return CATALOGUE.named(name).command


class Ledger:
    """Each player's wallet: its own stream (deposits, withdrawals, buy-ins) and what the
    electronic tables loaded here cashed out to it."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self._seq: dict[str, int] = {}
        self._credits: dict[str, int] = defaultdict(int)
        self._bought: dict[tuple[str, str], int] = defaultdict(int)
        self._last_out: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._account_locks: dict[str, asyncio.Lock] = {}

    def account_lock(self, account: str) -> asyncio.Lock:
        """Moves of one account in this process wait for each other (fewer re-decisions);
        across processes the wallet stream's version decides (``wallets.Wallet``)."""
        return self._account_locks.setdefault(account, asyncio.Lock())

    def _follow(self) -> None:
        for table_id, info in list(self.floor.tables.items()):
            electronic = info.table.mode == ELECTRONIC
            after = self._seq.get(table_id, 0)
            for e in self.floor.store.table_events(table_id, after=after):
                if isinstance(e, ev.ChipsBought) and electronic:
                    self._bought[(table_id, e.player)] += e.amount
                elif isinstance(e, ev.ChipsCashedOut):
                    if electronic:
                        self._credits[e.player] += e.amount
                    self._last_out[(table_id, e.player)] = {
                        "amount": e.amount, "by": e.actor, "role": e.role.value, "seq": e.seq,
                        "at": e.at}
                after = e.seq
            self._seq[table_id] = after

    def credits(self, account: str) -> int:
        """What electronic tables cashed out to ``account`` (cents)."""
        with self._lock:
            self._follow()
            return self._credits[account]

    def state(self, account: str) -> pms.WalletState:
        return wallet_state(self.floor.store, account)

    def wallet(self, account: str) -> int:
        """The wallet's balance (cents): its own stream plus the tables' cash-outs to it."""
        return self.state(account).own() + self.credits(account)

    def in_transit(self, account: str) -> int:
        """Cents that left the wallet for a table whose ``ChipsBought`` this process has not
        seen: a buy-in under way, or one whose process stopped between the two appends."""
        state = self.state(account)
        with self._lock:
            self._follow()
            return sum(max(0, n - self._bought[(t, account)])
                       for t, n in state.to_tables.items())

    def last_cash_out(self, table_id: str, player: str) -> dict[str, Any] | None:
        with self._lock:
            self._follow()
            return self._last_out.get((table_id, player))


_LEDGERS: weakref.WeakKeyDictionary[Floor, Ledger] = weakref.WeakKeyDictionary()
_LEDGERS_LOCK = threading.Lock()


def ledger_of(floor: Floor) -> Ledger:
    """The one ``Ledger`` of ``floor`` (its wallet routes and the cage's share it)."""
    with _LEDGERS_LOCK:
        found = _LEDGERS.get(floor)
        if found is None:
            found = _LEDGERS[floor] = Ledger(floor)
        return found


def requests_of(store: EventStore, table_id: str) -> pms.RequestsState:
    state = pms.RequestsState()
    for e in store.events(f"{pms.REQUESTS}:{table_id}"):
        pms.apply_request(state, e)
    return state


class Amount(BaseModel):
    amount: int = Field(gt=0, lt=10**12, description="cents")


class CashOutIn(BaseModel):
    amount: int | None = Field(default=None, gt=0, lt=10**12,
                               description="cents; left out: the whole table balance")


class RequestIn(BaseModel):
    what: Annotated[str, Field(max_length=16, examples=["colour-up", "leave"])]


class ConfirmIn(BaseModel):
    chips: str = Field(default="", max_length=400,
                       description="a colour-up's exchange: DENOMxCOUNT, + in, - out")


class PlayerIn(BaseModel):
    player: str = Field(max_length=64)


def router(account: Identify, rules: PlayerMoneyRules | None = None,
           ) -> APIRouter:
    """The player-money routes (mounted by ``create_app``, which gives the session's account)."""
    api = APIRouter(prefix="/api/tables/{table_id}/money", tags=["tables"])
    def house_at(floor: Floor, table_id: str) -> PlayerMoneyRules:
        """The rules the table's pack sets (``rules``, when given, instead)."""
        return rules or PlayerMoneyRules.from_pack(floor.get(table_id).table.pack)

    def floor_of(request: Request) -> Floor:
        floor: Floor = request.app.state.floor
        return floor

    async def run(floor: Floor, table_id: str, order: Chore | Given) -> Any:
        return await asyncio.wrap_future(floor.submit(table_id, order))

    def player_at(floor: Floor, who: Account, table_id: str) -> None:
        if who.kind is not Kind.PLAYER:
            raise RoleNotPermitted("only a player moves their own money", rule="authority.chips")
        if who.username not in floor.get(table_id).table.state.players:
            raise InvalidInput("Take a seat at this table first.", rule="table.players")

    def dealer_at(floor: Floor, who: Account, table_id: str) -> Role:
        table = floor.get(table_id).table
        allowed = table.pack.roles("authority.chips")
        held = [r for r in floor.roles_at(who, table_id) if r in allowed]
        if who.kind is not Kind.STAFF or not held:
            raise RoleNotPermitted(
                f"{who.username} is not assigned at {table_id} in a role that handles chips "
                f"({', '.join(sorted(r.value for r in allowed))})", rule="authority.chips",
                citation=table.pack.cite("authority.chips"))
        return held[0]

    def money_view(floor: Floor, table_id: str, who: Account) -> dict[str, Any]:
        info = floor.get(table_id)
        state, mode = info.table.state, info.table.mode
        ledger = ledger_of(floor)
        house = house_at(floor, table_id)
        out: dict[str, Any] = {"table": table_id, "mode": mode,
                               "self_service": mode == house.rule("wallet.tables").value,
                               "rules": house.as_list()}
        pending = requests_of(floor.store, table_id).pending
        if who.kind is Kind.PLAYER:
            me = state.players.get(who.username)
            out["wallet"] = ledger.wallet(who.username)
            out["in_transit"] = ledger.in_transit(who.username)
            out["balance"] = me.balance if me else 0
            out["seated"] = bool(me and me.seat is not None)
            out["joined"] = me is not None
            out["on_layout"] = sum(b.amount for b in state.bets_of(who.username))
            out["requests"] = [{"id": int(n), **r} for n, r in pending.items()
                               if r["player"] == who.username]
            out["last_cash_out"] = ledger.last_cash_out(table_id, who.username)
        else:
            out["requests"] = [{"id": int(n), **r,
                                "balance": state.balance(r["player"])}
                               for n, r in sorted(pending.items(), key=lambda x: int(x[0]))]
            for r in out["requests"]:
                if r["what"] == "colour-up":
                    r["suggested_out"] = _suggested_out(floor, table_id, r["balance"])
            out["players"] = [{"player": p, "balance": info_.balance, "seat": info_.seat}
                              for p, info_ in sorted(state.players.items())]
        return out

    @api.get("")
    def view(table_id: str, request: Request) -> dict[str, Any]:
        """The caller's money at this table: a player's wallet, table balance, pending
        requests and last cash-out; staff: every pending request and every player's
        balance. With the house rules these follow (citation and status)."""
        return money_view(floor_of(request), table_id, account(request))

    @api.post("/buy-in")
    async def buy_in(table_id: str, body: Amount, request: Request) -> dict[str, Any]:
        """Electronic table: move ``amount`` from the wallet onto the table."""
        floor, who = floor_of(request), await account.awaited(request)
        player_at(floor, who, table_id)
        ledger = ledger_of(floor)
        mode, house = floor.get(table_id).table.mode, house_at(floor, table_id)
        house.self_service(mode, "buy-in")
        transfer, at = uuid.uuid4().hex, floor.clock.now().isoformat()
        async with ledger.account_lock(who.username):
            credits = await asyncio.to_thread(ledger.credits, who.username)
            await asyncio.to_thread(moved, floor, who.username, TABLES, taken(
                who.username, body.amount, at, credits=credits,
                check=lambda balance: house.check_buy_in(mode, body.amount, wallet=balance),
                table=table_id, transfer=transfer))
            try:
                await run(floor, table_id, Chore(lambda: give(
                    "buy-chips", SYSTEM_SELLER, Role.SYSTEM, player=who.username,
                    amount=body.amount)))
            except DicetableError as refused:  # decided and refused: nothing on the table
                await asyncio.to_thread(moved, floor, who.username, TABLES, returned(
                    who.username, body.amount, table_id, transfer, str(refused), at))
                raise
        return money_view(floor, table_id, who)

    @api.post("/cash-out")
    async def cash_out(table_id: str, body: CashOutIn, request: Request) -> dict[str, Any]:
        """Electronic table: move ``amount`` (left out: all of it) from the table to the
        wallet."""
        floor, who = floor_of(request), await account.awaited(request)
        player_at(floor, who, table_id)
        table = floor.get(table_id).table
        ledger = ledger_of(floor)

        def build() -> g.Command:
            balance = table.state.balance(who.username)
            amount = balance if body.amount is None else body.amount
            house_at(floor, table_id).check_cash_out(table.mode, amount, balance=balance)
            return give("cash-out", SYSTEM_SELLER, Role.SYSTEM, player=who.username,
                        amount=amount)

        house_at(floor, table_id).self_service(table.mode, "cash-out")
        async with ledger.account_lock(who.username):
            await run(floor, table_id, Chore(build))
        return money_view(floor, table_id, who)

    @api.post("/leave")
    async def leave(table_id: str, request: Request) -> dict[str, Any]:
        """Electronic table: leave the table, the whole table balance back to the wallet."""
        floor, who = floor_of(request), await account.awaited(request)
        player_at(floor, who, table_id)
        table = floor.get(table_id).table
        house_at(floor, table_id).self_service(table.mode, "cash-out")

        def build() -> Iterator[g.Command]:
            # Leaving first: if it is refused (wagers on the layout) nothing has moved.
            yield give("leave", who.username, Role.PLAYER, player=who.username)
            balance = table.state.balance(who.username)
            if balance > 0:
                yield give("cash-out", SYSTEM_SELLER, Role.SYSTEM, player=who.username,
                           amount=balance)

        async with ledger_of(floor).account_lock(who.username):
            await run(floor, table_id, Chore(build))
        return money_view(floor, table_id, who)

    @api.post("/requests")
    def ask(table_id: str, body: RequestIn, request: Request) -> dict[str, Any]:
        """Live table: ask the dealer to colour you up, or tell them you are leaving."""
        floor, who = floor_of(request), account(request)
        player_at(floor, who, table_id)
        house_at(floor, table_id).check_request(floor.get(table_id).table.mode, body.what)
        current = requests_of(floor.store, table_id)
        if any(r["player"] == who.username and r["what"] == body.what
               for r in current.pending.values()):
            raise InvalidInput("You have already asked; the dealer will confirm it shortly.",
                               rule="requests.confirmed_by")
        at = floor.clock.now().isoformat()
        _request(floor, table_id, Acting(who.username, Role.PLAYER),
                 lambda st, me: pms.RequestMade(
                     seq=st.seq + 1, at=at, table=table_id, actor=me[0], role=me[1],
                     request=st.made + 1, player=who.username, what=body.what))
        return money_view(floor, table_id, who)

    @api.delete("/requests/{number}")
    def withdraw(table_id: str, number: int, request: Request) -> dict[str, Any]:
        """A player withdraws their own pending request."""
        floor, who = floor_of(request), account(request)
        found = requests_of(floor.store, table_id).pending.get(str(number))
        if found is None or found["player"] != who.username:
            raise InvalidInput("That request is not pending.", rule="requests.confirmed_by")
        _settle(floor, table_id, who, Role.PLAYER, number, "withdrawn", "")
        return money_view(floor, table_id, who)

    confirming: dict[str, asyncio.Lock] = {}  # per table, in this process

    @api.post("/requests/{number}/confirm")
    async def confirm(table_id: str, number: int, request: Request,
                      body: ConfirmIn | None = None) -> dict[str, Any]:
        """The dealer confirms a pending request: a colour-up (equal value: the balance does
        not change) or a player leaving (seat given up, the whole balance cashed out in
        chips the player takes to the cage).

        A colour-up with ``chips`` (the exchange: the player's chips in, +, the table's out,
        -, e.g. ``500x20,10000x-1``) is also recorded in the table's bank as a colour change
        (465a.36(b)(4)), refused unless equal in value and within the player's balance."""
        floor, who = floor_of(request), await account.awaited(request)
        role = dealer_at(floor, who, table_id)
        # One confirm of a request at a time (a double click, two dealers): the second finds
        # it settled, so the bank records the colour change once.
        async with confirming.setdefault(table_id, asyncio.Lock()):
            found = requests_of(floor.store, table_id).pending.get(str(number))
            if found is None:
                raise InvalidInput(f"request {number} is not pending", rule="requests.confirmed_by")
            player = found["player"]
            table = floor.get(table_id).table
            chips = body.chips if body is not None else ""
            if found["what"] == "colour-up":
                balance = table.state.balance(player)
                detail = f"coloured up {format_cents(balance)} at equal value"
                if chips:
                    handed = sum(d * n for d, n in parse_chips(chips) if n > 0)
                    if handed > balance:
                        rule = house_at(floor, table_id).rule("colour_up.value")
                        raise InvalidInput(
                            f"{player} has {format_cents(balance)} at the table; the exchange "
                            f"takes in {format_cents(handed)}", rule=rule.id, citation=rule.cite())
                    await asyncio.to_thread(banks_of(floor).step, table_id, who, "colour-change",
                                            {"ref": f"request {number} ({player})",
                                             "chips": chips})
                    detail += f", recorded in the bank ({format_cents(handed)} exchanged)"
            elif chips:
                raise InvalidInput("chips are given only with a colour-up",
                                   rule="requests.confirmed_by")
            else:
                events = await run(floor, table_id, Given(who, _leaving(table, player),
                                                          kind("leave")))
                out = [e for e in events["events"] if e.get("type") == "ChipsCashedOut"]
                detail = "left the table" + (
                    f", cashed out {format_cents(out[0]['amount'])} in chips" if out else "")
            _settle(floor, table_id, who, role, number, "confirmed", detail)
        return money_view(floor, table_id, who)

    @api.post("/cash-out-all")
    async def cash_out_all(table_id: str, body: PlayerIn, request: Request) -> dict[str, Any]:
        """The dealer cashes a player out in full: the amount is the player's whole table
        balance when the command is decided."""
        floor, who = floor_of(request), await account.awaited(request)
        dealer_at(floor, who, table_id)
        table = floor.get(table_id).table

        def build(actor: str, role: Role) -> g.Command:
            balance = table.state.balance(body.player)
            if balance <= 0:
                raise InvalidInput(f"{body.player} has nothing at the table to cash out",
                                   rule="money.balance")
            return give("cash-out", actor, role, player=body.player, amount=balance)

        await run(floor, table_id, Given(who, build, kind("cash-out")))
        return money_view(floor, table_id, who)

    return api


def _leaving(table: Any, player: str) -> Callable[[str, Role], Iterator[g.Command]]:
    def build(actor: str, role: Role) -> Iterator[g.Command]:
        yield give("leave", actor, role, player=player)
        balance = table.state.balance(player)
        if balance > 0:
            yield give("cash-out", actor, role, player=player, amount=balance)
    return build


def _suggested_out(floor: Floor, table_id: str, balance: int) -> str:
    """The colour-up's chips out, for the dealer to check: the balance in the fewest
    chips the tray holds (the bank pack's ``chips.breakdown``, largest first). Only a
    suggestion: what the player pushes in is the dealer's count, never guessed here."""
    try:
        bank = banks_of(floor).get(table_id).bank
    except DicetableError:
        return ""  # no bank at this table: nothing to suggest
    held = [d for d, n in bank.state.inventory if n > 0]
    chips, _ = breakdown(balance, held or bank.pack.value("chips.denominations"))
    return format_chips(chips)


def _request(floor: Floor, table_id: str, caller: Acting,
             decide: Callable[[pms.RequestsState, tuple[str, Role]], Event]) -> None:
    """A step on the table's seat requests, through the floor's ``submit`` in the caller's
    name and role (``wallets.seat_requests``: decided at the stream's version)."""
    answer = floor.submit(f"{pms.REQUESTS}:{table_id}", Step(caller, decide))
    assert answer is not None
    answer.result()


def _settle(floor: Floor, table_id: str, who: Account, role: Role, number: int,
            outcome: str, detail: str) -> None:
    at = floor.clock.now().isoformat()
    _request(floor, table_id, Acting(who.username, role), lambda st, me: pms.RequestSettled(
        seq=st.seq + 1, at=at, table=table_id, actor=me[0], role=me[1], request=number,
        outcome=outcome, detail=detail))




class CageMove(BaseModel):
    amount: int = Field(gt=0, lt=10**12, description="cents")
    reason: str = Field(default="", max_length=200)


def cage_router(account: Identify, rules: PlayerMoneyRules | None = None,
                ) -> APIRouter:
    """The cage's wallet routes: show, deposit and withdraw, for the cage's role
    (``wallet.cage``); a withdrawal is decided on the balance at the wallet's version, as a
    buy-in is (``wallets.taken``)."""
    api = APIRouter(prefix="/api/cage/wallets", tags=["cage"])
    house = rules or PlayerMoneyRules()

    def cashier(floor: Floor, who: Account) -> Role:
        person = floor.custody.roster.get(who.username)
        role = person.role if person is not None and who.kind is Kind.STAFF else None
        house.check_cage(who.username, role)
        assert role is not None
        return role

    def holder(floor: Floor, name: str) -> str:
        found = floor.accounts.get(name)
        if found is None or found.kind is not Kind.PLAYER:
            raise InvalidInput(f"there is no player account {name!r}", rule="wallet.account")
        return found.username

    def summary(floor: Floor, name: str) -> dict[str, Any]:
        ledger = ledger_of(floor)
        out = wallet_summary(floor.store, name, ledger.credits(name), ledger.in_transit(name))
        out["rules"] = [r for r in house.as_list() if r["id"] in ("wallet.cage",)]
        return out

    @api.get("")
    def players(request: Request) -> list[dict[str, Any]]:
        """Every player account's wallet balance, for the cage."""
        floor: Floor = request.app.state.floor
        cashier(floor, account(request))
        ledger = ledger_of(floor)
        return [{"account": a.username, "name": a.display, "balance": ledger.wallet(a.username)}
                for a in floor.accounts.all() if a.kind is Kind.PLAYER]

    @api.get("/{name}")
    def show(name: str, request: Request) -> dict[str, Any]:
        """One wallet: balance, deposits, withdrawals, moves to and from tables, in transit."""
        floor: Floor = request.app.state.floor
        cashier(floor, account(request))
        return summary(floor, holder(floor, name))

    @api.post("/{name}/deposit")
    def put_in(name: str, body: CageMove, request: Request) -> dict[str, Any]:
        """The cage takes the player's cash and puts ``amount`` into their wallet."""
        floor: Floor = request.app.state.floor
        who = account(request)
        role = cashier(floor, who)
        player = holder(floor, name)
        moved(floor, player, Acting(who.username, role),
              deposited(player, body.amount, body.reason or "cage deposit",
                        floor.clock.now().isoformat()))
        return summary(floor, player)

    @api.post("/{name}/withdraw")
    def pay_out(name: str, body: CageMove, request: Request) -> dict[str, Any]:
        """The cage pays the player ``amount`` out of their wallet (never more than it
        holds at the version it is decided on)."""
        floor: Floor = request.app.state.floor
        who = account(request)
        role = cashier(floor, who)
        player = holder(floor, name)
        moved(floor, player, Acting(who.username, role),
              taken(player, body.amount, floor.clock.now().isoformat(),
                    credits=ledger_of(floor).credits(player),
                    check=lambda balance: house.check_withdrawal(body.amount, wallet=balance),
                    reason=body.reason or "cage withdrawal"))
        return summary(floor, player)

    return api
