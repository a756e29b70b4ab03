"""Table state: what the fold of the events (``dicetable.games.fold.apply``) builds
(DESIGN.md lesson 1).

The bets on the layout, by id, with an index by player kept alongside.

Deciding a wager asks for the bets of one player (one per spot, the odds' base, leaving the
table); with hundreds of players at an electronic table, a scan of every bet for each
command cost more than the rest of the decision. ``BetBook`` is the ``dict`` the state always
had (the same reads, at the same speed) that also keeps each player's bets, updated on every
write. A bet's player never changes once it is placed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from dicetable.core.dice import Roll
from dicetable.games import events as ev
from dicetable.games.catalogue import Variant, variant_of
from dicetable.games.phase import Phase as Phase
from dicetable.rules.model import RulePack
from dicetable.wagers.compile import CompiledWager, compile_pack

_MISSING: Any = object()
_TERMS = tuple(f.name for f in fields(ev.BetTerms))
"""A bet's terms, in order: what a snapshot records of each bet."""


class Bet(ev.BetTerms):
    """A bet on the layout as it stands; the fold replaces it when an event changes it."""

    id: str
    placed_seq: int = 0

    @property
    def layout_code(self) -> str:
        """The code as the layout shows it (``odds`` for either kind of odds)."""
        return "odds" if self.wager.startswith("odds:") else self.wager


Spot = tuple[str, str, int, str | None]
"""(player, wager code, state, base): where a bet stands on the layout, and whose it is."""


class BetBook(dict[str, Bet]):
    """``bet id -> Bet``, and its indexes, kept by every write: ``of(player)``, that
    player's bets in the order placed; ``behind(bet)``, the odds standing behind a bet; and
    ``on_spot``, a player's bets on one spot (a bet is replaced, never changed, so a write is
    the only way a bet moves). Deciding a command asks these for one player's bets; a player
    with dozens of bets on the layout was scanned whole twice a command."""

    def __init__(self, items: Mapping[str, Bet] | Iterable[tuple[str, Bet]] = ()) -> None:
        super().__init__()
        self._by_player: dict[str, dict[str, Bet]] = {}
        self._behind: dict[str, dict[str, Bet]] = {}
        self._spots: dict[Spot, dict[str, Bet]] = {}
        self.update(items)

    def of(self, player: str) -> list[Bet]:
        return _listed(self._by_player, player)

    def behind(self, bet: str) -> list[Bet]:
        """The bets whose base is ``bet`` (odds), in the order placed."""
        return _listed(self._behind, bet)

    def on_spot(self, player: str, wager: str, state: int, base: str | None) -> list[Bet]:
        """``player``'s bets of ``wager`` in ``state`` behind ``base``, in the order placed."""
        return _listed(self._spots, (player, wager, state, base))

    # -- every write keeps the indexes -------------------------------------------------------
    def __setitem__(self, key: str, bet: Bet) -> None:
        old = dict.get(self, key)
        dict.__setitem__(self, key, bet)
        if old is not None and (old.player, old.base) != (bet.player, bet.base):
            self._unindex(key, old)  # another's, or behind another: placed anew
            old = None
        # A bet replaced where it stood keeps its place in each index (the order placed).
        self._by_player.setdefault(bet.player, {})[key] = bet
        spot = _spot(bet)
        if old is not None and _spot(old) != spot:
            _drop(self._spots, _spot(old), key)
        self._spots.setdefault(spot, {})[key] = bet
        if bet.base is not None:
            self._behind.setdefault(bet.base, {})[key] = bet

    def __delitem__(self, key: str) -> None:
        bet = dict.pop(self, key)
        self._unindex(key, bet)

    def pop(self, key: str, default: Any = _MISSING) -> Any:
        if key in self:
            bet = dict.pop(self, key)
            self._unindex(key, bet)
            return bet
        if default is _MISSING:
            raise KeyError(key)
        return default

    def popitem(self) -> tuple[str, Bet]:
        key, bet = dict.popitem(self)
        self._unindex(key, bet)
        return key, bet

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, bet in dict(*args, **kwargs).items():
            self[key] = bet

    def clear(self) -> None:
        dict.clear(self)
        self._by_player.clear()
        self._behind.clear()
        self._spots.clear()

    def __ior__(self, other: Any) -> BetBook:  # type: ignore[override,misc]
        self.update(other)
        return self

    def copy(self) -> BetBook:
        return BetBook(self)

    def __reduce__(self) -> Any:  # copies and pickles rebuild the indexes from the items
        return (BetBook, (list(self.items()),))

    def _unindex(self, key: str, bet: Bet) -> None:
        _drop(self._by_player, bet.player, key)
        _drop(self._spots, _spot(bet), key)
        if bet.base is not None:
            _drop(self._behind, bet.base, key)


def _spot(bet: Bet) -> Spot:
    return bet.player, bet.wager, bet.state, bet.base


def _listed(index: dict[Any, dict[str, Bet]], at: Any) -> list[Bet]:
    """The bets an index holds at ``at``, in the order placed."""
    found = index.get(at)
    return list(found.values()) if found else []


def _drop(index: dict[Any, dict[str, Bet]], at: Any, key: str) -> None:
    found = index.get(at)
    if found is not None:
        found.pop(key, None)
        if not found:
            del index[at]


@dataclass
class Player:
    balance: int = 0
    seat: int | None = None


@dataclass
class Pending:
    """The settlement a valid roll calls for, worked out once when the roll is recorded."""

    roll: Roll
    losers: tuple[ev.Collection, ...]
    payments: tuple[ev.Payment, ...]
    moves: tuple[ev.Move, ...]
    point_after: int | None
    seven_out: bool
    step: int = 0
    """0: losers to collect; 1: winners to pay; 2: the roll to complete."""

@dataclass
class TableState:
    table_id: str = ""
    pack: RulePack | None = None
    game: str = ""
    mode: str = "bare"
    automations: tuple[str, ...] | None = None
    """The table's automations, as its log opened it (None: its mode's own)."""
    seq: int = 0
    phase: Phase = Phase.NEW
    players: dict[str, Player] = field(default_factory=dict)
    bets: dict[str, Bet] = field(default_factory=BetBook)
    """A ``BetBook``: a dict that also keeps each player's bets (``bets_of``)."""
    bet_counter: int = 0
    house: int = 0
    """The house's result so far: collected and commissions less wins paid (cents)."""
    chips_in: int = 0
    """Chips bought less chips cashed out (cents)."""
    point: int | None = None
    hand: int = 1
    hand_rolls: int = 0
    rolls_since_seven: int = 0
    round: int = 1
    rolls: int = 0
    pending: Pending | None = None
    last_roll: Roll | None = None
    last_roll_valid: bool | None = None
    returns_due: bool = False
    """A no roll returns the wagers on the layout, and they are not yet returned."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Room for procedure layers (shooter, shaker, dice) to keep their own folded state."""

    def __post_init__(self) -> None:
        if not isinstance(self.bets, BetBook):
            self.bets = BetBook(self.bets)

    @property
    def compiled(self) -> Mapping[str, CompiledWager]:
        assert self.pack is not None
        return compile_pack(self.pack, self.variant.points)

    @property
    def variant(self) -> Variant:
        """The game's hooks (how this game differs from the others)."""
        return variant_of(self.game)

    def rules(self) -> RulePack:
        if self.pack is None:
            raise KeyError("table not opened")
        return self.pack

    def balance(self, player: str) -> int:
        p = self.players.get(player)
        return p.balance if p else 0

    def on_layout(self) -> int:
        return sum(b.amount for b in self.bets.values())

    def conserved(self) -> bool:
        """Chips in = players' balances + stakes on the layout + the house's result."""
        return self.chips_in == sum(p.balance for p in self.players.values()) \
            + self.on_layout() + self.house

    def bets_of(self, player: str) -> list[Bet]:
        """``player``'s bets, in the order placed (from the book's index, not a scan)."""
        bets = self.bets
        if isinstance(bets, BetBook):
            return bets.of(player)
        return [b for b in bets.values() if b.player == player]

    def odds_on(self, base: Bet) -> list[Bet]:
        """The odds standing behind ``base`` (odds are always its owner's: looked for among
        that player's bets, not the table's)."""
        bets = self.bets
        if isinstance(bets, BetBook):
            return [b for b in bets.behind(base.id) if b.player == base.player]
        return [b for b in self.bets_of(base.player) if b.base == base.id]

    def bets_on_spot(self, player: str, wager: str, state: int,
                     base: str | None = None) -> list[Bet]:
        """``player``'s bets of ``wager`` standing in ``state`` (behind ``base``)."""
        bets = self.bets
        if isinstance(bets, BetBook):
            return bets.on_spot(player, wager, state, base)
        return [b for b in self.bets_of(player)
                if b.wager == wager and b.state == state and b.base == base]

    def copy(self) -> TableState:
        return copy.deepcopy(self)

    def snapshot(self) -> dict[str, Any]:
        """Everything that defines the table, as plain data (for replay checks and recall)."""
        return {
            "table": self.table_id,
            "seq": self.seq,
            "phase": self.phase.value,
            "point": self.point,
            "hand": self.hand,
            "hand_rolls": self.hand_rolls,
            "round": self.round,
            "rolls": self.rolls,
            "house": self.house,
            "chips_in": self.chips_in,
            "balances": {k: v.balance for k, v in sorted(self.players.items())},
            "seats": {k: v.seat for k, v in sorted(self.players.items())},
            "bets": {k: tuple(getattr(b, name) for name in _TERMS)
                     for k, b in sorted(self.bets.items())},
            "pending": None if self.pending is None else (str(self.pending.roll),
                                                          self.pending.step),
            "last_roll": None if self.last_roll is None else str(self.last_roll),
            "last_roll_valid": self.last_roll_valid,
            "extra": copy.deepcopy(self.extra),
        }
