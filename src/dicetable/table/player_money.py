"""Money the player handles: buy-in and cash-out, colour-up and leaving, and the press unit.

At an **electronic table** the player moves money between their wallet and the table
themselves (the table keeps credits, like a bubble-craps machine's meter). At a **live
table** chips are issued by the dealer against cash (58 Pa. Code 603a.10(c)) and redeemed
only at the cage (603a.10(d)): the player asks, the dealer confirms, and a cash-out there
means the chips leave the table with the player. A colour-up is an exchange of equal face
value (465a.36(b)(4)): the balance does not change.

Every value is a ``HouseRule`` with its citation and status; the stand-ins
(``industry-default``) are the casino's to change (``with_values``), regulation text is not.

>>> rules = PlayerMoneyRules()
>>> rules.check_buy_in("electronic", 50_00, wallet=80_00)
>>> rules.check_buy_in("electronic", 500_00, wallet=80_00)
Traceback (most recent call last):
...
dicetable.core.errors.InvalidInput: Your wallet holds $80.00; you cannot buy in for $500.00. ...
>>> rules.check_buy_in("live", 50_00, wallet=80_00)
Traceback (most recent call last):
...
dicetable.core.errors.ProcedureViolation: At a live table the dealer sells you chips for cash: ...
>>> rules.press_unit(first=6_00, step=6_00)
600
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType

from dicetable.core.errors import InvalidInput, ProcedureViolation, RoleNotPermitted
from dicetable.core.money import format_cents
from dicetable.core.roles import Role
from dicetable.rules.model import Citation, RulePack, Status

ELECTRONIC = "electronic"
REQUESTS = ("colour-up", "leave")
"""What a player at a live table may ask the dealer for."""


@dataclass(frozen=True)
class HouseRule:
    """One value the player's money follows, where it comes from, and what it says."""

    id: str
    value: int | str
    citation: Citation
    says: str

    def cite(self) -> str:
        return str(self.citation)


def _industry(text: str) -> Citation:
    return Citation(text, Status.INDUSTRY_DEFAULT)


def _regulation(text: str) -> Citation:
    return Citation(text, Status.REGULATION)


DEFAULTS: tuple[HouseRule, ...] = (
    HouseRule("wallet.tables", ELECTRONIC, _industry(
        "house practice: an electronic craps machine keeps the player's credits on its meter; "
        "no PA or IN text on wallets was read"),
        "Where the player moves money between wallet and table themselves: only at an "
        "electronic table."),
    HouseRule("wallet.buy_in.by", "wallet", _industry(
        "house practice: an electronic table's credits come from the player's wallet, as an "
        "electronic wagering system credits a game account on buy-in (58 Pa. Code 605a.2, "
        "which does not say who may sell credits)"),
        "Who puts money on an electronic table: 'wallet' (only the player, from their "
        "wallet: staff may not sell chips there) or 'wallet-or-staff' (staff may also sell "
        "chips against cash). Cash-outs there always go to the player's wallet."),
    HouseRule("wallet.buy_in.minimum", 20_00, _industry(
        "house practice: the smallest buy-in is a few table minimums"),
        "The smallest amount moved from the wallet to the table at once (cents)."),
    HouseRule("wallet.buy_in.maximum", 5_000_00, _industry(
        "house practice: larger amounts go through the cage"),
        "The largest amount moved from the wallet to the table at once (cents)."),
    HouseRule("wallet.cage", "chip-bank-cashier", _industry(
        "house practice: the cage's cashier takes deposits to and pays withdrawals from a "
        "player's wallet; no PA or IN text on wallets was read"),
        "The staff role (on the site's staff list) that deposits to and withdraws from "
        "players' wallets at the cage."),
    HouseRule("live.buy_in", "dealer", _regulation("58 Pa. Code 603a.10(c)"),
        "At a live table chips are issued by the dealer, when the patron asks, against a "
        "tender."),
    HouseRule("live.cash_out", "cage", _regulation("58 Pa. Code 603a.10(d)"),
        "Value chips are redeemed only at the cage: a cash-out at a live table sends the "
        "chips with the player, never currency."),
    HouseRule("colour_up.value", "equal", _regulation("58 Pa. Code 465a.36(b)(4)"),
        "A colour-up exchanges chips for chips of equal total face value."),
    HouseRule("requests.confirmed_by", "dealer", _industry(
        "house practice: the dealer handles the chips of a colour-up or of a player leaving"),
        "Who confirms a player's colour-up or leaving request at a live table."),
    HouseRule("press.unit", "wager-minimum", _industry(
        "house practice: 'press it by a unit' adds one betting unit, the wager's smallest "
        "amount that pays in whole (a $6 unit on the 6 and 8)"),
        "What one unit is when a player presses a wager by a unit: 'wager-minimum' (the "
        "wager's own smallest amount), 'step' (its next allowed increase) or an amount in "
        "cents."),
)


@dataclass(frozen=True)
class PlayerMoneyRules:
    """The rules a player's buy-ins, cash-outs, requests and presses follow."""

    rules: MappingProxyType[str, HouseRule] = field(
        default_factory=lambda: MappingProxyType({r.id: r for r in DEFAULTS}))

    @classmethod
    def from_pack(cls, pack: RulePack) -> PlayerMoneyRules:
        """The rules as ``pack`` sets them (its value, citation and status for each id it
        holds; a pack without them keeps the defaults here).

        >>> from dicetable.games.packs import load_preset
        >>> PlayerMoneyRules.from_pack(load_preset("pa-craps")).rule("press.unit").value
        'wager-minimum'
        """
        rules = {}
        for default in DEFAULTS:
            found = pack.rules.get(default.id)
            rules[default.id] = default if found is None else dataclasses.replace(
                default, value=found.value, citation=found.cite)
        return cls(MappingProxyType(rules))

    def rule(self, rule_id: str) -> HouseRule:
        return self.rules[rule_id]

    def with_values(self, **values: int | str) -> PlayerMoneyRules:
        """The house's own values (``wallet_buy_in_minimum=...``: dots written as ``_``).

        >>> PlayerMoneyRules().with_values(press_unit=500).rule("press.unit").value
        500
        >>> PlayerMoneyRules().with_values(live_cash_out="table")
        Traceback (most recent call last):
        ...
        dicetable.core.errors.InvalidInput: live.cash_out is regulation text ...
        """
        changed = dict(self.rules)
        for key, value in values.items():
            rule_id = next((r for r in changed if r.replace(".", "_") == key), None)
            if rule_id is None:
                raise InvalidInput(f"there is no player-money rule {key!r}", rule="house.rules")
            old = changed[rule_id]
            if not old.citation.status.configurable:
                raise InvalidInput(f"{rule_id} is regulation text ({old.citation.text}) and "
                                   "cannot be changed", rule=rule_id)
            changed[rule_id] = dataclasses.replace(old, value=value)
        return PlayerMoneyRules(MappingProxyType(changed))

    def _cents(self, rule_id: str) -> int:
        value = self.rule(rule_id).value
        assert isinstance(value, int)
        return value

    def as_list(self) -> list[dict[str, object]]:
        return [{"id": r.id, "value": r.value, "says": r.says, "citation": r.citation.text,
                 "status": r.citation.status.value} for r in self.rules.values()]

    # -- checks: each refusal says, in the player's words, which rule it follows -------------
    def self_service(self, mode: str, doing: str) -> None:
        """Refuse a wallet move the player makes themselves where the table does not allow it."""
        rule = self.rule("wallet.tables")
        if mode == rule.value:
            return
        words = ("the dealer sells you chips for cash: hand your cash to the dealer"
                 if doing == "buy-in" else
                 "you take your chips to the cage: ask the dealer to colour you up, or tell "
                 "the dealer you are leaving")
        raise ProcedureViolation(f"At a live table {words}.", rule=rule.id, citation=rule.cite())

    def check_sale(self, mode: str, role: Role) -> None:
        """Refuse staff selling chips at an electronic table, where money comes from the
        player's wallet (``wallet.buy_in.by``); the table's own wallet moves are ``system``."""
        rule = self.rule("wallet.buy_in.by")
        if mode != self.rule("wallet.tables").value or role is Role.SYSTEM \
                or rule.value != "wallet":
            return
        raise ProcedureViolation(
            "At an electronic table the player buys in from their wallet; staff do not sell "
            "chips here.", rule=rule.id, citation=rule.cite())

    def check_cage(self, username: str, role: Role | None) -> None:
        """Refuse a wallet deposit or withdrawal by anyone but the cage's role."""
        rule = self.rule("wallet.cage")
        if role is None or role.value != rule.value:
            raise RoleNotPermitted(
                f"{username} is not the cage's {rule.value}: only the cage deposits to and "
                "withdraws from a wallet", rule=rule.id, citation=rule.cite())

    def _at_most(self, amount: int, held: int, says: str, *, rule: str,
                 cited: str = "") -> None:
        """Refuse ``amount`` over what is ``held``: ``says``, with ``{held}`` and ``{amount}``
        in dollars, cites the rule ``cited``."""
        if amount > held:
            raise InvalidInput(says.format(held=format_cents(held), amount=format_cents(amount)),
                               rule=rule, citation=self.rule(cited).cite() if cited else "")

    def check_withdrawal(self, amount: int, *, wallet: int) -> None:
        self._at_most(amount, wallet, "The wallet holds {held}; the cage cannot pay out "
                      "{amount}.", rule="wallet.balance", cited="wallet.cage")

    def check_buy_in(self, mode: str, amount: int, *, wallet: int) -> None:
        self.self_service(mode, "buy-in")
        low, high = self.rule("wallet.buy_in.minimum"), self.rule("wallet.buy_in.maximum")
        if amount < self._cents(low.id):
            raise InvalidInput(f"The smallest buy-in is {format_cents(self._cents(low.id))}.",
                               rule=low.id, citation=low.cite())
        if amount > self._cents(high.id):
            raise InvalidInput(f"The largest buy-in here is "
                               f"{format_cents(self._cents(high.id))}; larger amounts go "
                               "through the cage.", rule=high.id, citation=high.cite())
        self._at_most(amount, wallet, "Your wallet holds {held}; you cannot buy in for "
                      "{amount}.", rule="wallet.balance", cited="wallet.tables")

    def check_cash_out(self, mode: str, amount: int, *, balance: int) -> None:
        self.self_service(mode, "cash-out")
        if amount <= 0:
            raise InvalidInput("Choose an amount to cash out.", rule="money.amount")
        self._at_most(amount, balance, "You have {held} at the table; you cannot cash out "
                      "{amount}.", rule="money.balance")

    def check_request(self, mode: str, what: str) -> HouseRule:
        """The rule a live table's request follows (refused at an electronic table, where
        the player does it themselves)."""
        if what not in REQUESTS:
            raise InvalidInput(f"You can ask the dealer to colour you up or tell them you are "
                               f"leaving, not {what!r}.", rule="requests.confirmed_by")
        rule = self.rule("requests.confirmed_by")
        if mode == self.rule("wallet.tables").value:
            raise ProcedureViolation(
                "This table has no dealer: cash out or leave yourself.", rule=rule.id,
                citation=rule.cite())
        return self.rule("colour_up.value") if what == "colour-up" else rule

    def press_unit(self, *, first: int, step: int) -> int:
        """One unit to press by, for a wager whose amounts start at ``first`` and go up by
        ``step`` (cents)."""
        value = self.rule("press.unit").value
        if value == "wager-minimum":
            return first
        if value == "step":
            return step
        assert isinstance(value, int)
        return value
