"""Drive a table with random but legal-looking play: refused commands change nothing."""

from __future__ import annotations

import random
from functools import cache

from dicetable.core.dice import ALL_ROLLS
from dicetable.core.errors import DicetableError
from dicetable.core.roles import Role
from dicetable.games import commands as cmd
from dicetable.games.packs import derive_pack, load_preset
from dicetable.games.state import Phase
from dicetable.rules.model import RulePack
from dicetable.table import Table

PLAYERS = ("alice", "bob", "carol")
AMOUNTS = (100, 500, 600, 1000, 1200, 2000, 2500, 3000)


@cache
def electronic(preset: str = "pa-craps") -> RulePack:
    """The preset run as an electronic table: the system settles each roll by itself."""
    return derive_pack(load_preset(preset), f"electronic-{preset}",
                       {"settlement.automatic": True})


def seat(table: Table, players: tuple[str, ...] = PLAYERS, chips: int = 1_000_00) -> None:
    for i, p in enumerate(players, start=1):
        table.join(p, seat=i)
        table.buy_in(p, chips)


def step(table: Table, rng: random.Random) -> bool:
    """One random action; False when the table refused it."""
    state = table.state
    menu = sorted(table.pack.menu)
    try:
        if state.phase is Phase.SETTLING:
            if state.pending is None:
                return False
            chore: cmd.Command
            callers = sorted(table.pack.roles("noroll.callers"))
            if state.pending.step == 0 and callers and rng.random() < 0.08:
                table.execute(cmd.CallNoRoll(actor="floor", role=callers[0],
                                             grounds=("a die struck an object",)))
                return True
            if state.pending.step == 0:
                chore = cmd.CollectLosers(actor="dealer", role=Role.DEALER)
            elif state.pending.step == 1:
                chore = cmd.PayWinners(actor="dealer", role=Role.DEALER)
            elif state.game == "props-and-hops":
                chore = cmd.CompleteRound(actor="dealer", role=Role.DEALER)
            else:
                chore = cmd.MovePuck(actor="dealer", role=Role.DEALER)
            table.execute(chore)
            return True
        r = rng.random()
        player = rng.choice(PLAYERS)
        if r < 0.45:
            wager = rng.choice(menu)
            if wager == "odds":
                bases = [b.id for b in state.bets_of(player) if not b.wager.startswith("odds")]
                if not bases:
                    return False
                table.odds(player, rng.choice(bases), rng.choice(AMOUNTS))
            else:
                table.bet(player, wager, rng.choice(AMOUNTS))
        elif r < 0.52 and state.bets:
            table.remove(rng.choice(sorted(state.bets)))
        elif r < 0.55:
            table.buy_in(player, rng.choice(AMOUNTS) * 10)
        elif r < 0.57 and state.balance(player) > 0:
            table.execute(cmd.CashOut(actor="dealer", role=Role.DEALER, player=player,
                                      amount=rng.randint(1, state.balance(player))))
        else:
            if state.game == "props-and-hops" and state.phase is Phase.BETTING:
                table.no_more_bets()
            if rng.random() < 0.05:
                table.roll(None, facts=("die-off-table",))
            else:
                table.roll(rng.choice(ALL_ROLLS))
        return True
    except DicetableError:
        return False


def play(table: Table, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        step(table, rng)


def copy_schema(url: str, template: str, schema: str) -> None:
    """A copy of PostgreSQL schema ``template`` (every table: rows, keys, indexes) as a new
    ``schema``, in one transaction: whole or absent."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "AND table_type = 'BASE TABLE'", (template,))]
        for table in tables:
            new, old = sql.Identifier(schema, table), sql.Identifier(template, table)
            conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(new, old))
            conn.execute(sql.SQL("INSERT INTO {} SELECT * FROM {}").format(new, old))
