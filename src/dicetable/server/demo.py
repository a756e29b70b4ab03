"""The demo floor a fresh ``dicetable serve`` creates on an empty store.

Four live tables (PA Craps, PA Mini-Craps, PA Props & Hops, Indiana Craps) and one electronic
PA Craps table, each with its staff assigned and four funded players seated. Their dice come
through custody, so the demo is compliant from its first roll: each jurisdiction's site
(``demo-pa``, ``demo-in``) receives a shipment (a shift manager with security), stores it under
both keys, takes the gaming day's dice out, has the pit boss inspect them with their
measurements, and issues them to their tables; spares wait in the pit, inspected.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dicetable.application.accounts import Kind
from dicetable.application.wallets import TABLES, deposit, moved, taken
from dicetable.bank.catalogue import format_chips
from dicetable.core.roles import Role
from dicetable.custody import commands as c
from dicetable.custody.model import Box, DieCheck, Key, Manufacturer, Person, PlayMode
from dicetable.games import commands as g
from dicetable.games.catalogue import variant_of
from dicetable.games.packs import derive_pack, load_preset
from dicetable.rules.model import RulePack
from dicetable.server.bank_floor import banks_of
from dicetable.server.floor import Chore, Floor
from dicetable.table import commands as t

DEMO_PASSWORD = "dicetable-demo"
PLAYERS = ("alice", "bob", "carol", "dan")
STAFF = {"fran": ("Fran (floorperson)", Role.FLOORPERSON), "pat": ("Pat (pit boss)",
                                                                   Role.PIT_BOSS),
         "sam": ("Sam (stickperson)", Role.STICKPERSON), "bo": ("Bo (boxperson)",
                                                               Role.BOXPERSON),
         "dee": ("Dee (dealer)", Role.DEALER),
         "ann": ("Ann (shift manager)", Role.SHIFT_MANAGER),
         "sid": ("Sid (security)", Role.SECURITY),
         "val": ("Val (surveillance)", Role.SURVEILLANCE),
         "dex": ("Dex (dealer)", Role.DEALER),
         "pam": ("Pam (pit clerk)", Role.PIT_CLERK),
         "cass": ("Cass (chip bank cashier)", Role.CHIP_BANK_CASHIER),
         "cole": ("Cole (count team)", Role.COUNT_TEAM),
         "rae": ("Rae (revenue auditor)", Role.REVENUE_AUDITOR)}
LICENCES = {"fran": "FP-101", "pat": "PB-102", "sam": "ST-103", "bo": "BX-104", "dee": "DL-105",
            "ann": "SM-106", "sid": "SE-107", "val": "SV-108", "dex": "DL-109",
            "pam": "PC-110", "cass": "CB-111", "cole": "CT-112", "rae": "RA-113"}
"""Each demo staff member's occupational licence number (the custody logs record them)."""
ROSTER = {user: Person(user, role, LICENCES[user]) for user, (_, role) in STAFF.items()}
"""The demo site's staff list: each account's custody role and licence."""
SITES = {"pa": "demo-pa", "in": "demo-in"}
"""One custody ledger per jurisdiction's site, by custody pack."""
DELIVERY_WITNESS = "Agent Cole (gaming agent)"
"""The regulator's agent present when the demo's dice are delivered (IN's stand-in rule)."""
SPARES = 3
"""Inspected spare dice per table, waiting in the pit to replace the ones in play."""
TOOLS = ("micrometer", "balancing-caliper", "steel-set-square", "magnet")
BUY_IN = 500_00
WALLET = 1_500_00
"""Each demo player's wallet deposit; the electronic table's buy-in comes out of it."""


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

    @property
    def dice_loader(self) -> tuple[str, Role]:
        """Whoever the pack lets bring dice (Mini-Craps: the floorperson, PA 623a)."""
        people = {"fran": Role.FLOORPERSON} | {p: STAFF[p][1] for p in self.staff}
        return next((person, role) for person, role in people.items()
                    if role in self.pack.roles("authority.dice"))


def electronic_pack() -> RulePack:
    return derive_pack(load_preset("pa-craps"), "pa-craps-electronic",
                       {"settlement.automatic": True}, "PA Craps, electronic table")


def demo_tables() -> list[DemoTable]:
    pa, mini = load_preset("pa-craps"), load_preset("pa-mini-craps")
    ph, ind = load_preset("pa-props-and-hops"), load_preset("in-craps")
    return [
        DemoTable("craps-pa-1", pa, "live", ("pat", "sam", "bo", "dee", "dex"), (9, 10, 11, 12),
                  tuple(f"PA1-{i}" for i in range(1, 6))),
        DemoTable("minicraps-pa-1", mini, "live", ("pat", "sam", "dee"), (1, 2, 3, 4),
                  tuple(f"MC1-{i}" for i in range(1, 6))),
        DemoTable("props-pa-1", ph, "live", ("pat", "dee"), (1, 2, 3, 4), ("PH1-1", "PH1-2")),
        DemoTable("craps-in-1", ind, "live", ("pat", "sam", "bo", "dee", "dex"), (1, 2, 3, 4),
                  tuple(f"IN1-{i}" for i in range(1, 7))),
        DemoTable("craps-pa-e1", electronic_pack(), "electronic", ("pat", "dee"),
                  (1, 2, 3, 4), ()),
    ]


def _fixed(commands: list[g.Command]) -> Callable[[], list[g.Command]]:
    return lambda: commands


def spares(demo: DemoTable) -> tuple[str, ...]:
    prefix = demo.dice[0].rsplit("-", 1)[0]
    return tuple(f"{prefix}-S{i}" for i in range(1, SPARES + 1))


def _people(*users: str) -> dict[str, Any]:
    first, *rest = (ROSTER[u] for u in users)
    return {"actor": first.name, "role": first.role, "licence": first.licence,
            "witnesses": tuple(rest)}


def stock_demo_dice(floor: Floor) -> None:
    """Each site's dice, from receipt to the pit, inspected; then to their tables."""
    tables = [d for d in demo_tables() if d.dice]
    day = floor.clock.now().date().isoformat()
    for jurisdiction, site in SITES.items():
        mine = [d for d in tables if d.pack.jurisdiction.lower() == jurisdiction]
        ledger = floor.custody.open_site(jurisdiction, site, actor="ann", application=floor)
        boxes = tuple(Box(f"{d.table}-box", (*d.dice, *spares(d))) for d in mine)
        every = tuple(s for b in boxes for s in b.serials)
        side = Decimal("0.750")
        steps: list[c.CustodyCommand] = [
            c.ReceiveShipment(**_people("ann", "sid"), shipment=f"{site}-S1",
                              manufacturer=Manufacturer("Demo Dice Co.", "1 Cube Way, Reno NV",
                                                        "+1 775 555 0100"), boxes=boxes,
                              delivery_witness=DELIVERY_WITNESS),
            c.DrawKey(**_people("ann"), key=Key.TABLE_GAMES),
            c.DrawKey(**_people("sid"), key=Key.SECURITY),
            c.StoreDice(**_people("ann", "sid"), dice=every,
                        area="dice-storage"),
            c.IssueForGamingDay(**_people("ann", "sid"), dice=every,
                                gaming_day=day),
            c.ReturnKey(**_people("ann"), key=Key.TABLE_GAMES),
            c.ReturnKey(**_people("sid"), key=Key.SECURITY),
            c.InspectDice(**_people("pat", "val"), tools=TOOLS,
                          checks=tuple(DieCheck(s, (side, side, side)) for s in every),
                          under_surveillance=True),
        ]
        for d in mine:
            if d.game_is_props:
                steps.append(c.IssueToTable(**_people("fran"), dice=d.dice,
                                            table=d.table, game=d.pack.game,
                                            mode=PlayMode.SHAKER, received_by=ROSTER["dee"]))
            else:
                receiver = d.dice_loader[0]
                steps.append(c.IssueToTable(**_people("pat"), dice=d.dice,
                                            table=d.table, game=d.pack.game,
                                            received_by=ROSTER[receiver]))
        for step in steps:
            ledger.execute(step)


OPENER = ((100, 200), (500, 400), (2500, 400), (10000, 80))
"""Each live demo table's opening inventory: $20,200 in $1, $5, $25 and $100 chips."""


def open_demo_bank(floor: Floor, demo: DemoTable) -> None:
    """The table's bank, and for a live table its opening count (the dealer or boxperson
    counts, a supervisor observes and signs), before the first player buys in: the first
    buy-in and the first roll already move the bank."""
    banks = banks_of(floor)
    fran = floor.accounts.get("fran")
    assert fran is not None
    if demo.mode != "live":
        banks.start(demo.table)
        return
    counter = "bo" if "bo" in demo.staff else "dee"
    # fran watches the Craps tables (465a.35(c)(5): up to three); pat the others
    observer = "fran" if variant_of(demo.pack.game).staffing_rule == "staffing.craps" else "pat"
    banks.step(demo.table, floor.accounts.get(observer) or fran, "open",
               {"chips": format_chips(OPENER), "counter": counter, "observer": observer,
                "container": f"{demo.table}-inventory"})


def create_demo_floor(floor: Floor, progress: Callable[[str], None] | None = None
                      ) -> dict[str, str]:
    """Accounts, custody and tables; returns the demo credentials (username -> password).

    ``progress`` is told of each step (hashing the password takes a while on purpose).
    """
    say = progress or (lambda _: None)
    people = len(STAFF) + len(PLAYERS)
    # One published password: hashed once (Argon2 at full cost), not once per account.
    hashed = ""
    for n, (username, (display, _)) in enumerate(STAFF.items(), 1):
        say(f"demo floor: account {n} of {people} ({username})")
        hashed = hashed or floor.accounts.hash_password(DEMO_PASSWORD)
        floor.accounts.create(username, DEMO_PASSWORD, Kind.STAFF, display,
                              password_hash=hashed)
    for n, player in enumerate(PLAYERS, len(STAFF) + 1):
        say(f"demo floor: account {n} of {people} ({player})")
        floor.accounts.create(player, DEMO_PASSWORD, Kind.PLAYER, player.title(),
                              password_hash=hashed)
        deposit(floor.store, player, WALLET, "demo: the cage's opening deposit",
                floor.clock.now().isoformat())
    floor.custody.roster.update(ROSTER)
    say("demo floor: the dice, received, stored and inspected")
    stock_demo_dice(floor)
    tables = demo_tables()
    for n, demo in enumerate(tables, 1):
        say(f"demo floor: table {n} of {len(tables)} ({demo.table})")
        staff = {person: STAFF[person][1] for person in demo.staff}
        floor.open_table(demo.pack, demo.table, mode=demo.mode, opener="fran", staff=staff)
        open_demo_bank(floor, demo)
        commands: list[g.Command] = []
        for player, seat in zip(PLAYERS, demo.seats, strict=True):
            commands.append(g.JoinTable(actor=player, role=Role.PLAYER, player=player,
                                        seat=seat))
            seller = ("dee", Role.DEALER) if demo.mode == "live" else ("table", Role.SYSTEM)
            if demo.mode == "electronic":  # the buy-in leaves the wallet first, as a player's
                moved(floor, player, TABLES, taken(
                    player, BUY_IN, floor.clock.now().isoformat(), credits=0,
                    check=lambda balance: None, table=demo.table,
                    transfer=f"demo-{demo.table}-{player}"))
            commands.append(g.BuyChips(actor=seller[0], role=seller[1], player=player,
                                       amount=BUY_IN))
        if demo.game_is_props:
            commands += [t.BringDice(actor="fran", role=Role.FLOORPERSON, serials=demo.dice,
                                     witness="dee"),
                         t.ShakeShaker(actor="dee", role=Role.DEALER)]
        elif demo.dice:
            loader = demo.dice_loader
            commands.append(t.BringDice(actor=loader[0], role=loader[1], serials=demo.dice))
        floor.submit(demo.table, Chore(_fixed(commands))).result()
    return dict.fromkeys((*STAFF, *PLAYERS), DEMO_PASSWORD)
