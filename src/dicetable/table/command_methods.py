"""The ``Table`` facade's command methods, generated from the command catalogue.

Do not edit: ``python tools/gen_table_methods.py`` writes this module from each catalogue
entry's ``method`` (``dicetable.games.catalogue.Method``) and its command's fields, and CI
fails when it differs. Each method gives its command through ``Table.do``, which works out
who gives it and the values the table supplies when a field is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from dicetable.core.dice import Roll
from dicetable.core.dice_sources import DiceSource
from dicetable.core.roles import Role
from dicetable.games import events as ev


class CommandMethods:
    """One method per catalogued command that declares one."""

    def do(self, name: str, *, actor: str | None = None, role: Role | None = None,
           **fields: object) -> list[ev.Event]:
        raise NotImplementedError

    def placed(self, events: list[ev.Event]) -> str:
        """The id of the bet ``events`` placed."""
        return [e for e in events if isinstance(e, ev.BetPlaced)][-1].bet

    def join(
        self,
        player: str,
        seat: int | None = None,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """A player joins, at a seat or standing."""
        return self.do("join",
                       actor=actor,
                       role=role,
                       player=player,
                       seat=seat)

    def leave(
        self,
        player: str,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """A player leaves the table."""
        return self.do("leave",
                       actor=actor,
                       role=role,
                       player=player)

    def buy_in(
        self,
        player: str,
        amount: int,
        *,
        chip_set: str = "",
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Sell a player chips (cents)."""
        return self.do("buy-chips",
                       actor=actor,
                       role=role,
                       player=player,
                       amount=amount,
                       chip_set=chip_set)

    def cash_out(
        self,
        player: str,
        amount: int,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Cash a player's chips out."""
        return self.do("cash-out",
                       actor=actor,
                       role=role,
                       player=player,
                       amount=amount)

    def bet(
        self,
        player: str,
        wager: str,
        amount: int,
        *,
        base: str | None = None,
        working: bool | None = None,
        medium: str = "chips",
        chip_set: str = "",
        actor: str | None = None,
        role: Role | None = None,
    ) -> str:
        """Place a wager (odds: name the line or put bet it stands behind)."""
        return self.placed(self.do("place-bet",
                                   actor=actor,
                                   role=role,
                                   player=player,
                                   wager=wager,
                                   amount=amount,
                                   base=base,
                                   working=working,
                                   medium=medium,
                                   chip_set=chip_set))

    def change(
        self,
        bet: str,
        amount: int,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Increase or reduce a wager (cents)."""
        return self.do("change-bet",
                       actor=actor,
                       role=role,
                       bet=bet,
                       amount=amount)

    def remove(
        self,
        bet: str,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Take a wager down."""
        return self.do("remove-bet",
                       actor=actor,
                       role=role,
                       bet=bet)

    def set_working(
        self,
        bet: str,
        working: bool,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Call a wager on or off."""
        return self.do("set-working",
                       actor=actor,
                       role=role,
                       bet=bet,
                       working=working)

    def no_more_bets(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Announce 'no more bets'."""
        return self.do("no-more-bets",
                       actor=actor,
                       role=role)

    def roll(
        self,
        roll: Roll | str | DiceSource | None,
        *,
        source: str = "manual",
        facts: Sequence[str] = (),
        serials: Sequence[str] = (),
        distance: Fraction | None = None,
        thrower: str | None = None,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Record the throw: both faces (or '-' when unreadable) and the facts seen."""
        return self.do("roll",
                       actor=actor,
                       role=role,
                       roll=roll,
                       source=source,
                       facts=facts,
                       serials=serials,
                       distance=distance,
                       thrower=thrower)

    def call_no_roll(
        self,
        *grounds: str,
        observed: Sequence[str] = (),
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Call 'no roll' on the throw just made, naming the grounds (and any throw facts the
        caller saw that the recorded throw does not carry)."""
        return self.do("no-roll",
                       actor=actor,
                       role=role,
                       grounds=grounds,
                       observed=observed)

    def collect(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Collect the losing wagers (the first settlement chore)."""
        return self.do("collect",
                       actor=actor,
                       role=role)

    def pay(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Pay the winning wagers (the second settlement chore)."""
        return self.do("pay",
                       actor=actor,
                       role=role)

    def move_puck(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Craps: come bets travel and the puck moves (the last settlement chore)."""
        return self.do("move-puck",
                       actor=actor,
                       role=role)

    def complete_round(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Props & Hops: the round is complete (the last settlement chore)."""
        return self.do("complete-round",
                       actor=actor,
                       role=role)

    def return_wagers(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """After a no roll that returns the wagers (noroll.effect): give every wager back."""
        return self.do("return-wagers",
                       actor=actor,
                       role=role)

    def assign(
        self,
        person: str,
        staff_role: Role,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Assign a person to a staff role at this table."""
        return self.do("assign-staff",
                       actor=actor,
                       role=role,
                       person=person,
                       staff_role=staff_role)

    def relieve(
        self,
        person: str,
        staff_role: Role,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Relieve a person of a staff role at this table."""
        return self.do("relieve-staff",
                       actor=actor,
                       role=role,
                       person=person,
                       staff_role=staff_role)

    def bring_dice(
        self,
        *serials: str,
        witness: str | None = None,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Bring dice to the table by serial (Props & Hops: load the shaker, with the dealer as
        witness)."""
        return self.do("bring-dice",
                       actor=actor,
                       role=role,
                       serials=serials,
                       witness=witness)

    def remove_dice(
        self,
        *serials: str,
        reason: str = "replaced",
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Take dice from the table, with the reason."""
        return self.do("remove-dice",
                       actor=actor,
                       role=role,
                       serials=serials,
                       reason=reason)

    def offer_dice(
        self,
        patron: str,
        serials: Sequence[str] = (),
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Offer the dice to the patron next in turn (by default, the whole bowl)."""
        return self.do("offer-dice",
                       actor=actor,
                       role=role,
                       patron=patron,
                       serials=serials)

    def decline_dice(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The patron offered the dice declines them."""
        return self.do("decline-dice",
                       actor=actor,
                       role=role)

    def select_dice(
        self,
        *serials: str,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The new shooter selects two of the dice offered."""
        return self.do("select-dice",
                       actor=actor,
                       role=role,
                       serials=serials)

    def relinquish_dice(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The shooter gives up the dice."""
        return self.do("relinquish-dice",
                       actor=actor,
                       role=role)

    def remove_shooter(
        self,
        ground: str,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Take the dice from the shooter, on a listed ground."""
        return self.do("remove-shooter",
                       actor=actor,
                       role=role,
                       ground=ground)

    def overturn(
        self,
        reason: str = "",
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Overturn the declaration on the last roll."""
        return self.do("overturn",
                       actor=actor,
                       role=role,
                       reason=reason)

    def shake(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The dealer shakes the covered shaker."""
        return self.do("shake",
                       actor=actor,
                       role=role)

    def offer_shaker(
        self,
        player: str,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Offer the covered shaker to the player whose turn it is."""
        return self.do("offer-shaker",
                       actor=actor,
                       role=role,
                       player=player)

    def player_shake(
        self,
        times: int = 1,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The player shakes the covered shaker (count the shakes)."""
        return self.do("player-shake",
                       actor=actor,
                       role=role,
                       times=times)

    def remove_lid(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The player takes the lid off the shaker (a violation)."""
        return self.do("remove-lid",
                       actor=actor,
                       role=role)

    def re_cover_shaker(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The player who took the lid off puts it back; the shaker is shaken again before it is
        returned (58 Pa. Code 585.3(e))."""
        return self.do("re-cover-shaker",
                       actor=actor,
                       role=role)

    def return_shaker(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The player returns the covered shaker to the dealer."""
        return self.do("return-shaker",
                       actor=actor,
                       role=role)

    def uncover(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The dealer uncovers the shaker in the designated circle."""
        return self.do("uncover",
                       actor=actor,
                       role=role)

    def pass_shaker(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """Props & Hops: after a round ending on the passing total (shaker.passes_on), the shaker
        goes to the next player to the left."""
        return self.do("pass-shaker",
                       actor=actor,
                       role=role)

    def tick(
        self,
        *,
        actor: str | None = None,
        role: Role | None = None,
    ) -> list[ev.Event]:
        """The table's clock ticks: raise what time has made due."""
        return self.do("tick",
                       actor=actor,
                       role=role)
