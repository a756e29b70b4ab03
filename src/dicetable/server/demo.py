"""The demo floor a fresh ``dicetable serve`` creates on an empty store.

Four live tables (PA Craps, PA Mini-Craps, PA Props & Hops, Indiana Craps) and one electronic
PA Craps table, each with its staff assigned and four funded players seated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.variant import variant_of
from dicetable.rules.loader import derive_pack, load_preset
from dicetable.rules.model import RulePack
from dicetable.server.accounts import Kind
from dicetable.server.floor import Floor
from dicetable.table import commands as t

DEMO_PASSWORD = "dicetable-demo"
PLAYERS = ("alice", "bob", "carol", "dan")
STAFF = {"fran": ("Fran (floorperson)", Role.FLOORPERSON), "pat": ("Pat (pit boss)",
                                                                   Role.PIT_BOSS),
         "sam": ("Sam (stickperson)", Role.STICKPERSON), "bo": ("Bo (boxperson)",
                                                               Role.BOXPERSON),
         "dee": ("Dee (dealer)", Role.DEALER)}
BUY_IN = 500_00


@dataclass(frozen=True)
class DemoTable:
    table: str
    pack: RulePack
    mode: str
    staff: tuple[str, ...]
    seats: tuple[int, ...]
    dice: tuple[str, ...]

    @property
    def game_is_props(self) -> bool:
        return variant_of(self.pack.game).has_shaker


def electronic_pack() -> RulePack:
    return derive_pack(load_preset("pa-craps"), "pa-craps-electronic",
                       {"settlement.automatic": True}, "PA Craps, electronic table")


def demo_tables() -> list[DemoTable]:
    pa, mini = load_preset("pa-craps"), load_preset("pa-mini-craps")
    ph, ind = load_preset("pa-props-and-hops"), load_preset("in-craps")
    return [
        DemoTable("craps-pa-1", pa, "live", ("pat", "sam", "bo", "dee"), (9, 10, 11, 12),
                  tuple(f"PA1-{i}" for i in range(1, 6))),
        DemoTable("minicraps-pa-1", mini, "live", ("pat", "sam", "dee"), (1, 2, 3, 4),
                  tuple(f"MC1-{i}" for i in range(1, 6))),
        DemoTable("props-pa-1", ph, "live", ("pat", "dee"), (1, 2, 3, 4), ("PH1-1", "PH1-2")),
        DemoTable("craps-in-1", ind, "live", ("pat", "sam", "bo", "dee"), (1, 2, 3, 4),
                  tuple(f"IN1-{i}" for i in range(1, 7))),
        DemoTable("craps-pa-e1", electronic_pack(), "electronic", ("pat", "dee"),
                  (1, 2, 3, 4), ()),
    ]


def _fixed(commands: list[g.Command]) -> Callable[[], list[g.Command]]:
    return lambda: commands


def create_demo_floor(floor: Floor) -> dict[str, str]:
    """Accounts and tables; returns the demo credentials (username -> password)."""
    for username, (display, _) in STAFF.items():
        floor.accounts.create(username, DEMO_PASSWORD, Kind.STAFF, display)
    for player in PLAYERS:
        floor.accounts.create(player, DEMO_PASSWORD, Kind.PLAYER, player.title())
    for demo in demo_tables():
        staff = {person: STAFF[person][1] for person in demo.staff}
        floor.open_table(demo.pack, demo.table, mode=demo.mode, opener="fran", staff=staff)
        commands: list[g.Command] = []
        for player, seat in zip(PLAYERS, demo.seats, strict=True):
            commands.append(g.JoinTable(actor=player, role=Role.PLAYER, player=player,
                                        seat=seat))
            seller = ("dee", Role.DEALER) if demo.mode == "live" else ("table", Role.SYSTEM)
            commands.append(g.BuyChips(actor=seller[0], role=seller[1], player=player,
                                       amount=BUY_IN))
        if demo.game_is_props:
            commands += [t.BringDice(actor="fran", role=Role.FLOORPERSON, serials=demo.dice,
                                     witness="dee"),
                         t.ShakeShaker(actor="dee", role=Role.DEALER)]
        elif demo.dice:
            # Whoever the pack lets bring dice (Mini-Craps: the floorperson, PA 623a).
            people = {"fran": Role.FLOORPERSON} | {p: STAFF[p][1] for p in demo.staff}
            loader = next((person, role) for person, role in people.items()
                          if role in demo.pack.roles("authority.dice"))
            commands.append(t.BringDice(actor=loader[0], role=loader[1], serials=demo.dice))
        floor.run(demo.table, _fixed(commands))
    return dict.fromkeys((*STAFF, *PLAYERS), DEMO_PASSWORD)
