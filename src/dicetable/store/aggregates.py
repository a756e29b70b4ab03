"""The aggregates dicetable ships: tables, the site's dice custody ledger, accounts (with
their sessions and locks), staff changes, the floor's faults, kept request answers, players'
wallet deposits, live tables' requests to the dealer, each table's bank (its chip
inventory, slips and drop) and the casino's slip serial series."""

from __future__ import annotations

from typing import Any

from dicetable.bank import state as bank_state
from dicetable.bank.events import BankEvent
from dicetable.core.events import Event
from dicetable.custody.events import CustodyEvent, CustodyOpened
from dicetable.custody.state import CustodyState
from dicetable.custody.state import apply as custody_apply
from dicetable.games.events import Event as TableEvent
from dicetable.games.events import TableOpened
from dicetable.games.state import TableState
from dicetable.store import (
    account_stream,
    bank_stream,
    custody_codec,
    fault_stream,
    operations_stream,
    player_money_stream,
    request_stream,
    slip_serials_stream,
    staff_stream,
)
from dicetable.store.base import TABLE, Aggregate, register
from dicetable.store.record_stream import register_record_kind
from dicetable.store.state_codec import decode_state, encode_state, fold, pack_for, roundtrips


def _fold_table(state: Any, event: Event) -> None:
    fold([event], state)  # type: ignore[list-item]


def _decode_table(data: dict[str, Any], first: Event) -> TableState:
    if not isinstance(first, TableOpened):
        raise ValueError("a table stream starts with TableOpened")
    return decode_state(data, pack_for(first))


def _table_invariants(state: Any) -> list[str]:
    return [] if state.conserved() else ["the replayed table does not conserve money"]


def _decode_custody(data: dict[str, Any], first: Event) -> CustodyState:
    if not isinstance(first, CustodyOpened):
        raise ValueError("a custody stream starts with CustodyOpened")
    return custody_codec.decode_state(data, custody_codec.pack_for(first))


register(Aggregate(TABLE, TableEvent, "table", TableState, _fold_table, encode_state, _decode_table,
                   _table_invariants, roundtrips))
register(Aggregate("custody", CustodyEvent, "site", CustodyState,
                   lambda s, e: custody_apply(s, e),  # type: ignore[arg-type]
                   custody_codec.encode_state, _decode_custody,
                   custody_codec.invariants, custody_codec.roundtrips))


register_record_kind(account_stream.AccountEvent, account_stream.AccountState,
                     account_stream.apply, account_stream.invariants,
                     first=account_stream.AccountCreated)
register_record_kind(staff_stream.StaffEvent, staff_stream.StaffState, staff_stream.apply,
                     staff_stream.invariants)
register_record_kind(fault_stream.FaultEvent, fault_stream.FaultState, fault_stream.apply,
                     fault_stream.invariants)
register_record_kind(request_stream.RequestEvent, request_stream.RequestsState,
                     request_stream.apply, request_stream.invariants)
register_record_kind(player_money_stream.WalletEvent, player_money_stream.WalletState,
                     player_money_stream.apply_wallet, player_money_stream.wallet_invariants)
register_record_kind(player_money_stream.RequestEvent, player_money_stream.RequestsState,
                     player_money_stream.apply_request, player_money_stream.request_invariants)
register_record_kind(operations_stream.OperationsEvent, operations_stream.OperationsState,
                     operations_stream.apply, operations_stream.invariants)
register_record_kind(slip_serials_stream.SerialsEvent, slip_serials_stream.SerialsState,
                     slip_serials_stream.apply, slip_serials_stream.invariants)
register(Aggregate(bank_stream.KIND, BankEvent, "table", bank_state.BankState,
                   bank_state.apply, bank_state.encode_state, bank_stream.decode_state,
                   bank_state.invariants, bank_state.roundtrips))
