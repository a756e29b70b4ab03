"""What each rule id means and which values it accepts.

Validation checks every rule against this schema and reports every problem at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dicetable.core.dice import POINTS
from dicetable.core.errors import InvalidInput
from dicetable.core.money import CommissionRounding, Odds, Rounding, percent
from dicetable.core.roles import Role
from dicetable.rules.model import FAMILIES, NO_ROLL_GROUNDS, THROW_FACTS, codes_of

Checker = Callable[[Any], str | None]
"""Returns a problem description, or None when the value is acceptable."""


@dataclass(frozen=True, slots=True)
class RuleSpec:
    id: str
    kind: str
    description: str
    check: Checker
    reads: str = ""
    """The module that consumes the rule's value ("" only for an informational rule)."""
    when: tuple[str, Any] | None = None
    """Another rule's value under which alone this value is read (``READ_WHEN``)."""

    @property
    def informational(self) -> bool:
        """Cited, but no code reads its value (only one value is legal, or it describes)."""
        return not self.reads


# Which code consumes each rule id, by prefix (the longest matching prefix wins). A rule that
# is only cited is INFORMATIONAL; ``rules show`` says so, and the rule-read test skips it.
READERS: tuple[tuple[str, str], ...] = (
    ("game", "dicetable.games.catalogue"),
    ("jurisdiction", "dicetable.table.procedure"),
    ("menu.", "dicetable.games.engine"),
    ("paytable.", "dicetable.wagers.compile"),
    ("line.", "dicetable.wagers.compile"),
    ("field.", "dicetable.wagers.compile"),
    ("winning.", "dicetable.wagers.compile"),
    ("limits.", "dicetable.games.engine"),
    ("payout.", "dicetable.games.engine"),
    ("odds.limit.", "dicetable.games.engine"),
    ("commission.", "dicetable.games.engine"),
    ("working.comeout.", "dicetable.games.engine"),
    ("working.player_may_toggle", "dicetable.games.engine"),
    ("removal.", "dicetable.games.engine"),
    ("bonus.", "dicetable.games.engine"),
    ("fire.", "dicetable.games.engine"),
    ("wagering.", "dicetable.games.engine"),
    ("wagering.after_dealer_shake", "dicetable.table.procedure"),
    ("leaving.", "dicetable.games.engine"),
    ("throw.", "dicetable.table.procedure"),
    ("noroll.automatic", "dicetable.games.engine"),
    ("noroll.callers", "dicetable.games.engine"),
    ("noroll.effect", "dicetable.games.engine"),
    ("noroll.window", "dicetable.games.engine"),
    ("noroll.", "dicetable.table.procedure"),
    ("settlement.automatic", "dicetable.table.table"),
    ("authority.", "dicetable.table.procedure"),
    ("table.positions", "dicetable.table.procedure"),
    ("shooter.", "dicetable.table.procedure"),
    ("dice.max_hours", "dicetable.table.procedure"),
    ("dice.", "dicetable.table.procedure"),
    ("shaker.first_to", "dicetable.table.procedure"),
    ("shaker.six_eight_shake", "dicetable.table.procedure"),
    ("shaker.", "dicetable.table.procedure"),
    ("wallet.", "dicetable.table.player_money"),
    ("live.", "dicetable.table.player_money"),
    ("colour_up.", "dicetable.table.player_money"),
    ("requests.", "dicetable.table.player_money"),
    ("press.", "dicetable.table.player_money"),
)
INFORMATIONAL = frozenset({"settlement.order", "shooter.keeps_dice", "fire.placement",
                           "table.description", "wagering.late_bets", "jurisdiction"})
"""Rules that are cited, whose value no code reads: each admits one value only (the order of
settlement, the shooter keeping the dice until a seven-out, the Fire Bet's placement), or
describes the table or its jurisdiction, or (late bets) records text whose procedure the
engine does not model: a wager is refused once betting is closed, whatever the value."""


READ_WHEN: dict[str, tuple[str, Any]] = {
    "odds.limit.multiple": ("odds.limit.mode", "flat"),
    "paytable.horn.single": ("paytable.horn.form", "single"),
}
"""Rules whose value is read only while another rule has a given value: a flat odds multiple
matters only under flat odds, a single-bet Horn payout only where the Horn is one bet. The
rule-read test sets that value first; ``rules show`` says so."""


def reader_of(rule_id: str) -> str:
    if rule_id in INFORMATIONAL:
        return ""
    found = [(len(p), m) for p, m in READERS if rule_id == p or rule_id.startswith(p)]
    return max(found)[1] if found else ""


def _odds(v: Any) -> str | None:
    if not isinstance(v, str):
        return "expected odds such as '7 to 6'"
    try:
        Odds.parse(v)
    except InvalidInput as e:
        return e.message
    return None


def _int(lo: int, hi: int) -> Checker:
    def check(v: Any) -> str | None:
        if not isinstance(v, int) or isinstance(v, bool):
            return f"expected a whole number from {lo} to {hi}"
        if not lo <= v <= hi:
            return f"{v} is outside {lo}..{hi}"
        return None

    return check


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "expected true or false"


def _choice(*options: str | int) -> Checker:
    def check(v: Any) -> str | None:
        return None if v in options else f"expected one of {', '.join(map(str, options))}"

    return check


def _rate(v: Any) -> str | None:
    if not isinstance(v, str):
        return "expected a rate such as '5%'"
    try:
        r = percent(v)
    except InvalidInput as e:
        return e.message
    return None if 0 <= r < 1 else f"rate {v} is outside 0%..100%"


def _limits(v: Any) -> str | None:
    if not isinstance(v, dict) or set(v) != {"minimum", "maximum", "unit"}:
        return "expected {minimum, maximum, unit} in cents"
    if not all(isinstance(v[k], int) and not isinstance(v[k], bool) for k in v):
        return "limits are whole cents"
    lo, hi, unit = v["minimum"], v["maximum"], v["unit"]
    if unit <= 0:
        return "the betting unit must be positive"
    if lo <= 0 or lo > hi:
        return f"minimum {lo} must be positive and not above maximum {hi}"
    if lo % unit or hi % unit:
        return f"minimum and maximum must be whole multiples of the unit {unit}"
    return None


def _codes(family: str) -> Checker:
    allowed = set(codes_of(family))

    def check(v: Any) -> str | None:
        if not isinstance(v, list) or not all(isinstance(c, str) for c in v):
            return "expected a list of wager codes"
        bad = [c for c in v if c not in allowed]
        if bad:
            return f"not {family} wagers: {', '.join(bad)} (known: {', '.join(sorted(allowed))})"
        return None

    return check


def _families(v: Any) -> str | None:
    if not isinstance(v, list) or not all(isinstance(f, str) for f in v):
        return "expected a list of wager families"
    bad = [f for f in v if f not in FAMILIES]
    return f"unknown wager families: {', '.join(bad)}" if bad else None


def _fire_table(v: Any) -> str | None:
    if not isinstance(v, dict) or not v:
        return "expected {points made: odds}, e.g. {\"4\": \"24 to 1\"}"
    for k, odds in v.items():
        if k not in {"1", "2", "3", "4", "5", "6"}:
            return f"points made must be 1..6, not {k!r}"
        problem = _odds(odds)
        if problem:
            return f"{k} points: {problem}"
    return None


def _roles(v: Any) -> str | None:
    if not isinstance(v, list) or not v:
        return "expected a non-empty list of roles"
    known = {r.value for r in Role}
    bad = [r for r in v if r not in known]
    return f"unknown roles: {', '.join(map(str, bad))}" if bad else None


def _strings(*allowed: str) -> Checker:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
            return "expected a list of names"
        bad = [s for s in v if s not in allowed]
        return f"not recognised: {', '.join(bad)} (known: {', '.join(allowed)})" if bad else None

    return check


def _roles_or_none(v: Any) -> str | None:
    return None if v == [] else _roles(v)


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and v else "expected text"


def _press_unit(v: Any) -> str | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return None if 1 <= v <= 100_000_00 else f"{v} is outside 1..10000000"
    return _choice("wager-minimum", "step")(v)


def _build() -> dict[str, RuleSpec]:
    specs: dict[str, RuleSpec] = {}

    def spec(rule_id: str, kind: str, description: str, check: Checker) -> None:
        specs[rule_id] = RuleSpec(rule_id, kind, description, check, reader_of(rule_id),
                                  READ_WHEN.get(rule_id))

    odds, yes_no = _odds, _bool
    cents = _int(0, 100_000_000)

    # Which games there are is the games layer's registry (``dicetable.games.packs`` refuses
    # a name no variant declares).
    spec("game", "choice", "The game this pack runs", _text)
    spec("jurisdiction", "choice", "Whose rules", _choice("PA", "IN"))

    for family in FAMILIES:
        spec(f"menu.{family}", "codes", f"Which {family} wagers the table offers",
             _codes(family))

    # Paytables: every payout the wager tables read.
    spec("paytable.line", "odds", "Pass, Don't Pass, Come, Don't Come and Put pay", odds)
    spec("line.dontpass.bar", "choice", "Total on which a don't bet pushes on the come-out",
         _choice(2, 12))
    for n in POINTS:
        spec(f"paytable.odds.take.{n}", "odds", f"Odds taken on a point of {n}", odds)
        spec(f"paytable.odds.lay.{n}", "odds", f"Odds laid against a point of {n}", odds)
        spec(f"paytable.place.{n}", "odds", f"Place {n} to win", odds)
        spec(f"paytable.lose.{n}", "odds", f"Place {n} to lose", odds)
        spec(f"paytable.buy.{n}", "odds", f"Buy {n} (before commission)", odds)
        spec(f"paytable.lay.{n}", "odds", f"Lay {n} (before commission)", odds)
    for n in (2, 3, 11, 12):  # Crapless Craps' points
        spec(f"paytable.odds.take.{n}", "odds", f"Odds taken on a point of {n}", odds)
        spec(f"paytable.place.{n}", "odds", f"Place {n} to win", odds)
        spec(f"paytable.buy.{n}", "odds", f"Buy {n} (before commission)", odds)
    spec("paytable.big", "odds", "Big 6 and Big 8", odds)
    spec("field.numbers", "totals", "Totals that win the Field",
         lambda v: None if isinstance(v, list) and v and all(
             isinstance(t, int) and 2 <= t <= 12 and t != 7 for t in v)
         else "expected a list of totals 2..12 without 7")
    spec("paytable.field.2", "odds", "Field pays on 2", odds)
    spec("paytable.field.12", "odds", "Field pays on 12", odds)
    spec("paytable.field.other", "odds", "Field pays on its other totals", odds)
    for n in (4, 6, 8, 10):
        spec(f"paytable.hard.{n}", "odds", f"Hard {n}", odds)
    for name in ("any7", "anycraps", "two", "three", "eleven", "twelve", "anydouble"):
        spec(f"paytable.{name}", "odds", f"One-roll {name}", odds)
    spec("paytable.horn.form", "choice",
         "split: four equal parts each paid at its own odds (U.S.); single: one bet (France)",
         _choice("split", "single"))
    spec("paytable.horn.single", "odds", "Horn pays when played as a single bet", odds)
    spec("paytable.hop.pair", "odds", "Hop on a pair (1-1 .. 6-6)", odds)
    spec("paytable.hop.nonpair", "odds", "Hop on a non-pair (1-2 .. 5-6)", odds)
    spec("paytable.double", "odds", "Props & Hops Double Wagers (668a.2(d))", odds)
    spec("paytable.fire", "odds-table", "Fire Bet: distinct points made -> payout", _fire_table)
    spec("paytable.allsmall", "odds", "All Small", odds)
    spec("paytable.alltall", "odds", "All Tall", odds)
    spec("paytable.makeemall", "odds", "Make 'Em All", odds)

    # Limits, units and rounding.
    spec("limits.default", "limits", "Table minimum, maximum and betting unit (cents)", _limits)
    for family in FAMILIES:
        spec(f"limits.{family}", "limits", f"Minimum, maximum and unit for {family} wagers",
             _limits)
    spec("odds.limit.mode", "choice", "How the odds limit is stated", _choice("345x", "flat"))
    spec("odds.limit.multiple", "int", "Flat odds multiple (mode 'flat')", _int(1, 1000))
    spec("payout.unit", "cents", "Smallest amount a payout is made in (cents)", _int(1, 100_000))
    spec("payout.inexact", "choice", "A wager whose payout is not whole units",
         _choice(*[r.value for r in Rounding]))
    for kind in ("buy", "lay"):
        spec(f"commission.{kind}.rate", "rate", f"{kind.title()} commission rate", _rate)
        spec(f"commission.{kind}.when", "choice", f"When the {kind} commission is taken",
             _choice("up-front", "on-win"))
        spec(f"commission.{kind}.rounding", "choice", f"How the {kind} commission is rounded",
             _choice(*[r.value for r in CommissionRounding]))
        spec(f"commission.{kind}.unit", "cents", f"{kind.title()} commission rounding unit",
             _int(1, 100_000))
        spec(f"commission.{kind}.minimum", "cents", f"Smallest {kind} commission", cents)
        spec(f"commission.{kind}.refund_on_removal", "bool",
             f"An up-front {kind} commission is returned when the bet is taken down", yes_no)

    # Working status on the come-out, and the player's right to call bets on or off.
    for what in ("place", "buy", "lay", "lose", "hard", "big", "come_odds", "dontcome_odds"):
        spec(f"working.comeout.{what}", "bool", f"{what} wagers work on the come-out roll",
             yes_no)
    spec("working.player_may_toggle", "bool",
         "A player may call a multi-roll bet on or off", yes_no)

    # Removal, reduction and increase once a wager is in action.
    spec("removal.line_after_point", "choice",
         "Pass/Come flat once its point is set", _choice("locked", "remove-or-reduce"))
    spec("removal.dont_after_point", "choice",
         "Don't Pass/Don't Come flat once its point is set",
         _choice("locked", "remove-or-reduce"))
    spec("removal.standing", "choice", "Odds, place, buy, lay, big, hardway and props",
         _choice("between-rolls", "locked"))
    spec("removal.fire", "choice", "Fire Bet once made", _choice("locked", "between-rolls"))
    spec("removal.bonus", "choice", "All Small / Tall / Make 'Em All once made",
         _choice("locked", "between-rolls"))
    spec("winning.stays_up", "families",
         "Families whose stake stays up after a win (only the win is paid)", _families)
    spec("fire.placement", "choice", "When a Fire Bet may be made", _choice("new-shooter"))
    spec("bonus.placement", "choice", "When All Small / Tall / Make 'Em All may be made",
         _choice("after-any-seven", "new-shooter"))

    # Wagering mechanics and procedure.
    spec("wagering.medium", "list", "What a wager may be made with",
         _strings("chips", "plaques", "cash"))
    spec("wagering.seated_only", "bool", "Only seated players may wager", yes_no)
    spec("wagering.before_shake", "bool", "Every wager is made before the dice are shaken",
         yes_no)
    spec("wagering.after_dealer_shake", "bool",
         "Wagers are accepted only once the dealer has shaken the covered shaker (before play "
         "and after each round)", yes_no)
    spec("wagering.late_bets", "bool", "A wager confirmed while the dice are in the air counts",
         yes_no)
    spec("throw.line_bet_required", "bool",
         "The shooter has a Pass or Don't Pass bet before throwing", yes_no)
    spec("noroll.automatic", "list", "Throws that are invalid without anyone's call",
         _strings(*THROW_FACTS))
    spec("noroll.callers", "roles", "Who may call a no roll", _roles)
    spec("noroll.effect", "choice", "What a no roll does to the wagers",
         _choice("wagers-stand", "wagers-returned"))
    spec("noroll.window", "choice",
         "Until when a no roll may be called on the roll just thrown: before-settlement, "
         "until the first settlement chore is recorded", _choice("before-settlement"))
    spec("leaving.wagers", "choice",
         "What becomes of a leaving player's wagers: refuse (take them down or let them be "
         "decided first) or take-down (the table takes down every wager it may, and refuses "
         "while one may not be)", _choice("refuse", "take-down"))
    spec("settlement.order", "choice", "Order of settlement",
         _choice("losers-then-winners"))
    spec("settlement.automatic", "bool",
         "The table settles by itself after each roll (electronic tables)", yes_no)
    spec("table.description", "text", "A line describing the table", _text)

    # Procedure: who may do what, the shooter, the no roll, the dice, the shaker.
    for action, what in (
        ("open_table", "open the table"), ("staff", "assign and relieve staff"),
        ("seat", "seat a player or let one leave"), ("chips", "sell chips and cash out"),
        ("wager", "place, change or remove a wager, or call it on or off"),
        ("close_betting", "announce 'no more bets'"),
        ("dice", "bring, replace or remove the dice at the table (or load the shaker)"),
        ("offer_dice", "offer the dice to a patron"), ("select_dice", "select two dice"),
        ("record_roll", "record the throw and read the dice"),
        ("settle", "collect losers, pay winners, complete the roll"),
        ("remove_shooter", "take the dice from a shooter"),
        ("overturn_no_roll", "overturn a declaration that a roll is invalid"),
        ("shaker", "shake, offer, uncover, cover the shaker (the dealer's duties)"),
        ("shake", "shake the covered shaker (the player's turn)"),
    ):
        spec(f"authority.{action}", "roles", f"Roles that may {what}", _roles_or_none)
    # Separation of duties (spec/standards.md SEC-5).
    spec("duties.rank", "roles", "The table roles from lowest to highest (who supervises whom)",
         _roles)
    spec("duties.assign_below_own", "bool",
         "Staff are assigned or relieved only by someone ranked above the role", yes_no)
    spec("duties.no_self", "bool", "Nobody assigns, relieves or unlocks themselves", yes_no)
    spec("duties.staff_no_wager", "bool",
         "A person working a table may not play at it (join, buy chips, wager)", yes_no)
    spec("duties.two_person", "list", "Actions that need a second, distinct person as witness",
         _strings("dice"))
    spec("table.positions", "int", "Player positions at the table", _int(1, 30))
    spec("shooter.dice_offered", "int", "Dice offered to a new shooter (at least)", _int(2, 12))
    spec("shooter.first_offer", "choice", "Who is offered the dice first",
         _choice("left-of-boxperson", "left-of-stickperson", "left-of-dealer"))
    spec("shooter.next_offer", "choice", "Where the offer to a new shooter starts",
         _choice("restart", "clockwise-from-last"))
    spec("shooter.line_bet", "choice", "When the shooter must have a pass or don't pass bet",
         _choice("before-throw", "to-serve"))
    spec("shooter.keeps_dice", "choice", "How long a shooter keeps the dice",
         _choice("until-seven-out"))
    spec("shooter.may_relinquish", "bool", "A shooter may give up the dice", yes_no)
    spec("shooter.removal_grounds", "list", "Grounds on which a shooter is removed",
         _strings("continual-invalid-rolls", "unreasonable-delay", "violation"))
    grounds = tuple(NO_ROLL_GROUNDS)
    spec("noroll.grounds", "list", "Grounds on which an authorised role may call a no roll",
         _strings(*grounds))
    spec("noroll.excluded_grounds", "list", "Facts that are never a ground for a no roll",
         _strings(*grounds))
    spec("noroll.improper_callers", "roles", "Who may void a throw as improper",
         _roles_or_none)
    spec("dice.max_hours", "int", "Hours dice may stay at a table", _int(1, 24 * 7))
    spec("dice.never_unattended", "bool", "Dice are never left unattended at the table",
         yes_no)
    spec("shaker.min_shakes", "int", "Shakes of the covered shaker, at least", _int(1, 20))
    spec("shaker.first_to", "choice", "Who is offered the shaker first",
         _choice("farthest-left-of-dealer"))
    spec("shaker.passes_on", "int", "The total that passes the shaker to the next player",
         _int(2, 12))
    spec("shaker.six_eight_shake", "bool", "The Six Eight Shake procedure (668a.3(e))",
         yes_no)

    # The player's money (dicetable.table.player_money): wallets, buy-ins, requests, presses.
    spec("wallet.tables", "choice",
         "Where players move money between wallet and table themselves", _choice("electronic"))
    spec("wallet.buy_in.by", "choice",
         "Who puts money on an electronic table: wallet (the player only) or wallet-or-staff",
         _choice("wallet", "wallet-or-staff"))
    spec("wallet.buy_in.minimum", "int", "The smallest wallet buy-in (cents)", cents)
    spec("wallet.buy_in.maximum", "int", "The largest wallet buy-in (cents)", cents)
    spec("live.buy_in", "choice", "Who sells chips at a live table", _choice("dealer"))
    spec("live.cash_out", "choice", "Where a live table's chips are redeemed", _choice("cage"))
    spec("colour_up.value", "choice", "A colour-up's value", _choice("equal"))
    spec("requests.confirmed_by", "choice",
         "Who confirms a colour-up or leaving request at a live table", _choice("dealer"))
    spec("press.unit", "choice",
         "One unit of 'press by a unit': wager-minimum, step, or an amount in cents",
         _press_unit)
    return specs


SPECS: dict[str, RuleSpec] = _build()


def check_value(rule_id: str, value: Any) -> str | None:
    """The problem with ``value`` for ``rule_id``, or None."""
    spec = SPECS.get(rule_id)
    if spec is None:
        return "unknown rule id"
    return spec.check(value)
