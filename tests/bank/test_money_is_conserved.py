"""Money is conserved across the bank at every roll: players' money + table inventory + drop +
cage = constant, over random sessions (buy-ins, wagers with and without vigorish, rolls,
fills, credits, colour changes, counter checks, cash-outs and redemption at the cage).

The table inventory here is the bank's (the last count, its own movements and the movements it
derives from the table's log); the players' chips are the table's own state. The two are
folded independently, so a movement the bank mis-reads breaks the sum."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.bank.follow import Totals
from dicetable.bank.reports import conservation
from dicetable.core.errors import DicetableError
from dicetable.core.roles import Role

from .helpers import B, D, F, pit

ACTIONS = ("buy", "pass", "buy4", "place6", "field", "lay10", "roll", "roll", "roll", "fill",
           "credit", "colour", "check", "cashout", "count")
PLAYERS = ("alice", "bob")
step = st.tuples(st.sampled_from(ACTIONS), st.sampled_from(PLAYERS), st.integers(1, 6),
                 st.integers(1, 6), st.integers(1, 40))


@settings(max_examples=60, deadline=None)
@given(st.lists(step, min_size=5, max_size=80))
def test_money_is_conserved_at_every_step(steps: list[tuple[str, str, int, int, int]]) -> None:
    p = pit(opener=((500, 400), (2500, 400), (10000, 40)))
    bank, table = p.bank, p.table
    opener = 16_000_00
    wallet = dict.fromkeys(PLAYERS, 5_000_00)  # cash in the players' pockets
    cage = 100_000_00  # the cage's chips and cash together
    carried = 0  # chips cashed out at the table, not yet redeemed at the cage
    constant = sum(wallet.values()) + opener + cage
    for player in PLAYERS:
        table.join(player)
    serial_of: dict[int, int] = {}
    for action, player, a, b, n in steps:
        try:
            if action == "buy" and wallet[player] >= n * 25_00:
                table.buy_in(player, n * 25_00)
                wallet[player] -= n * 25_00
            elif action in ("pass", "buy4", "place6", "field", "lay10"):
                amount = {"buy4": 25_00, "lay10": 40_00, "place6": 6_00}.get(action, 5_00)
                table.bet(player, action, amount * (1 + n % 3))
            elif action == "roll":
                table.roll(f"{a}-{b}")
            elif action in ("fill", "credit"):
                bank.request(action, ((2500, n),), shift="06:00", actor="fran", role=F)
                req = max(bank.state.requests)
                bank.issue(req, actor="cass", role=Role.CHIP_BANK_CASHIER)
                serial = bank.state.requests[req].serial
                serial_of[req] = serial
                bank.carry(serial, officer="sid", role=Role.SECURITY)
                for who, role in (("dee", D), ("fran", F), ("sid", Role.SECURITY)):
                    bank.sign_slip(serial, actor=who, role=role)
                bank.receive(serial, ((2500, n),), counter="bo", counter_role=B,
                             officer="sid")
                cage += -n * 25_00 if action == "fill" else n * 25_00
            elif action == "colour":
                bank.move("colour-change", "exchange", f"x{n}", ((500, 5), (2500, -1)),
                          actor="dee", role=D)
            elif action == "check":
                bank.move("counter-check", "counter-check", f"cc{n}", ((2500, -1),),
                          actor="dee", role=D)
                carried += 25_00  # the player holds the chips; the paper is in the drop
                constant += 25_00  # a counter check is a promise the player brought in
            elif action == "cashout" and table.balance(player):
                amount = table.balance(player)
                table.cash_out(player, amount)
                carried += amount
                # redeemed at the cage (603a.10(d)): chips in, the same cash out
                wallet[player] += amount
                carried -= amount
            elif action == "count":
                p.count("shift", bank.state.inventory or ((2500, 1),))
        except DicetableError:
            pass
        totals = Totals().fold(p.log)
        players = sum(pl.balance for pl in table.state.players.values()) \
            + table.state.on_layout()
        books = conservation(bank.state, totals, players)
        # the check the pit console shows
        assert books.holds, books.to_dict()
        # the whole floor: pockets + chips in hand + inventory + drop + cage
        total = sum(wallet.values()) + players + carried + books.inventory + books.drop + cage
        assert total == constant
        assert books.inventory == _expected(p)


def _expected(p: object) -> int:
    from .helpers import Pit

    assert isinstance(p, Pit)
    first = next(e for e in p.bank.state.log if e.kind == "InventoryCounted")
    fills = credits = own = 0
    for e in p.bank.state.log:
        if e.kind == "SlipCompleted":
            if e.slip_kind == "fill":  # type: ignore[attr-defined]
                fills += e.value  # type: ignore[attr-defined]
            else:
                credits += e.value  # type: ignore[attr-defined]
        elif e.kind == "InventoryMoved":
            own += e.value  # type: ignore[attr-defined]
    state = p.table.state
    bought = state.chips_in + Totals().fold(p.log).cashed_out
    opener: int = first.total  # type: ignore[attr-defined]
    return opener + fills - credits + own - bought + state.house
