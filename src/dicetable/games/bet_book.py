"""The bets on the layout, by id, with an index by player kept alongside.

Deciding a wager asks for the bets of one player (one per spot, the odds' base, leaving the
table); with hundreds of players at an electronic table, a scan of every bet for each
command cost more than the rest of the decision. ``BetBook`` is the ``dict`` the state always
had (the same reads, at the same speed) that also keeps each player's bets, updated on every
write. A bet's player never changes once it is placed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_MISSING: Any = object()


@dataclass
class Bet:
    id: str
    player: str
    wager: str
    """The compiled wager code (``odds:take``/``odds:lay`` for odds)."""
    amount: int
    state: int
    base: str | None = None
    working: bool | None = None
    commission: int = 0
    """Commission paid in advance for the next decision (refundable on removal)."""
    placed_seq: int = 0

    @property
    def layout_code(self) -> str:
        """The code as the layout shows it (``odds`` for either kind of odds)."""
        return "odds" if self.wager.startswith("odds:") else self.wager


class BetBook(dict[str, Bet]):
    """``bet id -> Bet``, and ``of(player)``: that player's bets in the order placed."""

    def __init__(self, items: Mapping[str, Bet] | Iterable[tuple[str, Bet]] = ()) -> None:
        super().__init__()
        self._by_player: dict[str, dict[str, Bet]] = {}
        self.update(items)

    def of(self, player: str) -> list[Bet]:
        mine = self._by_player.get(player)
        return list(mine.values()) if mine else []

    # -- every write keeps the index ---------------------------------------------------------
    def __setitem__(self, key: str, bet: Bet) -> None:
        old = dict.get(self, key)
        if old is not None and old.player != bet.player:
            self._unindex(key, old)
        dict.__setitem__(self, key, bet)
        self._by_player.setdefault(bet.player, {})[key] = bet

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

    def __ior__(self, other: Any) -> BetBook:  # type: ignore[override,misc]
        self.update(other)
        return self

    def copy(self) -> BetBook:
        return BetBook(self)

    def __reduce__(self) -> Any:  # copies and pickles rebuild the index from the items
        return (BetBook, (list(self.items()),))

    def _unindex(self, key: str, bet: Bet) -> None:
        mine = self._by_player.get(bet.player)
        if mine is not None:
            mine.pop(key, None)
            if not mine:
                del self._by_player[bet.player]
